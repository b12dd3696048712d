/* SPDX-License-Identifier: Apache-2.0 */
/* urdf.c — the URDF loader's entry points and the structure of the file: an expat pre-scan (the MJCF
 * loader's XML reader) finds every <link> and <joint> with its line, checks the tree (names, unknown
 * links, two parents, cycles, one root, joint types) so that errors name the line, and gives the
 * document order MuJoCo's URDF import numbers bodies in; urdfdom (urdf_parse.cc) then reads the values,
 * and urdf_build.c makes the model. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/urdf.h"
#include "markup.h"
#include "mjcf_internal.h"
#include "status_internal.h"
#include "urdf_build.h"

grit_urdf_load_options grit_urdf_default_load_options(void) {
  grit_urdf_load_options o;
  memset(&o, 0, sizeof o);
  o.model = grit_mjcf_default_load_options();
  o.motors = 1;
  return o;
}

/* ------------------------------------------------------------------------------ messages */

static void vformat(char *out, const urdf_ctx *c, int line, const char *fmt, va_list ap) {
  grit_vformat_at(out, c->fname, line, NULL, fmt, ap); /* the loaders' one formatter (status_internal.h) */
}

void urdf_fail(urdf_ctx *c, grit_status s, int line, const char *fmt, ...) {
  if (c->status != GRIT_OK) return;
  c->status = s;
  if (!c->msg) return;
  va_list ap;
  va_start(ap, fmt);
  vformat(c->msg, c, line, fmt, ap);
  va_end(ap);
}

void urdf_warn(urdf_ctx *c, int line, const char *fmt, ...) {
  if (!c->info) return;
  const int i = c->info->nwarnings;
  if (i < 1000000000) c->info->nwarnings++;
  if (i >= GRIT_MJCF_MAX_WARNINGS) return;
  va_list ap;
  va_start(ap, fmt);
  vformat(c->info->warnings[i], c, line, fmt, ap);
  va_end(ap);
}

/* --------------------------------------------------------------------------- the pre-scan */

static const char *attr(const mjcf_node *n, const char *name) {
  for (int i = 0; n && i < n->nattr; ++i)
    if (!strcmp(n->attr[2 * i], name)) return n->attr[2 * i + 1];
  return NULL;
}

static const mjcf_node *child(const mjcf_node *n, const char *name) {
  for (const mjcf_node *k = n ? n->child : NULL; k; k = k->next)
    if (!strcmp(k->name, name)) return k;
  return NULL;
}

static int find_link(const urdf_ctx *c, const char *name) {
  for (int i = 0; name && i < c->nlink; ++i)
    if (!strcmp(c->links[i].name, name)) return i;
  return -1;
}

static int count_children(const mjcf_node *root, const char *name) {
  int n = 0;
  for (const mjcf_node *k = root->child; k; k = k->next) n += !strcmp(k->name, name);
  return n;
}

static void scan_link(urdf_ctx *c, const mjcf_node *n, urdf_link_info *l) {
  l->node = n;
  l->name = attr(n, "name");
  l->parent_joint = -1;
  if (!l->name) {
    urdf_fail(c, GRIT_ERR_PARSE, n->line, "<link> without a name");
    return;
  }
  const int other = find_link(c, l->name);
  if (other >= 0)
    urdf_fail(c, GRIT_ERR_INVALID_MODEL, n->line, "link '%s' is also defined at line %d", l->name,
              c->links[other].node->line);
  for (const mjcf_node *k = n->child; k; k = k->next) l->ncollision += !strcmp(k->name, "collision");
  l->collisions = mjcf_alloc(&c->pool, sizeof *l->collisions * (size_t)(l->ncollision + 1));
  if (!l->collisions) {
    urdf_fail(c, GRIT_ERR_OUT_OF_MEMORY, 0, "out of memory");
    return;
  }
  int i = 0;
  for (const mjcf_node *k = n->child; k; k = k->next)
    if (!strcmp(k->name, "collision")) l->collisions[i++] = k;
}

static const struct {
  const char *name;
  int type;
} JOINT_TYPES[] = {{"revolute", URDF_JOINT_REVOLUTE}, {"continuous", URDF_JOINT_CONTINUOUS},
                   {"prismatic", URDF_JOINT_PRISMATIC}, {"floating", URDF_JOINT_FLOATING},
                   {"planar", URDF_JOINT_PLANAR},       {"fixed", URDF_JOINT_FIXED}};

/* The link a joint's <parent>/<child> names; -1 (and an error) if none. */
static int joint_link(urdf_ctx *c, const mjcf_node *j, const char *jname, const char *which) {
  const mjcf_node *e = child(j, which);
  const char *name = attr(e, "link");
  if (!name) {
    urdf_fail(c, GRIT_ERR_PARSE, e ? e->line : j->line, "joint '%s' has no <%s link=\"...\">", jname, which);
    return -1;
  }
  const int k = find_link(c, name);
  if (k < 0) urdf_fail(c, GRIT_ERR_INVALID_MODEL, e->line, "joint '%s': unknown %s link '%s'", jname, which, name);
  return k;
}

/* A number attribute of <mimic> (its default when absent); 0 with an error when it is not a number. */
static int mimic_number(urdf_ctx *c, const urdf_joint_info *j, const char *name, double fallback, double *out) {
  const char *v = attr(j->mimic, name);
  char *end = NULL;
  *out = v ? strtod(v, &end) : fallback;
  if (v && (end == v || *end || !isfinite(*out))) {
    urdf_fail(c, GRIT_ERR_PARSE, j->mimic->line, "joint '%s': <mimic %s='%s'>: a finite number is expected", j->name,
              name, v);
    return 0;
  }
  return 1;
}

/* <mimic joint multiplier offset>: the coupling this joint = multiplier * joint + offset (urdf_build.c
 * makes it a joint equality). */
static int read_mimic(urdf_ctx *c, urdf_joint_info *j) {
  j->mimic_joint = attr(j->mimic, "joint");
  if (!j->mimic_joint || !*j->mimic_joint) {
    urdf_fail(c, GRIT_ERR_PARSE, j->mimic->line, "joint '%s': <mimic> without a joint", j->name);
    return 0;
  }
  return mimic_number(c, j, "multiplier", 1, &j->mimic_multiplier) &&
         mimic_number(c, j, "offset", 0, &j->mimic_offset);
}

static void scan_joint(urdf_ctx *c, int index, const mjcf_node *n) {
  urdf_joint_info *j = &c->joints[index];
  j->node = n;
  j->name = attr(n, "name");
  if (!j->name) {
    urdf_fail(c, GRIT_ERR_PARSE, n->line, "<joint> without a name");
    return;
  }
  for (int k = 0; k < index; ++k)
    if (!strcmp(c->joints[k].name, j->name)) {
      urdf_fail(c, GRIT_ERR_INVALID_MODEL, n->line, "joint '%s' is also defined at line %d", j->name,
                c->joints[k].node->line);
      return;
    }
  const char *type = attr(n, "type");
  j->type = URDF_JOINT_UNKNOWN;
  for (size_t k = 0; type && k < sizeof JOINT_TYPES / sizeof *JOINT_TYPES; ++k)
    if (!strcmp(type, JOINT_TYPES[k].name)) j->type = JOINT_TYPES[k].type;
  if (j->type == URDF_JOINT_UNKNOWN) {
    urdf_fail(c, GRIT_ERR_PARSE, n->line, "joint '%s': unknown type '%s'", j->name, type ? type : "");
    return;
  }
  if (j->type == URDF_JOINT_PLANAR) {
    urdf_fail(c, GRIT_ERR_UNSUPPORTED, n->line, "joint '%s': planar joints are not supported", j->name);
    return;
  }
  j->grit_joint = -1;
  j->no_limit = 0;
  if ((j->mimic = child(n, "mimic")) && !read_mimic(c, j)) return;
  j->parent = joint_link(c, n, j->name, "parent");
  if (c->status == GRIT_OK) j->child = joint_link(c, n, j->name, "child");
  if (c->status != GRIT_OK) return;
  if (j->parent == j->child) {
    urdf_fail(c, GRIT_ERR_INVALID_MODEL, n->line, "joint '%s' connects link '%s' to itself", j->name,
              c->links[j->child].name);
    return;
  }
  urdf_link_info *ch = &c->links[j->child];
  if (ch->parent_joint >= 0) {
    urdf_fail(c, GRIT_ERR_INVALID_MODEL, n->line, "link '%s' has two parents: joint '%s' and joint '%s' (line %d)",
              ch->name, j->name, c->joints[ch->parent_joint].name, c->joints[ch->parent_joint].node->line);
    return;
  }
  ch->parent_joint = index;
}

/* Every link reaches a root in fewer than nlink steps, unless joints close a cycle. */
static void check_tree(urdf_ctx *c) {
  for (int i = 0; i < c->nlink && c->status == GRIT_OK; ++i) {
    int k = i, steps = 0;
    while (c->links[k].parent_joint >= 0 && steps <= c->nlink) {
      k = c->joints[c->links[k].parent_joint].parent;
      ++steps;
    }
    if (steps > c->nlink) {
      const urdf_joint_info *j = &c->joints[c->links[i].parent_joint];
      urdf_fail(c, GRIT_ERR_INVALID_MODEL, j->node->line,
                "joint '%s' closes a cycle of links (through link '%s'): URDF describes a tree", j->name,
                c->links[i].name);
    }
  }
  /* several roots are several trees, each welded to the world (floating with the floating_base option), as
   * MuJoCo 2.2.2's import puts every link without a parent at the world */
  int root = -1;
  for (int i = 0; i < c->nlink && root < 0; ++i)
    if (c->links[i].parent_joint < 0) root = i;
  if (c->status == GRIT_OK && root < 0) urdf_fail(c, GRIT_ERR_INVALID_MODEL, 0, "the file has no <link>");
}

/* ------------------------------------------------------------------- MuJoCo's <mujoco> extension */

typedef struct text {
  char *s;
  size_t n, cap;
  int oom;
} text;

static void put(text *t, const char *s, size_t n) {
  if (t->oom) return;
  if (t->n + n + 1 > t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 256;
    while (cap < t->n + n + 1) cap *= 2;
    char *p = realloc(t->s, cap);
    if (!p) {
      t->oom = 1;
      return;
    }
    t->s = p, t->cap = cap;
  }
  memcpy(t->s + t->n, s, n);
  t->n += n;
  t->s[t->n] = '\0';
}

static void puts_escaped(text *t, const char *s) {
  for (; *s; ++s) {
    const char *entity = grit_markup_entity(*s);
    if (entity) put(t, entity, strlen(entity));
    else put(t, s, 1);
  }
}

/* An element's opening tag with its attributes. */
static void serialize_open(text *t, const mjcf_node *n) {
  put(t, "<", 1), put(t, n->name, strlen(n->name));
  for (int i = 0; i < n->nattr; ++i) {
    put(t, " ", 1), put(t, n->attr[2 * i], strlen(n->attr[2 * i])), put(t, "=\"", 2);
    puts_escaped(t, n->attr[2 * i + 1]);
    put(t, "\"", 1);
  }
  put(t, ">", 1);
}

/* An element and its children as XML text (the parser kept no text content; MJCF uses none). */
static void serialize(text *t, const mjcf_node *n) {
  serialize_open(t, n);
  for (const mjcf_node *k = n->child; k; k = k->next) serialize(t, k);
  put(t, "</", 2), put(t, n->name, strlen(n->name)), put(t, ">", 1);
}

/* <robot><mujoco>: MuJoCo's URDF import reads its <compiler>, <option> and <size>; grit takes <option>
 * (timestep, gravity, contact flag) and <custom> (grit's contact parameters), and warns about the rest. */
static void mujoco_section(urdf_ctx *c, const mjcf_node *m) {
  text t = {0};
  for (const mjcf_node *k = m->child; k; k = k->next) {
    if (!strcmp(k->name, "option") || !strcmp(k->name, "custom"))
      serialize(&t, k);
    else
      urdf_warn(c, k->line, "<mujoco><%.40s> is not used by grit's URDF loader: ignored", k->name);
  }
  if (t.oom) {
    free(t.s);
    urdf_fail(c, GRIT_ERR_OUT_OF_MEMORY, 0, "out of memory");
    return;
  }
  c->mujoco = t.s;
}

static void prescan(urdf_ctx *c, const mjcf_node *root) {
  if (strcmp(root->name, "robot")) {
    urdf_fail(c, GRIT_ERR_PARSE, root->line, "the root element must be <robot>, not <%.40s>", root->name);
    return;
  }
  const char *name = attr(root, "name");
  if (name && c->info) snprintf(c->info->model_name, sizeof c->info->model_name, "%s", name);
  c->links = mjcf_alloc(&c->pool, sizeof *c->links * (size_t)(count_children(root, "link") + 1));
  c->joints = mjcf_alloc(&c->pool, sizeof *c->joints * (size_t)(count_children(root, "joint") + 1));
  if (!c->links || !c->joints) {
    urdf_fail(c, GRIT_ERR_OUT_OF_MEMORY, 0, "out of memory");
    return;
  }
  for (const mjcf_node *k = root->child; k && c->status == GRIT_OK; k = k->next)
    if (!strcmp(k->name, "link")) {
      scan_link(c, k, &c->links[c->nlink]);
      c->nlink++;
    }
  for (const mjcf_node *k = root->child; k && c->status == GRIT_OK; k = k->next)
    if (!strcmp(k->name, "joint")) scan_joint(c, c->njoint++, k);
  if (c->status == GRIT_OK) check_tree(c);
  const mjcf_node *m = child(root, "mujoco");
  if (m && c->status == GRIT_OK) mujoco_section(c, m);
}

/* ------------------------------------------------------------------------------ urdfdom */

/* The line of the first link or joint that urdfdom's message names in brackets ("... [name] ..."). */
static int line_of_message(const urdf_ctx *c, const char *text) {
  for (const char *p = strchr(text, '['); p; p = strchr(p + 1, '[')) {
    const char *e = strchr(p, ']');
    if (!e) break;
    const size_t n = (size_t)(e - p - 1);
    for (int i = 0; i < c->nlink; ++i)
      if (strlen(c->links[i].name) == n && !strncmp(c->links[i].name, p + 1, n)) return c->links[i].node->line;
    for (int i = 0; i < c->njoint; ++i)
      if (strlen(c->joints[i].name) == n && !strncmp(c->joints[i].name, p + 1, n)) return c->joints[i].node->line;
  }
  return 0;
}

/* The file as urdfdom reads it: the links and joints only, without <visual> (grit does not use them, and
 * MuJoCo 2.2.2's import does not fail on them), and a <limit effort="0" velocity="0"/> given to a
 * revolute or prismatic joint without one (urdfdom refuses those; MuJoCo makes them unlimited, and so does
 * urdf_build.c for a joint marked no_limit). The values reach urdfdom as written. */
static void urdfdom_text(urdf_ctx *c, const mjcf_node *root, text *t) {
  static const char robot[] = "<robot name=\"grit\">", synthetic[] = "<limit effort=\"0\" velocity=\"0\"/>";
  put(t, robot, sizeof robot - 1);
  int joint = 0;
  for (const mjcf_node *k = root->child; k; k = k->next) {
    const int is_link = !strcmp(k->name, "link"), is_joint = !strcmp(k->name, "joint");
    if (!is_link && !is_joint) continue;
    urdf_joint_info *j = is_joint ? &c->joints[joint++] : NULL;
    serialize_open(t, k);
    for (const mjcf_node *e = k->child; e; e = e->next)
      if (!is_link || strcmp(e->name, "visual")) serialize(t, e);
    if (j && (j->type == URDF_JOINT_REVOLUTE || j->type == URDF_JOINT_PRISMATIC) && !child(k, "limit")) {
      j->no_limit = 1;
      put(t, synthetic, sizeof synthetic - 1);
    }
    put(t, "</", 2), put(t, k->name, strlen(k->name)), put(t, ">", 1);
  }
  /* urdfdom wants one root: more are tied to a link of its own by fixed joints (urdf_parse copies only the
   * file's links and joints, so these are not seen further) */
  int roots = 0;
  for (int i = 0; i < c->nlink; ++i) roots += c->links[i].parent_joint < 0;
  for (int i = 0, r = 0; roots > 1 && i < c->nlink; ++i) {
    if (c->links[i].parent_joint >= 0) continue;
    static const char link[] = "<link name=\"grit:roots\"/>", tail[] = "\"/></joint>";
    if (r == 0) put(t, link, sizeof link - 1);
    char head[80];
    const int n = snprintf(head, sizeof head, "<joint name=\"grit:root%d\" type=\"fixed\"><parent link=\"grit:roots\"/>"
                                              "<child link=\"", r++);
    put(t, head, (size_t)n);
    puts_escaped(t, c->links[i].name);
    put(t, tail, sizeof tail - 1);
  }
  put(t, "</robot>", 8);
}

static void read_values(urdf_ctx *c, const mjcf_node *root) {
  const char **names = malloc(sizeof *names * (size_t)(c->nlink + c->njoint + 1));
  if (!names) {
    urdf_fail(c, GRIT_ERR_OUT_OF_MEMORY, 0, "out of memory");
    return;
  }
  for (int i = 0; i < c->nlink; ++i) names[i] = c->links[i].name;
  for (int i = 0; i < c->njoint; ++i) names[c->nlink + i] = c->joints[i].name;
  text t = {0};
  urdfdom_text(c, root, &t);
  if (t.oom) {
    free(names), free(t.s);
    urdf_fail(c, GRIT_ERR_OUT_OF_MEMORY, 0, "out of memory");
    return;
  }
  char text[GRIT_MESSAGE_SIZE];
  text[0] = '\0';
  const int r = urdf_parse(t.s, t.n, c->nlink, names, c->njoint, names + c->nlink, &c->robot, text, sizeof text);
  free(names), free(t.s);
  if (r == 2) urdf_fail(c, GRIT_ERR_OUT_OF_MEMORY, 0, "out of memory");
  if (r == 1) urdf_fail(c, GRIT_ERR_PARSE, line_of_message(c, text), "urdfdom: %s", text);
}

/* ------------------------------------------------------------------------------ entry points */

static grit_status load(const char *data, size_t size, const char *name, const char *file_dir,
                        const grit_urdf_load_options *options, grit_model **model, grit_mjcf_info *info,
                        char msg[GRIT_MESSAGE_SIZE]) {
  const grit_status s0 = mjcf_load_buffer_begin(data, size, model, info, msg);
  if (s0 != GRIT_OK) return s0;
  urdf_ctx c;
  memset(&c, 0, sizeof c);
  c.fname = name ? name : "<buffer>";
  c.msg = msg;
  c.info = info;
  c.opt = options ? *options : grit_urdf_default_load_options();
  c.base_dir = c.opt.mesh_dir;
  c.file_dir = file_dir;
  mjcf_node *root = NULL;
  c.status = mjcf_xml_parse(data, size, c.fname, &c.pool, &root, msg, NULL);
  if (c.status == GRIT_OK) prescan(&c, root);
  if (c.status == GRIT_OK) read_values(&c, root);
  if (c.status == GRIT_OK) urdf_build(&c, model);
  urdf_robot_free(c.robot);
  free(c.mujoco);
  mjcf_pool_free(&c.pool);
  if (c.status != GRIT_OK && info) {
    const grit_mjcf_info keep = *info;
    mjcf_info_reset(info);
    info->nwarnings = keep.nwarnings;
    memcpy(info->warnings, keep.warnings, sizeof keep.warnings);
  }
  return c.status;
}

grit_status grit_urdf_load_buffer(const char *data, size_t size, const char *name,
                                  const grit_urdf_load_options *options, grit_model **model, grit_mjcf_info *info,
                                  char msg[GRIT_MESSAGE_SIZE]) {
  return load(data, size, name, NULL, options, model, info, msg);
}

grit_status grit_urdf_load_file(const char *path, const grit_urdf_load_options *options, grit_model **model,
                                grit_mjcf_info *info, char msg[GRIT_MESSAGE_SIZE]) {
  char *data;
  size_t size;
  grit_status s = mjcf_load_file_begin(path, model, info, &data, &size, msg);
  if (s != GRIT_OK) return s;
  grit_urdf_load_options o = options ? *options : grit_urdf_default_load_options();
  char *dir = mjcf_dir_of(path);
  if (!dir) {
    free(data);
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory");
  }
  if (!o.mesh_dir) o.mesh_dir = dir; /* relative mesh file names from the file's directory */
  char real[PATH_MAX]; /* the absolute directory, so that package:// names can be looked for above it */
  s = load(data, size, path, realpath(dir, real) ? real : dir, &o, model, info, msg);
  free(dir);
  free(data);
  return s;
}
