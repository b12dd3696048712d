/* SPDX-License-Identifier: Apache-2.0 */
/* grit/constraints.h — sites, equality constraints and tendons in the builder (docs/contact.md, Joint
 * friction, equality constraints and tendons). Joint dry friction is a field of grit_joint_def
 * (frictionloss).
 *
 * Each enters the step's convex problem as a constraint of its own: an equality as a near-rigid
 * quadratic cost (SAP's holonomic constraints), a tendon's length limit as a joint limit does, a
 * tendon's spring and damper as an implicit quadratic cost. Their derivatives come through the same
 * residual and kept factor as the contacts'. */
#ifndef GRIT_GRIT_CONSTRAINTS_H
#define GRIT_GRIT_CONSTRAINTS_H

#include "grit/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A named point on a body (the path points of spatial tendons). */
typedef struct grit_site_def {
  const char *name; /* optional, copied; unique if given */
  int body;         /* the body it is fixed to; 0 is the world */
  double pos[3];    /* in the body frame, m */
} grit_site_def;

typedef enum grit_equality_type {
  GRIT_EQ_CONNECT = 0, /* a point of obj1 and a point of obj2 coincide (ball and socket): 3 rows */
  GRIT_EQ_WELD = 1,    /* obj2's pose relative to obj1 is fixed: 6 rows */
  GRIT_EQ_JOINT = 2,   /* joint obj1 = polynomial of joint obj2: 1 row */
  GRIT_EQ_TENDON = 3   /* tendon obj1's length = polynomial of tendon obj2's: 1 row */
} grit_equality_type;

/* An equality constraint. It is compliant as SAP's holonomic constraints are: its velocity error is
 * penalized near-rigidly (a regularization from the Delassus estimate, no stiffness parameter), and a
 * position error phi is corrected at the speed -phi / (dt + tau_d), tau_d = 2 tc dr^2 from
 * solref = (tc, dr): the time scale at which a critically damped spring of time constant tc, MuJoCo's
 * meaning of solref, dissipates. */
typedef struct grit_equality_def {
  const char *name;        /* optional, copied; unique if given */
  grit_equality_type type; /* default CONNECT */
  int obj1, obj2;          /* CONNECT, WELD: bodies (obj2 = 0: the world; obj1 != obj2);
                              JOINT: hinge/slide joints, TENDON: tendons (obj2 = -1: none, y - y0 = a0) */
  double anchor[3];        /* CONNECT: the point in obj1's frame; its place on obj2 is where it is at
                              the reference configuration (qpos0) */
  double relpose[7];       /* WELD: obj2's frame in obj1's (pos, quat w x y z); a zero quat (the
                              default): the relative pose at the reference configuration */
  double polycoef[5];      /* JOINT, TENDON: y - y0 = a0 + a1 (x - x0) + ... + a4 (x - x0)^4, y = obj1,
                              x = obj2, y0 and x0 at the reference configuration; default (0, 1, 0, 0, 0) */
  double solref[2];        /* (time constant tc > 0 s, damping ratio dr > 0); default (0.02, 1) */
} grit_equality_def;

typedef enum grit_tendon_type {
  GRIT_TENDON_FIXED = 0,  /* L = sum_i coef_i q_i over hinge/slide joints */
  GRIT_TENDON_SPATIAL = 1 /* L = the length of the path through sites, straight between them */
} grit_tendon_type;

/* A tendon: a length L(q) with a limit, a spring and a damper (forces along J_L^T). It may touch at most
 * two kinematic trees. Spatial tendons are straight between their sites, or wrap around spheres and
 * cylinders as MuJoCo's do (a side site inside the geometry's circle is not supported). */
typedef struct grit_tendon_def {
  const char *name;      /* optional, copied; unique if given */
  grit_tendon_type type; /* default FIXED */
  int n;                 /* number of path elements (>= 1 fixed, >= 2 spatial) */
  const int *obj;        /* (n) FIXED: joints; SPATIAL: sites, in path order (copied); a wrap element's
                            side site (-1: none) */
  const double *coef;    /* (n) FIXED: coefficients (copied); SPATIAL: unused */
  const int *geom;       /* (n) SPATIAL, optional (NULL: all sites): geom[i] >= 0 makes element i a wrap
                            around that sphere or cylinder (between two sites; its side site obj[i]) */
  int limited;           /* nonzero: range[0] <= L <= range[1], enforced as a joint limit is */
  double range[2];
  double solreflimit[2]; /* the limit's (tc, dr), as grit_joint_def's; default (0.02, 1) */
  double limit_width;    /* the limit's one-step band, as grit_joint_def's; default 0.001 */
  double stiffness;      /* spring, N/m (or N m/rad), >= 0; implicit in the step */
  double springlength;   /* the spring's rest length; < 0 (the default -1): L at the reference config */
  double damping;        /* N s/m, >= 0; implicit in the step */
  double frictionloss;   /* dry friction on the length, N, >= 0 (as a joint's frictionloss) */
  const double *divisor; /* (n) SPATIAL, optional (NULL: no pulleys): divisor[i] > 0 makes element i a
                            pulley (obj[i] unused): the path splits there into a new branch, and each
                            later segment's length counts divided by divisor[i] (MuJoCo's <pulley>) */
} grit_tendon_def;

GRIT_API grit_site_def grit_default_site_def(void);         /* on the world at its origin */
GRIT_API grit_equality_def grit_default_equality_def(void); /* CONNECT body 1 to the world at body 1's origin */
GRIT_API grit_tendon_def grit_default_tendon_def(void);     /* FIXED, no elements: set n, obj, coef */

/* Add them; the index (from 0) is written to the last argument (may be NULL). Objects are checked when
 * added (they must exist) and at compile (trees touched, lengths). */
GRIT_API grit_status grit_builder_add_site(grit_builder *builder, const grit_site_def *def, int *site);
GRIT_API grit_status grit_builder_add_equality(grit_builder *builder, const grit_equality_def *def, int *equality);
GRIT_API grit_status grit_builder_add_tendon(grit_builder *builder, const grit_tendon_def *def, int *tendon);

GRIT_API int grit_model_nsite(const grit_model *m);
GRIT_API int grit_model_nequality(const grit_model *m);
GRIT_API int grit_model_ntendon(const grit_model *m);
GRIT_API int grit_model_site_index(const grit_model *m, const char *name);    /* -1 if none */
GRIT_API int grit_model_tendon_index(const grit_model *m, const char *name);  /* -1 if none */

/* A tendon's length at positions q (nq numbers); NAN for a bad index. */
GRIT_API double grit_model_tendon_length(const grit_model *m, int tendon, const double *q);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_GRIT_CONSTRAINTS_H */
