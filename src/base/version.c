/* SPDX-License-Identifier: Apache-2.0 */
/* The library's version, from the generated grit/version.h (project(VERSION) in CMakeLists.txt). */
#include "grit/version.h"

const char *grit_version(void) { return GRIT_VERSION_STRING; }
