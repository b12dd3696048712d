/* SPDX-License-Identifier: Apache-2.0 */
/* grit/detail/math_generic.h — the math core, written once for any scalar type.
 *
 * Included by grit/math.h (double) and grit/math_dual.h (grit_dual) after the scalar macros of
 * grit/detail/scalar_*.h; never include it directly. No include guard on purpose: it is instantiated
 * once per scalar type.
 *
 * Conventions (docs/conventions.md):
 *   vec3   GS[3]
 *   mat3   GS[9], row-major: m[3*r + c]
 *   quat   GS[4] = (w, x, y, z), unit for rotations; R(q) rotates body-frame vectors into the world
 *   spatial vector GS[6] = (angular; linear), e.g. a twist (omega; v) or a wrench (torque; force),
 *          both expressed in the world frame and referred to the world origin
 *   spatial inertia: mass m, first moment h = m c (c the centre of mass), rotational inertia I (mat3)
 *          about the frame origin; see grit_si_* below.
 * Output arguments come first and may alias inputs unless a comment says otherwise. */

/* ------------------------------------------------------------------------------------------ vec3 */

static inline void GS_NAME(grit_v3_set)(GS r[3], GS x, GS y, GS z) {
  r[0] = x;
  r[1] = y;
  r[2] = z;
}

static inline void GS_NAME(grit_v3_copy)(GS r[3], const GS a[3]) {
  r[0] = a[0];
  r[1] = a[1];
  r[2] = a[2];
}

static inline void GS_NAME(grit_v3_zero)(GS r[3]) { r[0] = r[1] = r[2] = GS_C(0.0); }

static inline void GS_NAME(grit_v3_add)(GS r[3], const GS a[3], const GS b[3]) {
  for (int i = 0; i < 3; ++i) r[i] = GS_ADD(a[i], b[i]);
}

static inline void GS_NAME(grit_v3_sub)(GS r[3], const GS a[3], const GS b[3]) {
  for (int i = 0; i < 3; ++i) r[i] = GS_SUB(a[i], b[i]);
}

/* r = a * s for a scalar s. */
static inline void GS_NAME(grit_v3_scale)(GS r[3], const GS a[3], GS s) {
  for (int i = 0; i < 3; ++i) r[i] = GS_MUL(a[i], s);
}

/* r = a + s b (axpy). */
static inline void GS_NAME(grit_v3_addscl)(GS r[3], const GS a[3], const GS b[3], GS s) {
  for (int i = 0; i < 3; ++i) r[i] = GS_FMA(b[i], s, a[i]);
}

static inline GS GS_NAME(grit_v3_dot)(const GS a[3], const GS b[3]) {
  return GS_FMA(a[0], b[0], GS_FMA(a[1], b[1], GS_MUL(a[2], b[2])));
}

/* r = a x b; r may alias a or b. On dual numbers inlined always: GCC kept it out of line (six dual
 * products: its calls were 14 % of a planar walker's A,B, the spatial algebra's cross products). */
#if GS_IS_DUAL && defined(__GNUC__)
static inline __attribute__((always_inline)) void GS_NAME(grit_v3_cross)(GS r[3], const GS a[3], const GS b[3]) {
#else
static inline void GS_NAME(grit_v3_cross)(GS r[3], const GS a[3], const GS b[3]) {
#endif
  GS t[3];
  t[0] = GS_SUB(GS_MUL(a[1], b[2]), GS_MUL(a[2], b[1]));
  t[1] = GS_SUB(GS_MUL(a[2], b[0]), GS_MUL(a[0], b[2]));
  t[2] = GS_SUB(GS_MUL(a[0], b[1]), GS_MUL(a[1], b[0]));
  GS_NAME(grit_v3_copy)(r, t);
}

static inline GS GS_NAME(grit_v3_norm2)(const GS a[3]) { return GS_NAME(grit_v3_dot)(a, a); }

static inline GS GS_NAME(grit_v3_norm)(const GS a[3]) { return GS_SQRT(GS_NAME(grit_v3_dot)(a, a)); }

/* Normalizes a in place and returns its former norm; a zero vector is left unchanged. */
static inline GS GS_NAME(grit_v3_normalize)(GS a[3]) {
  GS n = GS_NAME(grit_v3_norm)(a);
  if (GS_V(n) > 0.0) {
    GS inv = GS_DIV(GS_C(1.0), n);
    GS_NAME(grit_v3_scale)(a, a, inv);
  }
  return n;
}

/* ------------------------------------------------------------------------------------------ mat3 */

static inline void GS_NAME(grit_m3_copy)(GS r[9], const GS a[9]) {
  for (int i = 0; i < 9; ++i) r[i] = a[i];
}

static inline void GS_NAME(grit_m3_identity)(GS r[9]) {
  for (int i = 0; i < 9; ++i) r[i] = GS_C(i % 4 == 0 ? 1.0 : 0.0);
}

static inline void GS_NAME(grit_m3_transpose)(GS r[9], const GS a[9]) {
  GS t[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) t[3 * j + i] = a[3 * i + j];
  GS_NAME(grit_m3_copy)(r, t);
}

/* r = a b; r may alias a or b. */
static inline void GS_NAME(grit_m3_mul)(GS r[9], const GS a[9], const GS b[9]) {
  GS t[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      t[3 * i + j] = GS_FMA(a[3 * i], b[j], GS_FMA(a[3 * i + 1], b[3 + j], GS_MUL(a[3 * i + 2], b[6 + j])));
  GS_NAME(grit_m3_copy)(r, t);
}

/* r = a b for a constant b: the same values, products by constants. */
static inline void GS_NAME(grit_m3_mul_c)(GS r[9], const GS a[9], const double b[9]) {
  GS t[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      t[3 * i + j] = GS_ADD(GS_SCALE(a[3 * i], b[j]),
                            GS_ADD(GS_SCALE(a[3 * i + 1], b[3 + j]), GS_SCALE(a[3 * i + 2], b[6 + j])));
  GS_NAME(grit_m3_copy)(r, t);
}

/* r = a^T b. */
static inline void GS_NAME(grit_m3_tmul)(GS r[9], const GS a[9], const GS b[9]) {
  GS t[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      t[3 * i + j] = GS_FMA(a[i], b[j], GS_FMA(a[3 + i], b[3 + j], GS_MUL(a[6 + i], b[6 + j])));
  GS_NAME(grit_m3_copy)(r, t);
}

/* r = a b^T. */
static inline void GS_NAME(grit_m3_mult)(GS r[9], const GS a[9], const GS b[9]) {
  GS t[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      t[3 * i + j] =
          GS_FMA(a[3 * i], b[3 * j], GS_FMA(a[3 * i + 1], b[3 * j + 1], GS_MUL(a[3 * i + 2], b[3 * j + 2])));
  GS_NAME(grit_m3_copy)(r, t);
}

/* r = m x; r may alias x. */
static inline void GS_NAME(grit_m3_mulv)(GS r[3], const GS m[9], const GS x[3]) {
  GS t[3];
  for (int i = 0; i < 3; ++i) t[i] = GS_NAME(grit_v3_dot)(m + 3 * i, x);
  GS_NAME(grit_v3_copy)(r, t);
}

/* r = m^T x; r may alias x. */
static inline void GS_NAME(grit_m3_tmulv)(GS r[3], const GS m[9], const GS x[3]) {
  GS t[3];
  for (int i = 0; i < 3; ++i) t[i] = GS_FMA(m[i], x[0], GS_FMA(m[3 + i], x[1], GS_MUL(m[6 + i], x[2])));
  GS_NAME(grit_v3_copy)(r, t);
}

/* r = [a]x, the skew-symmetric matrix with [a]x b = a x b. */
static inline void GS_NAME(grit_m3_skew)(GS r[9], const GS a[3]) {
  r[0] = GS_C(0.0);
  r[1] = GS_NEG(a[2]);
  r[2] = a[1];
  r[3] = a[2];
  r[4] = GS_C(0.0);
  r[5] = GS_NEG(a[0]);
  r[6] = GS_NEG(a[1]);
  r[7] = a[0];
  r[8] = GS_C(0.0);
}

/* ------------------------------------------------------------------------------------ quaternion */

static inline void GS_NAME(grit_quat_identity)(GS q[4]) {
  q[0] = GS_C(1.0);
  q[1] = q[2] = q[3] = GS_C(0.0);
}

static inline void GS_NAME(grit_quat_copy)(GS r[4], const GS q[4]) {
  for (int i = 0; i < 4; ++i) r[i] = q[i];
}

/* The conjugate, which is the inverse of a unit quaternion. */
static inline void GS_NAME(grit_quat_conj)(GS r[4], const GS q[4]) {
  r[0] = q[0];
  r[1] = GS_NEG(q[1]);
  r[2] = GS_NEG(q[2]);
  r[3] = GS_NEG(q[3]);
}

/* r = a ⊗ b (Hamilton product): rotating by r is rotating by b, then by a. r may alias a or b. */
static inline void GS_NAME(grit_quat_mul)(GS r[4], const GS a[4], const GS b[4]) {
  GS t[4];
  t[0] = GS_SUB(GS_SUB(GS_SUB(GS_MUL(a[0], b[0]), GS_MUL(a[1], b[1])), GS_MUL(a[2], b[2])), GS_MUL(a[3], b[3]));
  t[1] = GS_SUB(GS_ADD(GS_ADD(GS_MUL(a[0], b[1]), GS_MUL(a[1], b[0])), GS_MUL(a[2], b[3])), GS_MUL(a[3], b[2]));
  t[2] = GS_ADD(GS_ADD(GS_SUB(GS_MUL(a[0], b[2]), GS_MUL(a[1], b[3])), GS_MUL(a[2], b[0])), GS_MUL(a[3], b[1]));
  t[3] = GS_ADD(GS_SUB(GS_ADD(GS_MUL(a[0], b[3]), GS_MUL(a[1], b[2])), GS_MUL(a[2], b[1])), GS_MUL(a[3], b[0]));
  GS_NAME(grit_quat_copy)(r, t);
}

/* r = a ⊗ b for a constant b: the same values as grit_quat_mul, with products by constants. */
static inline void GS_NAME(grit_quat_mul_c)(GS r[4], const GS a[4], const double b[4]) {
  GS t[4];
  t[0] = GS_SUB(GS_SUB(GS_SUB(GS_SCALE(a[0], b[0]), GS_SCALE(a[1], b[1])), GS_SCALE(a[2], b[2])), GS_SCALE(a[3], b[3]));
  t[1] = GS_SUB(GS_ADD(GS_ADD(GS_SCALE(a[0], b[1]), GS_SCALE(a[1], b[0])), GS_SCALE(a[2], b[3])), GS_SCALE(a[3], b[2]));
  t[2] = GS_ADD(GS_ADD(GS_SUB(GS_SCALE(a[0], b[2]), GS_SCALE(a[1], b[3])), GS_SCALE(a[2], b[0])), GS_SCALE(a[3], b[1]));
  t[3] = GS_ADD(GS_SUB(GS_ADD(GS_SCALE(a[0], b[3]), GS_SCALE(a[1], b[2])), GS_SCALE(a[2], b[1])), GS_SCALE(a[3], b[0]));
  GS_NAME(grit_quat_copy)(r, t);
}

/* Normalizes q in place and returns its former norm; a zero quaternion becomes the identity. */
static inline GS GS_NAME(grit_quat_normalize)(GS q[4]) {
  GS n = GS_SQRT(GS_FMA(q[0], q[0], GS_FMA(q[1], q[1], GS_FMA(q[2], q[2], GS_MUL(q[3], q[3])))));
  if (GS_V(n) > 0.0) {
    GS inv = GS_DIV(GS_C(1.0), n);
    for (int i = 0; i < 4; ++i) q[i] = GS_MUL(q[i], inv);
  } else {
    GS_NAME(grit_quat_identity)(q);
  }
  return n;
}

/* r = R(q) x: rotates x by the unit quaternion q. r may alias x. */
static inline void GS_NAME(grit_quat_rotate)(GS r[3], const GS q[4], const GS x[3]) {
  /* x + 2 w (u x x) + 2 u x (u x x), with u the vector part. */
  GS t[3], u[3] = {q[1], q[2], q[3]}, ut[3];
  GS_NAME(grit_v3_cross)(t, u, x);
  for (int i = 0; i < 3; ++i) t[i] = GS_SCALE(t[i], 2.0);
  GS_NAME(grit_v3_cross)(ut, u, t);
  for (int i = 0; i < 3; ++i) r[i] = GS_ADD(GS_FMA(q[0], t[i], x[i]), ut[i]);
}

/* The same for a constant vector x (a model's offset or axis): the same values, and for dual numbers
 * products by a constant in place of full products. */
static inline void GS_NAME(grit_quat_rotate_c)(GS r[3], const GS q[4], const double x[3]) {
  GS t[3], u[3] = {q[1], q[2], q[3]}, ut[3];
  t[0] = GS_SUB(GS_SCALE(u[1], x[2]), GS_SCALE(u[2], x[1]));
  t[1] = GS_SUB(GS_SCALE(u[2], x[0]), GS_SCALE(u[0], x[2]));
  t[2] = GS_SUB(GS_SCALE(u[0], x[1]), GS_SCALE(u[1], x[0]));
  for (int i = 0; i < 3; ++i) t[i] = GS_SCALE(t[i], 2.0);
  GS_NAME(grit_v3_cross)(ut, u, t);
  for (int i = 0; i < 3; ++i) r[i] = GS_ADD(GS_FMA(q[0], t[i], GS_C(x[i])), ut[i]);
}

/* r = R(q)^T x: the inverse rotation. */
static inline void GS_NAME(grit_quat_rotate_inv)(GS r[3], const GS q[4], const GS x[3]) {
  GS c[4];
  GS_NAME(grit_quat_conj)(c, q);
  GS_NAME(grit_quat_rotate)(r, c, x);
}

/* The rotation matrix R(q) of a unit quaternion. */
static inline void GS_NAME(grit_quat_to_mat)(GS R[9], const GS q[4]) {
  const GS w = q[0], x = q[1], y = q[2], z = q[3];
  GS xx = GS_MUL(x, x), yy = GS_MUL(y, y), zz = GS_MUL(z, z);
  GS xy = GS_MUL(x, y), xz = GS_MUL(x, z), yz = GS_MUL(y, z);
  GS wx = GS_MUL(w, x), wy = GS_MUL(w, y), wz = GS_MUL(w, z);
  R[0] = GS_SUB(GS_C(1.0), GS_SCALE(GS_ADD(yy, zz), 2.0));
  R[1] = GS_SCALE(GS_SUB(xy, wz), 2.0);
  R[2] = GS_SCALE(GS_ADD(xz, wy), 2.0);
  R[3] = GS_SCALE(GS_ADD(xy, wz), 2.0);
  R[4] = GS_SUB(GS_C(1.0), GS_SCALE(GS_ADD(xx, zz), 2.0));
  R[5] = GS_SCALE(GS_SUB(yz, wx), 2.0);
  R[6] = GS_SCALE(GS_SUB(xz, wy), 2.0);
  R[7] = GS_SCALE(GS_ADD(yz, wx), 2.0);
  R[8] = GS_SUB(GS_C(1.0), GS_SCALE(GS_ADD(xx, yy), 2.0));
}

/* The unit quaternion of a rotation matrix (Shepperd's method: divides by the largest of the four
 * candidate magnitudes for accuracy). The result has w >= 0 when w is the largest component. */
static inline void GS_NAME(grit_quat_from_mat)(GS q[4], const GS R[9]) {
  const double tr = GS_V(R[0]) + GS_V(R[4]) + GS_V(R[8]);
  if (tr >= GS_V(R[0]) && tr >= GS_V(R[4]) && tr >= GS_V(R[8])) {
    GS s = GS_SCALE(GS_SQRT(GS_ADDC(GS_ADD(GS_ADD(R[0], R[4]), R[8]), 1.0)), 2.0); /* 4w */
    q[0] = GS_SCALE(s, 0.25);
    q[1] = GS_DIV(GS_SUB(R[7], R[5]), s);
    q[2] = GS_DIV(GS_SUB(R[2], R[6]), s);
    q[3] = GS_DIV(GS_SUB(R[3], R[1]), s);
  } else if (GS_V(R[0]) >= GS_V(R[4]) && GS_V(R[0]) >= GS_V(R[8])) {
    GS s = GS_SCALE(GS_SQRT(GS_ADDC(GS_SUB(GS_SUB(R[0], R[4]), R[8]), 1.0)), 2.0); /* 4x */
    q[0] = GS_DIV(GS_SUB(R[7], R[5]), s);
    q[1] = GS_SCALE(s, 0.25);
    q[2] = GS_DIV(GS_ADD(R[1], R[3]), s);
    q[3] = GS_DIV(GS_ADD(R[2], R[6]), s);
  } else if (GS_V(R[4]) >= GS_V(R[8])) {
    GS s = GS_SCALE(GS_SQRT(GS_ADDC(GS_SUB(GS_SUB(R[4], R[0]), R[8]), 1.0)), 2.0); /* 4y */
    q[0] = GS_DIV(GS_SUB(R[2], R[6]), s);
    q[1] = GS_DIV(GS_ADD(R[1], R[3]), s);
    q[2] = GS_SCALE(s, 0.25);
    q[3] = GS_DIV(GS_ADD(R[5], R[7]), s);
  } else {
    GS s = GS_SCALE(GS_SQRT(GS_ADDC(GS_SUB(GS_SUB(R[8], R[0]), R[4]), 1.0)), 2.0); /* 4z */
    q[0] = GS_DIV(GS_SUB(R[3], R[1]), s);
    q[1] = GS_DIV(GS_ADD(R[2], R[6]), s);
    q[2] = GS_DIV(GS_ADD(R[5], R[7]), s);
    q[3] = GS_SCALE(s, 0.25);
  }
  if (GS_V(q[0]) < 0.0)
    for (int i = 0; i < 4; ++i) q[i] = GS_NEG(q[i]);
}

/* Below this squared angle the exp/log maps use their Taylor series. The first omitted terms are
 * theta^6/46080 (exp) and x^10/11 (log), i.e. below 3e-17 at the threshold: double round-off. */
#define GRIT_QUAT_SERIES_THETA2 1e-4

/* The exponential map: the unit quaternion of the rotation vector theta (axis * angle, radians).
 * Smooth through theta = 0 (series in |theta|^2, so its dual version has exact derivatives there). */
static inline void GS_NAME(grit_quat_exp)(GS q[4], const GS theta[3]) {
  GS t2 = GS_NAME(grit_v3_norm2)(theta);
  GS c, s; /* c = cos(|theta|/2), s = sin(|theta|/2)/|theta| */
  if (GS_V(t2) < GRIT_QUAT_SERIES_THETA2) {
    /* cos(x/2) = 1 - x^2/8 + x^4/384 - ...,  sin(x/2)/x = 1/2 - x^2/48 + x^4/3840 - ... */
    c = GS_ADDC(GS_MUL(t2, GS_ADDC(GS_SCALE(t2, 1.0 / 384.0), -1.0 / 8.0)), 1.0);
    s = GS_ADDC(GS_MUL(t2, GS_ADDC(GS_SCALE(t2, 1.0 / 3840.0), -1.0 / 48.0)), 0.5);
  } else {
    GS t = GS_SQRT(t2), h = GS_SCALE(t, 0.5);
    c = GS_COS(h);
    s = GS_DIV(GS_SIN(h), t);
  }
  q[0] = c;
  for (int i = 0; i < 3; ++i) q[i + 1] = GS_MUL(theta[i], s);
}

/* The logarithm map: the rotation vector theta (|theta| <= pi) of the unit quaternion q. q and -q give
 * the same rotation, and the same theta (for a half turn, w == 0, the one whose first nonzero vector
 * component is positive). */
static inline void GS_NAME(grit_quat_log)(GS theta[3], const GS q[4]) {
  GS w = q[0], u[3] = {q[1], q[2], q[3]};
  int flip = GS_V(w) < 0.0; /* pick the representative with w >= 0: the shorter rotation */
  if (GS_V(w) == 0.0) { /* either sign of zero: a sign test on w alone would treat q and -q differently */
    const double c = GS_V(u[0]) != 0.0 ? GS_V(u[0]) : (GS_V(u[1]) != 0.0 ? GS_V(u[1]) : GS_V(u[2]));
    flip = c < 0.0;
  }
  if (flip) {
    w = GS_NEG(w);
    for (int i = 0; i < 3; ++i) u[i] = GS_NEG(u[i]);
  }
  GS s2 = GS_NAME(grit_v3_norm2)(u), f; /* theta = f u, f = 2 atan2(|u|, w) / |u| */
  if (GS_V(s2) < GRIT_QUAT_SERIES_THETA2 * GS_V(w) * GS_V(w)) {
    /* atan(x)/x = 1 - x^2/3 + x^4/5 - x^6/7 + x^8/9 - ... with x = |u|/w (Horner form) */
    GS x2 = GS_DIV(s2, GS_MUL(w, w));
    GS p = GS_ADDC(GS_SCALE(x2, 1.0 / 9.0), -1.0 / 7.0);
    p = GS_ADDC(GS_MUL(x2, p), 1.0 / 5.0);
    p = GS_ADDC(GS_MUL(x2, p), -1.0 / 3.0);
    p = GS_ADDC(GS_MUL(x2, p), 1.0);
    f = GS_DIV(GS_SCALE(p, 2.0), w);
  } else {
    GS s = GS_SQRT(s2);
    f = GS_DIV(GS_SCALE(GS_ATAN2(s, w), 2.0), s);
  }
  for (int i = 0; i < 3; ++i) theta[i] = GS_MUL(u[i], f);
}

/* Integrates a rotation on the manifold: q <- q ⊗ exp(omega h), omega the angular velocity in the
 * BODY frame (MuJoCo's convention for ball and free joints), then renormalizes. */
static inline void GS_NAME(grit_quat_integrate)(GS q[4], const GS omega[3], double h) {
  GS th[3], dq[4];
  for (int i = 0; i < 3; ++i) th[i] = GS_SCALE(omega[i], h);
  GS_NAME(grit_quat_exp)(dq, th);
  GS_NAME(grit_quat_mul)(q, q, dq);
  GS_NAME(grit_quat_normalize)(q);
}

/* The body-frame rotation vector that carries qa to qb: log(conj(qa) ⊗ qb), so that
 * grit_quat_integrate(qa, result, 1) == qb. The tangent-space difference used for state errors. */
static inline void GS_NAME(grit_quat_diff)(GS theta[3], const GS qa[4], const GS qb[4]) {
  GS c[4], d[4];
  GS_NAME(grit_quat_conj)(c, qa);
  GS_NAME(grit_quat_mul)(d, c, qb);
  GS_NAME(grit_quat_log)(theta, d);
}

/* The unit quaternion of a rotation by `angle` radians about the unit `axis`. */
static inline void GS_NAME(grit_quat_from_axis_angle)(GS q[4], const GS axis[3], GS angle) {
  GS h = GS_SCALE(angle, 0.5), s = GS_SIN(h);
  q[0] = GS_COS(h);
  for (int i = 0; i < 3; ++i) q[i + 1] = GS_MUL(axis[i], s);
}

/* The same about a constant axis. */
static inline void GS_NAME(grit_quat_from_axis_angle_c)(GS q[4], const double axis[3], GS angle) {
  GS h = GS_SCALE(angle, 0.5), s = GS_SIN(h);
  q[0] = GS_COS(h);
  for (int i = 0; i < 3; ++i) q[i + 1] = GS_SCALE(s, axis[i]);
}

/* -------------------------------------------------------------------------------- rigid transform */
/* A rigid transform (p, R) maps a point x of its child frame to p + R x in its parent frame. */

/* (p, R) = (p1, R1) ∘ (p2, R2): first (p2, R2), then (p1, R1). Outputs must not alias inputs. */
static inline void GS_NAME(grit_tf_compose)(GS p[3], GS R[9], const GS p1[3], const GS R1[9], const GS p2[3],
                                             const GS R2[9]) {
  GS_NAME(grit_m3_mulv)(p, R1, p2);
  GS_NAME(grit_v3_add)(p, p, p1);
  GS_NAME(grit_m3_mul)(R, R1, R2);
}

/* grit_tf_compose for a constant (p2, R2), e.g. a geometry's pose in its body: the same values. */
static inline void GS_NAME(grit_tf_compose_c)(GS p[3], GS R[9], const GS p1[3], const GS R1[9], const double p2[3],
                                               const double R2[9]) {
  GS t[3];
  for (int i = 0; i < 3; ++i)
    t[i] = GS_ADD(GS_SCALE(R1[3 * i], p2[0]), GS_ADD(GS_SCALE(R1[3 * i + 1], p2[1]), GS_SCALE(R1[3 * i + 2], p2[2])));
  GS_NAME(grit_v3_add)(p, t, p1);
  GS_NAME(grit_m3_mul_c)(R, R1, R2);
}

/* y = p + R x for a constant x: the same values as grit_tf_apply. y must not alias p or R. */
static inline void GS_NAME(grit_tf_apply_c)(GS y[3], const GS p[3], const GS R[9], const double x[3]) {
  GS t[3];
  for (int i = 0; i < 3; ++i)
    t[i] = GS_ADD(GS_SCALE(R[3 * i], x[0]), GS_ADD(GS_SCALE(R[3 * i + 1], x[1]), GS_SCALE(R[3 * i + 2], x[2])));
  GS_NAME(grit_v3_add)(y, t, p);
}

/* y = p + R x. y may alias x. */
static inline void GS_NAME(grit_tf_apply)(GS y[3], const GS p[3], const GS R[9], const GS x[3]) {
  GS_NAME(grit_m3_mulv)(y, R, x);
  GS_NAME(grit_v3_add)(y, y, p);
}

/* x = R^T (y - p), the inverse of grit_tf_apply. */
static inline void GS_NAME(grit_tf_apply_inv)(GS x[3], const GS p[3], const GS R[9], const GS y[3]) {
  GS t[3];
  GS_NAME(grit_v3_sub)(t, y, p);
  GS_NAME(grit_m3_tmulv)(x, R, t);
}

/* ------------------------------------------------------------------------------- spatial vectors */
/* Spatial vectors are (angular; linear) pairs, in world coordinates and referred to the world
 * origin: a twist (omega; v_O) where v_O is the velocity of the body point at the origin; a wrench
 * (tau_O; f). A point p of the body moves at v_O + omega x p. */

static inline void GS_NAME(grit_sv_zero)(GS r[6]) {
  for (int i = 0; i < 6; ++i) r[i] = GS_C(0.0);
}

static inline void GS_NAME(grit_sv_add)(GS r[6], const GS a[6], const GS b[6]) {
  for (int i = 0; i < 6; ++i) r[i] = GS_ADD(a[i], b[i]);
}

static inline GS GS_NAME(grit_sv_dot)(const GS a[6], const GS b[6]) {
  return GS_ADD(GS_NAME(grit_v3_dot)(a, b), GS_NAME(grit_v3_dot)(a + 3, b + 3));
}

/* r = a ×m b, the motion cross product: (wa x wb; wa x vb + va x wb). r must not alias. */
static inline void GS_NAME(grit_sv_cross_motion)(GS r[6], const GS a[6], const GS b[6]) {
  GS t[3];
  GS_NAME(grit_v3_cross)(r, a, b);
  GS_NAME(grit_v3_cross)(r + 3, a, b + 3);
  GS_NAME(grit_v3_cross)(t, a + 3, b);
  GS_NAME(grit_v3_add)(r + 3, r + 3, t);
}

/* r = a ×f f, the force cross product: (wa x tau + va x f; wa x f). r must not alias. */
static inline void GS_NAME(grit_sv_cross_force)(GS r[6], const GS a[6], const GS f[6]) {
  GS t[3];
  GS_NAME(grit_v3_cross)(r, a, f);
  GS_NAME(grit_v3_cross)(t, a + 3, f + 3);
  GS_NAME(grit_v3_add)(r, r, t);
  GS_NAME(grit_v3_cross)(r + 3, a, f + 3);
}

/* Velocity of the body point p (world) for the twist t: v_O + omega x p. */
static inline void GS_NAME(grit_sv_point_velocity)(GS r[3], const GS t[6], const GS p[3]) {
  GS_NAME(grit_v3_cross)(r, t, p);
  GS_NAME(grit_v3_add)(r, r, t + 3);
}

/* ------------------------------------------------------------------------------ spatial inertia */
/* A spatial inertia referred to the world origin: mass m, first moment h = m c, and the rotational
 * inertia I about the origin (= I_c + m ([c]x^T [c]x), parallel axis theorem). Inertias of bodies
 * rigidly attached to each other add. */
typedef struct GS_NAME(grit_sinertia) {
  GS m;
  GS h[3];
  GS I[9];
} GS_NAME(grit_sinertia);

/* The spatial inertia of a body of mass m, centre of mass c (world), and rotational inertia about the
 * centre of mass Ic (world frame, mat3). */
/* grit_si_from_body for a constant mass: the same values. */
static inline void GS_NAME(grit_si_from_body_c)(GS_NAME(grit_sinertia) * s, double m, const GS c[3], const GS Ic[9]) {
  s->m = GS_C(m);
  for (int i = 0; i < 3; ++i) s->h[i] = GS_SCALE(c[i], m);
  GS c2 = GS_NAME(grit_v3_norm2)(c);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      GS t = GS_MUL(c[i], c[j]);
      if (i == j) t = GS_SUB(t, c2);
      s->I[3 * i + j] = GS_SUB(Ic[3 * i + j], GS_SCALE(t, m));
    }
}

static inline void GS_NAME(grit_si_from_body)(GS_NAME(grit_sinertia) * s, GS m, const GS c[3], const GS Ic[9]) {
  s->m = m;
  GS_NAME(grit_v3_scale)(s->h, c, m);
  /* I = Ic + m (|c|^2 1 - c c^T) */
  GS c2 = GS_NAME(grit_v3_norm2)(c);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      GS t = GS_MUL(c[i], c[j]);
      if (i == j) t = GS_SUB(t, c2);
      s->I[3 * i + j] = GS_SUB(Ic[3 * i + j], GS_MUL(m, t));
    }
}

static inline void GS_NAME(grit_si_add)(GS_NAME(grit_sinertia) * r, const GS_NAME(grit_sinertia) * a,
                                         const GS_NAME(grit_sinertia) * b) {
  r->m = GS_ADD(a->m, b->m);
  GS_NAME(grit_v3_add)(r->h, a->h, b->h);
  for (int i = 0; i < 9; ++i) r->I[i] = GS_ADD(a->I[i], b->I[i]);
}

/* f = S t: the momentum (wrench-like) of the twist t: (I w + h x v; m v - h x w). f must not alias t. */
static inline void GS_NAME(grit_si_apply)(GS f[6], const GS_NAME(grit_sinertia) * s, const GS t[6]) {
  GS a[3];
  GS_NAME(grit_m3_mulv)(f, s->I, t);
  GS_NAME(grit_v3_cross)(a, s->h, t + 3);
  GS_NAME(grit_v3_add)(f, f, a);
  GS_NAME(grit_v3_cross)(a, s->h, t);
  for (int i = 0; i < 3; ++i) f[3 + i] = GS_SUB(GS_MUL(s->m, t[3 + i]), a[i]);
}
