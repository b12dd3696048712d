/* SPDX-License-Identifier: Apache-2.0 */
/* contact_geometry_decl_generic.h — types and prototypes of the scalar-generic contact re-evaluation,
 * instantiated by contact_geometry.h for double and for grit_dual. */

/* A contact candidate re-evaluated at new poses from its body-fixed features. */
typedef struct GS_NAME(grit_contact_geom) {
  GS phi;      /* signed distance n . (pb - pa), m (negative in penetration) */
  GS n[3];     /* unit normal, world, from a towards b: the normal held fixed to a, rotated with a */
  GS frame[9]; /* contact frame, row-major; its columns are (t1, t2, n): world = frame * contact */
  GS pa[3];    /* a's body-fixed witness point, world, m */
  GS pb[3];    /* b's body-fixed witness point, world, m */
} GS_NAME(grit_contact_geom);

/* The contact frame of the unit normal n: a right-handed orthonormal frame (t1, t2, n), stored as the
 * columns of the row-major 3x3 `frame`. The completion (Duff et al. 2017) is C-infinity on each of the
 * half-spaces n_z >= 0 and n_z < 0, the branch being chosen by the value of n_z: deterministic, and
 * differentiable at every normal with n_z != 0 (the dual branch follows the value). */
void GS_NAME(grit_contact_frame)(const GS n[3], GS frame[9]);

/* Re-evaluates the candidate c (found by grit_collide in double) at the poses (pa, Ra) of a and (pb, Rb)
 * of b — the poses' frames being the ones c's local features were expressed in. The witness points
 * c->pa_local, c->pb_local move with their shapes and the normal c->n_local with a:
 * phi = n . (pb - pa). At the poses c was found at, this reproduces c's phi, n, pa and pb. */
void GS_NAME(grit_contact_reevaluate)(const grit_contact_point *c, const GS pa[3], const GS Ra[9], const GS pb[3],
                                      const GS Rb[9], GS_NAME(grit_contact_geom) * out);
