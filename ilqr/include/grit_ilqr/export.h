/* SPDX-License-Identifier: Apache-2.0 */
/* grit_ilqr/export.h — GRIT_ILQR_API, the mark of a function of libgrit_ilqr's public interface (the
 * library is compiled with -fvisibility=hidden; see grit/export.h). Included by grit_ilqr/ilqr.h and
 * grit_ilqr/lqr.h. */
#ifndef GRIT_ILQR_EXPORT_H
#define GRIT_ILQR_EXPORT_H

#include "grit/export.h"

#define GRIT_ILQR_API GRIT_API

#endif /* GRIT_ILQR_EXPORT_H */
