/* SPDX-License-Identifier: Apache-2.0 */
/* grit/grit.h — everything of the public API in one include. */
#ifndef GRIT_GRIT_H
#define GRIT_GRIT_H

#include "grit/status.h"
#include "grit/version.h"
#include "grit/math.h"
#include "grit/dual.h"
#include "grit/model.h"
#include "grit/model_names.h"
#include "grit/data.h"
#include "grit/dynamics.h"
#include "grit/step.h"
#include "grit/derivatives.h"
#include "grit/linearize.h"
#include "grit/diagnostics.h"
#include "grit/sysid.h"
#include "grit/geometry.h"
#include "grit/mjcf.h"
#include "grit/urdf.h"
#include "grit/load.h"
#include "grit/constraints.h"
#include "grit/defaults.h"
#include "grit/hydro.h"

#endif
