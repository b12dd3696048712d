/* SPDX-License-Identifier: Apache-2.0 */
/* fluid_ellipsoid.c — the model constants of MuJoCo 2.2.2's ellipsoid fluid model (fluid.h): each
 * geometry's equivalent ellipsoid (semi-axes) and the added mass and added inertia of the fluid it carries,
 * from the potential flow around an ellipsoid (Lamb's coefficients).
 *
 * Lamb's coefficient of axis x of an ellipsoid with semi-axes (a, b, c) is
 *   k_x = a b c  integral_0^inf dl / ((a^2 + l)^(3/2) (b^2 + l)^(1/2) (c^2 + l)^(1/2))
 *       = (2/3) a b c R_D(b^2, c^2, a^2)
 * with Carlson's symmetric elliptic integral R_D, evaluated here to round-off by Carlson's duplication
 * (k = 2/3 for a sphere). MuJoCo 2.2.2 evaluates the same integral by a 15-point Gauss-Kronrod rule whose
 * result differs from the exact value by up to ~4e-7 relative (measured, docs/theory.md). The added mass
 * of axis i is rho V k_i / (2 - k_i) and the added moment of inertia about x is
 *   rho V/5 (b^2 - c^2)^2 |k_z - k_y| / |2 (b^2 - c^2) + (b^2 + c^2)(k_y - k_z)|
 * (V the ellipsoid's volume; cyclically for y and z), both with MuJoCo's floors of 1e-15 on the
 * denominators; rho is the option's density, applied in the force (fluid_ellipsoid_generic.h). */
#include "fluid_ellipsoid.h"

#include <math.h>

#include "status_internal.h"

/* Carlson's R_D(x, y, z) for x, y >= 0 (not both 0), z > 0: duplicate until the three arguments agree
 * to 1e-4 relative, then the fifth-order expansion about their weighted mean (error ~ (1e-4)^6). */
static double carlson_rd(double x, double y, double z) {
  double sum = 0.0, scale = 1.0, mean = 0.0, ex = 0.0, ey = 0.0, ez = 0.0;
  for (int it = 0; it < 100; ++it) {
    mean = 0.2 * (x + y + 3.0 * z);
    ex = (mean - x) / mean, ey = (mean - y) / mean, ez = (mean - z) / mean;
    if (fmax(fabs(ex), fmax(fabs(ey), fabs(ez))) < 1e-4) break;
    const double sx = sqrt(x), sy = sqrt(y), sz = sqrt(z), lam = sx * (sy + sz) + sy * sz;
    sum += scale / (sz * (z + lam));
    scale *= 0.25;
    x = 0.25 * (x + lam), y = 0.25 * (y + lam), z = 0.25 * (z + lam);
  }
  /* the series in the elementary symmetric functions of the deviations (Carlson 1995) */
  const double ea = ex * ey, eb = ez * ez, ec = ea - eb, ed = ea - 6.0 * eb, ee = ed + 2.0 * ec;
  const double series = 1.0 + ed * (-3.0 / 14.0 + 9.0 / 88.0 * ed - 9.0 / 52.0 * ez * ee) +
                        ez * (ee / 6.0 + ez * (-9.0 / 22.0 * ec + ez * 3.0 / 26.0 * ea));
  return 3.0 * sum + scale * series / (mean * sqrt(mean));
}

/* Lamb's coefficient of the first axis of semi-axes (a, b, c). */
static double lamb_k(double a, double b, double c) { return 2.0 / 3.0 * a * b * c * carlson_rd(b * b, c * c, a * a); }

/* The added-inertia factor of the axis whose two others have squared semi-axes p, q and coefficients kp, kq. */
static double inertia_factor(double p, double q, double kp, double kq) {
  const double den = fabs(2.0 * (p - q) + (p + q) * (kp - kq));
  return (p - q) * (p - q) * fabs(kq - kp) / fmax(GRIT_FLUID_FLOOR, den);
}

/* The semi-axes of a shape's equivalent ellipsoid, as MuJoCo 2.2.2 takes them; 0 for a shape without. */
static int semi_axes(const grit_shape *s, double ax[3]) {
  switch (s->type) {
    case GRIT_GEOM_SPHERE: ax[0] = ax[1] = ax[2] = s->size[0]; return 1;
    case GRIT_GEOM_CAPSULE: ax[0] = ax[1] = s->size[0], ax[2] = s->size[1] + s->size[0]; return 1;
    case GRIT_GEOM_CYLINDER: ax[0] = ax[1] = s->size[0], ax[2] = s->size[1]; return 1;
    case GRIT_GEOM_ELLIPSOID:
    case GRIT_GEOM_BOX: ax[0] = s->size[0], ax[1] = s->size[1], ax[2] = s->size[2]; return 1;
    default: return 0;
  }
}

grit_status grit_fluid_geom_compile(const grit_geom_def *d, int id, double out[GRIT_FLUID_NGEOM], char *msg) {
  for (int i = 0; i < GRIT_FLUID_NGEOM; ++i) out[i] = 0.0;
  if (!d->fluid_ellipsoid) return GRIT_OK;
  double ax[3];
  if (!semi_axes(&d->shape, ax))
    return grit_set_error(msg, GRIT_ERR_UNSUPPORTED,
                          "geom %d: the ellipsoid fluid model needs a sphere, capsule, cylinder, ellipsoid or box", id);
  for (int i = 0; i < 5; ++i)
    if (!isfinite(d->fluid_coef[i]))
      return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "geom %d: fluid_coef[%d] is not finite", id, i);
  for (int i = 0; i < 3; ++i)
    if (!(ax[i] > 0.0 && isfinite(ax[i])))
      return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "geom %d: the fluid model's semi-axis %d is %g", id, i, ax[i]);
  const double vol = 4.0 / 3.0 * 3.14159265358979323846 * ax[0] * ax[1] * ax[2];
  const double k[3] = {lamb_k(ax[0], ax[1], ax[2]), lamb_k(ax[1], ax[2], ax[0]), lamb_k(ax[2], ax[0], ax[1])};
  const double s2[3] = {ax[0] * ax[0], ax[1] * ax[1], ax[2] * ax[2]};
  out[0] = 1.0;
  for (int i = 0; i < 5; ++i) out[1 + i] = d->fluid_coef[i];
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3, l = (i + 2) % 3;
    out[6 + i] = vol * k[i] / fmax(GRIT_FLUID_FLOOR, 2.0 - k[i]);
    out[9 + i] = vol / 5.0 * inertia_factor(s2[j], s2[l], k[j], k[l]);
    out[12 + i] = ax[i];
  }
  /* the angular drag's moments, as fluid_viscous would form them from the semi-axes s = out + 12 */
  const double *s = out + 12, pi = 3.14159265358979323846;
  const double smax = fmax(s[0], fmax(s[1], s[2])), smin = fmin(s[0], fmin(s[1], s[2]));
  const double smid = s[0] + s[1] + s[2] - smax - smin;
  out[15] = 8.0 / 15.0 * pi * smid * pow(smax, 4);
  for (int i = 0; i < 3; ++i) out[16 + i] = 8.0 / 15.0 * pi * s[i] * pow(fmax(s[(i + 1) % 3], s[(i + 2) % 3]), 4);
  return GRIT_OK;
}
