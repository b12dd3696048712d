/* ilqr_version.c — the package version. */
#include "grit_ilqr/ilqr.h"

const char *grit_ilqr_version(void) { return "0.1.0"; }
