/* SPDX-License-Identifier: Apache-2.0 */
/* collision_gjk_newton.c — GJK's jump on a pair of smooth curved cores (ellipsoids, cylinders' rims, points):
 * Newton's method on the support mapping, where GJK itself converges linearly.
 *
 * For separated cores the closest point of D = A - B is v = w(u*), u* the unit direction minimising
 * h_D(u) = u.w(u), w(u) = s_A(u) - s_B(-u) (h_D's gradient). On the unit sphere h_D's gradient is P w (P the
 * projection off u) and its Hessian P J P + delta P, J = dw/du = J_A(u) + J_B(-u) (the supports' Jacobians,
 * symmetric, positive semidefinite) and delta = -u.w > 0 the distance bound: positive definite, so the 2 x 2
 * Newton step in u's tangent plane always exists, and converges quadratically where the supports are smooth.
 * GJK continues from the single point w(u) when it is strictly nearer the origin than its v (as the jumps of
 * collision_gjk_jump.c): its termination test is unchanged, so the answer is certified as before, and it is
 * met at the next support instead of after GJK's ~20 iterations of linear tail, which stall at ~1e-11 m on
 * the simplex's thin triangles (collision_gjk.c's header); from one point there is no such round-off.
 * A cylinder's faces are kinks of h_D: a step across a cap gives up; a step across the side continues on the
 * great circle normal to the axis (the side's closest point then lies on a segment: a 1-D Newton). Overlapping
 * cores end with u.w >= 0 and take no jump (GJK goes on to EPA as before); the polish's separations (epa_polish)
 * take it. */
#include <math.h>
#include <stddef.h>

#include "collision_gjk_internal.h"
#include "geometry_internal.h"
#include "grit/math.h"

/* Newton steps at most (quadratic convergence: ~4 from GJK's first iterations); converged when the step is
 * below NEWTON_TOL rad (the next error its square); steps longer than NEWTON_STEP_MAX rad are shortened. */
#define NEWTON_MAX 12
#define NEWTON_TOL 1e-9
#define NEWTON_STEP_MAX 0.5

/* The core point of X extreme in the world direction u, and the bilinear form t_i . J t_j of its support's
 * Jacobian (world frame) on the two tangents t (J[0], J[1], J[2]: 11, 12, 22; t is read only). 0 where the
 * support is not smooth (a cylinder's cap or side face, to round-off: a kink of h there, no Newton). */
static int support_jac(const body *X, const double u[3], double t[2][3], double p[3], double J[3]) {
  double dl[3], a[3], b[3], ol[3];
  const double *z = X->s->size;
  grit_m3_tmulv(dl, X->R, u);
  grit_m3_tmulv(a, X->R, t[0]);
  grit_m3_tmulv(b, X->R, t[1]);
  J[0] = J[1] = J[2] = 0.0;
  switch (X->s->type) {
  case GRIT_GEOM_ELLIPSOID: { /* s = D^2 d / |D d|: J = (D^2 - q q^T / n^2) / n, q = D^2 d, n = |D d| */
    double q[3], n2 = 0.0;
    for (int k = 0; k < 3; ++k) q[k] = z[k] * z[k] * dl[k], n2 += q[k] * dl[k];
    const double n = sqrt(n2);
    if (!(n > 0.0)) return 0;
    for (int k = 0; k < 3; ++k) ol[k] = q[k] / n;
    const double qa = grit_v3_dot(q, a), qb = grit_v3_dot(q, b);
    double aa = 0.0, ab = 0.0, bb = 0.0;
    for (int k = 0; k < 3; ++k) aa += z[k] * z[k] * a[k] * a[k], ab += z[k] * z[k] * a[k] * b[k], bb += z[k] * z[k] * b[k] * b[k];
    J[0] = (aa - qa * qa / n2) / n, J[1] = (ab - qa * qb / n2) / n, J[2] = (bb - qb * qb / n2) / n;
    break;
  }
  case GRIT_GEOM_CYLINDER: { /* the rim: s_xy = r d_xy / rho, J_xy = r (I - e e^T) / rho, e = d_xy / rho */
    const double rho = sqrt(dl[0] * dl[0] + dl[1] * dl[1]);
    if (!(rho > 1e-9) || !(fabs(dl[2]) > 1e-9)) return 0; /* u is a unit vector: a face to ~1e-9 rad */
    const double e0 = dl[0] / rho, e1 = dl[1] / rho, ea = e0 * a[0] + e1 * a[1], eb = e0 * b[0] + e1 * b[1];
    const double c = z[0] / rho;
    ol[0] = z[0] * e0, ol[1] = z[0] * e1, ol[2] = dl[2] > 0.0 ? z[1] : -z[1];
    J[0] = c * (a[0] * a[0] + a[1] * a[1] - ea * ea), J[1] = c * (a[0] * b[0] + a[1] * b[1] - ea * eb);
    J[2] = c * (b[0] * b[0] + b[1] * b[1] - eb * eb);
    break;
  }
  case GRIT_GEOM_SPHERE: ol[0] = ol[1] = ol[2] = 0.0; break;
  default: return 0;
  }
  grit_tf_apply(p, X->p, X->R, ol);
  return 1;
}

/* The core point of X extreme in the world direction u, by the shape's support. */
static void core_point(const body *X, const double u[3], double p[3]) {
  double dl[3], ol[3];
  grit_m3_tmulv(dl, X->R, u);
  grit_shape_core_support(X->s, dl, ol);
  grit_tf_apply(p, X->p, X->R, ol);
}

/* Whether the step from u0 to u1 (world directions toward X's support) crosses a face of a cylinder X: 1 its
 * side (the local z changes sign), 2 a cap (the local xy direction turns by more than 90 degrees), else 0. h_D
 * has a kink there, its gradient jumps and Newton's model is void: the step is not taken. */
static int crosses_face(const body *X, const double u0[3], const double u1[3]) {
  if (X->s->type != GRIT_GEOM_CYLINDER) return 0;
  double d0[3], d1[3];
  grit_m3_tmulv(d0, X->R, u0);
  grit_m3_tmulv(d1, X->R, u1);
  return (d0[2] > 0.0) != (d1[2] > 0.0) ? 1 : d0[0] * d1[0] + d0[1] * d1[1] <= 0.0 ? 2 : 0;
}

/* A unit tangent pair of the unit u. */
static void tangents(const double u[3], double t[2][3]) {
  const double ax = fabs(u[0]), ay = fabs(u[1]), az = fabs(u[2]);
  double e[3] = {0, 0, 0};
  e[ax <= ay && ax <= az ? 0 : ay <= az ? 1 : 2] = 1.0;
  grit_v3_cross(t[0], u, e);
  grit_v3_normalize(t[0]);
  grit_v3_cross(t[1], u, t[0]);
}

/* A cylinder's side (a segment swept by the radius, h_D's kink across it) is met by Newton on the great circle
 * of directions normal to its axis ax: u stays normal to ax, the one tangent is t = ax x u, the cylinder's
 * support c + r (+-u) + z ax (z does not enter t.w or u.w: z = 0 on the way) and its curvature along t is r. */
typedef struct side {
  const body *C; /* the cylinder whose side holds the closest point, or NULL */
  double ax[3];
  double sgn; /* +1: C is A (support along u), -1: C is B (along -u) */
} side;

static void side_point(const side *S, const double u[3], double z, double q[3]) {
  for (int k = 0; k < 3; ++k) q[k] = S->C->p[k] + S->sgn * S->C->s->size[0] * u[k] + z * S->ax[k];
}

int grit_gjk_newton_jump(const body *A, const body *B, simplex *s, double v[3], double touch2) {
  const double vv = grit_v3_norm2(v);
  if (!(vv > touch2)) return 0;
  double u[3], t[2][3], a[3], b[3], w[3], JA[3], JB[3];
  grit_v3_scale(u, v, -1.0 / sqrt(vv));
  side S = {NULL, {0, 0, 0}, 0.0};
  int converged = 0;
  for (int k = 0; k < NEWTON_MAX && !converged; ++k) {
    double nu[3] = {-u[0], -u[1], -u[2]}, x0, x1 = 0.0;
    if (S.C) { /* on the great circle normal to the side's axis */
      grit_v3_cross(t[0], S.ax, u);
      grit_v3_copy(t[1], S.ax);
      if (S.C == A) side_point(&S, u, 0.0, a), JA[0] = S.C->s->size[0];
      else if (!support_jac(A, u, t, a, JA)) return 0;
      if (S.C == B) side_point(&S, u, 0.0, b), JB[0] = S.C->s->size[0];
      else if (!support_jac(B, nu, t, b, JB)) return 0;
      grit_v3_sub(w, a, b);
      const double h00 = JA[0] + JB[0] - grit_v3_dot(u, w);
      if (!(h00 > 0.0)) return 0;
      x0 = -grit_v3_dot(t[0], w) / h00;
    } else {
      tangents(u, t);
      if (!support_jac(A, u, t, a, JA) || !support_jac(B, nu, t, b, JB)) return 0;
      grit_v3_sub(w, a, b);
      const double delta = -grit_v3_dot(u, w); /* may be < 0 on the way (not yet a separating direction) */
      const double g0 = grit_v3_dot(t[0], w), g1 = grit_v3_dot(t[1], w);
      const double h00 = JA[0] + JB[0] + delta, h01 = JA[1] + JB[1], h11 = JA[2] + JB[2] + delta;
      const double det = h00 * h11 - h01 * h01;
      if (!(h00 > 0.0 && det > 0.0)) return 0; /* not a minimum's neighbourhood */
      x0 = -(h11 * g0 - h01 * g1) / det, x1 = -(h00 * g1 - h01 * g0) / det;
    }
    const double len = sqrt(x0 * x0 + x1 * x1);
    if (!(len == len)) return 0;
    converged = len <= NEWTON_TOL;
    if (len > NEWTON_STEP_MAX) x0 *= NEWTON_STEP_MAX / len, x1 *= NEWTON_STEP_MAX / len;
    double u1[3], nu1[3];
    for (int i = 0; i < 3; ++i) u1[i] = u[i] + x0 * t[0][i] + x1 * t[1][i];
    grit_v3_normalize(u1);
    grit_v3_scale(nu1, u1, -1.0);
    const int fa = S.C == A ? 0 : crosses_face(A, u, u1), fb = S.C == B ? 0 : crosses_face(B, nu, nu1);
    if (fa == 2 || fb == 2 || (fa && fb) || ((fa || fb) && S.C)) return 0; /* a cap, two sides: no Newton */
    if (fa || fb) { /* a side: onto its great circle, from u */
      S.C = fa ? A : B;
      S.sgn = fa ? 1.0 : -1.0;
      grit_v3_set(S.ax, S.C->R[2], S.C->R[5], S.C->R[8]);
      grit_v3_addscl(u, u, S.ax, -grit_v3_dot(u, S.ax));
      if (!(grit_v3_normalize(u) > 0.0)) return 0;
      converged = 0;
      continue;
    }
    grit_v3_copy(u, u1);
  }
  if (!converged) return 0;
  double nu[3] = {-u[0], -u[1], -u[2]};
  if (S.C) { /* the other's point by its support, the side's at its axial coordinate (clamped to the side) */
    const body *O = S.C == A ? B : A;
    double *o = S.C == A ? b : a, *q = S.C == A ? a : b, d[3];
    core_point(O, S.C == A ? nu : u, o);
    grit_v3_sub(d, o, S.C->p);
    const double h = S.C->s->size[1];
    side_point(&S, u, fmin(h, fmax(-h, grit_v3_dot(d, S.ax))), q);
  } else {
    core_point(A, u, a); /* the shapes' own supports: the point GJK's next support would give along u */
    core_point(B, nu, b);
  }
  grit_v3_sub(w, a, b);
  const double ww = grit_v3_norm2(w);
  if (!(grit_v3_dot(u, w) < 0.0)) return 0; /* u does not separate: the cores overlap */
  if (!(ww < vv) || ww <= touch2) return 0;
  sv x;
  grit_v3_copy(x.w, w);
  grit_v3_copy(x.a, a);
  grit_v3_copy(x.b, b);
  s->v[0] = x;
  s->n = 1;
  set_lam(s->lam, 1, 0, 0, 0);
  grit_v3_copy(v, w);
  return 1;
}
