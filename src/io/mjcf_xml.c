/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_xml.c — the MJCF loader's XML layer: a bounded memory pool and an element tree built with
 * expat's streaming parser (elements, attributes and line numbers; text content is not used by MJCF).
 * Entity declarations are refused, so no document can expand itself. */
#include <expat.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mjcf_internal.h"
#include "status_internal.h"

/* ---------------------------------------------------------------------------------- pool */

#define POOL_BLOCK ((size_t)64 << 10)
#define POOL_ALIGN ((size_t)16)

static size_t block_header(void) { return (sizeof(mjcf_block) + POOL_ALIGN - 1) & ~(POOL_ALIGN - 1); }

void *mjcf_alloc(mjcf_pool *pool, size_t bytes) {
  if (bytes > ((size_t)1 << 40)) return NULL;
  bytes = (bytes + POOL_ALIGN - 1) & ~(POOL_ALIGN - 1);
  if (bytes == 0) bytes = POOL_ALIGN;
  mjcf_block *b = pool->head;
  if (!b || b->size - b->used < bytes) {
    size_t size = bytes > POOL_BLOCK ? bytes : POOL_BLOCK;
    b = malloc(block_header() + size);
    if (!b) return NULL;
    b->size = size;
    b->used = 0;
    /* a big request gets its own block behind the current one, so the current one keeps filling */
    if (pool->head && bytes > POOL_BLOCK) {
      b->next = pool->head->next;
      pool->head->next = b;
    } else {
      b->next = pool->head;
      pool->head = b;
    }
  }
  char *p = (char *)b + block_header() + b->used;
  b->used += bytes;
  memset(p, 0, bytes);
  return p;
}

char *mjcf_strdup(mjcf_pool *pool, const char *s, size_t n) {
  char *r = mjcf_alloc(pool, n + 1);
  if (r) {
    memcpy(r, s, n);
    r[n] = '\0';
  }
  return r;
}

void mjcf_pool_free(mjcf_pool *pool) {
  mjcf_block *b = pool->head;
  while (b) {
    mjcf_block *next = b->next;
    free(b);
    b = next;
  }
  pool->head = NULL;
}

/* --------------------------------------------------------------------------------- the tree */

typedef struct tree_builder {
  XML_Parser parser;
  mjcf_pool *pool;
  mjcf_node *root, *cur;
  int depth, count;
  int root_end; /* the line where the root element ended (0 while open) */
  grit_status status;
  char *msg;
  const char *name;
} tree_builder;

static int current_line(XML_Parser p) {
  XML_Size line = XML_GetCurrentLineNumber(p);
  return line > (XML_Size)INT_MAX ? INT_MAX : (int)line;
}

static void stop(tree_builder *b, grit_status s, const char *what) {
  if (b->status == GRIT_OK) {
    b->status = s;
    grit_set_error(b->msg, s, "%s:%d: %s", b->name, current_line(b->parser), what);
  }
  XML_StopParser(b->parser, XML_FALSE);
}

static void XMLCALL on_start(void *user, const XML_Char *name, const XML_Char **atts) {
  tree_builder *b = user;
  if (b->status != GRIT_OK) return;
  if (++b->depth > MJCF_MAX_DEPTH) {
    stop(b, GRIT_ERR_CAPACITY, "elements nested deeper than 100 levels");
    return;
  }
  if (++b->count > MJCF_MAX_ELEMENTS) {
    stop(b, GRIT_ERR_CAPACITY, "more than 50000 elements");
    return;
  }
  int n = 0;
  while (atts[2 * n]) ++n;
  mjcf_node *node = mjcf_alloc(b->pool, sizeof *node);
  if (node) {
    node->attr = mjcf_alloc(b->pool, sizeof(char *) * (size_t)(2 * n + 1));
    node->used = mjcf_alloc(b->pool, (size_t)n + 1);
    node->name = mjcf_strdup(b->pool, name, strlen(name));
  }
  if (!node || !node->attr || !node->used || !node->name) {
    stop(b, GRIT_ERR_OUT_OF_MEMORY, "out of memory");
    return;
  }
  for (int i = 0; i < 2 * n; ++i) {
    node->attr[i] = mjcf_strdup(b->pool, atts[i], strlen(atts[i]));
    if (!node->attr[i]) {
      stop(b, GRIT_ERR_OUT_OF_MEMORY, "out of memory");
      return;
    }
  }
  node->nattr = n;
  node->line = current_line(b->parser);
  node->parent = b->cur;
  if (b->cur) {
    if (b->cur->last_child)
      b->cur->last_child->next = node;
    else
      b->cur->child = node;
    b->cur->last_child = node;
  } else {
    b->root = node;
  }
  b->cur = node;
}

static void XMLCALL on_end(void *user, const XML_Char *name) {
  tree_builder *b = user;
  (void)name;
  if (b->status != GRIT_OK || !b->cur) return;
  b->cur = b->cur->parent;
  b->depth--;
  if (!b->cur) b->root_end = current_line(b->parser);
}

static void XMLCALL on_entity(void *user, const XML_Char *entity, int is_parameter, const XML_Char *value,
                              int value_length, const XML_Char *base, const XML_Char *system_id,
                              const XML_Char *public_id, const XML_Char *notation) {
  (void)entity, (void)is_parameter, (void)value, (void)value_length, (void)base, (void)system_id;
  (void)public_id, (void)notation;
  stop(user, GRIT_ERR_PARSE, "XML entity declarations are not allowed in MJCF");
}

grit_status mjcf_xml_parse(const char *data, size_t size, const char *name, mjcf_pool *pool, mjcf_node **root,
                           char msg[GRIT_MESSAGE_SIZE], int *after_root) {
  *root = NULL;
  if (after_root) *after_root = 0;
  if (size > MJCF_MAX_BYTES)
    return grit_set_error(msg, GRIT_ERR_CAPACITY, "%s: larger than 64 MiB (%zu bytes)", name, size);
  tree_builder b;
  memset(&b, 0, sizeof b);
  b.pool = pool;
  b.msg = msg;
  b.name = name;
  b.parser = XML_ParserCreate(NULL);
  if (!b.parser) return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "%s: out of memory creating the XML parser", name);
  XML_SetUserData(b.parser, &b);
  XML_SetElementHandler(b.parser, on_start, on_end);
  XML_SetEntityDeclHandler(b.parser, on_entity);
  enum XML_Status st = XML_Parse(b.parser, data ? data : "", (int)size, XML_TRUE);
  if (st != XML_STATUS_OK && b.status == GRIT_OK && after_root && b.root_end > 0 && b.root) {
    /* the root element is whole: what follows it is left out, as MuJoCo's tinyxml2 does with a second root
     * or a stray end tag (the caller warns; *after_root: the line of the XML error) */
    *after_root = current_line(b.parser);
    st = XML_STATUS_OK;
  }
  if (st != XML_STATUS_OK && b.status == GRIT_OK) {
    b.status = GRIT_ERR_PARSE;
    /* text after the root's end where the caller takes none (a URDF): expat's message alone ("invalid
     * token") does not say what is wrong */
    char after[160] = "";
    if (b.root_end > 0 && b.root)
      snprintf(after, sizeof after, " (after the root element <%.40s> ended at line %d: nothing may follow it)",
               b.root->name, b.root_end);
    grit_set_error(msg, GRIT_ERR_PARSE, "%s:%d: XML error: %s%s", name, current_line(b.parser),
                   XML_ErrorString(XML_GetErrorCode(b.parser)), after);
  }
  XML_ParserFree(b.parser);
  if (b.status != GRIT_OK) return b.status;
  if (!b.root) return grit_set_error(msg, GRIT_ERR_PARSE, "%s: no XML element found", name);
  *root = b.root;
  return GRIT_OK;
}
