/* SPDX-License-Identifier: Apache-2.0 */
/* markup.c — the one markup escaper (markup.h). */
#include "markup.h"

const char *grit_markup_entity(char c) {
  switch (c) {
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '&': return "&amp;";
    case '"': return "&quot;";
    default: return 0;
  }
}
