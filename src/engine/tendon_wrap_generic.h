/* SPDX-License-Identifier: Apache-2.0 */
/* tendon_wrap_generic.h — a spatial tendon's path around a sphere or a cylinder, written once for any
 * scalar type (included by constraints_extra.c once per scalar, before constraints_extra_generic.h).
 *
 * The geometry is MuJoCo's (its tendon wrapping, docs/contact.md): in the plane through the geometry's
 * centre and the two path points (a sphere), or across the axis (a cylinder: then a helix, its height
 * spread in proportion to the lengths), the path leaves each point along a tangent to the circle of
 * the radius and follows the arc between the two tangent points; of the two candidate pairs of
 * tangents, the one towards the side site (or, without one, with the closer tangent points) whose
 * straight parts do not cross. No wrap when the straight segment clears the circle (on the side
 * site's side), or a point lies inside it. Branches are taken on values; the lengths and points are
 * smooth functions within each branch. */

/* Whether the 2-D segments a-b and c-d cross (values only). */
static int GS_NAME(wrap_segments_cross)(const GS a[2], const GS b[2], const GS c[2], const GS d[2]) {
  const double ax = GS_V(a[0]), ay = GS_V(a[1]), bx = GS_V(b[0]), by = GS_V(b[1]);
  const double cx = GS_V(c[0]), cy = GS_V(c[1]), dx = GS_V(d[0]), dy = GS_V(d[1]);
  const double det = (dy - cy) * (bx - ax) - (dx - cx) * (by - ay);
  if (fabs(det) < 1e-15) return 0;
  const double s = ((dx - cx) * (ay - cy) - (dy - cy) * (ax - cx)) / det;
  const double t = ((bx - ax) * (ay - cy) - (by - ay) * (ax - cx)) / det;
  return s >= 0 && s <= 1 && t >= 0 && t <= 1;
}

/* The 2-D wrap of the path d0 = (d[0], d[1]) -> d1 = (d[2], d[3]) around the circle of radius r at the
 * origin: the tangent points into pnt[4] and the arc length, or -1 for no wrap. sd: the side point on
 * the circle, or NULL. */
static GS GS_NAME(wrap_circle)(GS pnt[4], const GS d[4], const GS *sd, double r) {
  const GS l0 = GS_FMA(d[0], d[0], GS_MUL(d[1], d[1])), l1 = GS_FMA(d[2], d[2], GS_MUL(d[3], d[3]));
  const double r2 = r * r;
  if (GS_V(l0) < r2 || GS_V(l1) < r2 || r < 1e-15) return GS_C(-1.0);
  const double dif[2] = {GS_V(d[2]) - GS_V(d[0]), GS_V(d[3]) - GS_V(d[1])}, dd = dif[0] * dif[0] + dif[1] * dif[1];
  if (dd < 1e-15) return GS_C(-1.0);
  /* the point of the segment nearest the centre: clear of the circle (on the side's side): no wrap */
  double a = -(dif[0] * GS_V(d[0]) + dif[1] * GS_V(d[1])) / dd;
  a = a < 0 ? 0 : a > 1 ? 1 : a;
  const double near[2] = {GS_V(d[0]) + a * dif[0], GS_V(d[1]) + a * dif[1]};
  if (near[0] * near[0] + near[1] * near[1] > r2 && (!sd || GS_V(sd[0]) * near[0] + GS_V(sd[1]) * near[1] >= 0))
    return GS_C(-1.0);
  const GS s0 = GS_SQRT(GS_ADDC(l0, -r2)), s1 = GS_SQRT(GS_ADDC(l1, -r2));
  GS sol[2][4];
  double good[2];
  for (int i = 0; i < 2; ++i) { /* the two pairs of tangent points, turning either way */
    const double sg = i == 0 ? r : -r;
    sol[i][0] = GS_DIV(GS_FMA(GS_SCALE(d[1], sg), s0, GS_SCALE(d[0], r2)), l0);
    sol[i][1] = GS_DIV(GS_SUB(GS_SCALE(d[1], r2), GS_MUL(GS_SCALE(d[0], sg), s0)), l0);
    sol[i][2] = GS_DIV(GS_SUB(GS_SCALE(d[2], r2), GS_MUL(GS_SCALE(d[3], sg), s1)), l1);
    sol[i][3] = GS_DIV(GS_FMA(GS_SCALE(d[2], sg), s1, GS_SCALE(d[3], r2)), l1);
    const double m[2] = {GS_V(sol[i][0]) + GS_V(sol[i][2]), GS_V(sol[i][1]) + GS_V(sol[i][3])};
    const double e[2] = {GS_V(sol[i][0]) - GS_V(sol[i][2]), GS_V(sol[i][1]) - GS_V(sol[i][3])};
    const double mn = sqrt(m[0] * m[0] + m[1] * m[1]);
    good[i] = sd ? (mn > 0 ? (m[0] * GS_V(sd[0]) + m[1] * GS_V(sd[1])) / mn : 0) : -(e[0] * e[0] + e[1] * e[1]);
    if (GS_NAME(wrap_segments_cross)(d, sol[i], d + 2, sol[i] + 2)) good[i] = -10000;
  }
  const int k = good[0] > good[1] ? 0 : 1;
  for (int j = 0; j < 4; ++j) pnt[j] = sol[k][j];
  if (GS_NAME(wrap_segments_cross)(d, pnt, d + 2, pnt + 2)) return GS_C(-1.0);
  /* the arc from pnt0 to pnt1 turning the chosen way: the angle in [0, pi], or its complement */
  const GS cr = GS_SUB(GS_MUL(pnt[0], pnt[3]), GS_MUL(pnt[1], pnt[2]));
  GS ang = GS_ATAN2(GS_FABS(cr), GS_FMA(pnt[0], pnt[2], GS_MUL(pnt[1], pnt[3])));
  const double turn = -GS_V(cr); /* MuJoCo's p0y p1x - p0x p1y */
  if ((turn > 0 && k == 1) || (turn < 0 && k == 0)) ang = GS_SUB(GS_C(2.0 * 3.14159265358979323846), ang);
  return GS_SCALE(ang, r);
}

static GS GS_NAME(wrap_asin)(GS x) { return GS_ATAN2(x, GS_SQRT(GS_SUB(GS_C(1.0), GS_MUL(x, x)))); }

/* The 2-D wrap when the side point lies inside the circle (MuJoCo's inside wrap): the path touches the
 * circle at one point between the two ends, found by Newton's method on
 * f(z) = asin(A z) + asin(B z) - 2 asin(z) + G (A = r/|d0|, B = r/|d1|, G the angle at the centre);
 * into pnt[4] (twice), and 0; -1 for no wrap. Where MuJoCo's iteration gives up it keeps the mean
 * direction, as it does. */
static GS GS_NAME(wrap_inside)(GS pnt[4], const GS d[4], double r) {
  const GS len0 = GS_SQRT(GS_FMA(d[0], d[0], GS_MUL(d[1], d[1]))), len1 = GS_SQRT(GS_FMA(d[2], d[2], GS_MUL(d[3], d[3])));
  const GS dx = GS_SUB(d[2], d[0]), dy = GS_SUB(d[3], d[1]), dd = GS_FMA(dx, dx, GS_MUL(dy, dy));
  if (GS_V(len0) <= r || GS_V(len1) <= r || r < 1e-15 || GS_V(len0) < 1e-15 || GS_V(len1) < 1e-15) return GS_C(-1.0);
  if (GS_V(dd) > 1e-15) { /* the segment crosses the circle: no wrap */
    const double a = -(GS_V(dx) * GS_V(d[0]) + GS_V(dy) * GS_V(d[1])) / GS_V(dd);
    const double t[2] = {GS_V(d[0]) + a * GS_V(dx), GS_V(d[1]) + a * GS_V(dy)};
    if (a > 0 && a < 1 && sqrt(t[0] * t[0] + t[1] * t[1]) <= r) return GS_C(-1.0);
  }
  GS mx = GS_SCALE(GS_ADD(d[0], d[2]), 0.5), my = GS_SCALE(GS_ADD(d[1], d[3]), 0.5);
  const GS mn = GS_SQRT(GS_FMA(mx, mx, GS_MUL(my, my)));
  pnt[0] = pnt[2] = GS_SCALE(GS_DIV(mx, mn), r);
  pnt[1] = pnt[3] = GS_SCALE(GS_DIV(my, mn), r);
  const GS A = GS_DIV(GS_C(r), len0), B = GS_DIV(GS_C(r), len1);
  const GS cosG = GS_DIV(GS_SUB(GS_FMA(len0, len0, GS_MUL(len1, len1)), dd), GS_SCALE(GS_MUL(len0, len1), 2.0));
  if (GS_V(cosG) < -1 + 1e-15) return GS_C(-1.0);
  if (GS_V(cosG) > 1 - 1e-15) return GS_C(0.0);
  const GS G = GS_ATAN2(GS_SQRT(GS_SUB(GS_C(1.0), GS_MUL(cosG, cosG))), cosG);
#define WRAP_F(z) \
  GS_ADD(GS_SUB(GS_ADD(GS_NAME(wrap_asin)(GS_MUL(A, z)), GS_NAME(wrap_asin)(GS_MUL(B, z))), GS_SCALE(GS_NAME(wrap_asin)(z), 2.0)), G)
  GS z = GS_C(1 - 1e-7), f = WRAP_F(z);
  if (GS_V(f) > 0) return GS_C(0.0);
  int it = 0;
  for (; it < 20 && fabs(GS_V(f)) > 1e-6; ++it) {
    const GS za = GS_MUL(z, A), zb = GS_MUL(z, B);
    const GS df = GS_SUB(GS_ADD(GS_DIV(A, GS_FMAX(GS_C(1e-15), GS_SQRT(GS_SUB(GS_C(1.0), GS_MUL(za, za))))),
                                GS_DIV(B, GS_FMAX(GS_C(1e-15), GS_SQRT(GS_SUB(GS_C(1.0), GS_MUL(zb, zb)))))),
                         GS_DIV(GS_C(2.0), GS_FMAX(GS_C(1e-15), GS_SQRT(GS_SUB(GS_C(1.0), GS_MUL(z, z))))));
    if (GS_V(df) > -1e-15) return GS_C(0.0);
    const GS z1 = GS_SUB(z, GS_DIV(f, df));
    if (GS_V(z1) > GS_V(z)) return GS_C(0.0);
    z = z1;
    f = WRAP_F(z);
    if (GS_V(f) > 1e-6) return GS_C(0.0);
  }
#undef WRAP_F
  if (it >= 20) return GS_C(0.0);
  /* the touching point: turned by ang from the end on the positive side */
  const int first = GS_V(d[0]) * GS_V(d[3]) - GS_V(d[1]) * GS_V(d[2]) > 0;
  const GS *v = first ? d : d + 2, vn = first ? len0 : len1;
  const GS ang = GS_SUB(GS_NAME(wrap_asin)(z), GS_NAME(wrap_asin)(GS_MUL(first ? A : B, z)));
  const GS c = GS_COS(ang), s = GS_SIN(ang), vx = GS_DIV(v[0], vn), vy = GS_DIV(v[1], vn);
  pnt[0] = pnt[2] = GS_SCALE(GS_SUB(GS_MUL(c, vx), GS_MUL(s, vy)), r);
  pnt[1] = pnt[3] = GS_SCALE(GS_FMA(s, vx, GS_MUL(c, vy)), r);
  return GS_C(0.0);
}

/* The wrap of the path x0 -> x1 (world) around geometry g (sphere or cylinder, at gp, gR in the world),
 * with side point `side` (world) or NULL: the tangent points w[0..2], w[3..5] (world) and the length
 * between them, or -1 for no wrap. */
static GS GS_NAME(tendon_wrap)(const grit_model *m, int g, const GS gp[3], const GS gR[9], const GS x0[3],
                               const GS x1[3], const GS *side, GS w[6]) {
  const double r = m->geom_shape[g].size[0];
  const int sphere = m->geom_shape[g].type == GRIT_GEOM_SPHERE;
  GS p[2][3], t[3], ax[2][3];
  GS_NAME(grit_v3_sub)(t, x0, gp);
  GS_NAME(grit_m3_tmulv)(p[0], gR, t);
  GS_NAME(grit_v3_sub)(t, x1, gp);
  GS_NAME(grit_m3_tmulv)(p[1], gR, t);
  if (GS_V(GS_NAME(grit_v3_norm)(p[0])) < 1e-15 || GS_V(GS_NAME(grit_v3_norm)(p[1])) < 1e-15) return GS_C(-1.0);
  if (sphere) { /* the plane of the centre and the two points: axes p0 and n x p0, n = p0 x p1 */
    GS n[3];
    GS_NAME(grit_v3_copy)(ax[0], p[0]);
    GS_NAME(grit_v3_normalize)(ax[0]);
    GS_NAME(grit_v3_cross)(n, p[0], p[1]);
    if (GS_V(GS_NAME(grit_v3_norm)(n)) < 1e-15) { /* collinear: any plane through p0 */
      const double a0 = fabs(GS_V(ax[0][0])), a1 = fabs(GS_V(ax[0][1])), a2 = fabs(GS_V(ax[0][2]));
      const int i = a1 > a0 && a1 > a2 ? 1 : a2 > a0 && a2 > a1 ? 2 : 0;
      GS o[3] = {GS_C(1.0), GS_C(1.0), GS_C(1.0)};
      o[i] = GS_C(0.0);
      GS_NAME(grit_v3_cross)(n, ax[0], o);
    }
    GS_NAME(grit_v3_normalize)(n);
    GS_NAME(grit_v3_cross)(ax[1], n, ax[0]);
    GS_NAME(grit_v3_normalize)(ax[1]);
  } else { /* across the cylinder's axis z */
    for (int i = 0; i < 3; ++i) ax[0][i] = GS_C(i == 0), ax[1][i] = GS_C(i == 1);
  }
  GS d[4], sd[2], pnt[4];
  for (int k = 0; k < 2; ++k) {
    d[2 * k] = GS_NAME(grit_v3_dot)(p[k], ax[0]);
    d[2 * k + 1] = GS_NAME(grit_v3_dot)(p[k], ax[1]);
  }
  int use_side = 0, inside = 0;
  if (side) { /* the side point projected the same way, onto the circle; inside it: the inside wrap */
    GS s[3];
    GS_NAME(grit_v3_sub)(t, side, gp);
    GS_NAME(grit_m3_tmulv)(s, gR, t);
    sd[0] = GS_NAME(grit_v3_dot)(s, ax[0]);
    sd[1] = GS_NAME(grit_v3_dot)(s, ax[1]);
    const GS sn = GS_SQRT(GS_FMA(sd[0], sd[0], GS_MUL(sd[1], sd[1])));
    if (GS_V(sn) >= r) {
      sd[0] = GS_SCALE(GS_DIV(sd[0], sn), r);
      sd[1] = GS_SCALE(GS_DIV(sd[1], sn), r);
      use_side = 1;
    } else {
      inside = 1;
    }
  }
  GS len = inside ? GS_NAME(wrap_inside)(pnt, d, r) : GS_NAME(wrap_circle)(pnt, d, use_side ? sd : NULL, r);
  if (GS_V(len) < 0) return len;
  GS res[2][3];
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < 3; ++i) res[k][i] = GS_FMA(ax[0][i], pnt[2 * k], GS_MUL(ax[1][i], pnt[2 * k + 1]));
  if (!sphere) { /* a helix: the height spread over the path in proportion to the lengths */
    const GS e0x = GS_SUB(p[0][0], res[0][0]), e0y = GS_SUB(p[0][1], res[0][1]);
    const GS e1x = GS_SUB(p[1][0], res[1][0]), e1y = GS_SUB(p[1][1], res[1][1]);
    const GS L0 = GS_SQRT(GS_FMA(e0x, e0x, GS_MUL(e0y, e0y))), L1 = GS_SQRT(GS_FMA(e1x, e1x, GS_MUL(e1y, e1y)));
    const GS tot = GS_ADD(GS_ADD(L0, len), L1), dz = GS_SUB(p[1][2], p[0][2]);
    res[0][2] = GS_ADD(p[0][2], GS_DIV(GS_MUL(dz, L0), tot));
    res[1][2] = GS_ADD(p[0][2], GS_DIV(GS_MUL(dz, GS_ADD(L0, len)), tot));
    const GS h = GS_SUB(res[1][2], res[0][2]);
    len = GS_SQRT(GS_FMA(len, len, GS_MUL(h, h)));
  }
  for (int k = 0; k < 2; ++k) {
    GS_NAME(grit_m3_mulv)(w + 3 * k, gR, res[k]);
    GS_NAME(grit_v3_add)(w + 3 * k, w + 3 * k, gp);
  }
  return len;
}
