/* SPDX-License-Identifier: Apache-2.0 */
/* grit/model.h — building and inspecting a model: bodies, joints, actuators, options.
 *
 * A model is built with a grit_builder (mutable, Box2D-style definition structs with defaults), then
 * compiled into an immutable grit_model that many grit_data objects, in many threads, may share.
 *
 *   grit_builder *b;  grit_builder_create(&b);
 *   grit_body_def bd = grit_default_body_def();  bd.mass = 1; ...;  int body;
 *   grit_builder_add_body(b, &bd, &body);
 *   grit_joint_def jd = grit_default_joint_def(); jd.type = GRIT_JOINT_HINGE; ...
 *   grit_builder_add_joint(b, body, &jd, NULL);
 *   grit_model *m;  if (grit_builder_compile(b, &m) != GRIT_OK) puts(grit_builder_last_error(b));
 *   grit_builder_free(b);  ...  grit_model_free(m);
 *
 * Bodies are numbered from 1 in the order they are added; body 0 is the world. A body's parent must be
 * added before it. A body with no joint is welded to its parent; a body may carry several hinge/slide
 * joints (applied in order, as in MuJoCo) or one ball joint or one free joint (a free joint only on a
 * child of the world). Units: SI (m, kg, s, rad, N, N m). */
#ifndef GRIT_MODEL_H
#define GRIT_MODEL_H

#include "grit/geometry.h"
#include "grit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct grit_builder grit_builder; /* a model under construction */
typedef struct grit_model grit_model;     /* a compiled, immutable model */

/* Joint types. The number of position coordinates (nq) and velocity coordinates (nv) of each:
 * FREE 7/6 (position, quaternion / linear velocity in world, angular velocity in body frame),
 * BALL 4/3 (quaternion / angular velocity in the child body frame), SLIDE 1/1, HINGE 1/1. */
typedef enum grit_joint_type {
  GRIT_JOINT_FREE = 0,
  GRIT_JOINT_BALL = 1,
  GRIT_JOINT_SLIDE = 2,
  GRIT_JOINT_HINGE = 3
} grit_joint_type;

/* A rigid body. Its frame is placed relative to its parent's frame by (pos, quat) at the reference
 * configuration (all joint coordinates at their qpos0). */
typedef struct grit_body_def {
  const char *name;    /* optional, copied; unique if given */
  int parent;          /* index of the parent body; 0 is the world */
  double pos[3];       /* body frame origin in the parent frame, m */
  double quat[4];      /* body frame orientation in the parent frame (w,x,y,z); normalized at add */
  double mass;         /* kg, > 0 */
  double com[3];       /* centre of mass in the body frame, m */
  double inertia[9];   /* rotational inertia about the centre of mass, body frame axes, kg m^2;
                          symmetric positive definite, principal moments obey the triangle inequality */
  double inertia_quat[4]; /* optional: the orientation (w,x,y,z), in the body frame, of axes in which
                             `inertia` is diagonal (MuJoCo's inertial quat); the fluid model's box is
                             aligned with them (docs/theory.md, Fluid forces). Default (0,0,0,0): the
                             axes are found from `inertia` (with two equal moments, one choice of many) */
  double gravcomp;     /* gravity compensation (MuJoCo's body gravcomp, newer than 2.2.2): a force
                          -gravcomp mass gravity at the centre of mass, so 1 cancels the body's weight
                          and 0.5 halves it; finite; default 0 */
} grit_body_def;

/* A joint between a body and its parent. Geometry is given in the child body's frame. */
typedef struct grit_joint_def {
  const char *name;      /* optional, copied; unique if given */
  grit_joint_type type;  /* default HINGE */
  double pos[3];         /* joint anchor in the body frame, m (hinge: a point on the axis) */
  double axis[3];        /* hinge/slide axis in the body frame; normalized at add; default (0,0,1) */
  double damping;        /* viscous damping per dof, N s/m or N m s/rad, >= 0 (implicit in the step) */
  double armature;       /* rotor inertia added to the mass matrix diagonal per dof, >= 0 */
  double stiffness;      /* spring stiffness (hinge/slide only), N/m or N m/rad, >= 0 */
  double spring_ref;     /* spring rest position (hinge/slide coordinate) */
  int limited;           /* nonzero: the position limit `range` is enforced (hinge/slide only) */
  double range[2];       /* position limits, range[0] < range[1] (rad or m) */
  double qpos0;          /* reference position of hinge/slide coordinate (default 0) */
  double frictionloss;   /* dry friction per dof, N or N m, >= 0 (default 0): |tau| <= frictionloss,
                            SAP's regularized friction in the step (grit/constraints.h) */
  double solreflimit[2]; /* the limit's (time constant tc s, damping ratio dr) >= 0, default (0.02, 1)
                            (MuJoCo's solreflimit), and */
  double limit_width;    /* the violation band >= 0 removed within one step, default 0.001 (MuJoCo's
                            solimplimit width): a violation phi < 0 within it is pulled back at
                            -phi / (2 dt), its excess beyond it at excess / (dt + max(dt, 2 tc dr^2))
                            (docs/contact.md, Joint limits) */
} grit_joint_def;

/* Actuator transmission, dynamics, gain and bias types (MuJoCo 2.2.2's mjtTrn, mjtDyn, mjtGain, mjtBias
 * subsets; docs/actuation.md). */
typedef enum grit_actuator_trn {
  GRIT_TRN_JOINT = 0,  /* a hinge or slide joint: length gear * q, moment gear */
  GRIT_TRN_TENDON = 1, /* a tendon (length gear * L(q), force gear * J^T f); it must move one tree */
  /* muscles and the slider-crank (issue 24): */
  GRIT_TRN_SLIDERCRANK = 2, /* MuJoCo's slider-crank: crank_site, slider_site, crank_length (below) */
  GRIT_TRN_BODY = 5,   /* adhesion (MuJoCo's mjTRN_BODY, its number): the generalized force
                          -f / n sum_i J_n,i^T over the n contact candidates of `body`'s geometries within
                          their margin, J_n,i the rate of candidate i's gap (docs/actuation.md, Adhesion);
                          gain FIXED, bias NONE; the body must move */
  GRIT_TRN_SITE = 4    /* MuJoCo's site transmission without refsite (mjTRN_SITE, its number): length 0,
                          moment the generalized force of the wrench site_gear (force site_gear[0..2] at
                          the site, torque site_gear[3..5]) turning with `site`'s body; the site must
                          move. The scalar gear is not used (it reads back 1) */
} grit_actuator_trn;
typedef enum grit_actuator_dyn {
  GRIT_DYN_NONE = 0,       /* the force's input is the (clamped) control itself */
  GRIT_DYN_INTEGRATOR = 1, /* an activation a with da/dt = u */
  GRIT_DYN_FILTER = 2,     /* an activation a with da/dt = (u - a) / dynprm[0] */
  /* muscles and the slider-crank (issue 24): */
  GRIT_DYN_MUSCLE = 3      /* MuJoCo 2.2.2's muscle activation: dynprm = (tau_act, tau_deact) */
} grit_actuator_dyn;
typedef enum grit_actuator_gain {
  GRIT_GAIN_FIXED = 0,  /* gain = gainprm[0] */
  GRIT_GAIN_AFFINE = 1, /* gain = gainprm[0] + gainprm[1] length + gainprm[2] velocity */
  /* muscles and the slider-crank (issue 24): */
  GRIT_GAIN_MUSCLE = 2 /* MuJoCo 2.2.2's active muscle force-length-velocity curve (muscle_gainprm) */
} grit_actuator_gain;
typedef enum grit_actuator_bias {
  GRIT_BIAS_NONE = 0,   /* bias = 0 */
  GRIT_BIAS_AFFINE = 1, /* bias = biasprm[0] + biasprm[1] length + biasprm[2] velocity */
  /* muscles and the slider-crank (issue 24): */
  GRIT_BIAS_MUSCLE = 2 /* MuJoCo 2.2.2's passive muscle force-length curve (muscle_biasprm) */
} grit_actuator_bias;

/* An actuator, as MuJoCo 2.2.2 defines one: scalar force f = gain * w + bias, with w the clamped control
 * (dyntype NONE) or the activation (INTEGRATOR, FILTER), clamped to force_range if force_limited, applied
 * through the transmission as the generalized force gear * f on the joint's dof. The defaults are a
 * direct motor (gain 1, no bias, no dynamics): code that sets only joint, gear and ctrl_* keeps its
 * meaning. A position servo is gainprm[0] = kp, bias AFFINE with biasprm = (0, -kp, -kv); a velocity
 * servo gainprm[0] = kv, biasprm = (0, 0, -kv). The stabilizing slopes of the bias (biasprm[1],
 * biasprm[2] <= 0) are implicit in the step, like joint springs and damping (docs/actuation.md). */
typedef struct grit_actuator_def {
  const char *name;      /* optional, copied; unique if given */
  int joint;             /* index of the actuated joint (hinge or slide), for trntype JOINT */
  double gear;           /* transmission ratio, default 1 */
  int ctrl_limited;      /* nonzero: the control is clamped to ctrl_range (effort limit) */
  double ctrl_range[2];  /* control limits, ctrl_range[0] < ctrl_range[1] */
  /* added with issue 25; the defaults keep the motor above */
  grit_actuator_trn trntype;  /* default JOINT */
  int tendon;                 /* the tendon's index, for trntype TENDON */
  grit_actuator_dyn dyntype;  /* default NONE */
  grit_actuator_gain gaintype;/* default FIXED */
  grit_actuator_bias biastype;/* default NONE */
  double dynprm[3];           /* FILTER: dynprm[0] = time constant tau > 0, s; default (1, 0, 0) */
  double gainprm[3];          /* default (1, 0, 0) */
  double biasprm[3];          /* default (0, 0, 0) */
  int force_limited;          /* nonzero: the force f is clamped to force_range */
  double force_range[2];      /* force_range[0] <= force_range[1] */
  int act_limited;            /* nonzero: the activation is clamped to act_range after each step */
  double act_range[2];        /* act_range[0] <= act_range[1] */
  /* added with issue 24 (muscles and the slider-crank; docs/actuation.md) */
  double muscle_gainprm[9];   /* GAIN_MUSCLE: (range[0], range[1], force, scale, lmin, lmax, vmax, fpmax,
                                 fvmax); default MuJoCo's (0.75, 1.05, -1, 200, 0.5, 1.6, 1.5, 1.3, 1.2);
                                 force < 0: force = scale / acc0 (acc0 = |M(qpos0)^-1 moment(qpos0)|) */
  double muscle_biasprm[9];   /* BIAS_MUSCLE: the same parameters; default as muscle_gainprm */
  double length_range[2];     /* the actuator length's range the muscle curves normalize by; default (0, 0):
                                 a muscle's is computed at compile from its joints' limits (docs/actuation.md) */
  int crank_site;             /* SLIDERCRANK: the crank pin's site (grit/constraints.h), and */
  int slider_site;            /* the slider's site; default -1 */
  double crank_length;        /* SLIDERCRANK: the connecting rod's length, > 0 */
  double slider_axis[3];      /* SLIDERCRANK: the slider's direction in slider_site's body frame (MuJoCo:
                                 the site's z axis); default (0, 0, 1), normalized at compile */
  int body;                   /* the adhesive body, for trntype BODY (>= 1); default 0 */
  int site;                   /* the site, for trntype SITE; default -1 */
  double site_gear[6];        /* SITE: the wrench per unit actuator force, (force, torque) in the site's
                                 BODY frame (MJCF's gear is in the site frame: the loader rotates it);
                                 default (1, 0, 0, 0, 0, 0) as MuJoCo's gear */
} grit_actuator_def;

/* A collision geometry attached to a body (or to the world, body 0) with a pose in the body frame,
 * and its contact properties. A pair's properties combine the two geometries' (docs/collision.md):
 * friction max(mu_a, mu_b) (as MuJoCo), stiffness 2 k_a k_b / (k_a + k_b), dissipation and tau_d
 * their means, so that two equal geometries give their own values. Two geometries may collide when
 * (contype_a & conaffinity_b) || (contype_b & conaffinity_a), they are on bodies not welded together
 * (a body without joints is welded to its parent; static bodies to the world), not on a parent and its
 * child by weld (unless one is welded to the world), not both planes, and not on an excluded body pair;
 * an explicit pair (grit_builder_add_geom_pair) may always collide. A plane
 * may move (a conveyor belt on a slide joint): it is unbounded only along its own surface. */
typedef struct grit_geom_def {
  const char *name;      /* optional, copied; unique if given */
  int body;              /* the body it is attached to; 0 is the world */
  grit_shape shape;      /* type and sizes; a CONVEX shape's vertices are copied into the model */
  double pos[3];         /* origin of the shape's frame in the body frame, m */
  double quat[4];        /* orientation of the shape's frame in the body frame (w,x,y,z) */
  double friction;       /* Coulomb friction coefficient mu, >= 0; default 1 */
  double stiffness;      /* contact stiffness k, N/m, > 0; default 1e6 */
  double dissipation;    /* Hunt & Crossley dissipation d, s/m, >= 0 (Lagged, Similar); default 10 */
  double tau_d;          /* SAP's dissipation time scale, s, >= 0; default 0.01 */
  unsigned contype;      /* collision bit masks (MuJoCo's contype/conaffinity); default 1, 1 */
  unsigned conaffinity;
  double hydro_modulus;  /* hydroelastic modulus E, Pa, >= 0; default 0: point contact. E > 0 makes a
                            sphere, box, cylinder, ellipsoid, capsule or convex mesh compliant-
                            hydroelastic: against another compliant geometry or any rigid geometry but
                            a height field it touches by pressure-field patches (docs/hydroelastic.md);
                            against a height field, point contact */
  /* MuJoCo's margin, gap, priority and condim (docs/collision.md, Margin and gap; Combining geometries) */
  double margin;         /* >= 0, default 0: a pair is a contact candidate within the larger of its two
                            geometries' margins, and adhesion (GRIT_TRN_BODY) counts it there */
  double gap;            /* >= 0, default 0: the pair's force acts on phi - (margin - gap), margin and gap
                            the larger of the pair's: margin = gap leaves a layer of force-free candidates */
  int priority;          /* default 0: of a pair, the geometry of higher priority gives friction and
                            condim; equal priorities: the larger of each */
  int condim;            /* 1 (frictionless) or 3 (default; 4 and 6 are taken as 3): a pair whose condim
                            is 1 has no friction */
  int fluid_ellipsoid;   /* nonzero: with fluid forces on (options density or viscosity > 0), MuJoCo 2.2.2's
                            ellipsoid fluid model on this geometry's equivalent ellipsoid (MJCF
                            fluidshape="ellipsoid"); its body then has no inertia-box forces. A sphere,
                            capsule, cylinder, ellipsoid or box; default 0 */
  double fluid_coef[5];  /* the model's blunt drag, slender drag, angular drag, Kutta lift and Magnus lift
                            coefficients (MJCF fluidcoef); default 0.5, 0.25, 1.5, 1, 1 as MuJoCo's */
} grit_geom_def;

/* Global options. */
typedef struct grit_options {
  double timestep;        /* s, > 0; default 1e-3 */
  double gravity[3];      /* m/s^2, default (0, 0, -9.81) */
  double contact_margin;  /* the largest gap (m, >= 0) at which a pair is a contact candidate; default
                             0.1 (seed 000: phi < 10 cm). Within it a step keeps the pairs its motion
                             can close: gap below 2 dt times the two geometries' speed bounds at the
                             start and free-motion velocities (docs/collision.md, speculative margins);
                             the first-order model phi0 + dt v_n does the rest */
  int max_contacts;       /* capacity of the contact workspace (> 0), or 0 for automatic:
                             16 per geometry + 64; a step that finds more reports GRIT_ERR_CAPACITY */
  int explicit_actuation; /* nonzero: every actuator force explicit at the step's start (q0, v0), as
                             MuJoCo 2.2.2's Euler integrator; default 0: the servos' stabilizing slopes
                             implicit in the step (docs/actuation.md) */
  int explicit_gyroscopic; /* nonzero: the velocity-product (gyroscopic) terms of ball and free bodies
                              explicit at the step's start, as MuJoCo 2.2.2's Euler integrator; default
                              0: grit's discrete momentum balance (docs/theory.md), which keeps a tumbling
                              body's angular momentum to O(dt^2) but differs from MuJoCo's Euler by O(dt) */
  double density;         /* fluid density, kg/m^3, >= 0; default 0 (MuJoCo's option density) */
  double viscosity;       /* fluid viscosity, Pa s, >= 0; default 0 (MuJoCo's option viscosity) */
  double wind[3];         /* the fluid's velocity, m/s, world frame; default 0. density > 0 or viscosity
                             > 0 switch on MuJoCo 2.2.2's inertia-box fluid forces on every body with
                             mass, explicit at the step's start (docs/theory.md, Fluid forces) */
} grit_options;

/* Definitions with their defaults: a unit-mass body with unit-sphere-like inertia 0.4*I at the
 * parent's origin; a hinge about z at the body origin; a unit-gear unlimited actuator on joint 0. */
GRIT_API grit_body_def grit_default_body_def(void);
GRIT_API grit_joint_def grit_default_joint_def(void);
GRIT_API grit_actuator_def grit_default_actuator_def(void);
GRIT_API grit_geom_def grit_default_geom_def(void); /* a 5 cm sphere on the world with the defaults above */
GRIT_API grit_options grit_default_options(void);

/* Rotational inertia from principal moments `diag` and the orientation `quat` of the principal axes in
 * the body frame (MuJoCo's diaginertia + inertial quat): inertia = R diag(d) R^T. */
GRIT_API void grit_inertia_from_principal(double inertia[9], const double diag[3], const double quat[4]);

/* ------------------------------------------------------------------------------------ builder */

GRIT_API grit_status grit_builder_create(grit_builder **builder);
GRIT_API void grit_builder_free(grit_builder *builder); /* NULL is allowed */

/* The message describing the builder's last error ("" if none). */
GRIT_API const char *grit_builder_last_error(const grit_builder *builder);

GRIT_API grit_status grit_builder_set_options(grit_builder *builder, const grit_options *options);

/* Adds a body; its index is written to *body (may be NULL). Validates the definition. */
GRIT_API grit_status grit_builder_add_body(grit_builder *builder, const grit_body_def *def, int *body);

/* Adds a joint to `body` (>= 1); its index (from 0) is written to *joint (may be NULL). */
GRIT_API grit_status grit_builder_add_joint(grit_builder *builder, int body, const grit_joint_def *def, int *joint);

/* Adds an actuator; its index (from 0) is written to *actuator (may be NULL). */
GRIT_API grit_status grit_builder_add_actuator(grit_builder *builder, const grit_actuator_def *def, int *actuator);

/* Adds a geometry; its index (from 0) is written to *geom (may be NULL). Validates the shape. */
GRIT_API grit_status grit_builder_add_geom(grit_builder *builder, const grit_geom_def *def, int *geom);

/* Contact filters beyond the bit masks (MuJoCo's <contact> section; docs/collision.md). Bodies 0..nbody-1
 * added so far: geometries of body1 and body2 never collide. */
GRIT_API grit_status grit_builder_exclude_bodies(grit_builder *builder, int body1, int body2);
/* Geometries geom1 and geom2 (added so far) are a contact candidate whenever their boxes overlap, whatever
 * the other filters say (MuJoCo's <pair>). */
GRIT_API grit_status grit_builder_add_geom_pair(grit_builder *builder, int geom1, int geom2);
/* Whether a body and its parent may collide: by default (enabled = 1) not, unless one of them is welded to
 * the world (MuJoCo's filterparent; bodies taken by weld: a body without joints counts as its parent). */
GRIT_API grit_status grit_builder_set_filter_parent(grit_builder *builder, int enabled);

/* Compiles the builder into a new immutable model. The builder stays valid (it can be changed and
 * compiled again). On failure *model is NULL and the builder's message says why. */
GRIT_API grit_status grit_builder_compile(grit_builder *builder, grit_model **model);

/* -------------------------------------------------------------------------------------- model */

GRIT_API void grit_model_free(grit_model *model); /* NULL is allowed */

GRIT_API int grit_model_nq(const grit_model *m);     /* number of position coordinates */
GRIT_API int grit_model_nv(const grit_model *m);     /* number of velocity coordinates (degrees of freedom) */
GRIT_API int grit_model_nu(const grit_model *m);     /* number of actuators (controls) */
GRIT_API int grit_model_na(const grit_model *m);     /* number of activations (actuators with dynamics) */
GRIT_API int grit_model_nbody(const grit_model *m);  /* number of bodies, including the world body 0 */
GRIT_API int grit_model_njoint(const grit_model *m); /* number of joints */
GRIT_API int grit_model_ntree(const grit_model *m);  /* number of kinematic trees (children of the world) */
GRIT_API int grit_model_ngeom(const grit_model *m);  /* number of geometries */
GRIT_API grit_options grit_model_options(const grit_model *m);

/* Where joint j's coordinates start in q and in v (grit numbers the coordinates tree by tree, each
 * tree depth first, so that every tree's dofs are contiguous; for bodies added in depth-first order,
 * as from a model file, this is the order of the joints). -1 for a bad index. */
GRIT_API int grit_model_joint_qposadr(const grit_model *m, int joint);
GRIT_API int grit_model_joint_dofadr(const grit_model *m, int joint);
GRIT_API grit_joint_type grit_model_joint_type(const grit_model *m, int joint);

/* The reference configuration qpos0 (nq numbers) copied into q. */
GRIT_API void grit_model_qpos0(const grit_model *m, double *q);

/* Index of the body / joint / actuator with that name, or -1. */
GRIT_API int grit_model_body_index(const grit_model *m, const char *name);
GRIT_API int grit_model_joint_index(const grit_model *m, const char *name);
GRIT_API int grit_model_actuator_index(const grit_model *m, const char *name);
GRIT_API int grit_model_geom_index(const grit_model *m, const char *name);

/* The definition geometry g was added with (its name and vertices point into the model). */
GRIT_API grit_status grit_model_geom(const grit_model *m, int geom, grit_geom_def *def);

/* The definition actuator a was added with (its name points into the model). */
GRIT_API grit_status grit_model_actuator(const grit_model *m, int actuator, grit_actuator_def *def);

/* Mass of body b (kg); the world (b = 0) has mass 0. -1 for a bad index. */
GRIT_API double grit_model_body_mass(const grit_model *m, int body);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_MODEL_H */
