/* SPDX-License-Identifier: Apache-2.0 */
/* markup.h — the one escaper of text in HTML, SVG and XML (internal; compiled into each library that
 * writes markup: libgrit's URDF-to-MJCF serializer, libgrit_replay's pages). */
#ifndef GRIT_MARKUP_H
#define GRIT_MARKUP_H

/* The entity of a character that may not stand as itself in markup text or a quoted attribute
 * (< > & " as &lt; &gt; &amp; &quot;), or NULL for any other character. */
const char *grit_markup_entity(char c);

#endif
