/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_internal.h — the MJCF loader's pieces: an XML tree read with expat (mjcf_xml.c), the model
 * description read from it (mjcf_parse.c), and its compilation into a grit_model (mjcf_build.c, with
 * MuJoCo's compiler arithmetic in mjcf_frames.c); entry points, errors and warnings in mjcf.c.
 *
 * Everything the loader allocates while reading lives in one pool freed at the end, so an error at
 * any point only has to return. Errors are sticky: the first one is kept in the context and every
 * reading function returns early once it is set. Sizes are bounded (MJCF_MAX_*) so that no input,
 * however malformed, can exhaust memory, the stack or time. */
#ifndef GRIT_MJCF_INTERNAL_H
#define GRIT_MJCF_INTERNAL_H

#include <stddef.h>

#include "grit/mjcf.h"

#define MJCF_MAX_BYTES ((size_t)64 << 20) /* input text */
#define MJCF_MAX_DEPTH 100                 /* nesting of XML elements */
#define MJCF_MAX_ELEMENTS 50000            /* XML elements */
#define MJCF_MAX_NUMBERS 1000000           /* numbers in one attribute (mesh vertices) */
#define MJCF_MAX_TOKEN 400                 /* characters of one number */

/* ------------------------------------------------------------------------------ memory pool */

typedef struct mjcf_block {
  struct mjcf_block *next;
  size_t size, used;
  /* data follows, aligned for doubles */
} mjcf_block;

typedef struct mjcf_pool {
  mjcf_block *head;
} mjcf_pool;

void *mjcf_alloc(mjcf_pool *pool, size_t bytes); /* zeroed, 16-byte aligned; NULL when out of memory */
char *mjcf_strdup(mjcf_pool *pool, const char *s, size_t n);
void mjcf_pool_free(mjcf_pool *pool);

/* ------------------------------------------------------------------------------- XML tree */

typedef struct mjcf_node {
  const char *name;
  const char *file; /* the file it was read from, for messages (NULL: the model file) */
  int line;
  int nattr;
  const char **attr;   /* 2 nattr strings: name, value, name, value, ... */
  unsigned char *used; /* nattr flags: the attribute was read (the others are reported as ignored) */
  struct mjcf_node *parent, *child, *last_child, *next;
} mjcf_node;

/* Parses `size` bytes into a tree allocated in `pool`. On failure writes "name:line: ..." to msg. With
 * after_root (NULL: none taken), what follows a whole root element (a second root, a stray end tag: MuJoCo
 * loads such files) is left out and *after_root gets the line where it stops being XML (0: nothing left out). */
grit_status mjcf_xml_parse(const char *data, size_t size, const char *name, mjcf_pool *pool, mjcf_node **root,
                           char msg[GRIT_MESSAGE_SIZE], int *after_root);

/* ------------------------------------------------------------------------- model description */

enum { MJCF_ORI_NONE, MJCF_ORI_QUAT, MJCF_ORI_AXISANGLE, MJCF_ORI_EULER, MJCF_ORI_XYAXES, MJCF_ORI_ZAXIS,
       MJCF_ORI_FULLINERTIA };

/* One of MJCF's ways to give an orientation (or, for <inertial>, fullinertia). */
typedef struct mjcf_orient {
  int kind;
  double v[6];
} mjcf_orient;

enum { MJCF_GEOM_PLANE, MJCF_GEOM_SPHERE, MJCF_GEOM_CAPSULE, MJCF_GEOM_ELLIPSOID, MJCF_GEOM_CYLINDER,
       MJCF_GEOM_BOX, MJCF_GEOM_MESH, MJCF_GEOM_HFIELD };

typedef struct mjcf_joint {
  const char *name, *file; /* file: where it was written (an included file), for messages; NULL: the model */
  int line, body;
  int type; /* grit_joint_type */
  double pos[3], axis[3], range[2], damping, armature, stiffness, springref, ref, springdamper[2];
  int limited; /* 0 false, 1 true, 2 auto */
  double frictionloss, solreflimit[2], solimplimit[5]; /* (mjcf_cx.c) */
  double actfrcrange[2]; /* actuatorfrcrange (newer than MuJoCo 2.2.2; mjcf_actfrc.c) */
  int actfrclimited;     /* actuatorfrclimited: 0 false, 1 true, 2 auto */
} mjcf_joint;

typedef struct mjcf_geom {
  const char *name, *file;
  const char *mesh; /* asset name for type mesh */
  const char *hfield; /* asset name for type hfield (mjcf_hfield.c) */
  int line, body;
  int type; /* MJCF_GEOM_* */
  double size[3], pos[3], fromto[6], mass, density, friction;
  double fitscale; /* a primitive fitted to its mesh: the factor of the fitted sizes (default 1) */
  int has_fromto, has_mass, condim, group;
  int fluid_ellipsoid; /* fluidshape="ellipsoid": MuJoCo's ellipsoid fluid model (grit_geom_def.fluid_ellipsoid) */
  int in_pair; /* named by a <contact><pair> or wrapped by a tendon: in grit's model even if its bit masks never collide */
  unsigned contype, conaffinity;
  mjcf_orient ori;
  /* compiled: frame in the body, sizes, mass and principal inertia along the geom's axes */
  double cpos[3], cquat[4], csize[3], cmass, cinertia[3];
  int mesh_mass;             /* a mesh's mass from its faces: its centre and inertia are the two below */
  double mcom[3], mfull[9];  /* its centre and inertia about it, in the body frame */
  int mesh_index;
  int grit_index; /* in grit's model (-1: not in it, never colliding) */
  double margin, gap; /* MuJoCo's (mjcf_adhesion.c) */
  int priority;
  double fluid_coef[5]; /* fluidcoef (grit_geom_def.fluid_coef) */
} mjcf_geom;

typedef struct mjcf_actuator {
  const char *name, *joint, *file;
  int line;
  double gear, gain, ctrlrange[2], forcerange[2];
  int ctrllimited, forcelimited; /* 0 false, 1 true, 2 auto */
  int supported;                 /* 0: skipped with a warning (not a joint transmission, not a motor) */
  /* MuJoCo 2.2.2's general actuator, every shortcut folded into it (mjcf_actuator.c) */
  const char *element;           /* the element's name, for messages */
  const char *tendon;            /* a tendon transmission's tendon */
  int dyntype, gaintype, biastype, actlimited; /* grit_actuator_dyn/gain/bias; actlimited 0, 1, 2 auto */
  double dynprm[10], gainprm[10], biasprm[10], actrange[2]; /* MuJoCo's 10 each (muscles use 9) */
  /* issue 24: muscles' length range, the slider-crank (mjcf_actuator.c) */
  double lengthrange[2], cranklength;
  const char *cranksite, *slidersite;
  const char *body;              /* an adhesion's body (mjcf_adhesion.c) */
  const char *site;              /* a site transmission's site (mjcf_actuator.c) */
  double gear6[6];               /* MuJoCo's full gear (site frame); default (1, 0, 0, 0, 0, 0) */
} mjcf_actuator;

typedef struct mjcf_default {
  const char *name;
  int parent;
  mjcf_joint joint;
  mjcf_geom geom;
  mjcf_actuator act;
  double mesh_scale[3]; /* <mesh scale> */
  const mjcf_node *site; /* the class's own <site> default (NULL: none; the parent class's apply) */
} mjcf_default;

typedef struct mjcf_body {
  const char *name, *file;
  int line, parent, def; /* def: the default class of its elements (childclass, inherited) */
  double pos[3];
  mjcf_orient ori;
  int has_inertial;
  double ipos[3], imass, idiag[3];
  mjcf_orient iori;
  /* compiled */
  double quat[4], mass, com[3], inertia[9];
  double iquat[4]; /* MuJoCo's inertial frame when known (one primitive geometry, <inertial quat>), else 0 */
  int njoint, folded_into, grit_index;
  double gravcomp; /* the compensated fraction of its weight (newer than MuJoCo 2.2.2; grit_body_def) */
} mjcf_body;

typedef struct mjcf_mesh {
  const char *name, *file;
  int line, nvert, ntri;
  double *vert;
  int *tri; /* (ntri x 3) from a mesh file's faces, for its mass (none from a 'vertex' list) */
  int nhvert, nhtri; /* the convex hull (mjcf_mesh_hull): the collision shape, and the mass where the faces */
  double *hvert;     /* do not close a solid (as MuJoCo) */
  int *htri;
  const char *hull_error; /* why there is no hull (flat vertices, a mesh format grit does not read): an */
  grit_status hull_status; /* error only where a colliding geometry or a mass needs the mesh */
} mjcf_mesh;

/* An <asset><hfield> (mjcf_hfield.c): its grid points in the geometry's frame (grit_shape_hfield). */
typedef struct mjcf_hfield {
  const char *name, *file;
  int line, nrow, ncol;
  double size[4]; /* radius_x, radius_y, elevation_z, base_z */
  double *grid;   /* (nrow x ncol x 3), in the pool; NULL: a file grit does not read (lenient loading) */
} mjcf_hfield;

/* A <contact><exclude> (two body names) or <pair> (two geom names). */
typedef struct mjcf_contact {
  const char *a, *b, *file;
  int line;
} mjcf_contact;
/* A geometry declared compliant-hydroelastic in <custom> (docs/hydroelastic.md). */
typedef struct mjcf_hydro {
  const char *geom; /* the geometry's name */
  double modulus;   /* Pa, > 0 */
  int line, used;
} mjcf_hydro;

typedef struct mjcf_keyframe {
  const char *name, *file;
  int line;
  double time;
  double *qpos, *qvel, *ctrl;
  int nqpos, nqvel, nctrl;
  double *act; /* activations (mjcf_actuator.c, issue 25) */
  int nact;
} mjcf_keyframe;

/* A growable array of `size`-byte elements (realloc'd; freed by mjcf_ctx_free). */
typedef struct mjcf_array {
  void *data;
  int n, cap;
} mjcf_array;

typedef struct mjcf_ctx {
  const char *fname;
  const char *base_dir; /* the model file's directory, for mesh files; NULL when loading a buffer */
  char *msg;
  grit_status status; /* sticky: the first error */
  grit_mjcf_info *info;
  mjcf_pool pool;
  grit_mjcf_load_options load;

  /* <compiler> */
  int degree, inertiafromgeom, autolimits, discardvisual, igroup[2], no_contacts;
  int lr_useexisting, lr_uselimit; /* <compiler><lengthrange> (issue 24; mjcf_actuator.c) */
  const char *meshdir, *assetdir; /* where mesh files are, relative to base_dir (NULL: base_dir) */
  char eulerseq[4];
  double boundmass, boundinertia, settotalmass;
  int balanceinertia, exactmeshinertia;
  int fitaabb; /* <compiler fitaabb>: primitives fitted to meshes by their bounding box */
  /* <option>, <custom> */
  grit_options opt;
  grit_step_settings settings;
  double stiffness, dissipation, tau_d;

  mjcf_array defs, bodies, joints, geoms, acts, meshes, keys; /* of the mjcf_* types above */
  mjcf_array excludes, pairs;                                 /* of mjcf_contact */
  int no_filter_parent, no_limits;                            /* <option><flag> */
  mjcf_array sites, eqs, tendons; /* mjcf_site, mjcf_equality, mjcf_tendon (mjcf_cx.c) */
  mjcf_array hydro; /* of mjcf_hydro: <custom><numeric name="grit_hydro_modulus:GEOM" data="E"/> */
  mjcf_array hfields; /* of mjcf_hfield */
  const char *model_name;
  int no_equality; /* <option><flag equality="disable"> or constraint="disable": no equality constraints */
} mjcf_ctx;

void *mjcf_push(mjcf_ctx *c, mjcf_array *a, size_t size); /* a new zeroed element, NULL on failure */

/* A whole file into memory (at most 64 MiB), for the model file and its mesh files; on failure writes
 * "path: why" to msg. (mjcf_mesh.c) */
grit_status mjcf_read_file(const char *path, char **data, size_t *size, char *msg);
/* An info as the loaders leave it after a failure (the caller's may be uninitialized); NULL: nothing. And
 * the start of loading a model file (MJCF or URDF): msg cleared, *info reset, *model NULL, the file read
 * into *data. (mjcf.c) */
void mjcf_info_reset(grit_mjcf_info *info);
grit_status mjcf_load_file_begin(const char *path, grit_model **model, grit_mjcf_info *info, char **data, size_t *size,
                                 char msg[GRIT_MESSAGE_SIZE]);
/* The start of loading from memory: msg cleared, *info reset, *model NULL, data checked. (mjcf.c) */
grit_status mjcf_load_buffer_begin(const char *data, size_t size, grit_model **model, grit_mjcf_info *info,
                                   char msg[GRIT_MESSAGE_SIZE]);
/* The directory of path with its '/' ("./" for a bare name), malloc'ed; NULL out of memory. (mjcf_mesh.c) */
char *mjcf_dir_of(const char *path);
/* The distinct vertices (at least 4, any number) of a mesh file (.stl, binary or ASCII; .obj) and its triangles
 * (indices into them; none if the file has no faces), in `pool`. On failure writes why to msg
 * (GRIT_MESSAGE_SIZE bytes). (mjcf_mesh.c) */
grit_status mjcf_mesh_file_read(const char *path, mjcf_pool *pool, double **vert, int *nvert, int **tri, int *ntri,
                                char *msg);
/* The same from `size` bytes of a file's content (followed by a zero byte), STL if `stl` is 1, MuJoCo's
 * binary MSH if it is MJCF_MESH_MSH, else OBJ; `path` names it in messages. */
enum { MJCF_MESH_MSH = 2 };
grit_status mjcf_mesh_parse(const char *text, size_t size, int stl, const char *path, mjcf_pool *pool, double **vert,
                            int *nvert, int **tri, int *ntri, char *msg);
/* Volume, centre and inertia about the centre (unit density) of a closed triangle mesh; 0 if it
 * encloses no volume. */
int mjcf_mesh_mass_properties(const double *v, const int *tri, int ntri, double *volume, double com[3],
                              double inertia[9]);
/* The convex hull of n points (Qhull): its vertices (copies of input points, at most max_vert: a hull
 * with more is approximated by the max_vert points farthest out, *reduced = 1) and its triangles, oriented
 * outwards, in `pool`. GRIT_ERR_INVALID_MODEL when the points span no volume (coplanar, collinear).
 * (mjcf_hull.c) */
grit_status mjcf_mesh_hull(const double *v, int n, int max_vert, mjcf_pool *pool, double **hv, int *nhv, int **ht,
                           int *nht, int *reduced, char *msg);
/* Volume, centre and inertia about the centre (unit density) of a mesh as MuJoCo 2.2.2's compiler computes
 * them (mjCMesh::Process): pyramids from the area-weighted centroid of the faces, then from the centre,
 * with single-precision vertices. By default (legacy) each pyramid's volume is taken positive and the
 * volume returned is that of the equivalent inertia box (with the same moments per unit mass), as MuJoCo
 * weighs a mesh geometry; with `exact` (<compiler exactmeshinertia="true">) the signed volume, the
 * divergence theorem. Open surfaces are weighed so too. 0 if no volume, -1 when out of memory.
 * (mjcf_mesh.c) */
int mjcf_mesh_mass_mujoco(const double *v, int nv, const int *tri, int ntri, int exact, double *volume, double com[3],
                          double inertia[9]);
/* A primitive geometry g with a 'mesh' (MuJoCo's fitting): its sizes from the mesh's equivalent inertia
 * box (or with compiler fitaabb its bounding box), times g->fitscale, and its frame (g->cpos, g->cquat)
 * composed with the mesh's centre and principal axes. A failure is reported on c. (mjcf_mesh.c) */
void mjcf_mesh_fit(mjcf_ctx *c, const mjcf_mesh *m, mjcf_geom *g);
#define MJCF_AT(array, type, i) (((type *)(array).data) + (i))

/* Errors and warnings, "file:line: <element> ..." (node may be NULL: no line). */
void mjcf_fail(mjcf_ctx *c, grit_status s, const mjcf_node *node, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Something valid that would change the dynamics and that grit does not simulate: an error
 * (GRIT_ERR_UNSUPPORTED), or with the load option `lenient` a warning that it is ignored. */
void mjcf_unsupported(mjcf_ctx *c, const mjcf_node *node, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void mjcf_warn(mjcf_ctx *c, const mjcf_node *node, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* MuJoCo's compiler arithmetic (mjcf_frames.c). Quaternions (w, x, y, z); matrices row-major;
 * symmetric 3x3 matrices as 6 numbers (xx, yy, zz, xy, xz, yz). */
double mjcf_normvec(double *v, int n); /* normalizes; returns the norm, or 0 (v unchanged) when tiny */
void mjcf_quat2mat(double *r, const double *q);
void mjcf_mulquat(double *res, const double *a, const double *b); /* a b, normalized */
void mjcf_cross(double *a, const double *b, const double *c);
void mjcf_z2quat(double *q, const double *vec);                   /* minimal rotation from z to vec */
void mjcf_frame2quat(double *q, const double *x, const double *y, const double *z);
void mjcf_globalinertia(double *g, const double *d, const double *q); /* R(q) diag(d) R^T, 6 numbers */
void mjcf_offcenter(double *r, double mass, const double *v);        /* mass (|v|^2 I - v v^T), 6 numbers */
void mjcf_sym6_to_mat(double *I, const double *s);
/* The quaternion of an MJCF orientation (angles in the context's unit and Euler sequence); NULL, or
 * MuJoCo's message when it is degenerate. */
const char *mjcf_orient_quat(const mjcf_ctx *c, const mjcf_orient *o, double q[4]);
/* A <frame>'s placement f (pos, quat: 7 numbers) applied to an element's pos and orientation, which become
 * the composition (the orientation as a quaternion); and to n points (3 numbers each) in place. */
void mjcf_frame_apply(const mjcf_ctx *c, const double f[7], double pos[3], mjcf_orient *o);
void mjcf_frame_points(const double f[7], double *p, int n);
void mjcf_eig3(const double A[9], double w[3], double V[9]); /* symmetric A = V diag(w) V^T */
double mjcf_geom_volume(const mjcf_geom *g); /* from the compiled sizes csize */
void mjcf_geom_inertia(mjcf_geom *g);        /* principal inertia cinertia of the mass cmass */

/* Attribute values (mjcf_attr.c). Each reader marks the attribute as read and, on a bad value, sets the
 * context's error naming the element, the attribute and the line; they return 0 when the attribute is
 * absent or after an error. */
extern const char *const MJCF_BOOL_NAMES[2];   /* false, true */
extern const char *const MJCF_TFAUTO_NAMES[3]; /* false, true, auto */
int mjcf_attr_index(const mjcf_node *n, const char *name);
const char *mjcf_attr(const mjcf_node *n, const char *name); /* the raw value, or NULL */
void mjcf_mark(const mjcf_node *n, const char *name);        /* read and deliberately unused */
void mjcf_finish(mjcf_ctx *c, const mjcf_node *n);           /* reports the attributes nothing read */
int mjcf_read_numbers(mjcf_ctx *c, const mjcf_node *n, const char *name, double *out, int nmin, int nmax);
int mjcf_read_array(mjcf_ctx *c, const mjcf_node *n, const char *name, double **out, int *count);
int mjcf_read_int(mjcf_ctx *c, const mjcf_node *n, const char *name, long lo, long hi, long *out);
int mjcf_read_enum(mjcf_ctx *c, const mjcf_node *n, const char *name, const char *const *names, int count, int *out);
int mjcf_read_bool(mjcf_ctx *c, const mjcf_node *n, const char *name, int *out);
const char *mjcf_read_name(mjcf_ctx *c, const mjcf_node *n, const char *name); /* NULL if absent or empty */
void mjcf_read_orientation(mjcf_ctx *c, const mjcf_node *n, mjcf_orient *o, int allow_fullinertia);

/* <asset>: meshes (their files and convex hulls), textures and materials (ignored) (mjcf_asset.c). */
void mjcf_read_asset(mjcf_ctx *c, const mjcf_node *n);

/* <asset><hfield>: read into c->hfields; the index of the named one, or -1 (mjcf_hfield.c). */
void mjcf_read_hfield(mjcf_ctx *c, const mjcf_node *e);
int mjcf_hfield_index(const mjcf_ctx *c, const char *name);
/* The path of an asset file relative to the model's directory and meshdir/assetdir, as MuJoCo; 0 with an
 * error on c if none (mjcf_asset.c). A file's name without directory and extension, in the pool (NULL if
 * empty), MuJoCo's name for an unnamed mesh or height field (mjcf_asset.c). */
int mjcf_asset_path(mjcf_ctx *c, const mjcf_node *e, const char *file, char *path, size_t size);
const char *mjcf_file_stem(mjcf_ctx *c, const char *file);
/* The elevations of a height-field file as MuJoCo 2.2.2 reads them (a PNG's grey levels, or its binary
 * format: int32 nrow, ncol, then nrow x ncol float32), row r at y from -radius_y, normalized to [0, 1]
 * in single precision as MuJoCo stores them: nrow x ncol floats, malloc'ed (the caller frees). On
 * failure writes why to msg (GRIT_MESSAGE_SIZE bytes), naming the file (mjcf_hfield_file.c). */
grit_status mjcf_hfield_file_read(const char *path, float **data, int *nrow, int *ncol, char *msg);
/* The same from a file's `size` bytes, a PNG if `png`, else the binary format; `path` names it in messages. */
grit_status mjcf_hfield_parse(const char *path, const unsigned char *bytes, size_t size, int png, float **data,
                              int *nrow, int *ncol, char *msg);

/* Replaces every <include file="..."> of the tree by the children of the included file's root, read
 * relative to the including file's directory; cycles, missing files and includes in a model loaded from
 * memory are errors naming the <include>'s file and line (mjcf_include.c). */
void mjcf_expand_includes(mjcf_ctx *c, mjcf_node *root);

/* <contact> (mjcf_contact.c): reading it; marking the geometries named by pairs (before the build);
 * giving the builder the exclusions, the explicit pairs and the parent filter (after the geometries). */
void mjcf_read_contact(mjcf_ctx *c, const mjcf_node *n);
void mjcf_mark_pairs(mjcf_ctx *c);
void mjcf_add_contact_filters(mjcf_ctx *c, grit_builder *gb);

/* Actuators (mjcf_actuator.c): MuJoCo 2.2.2's defaults of a class's actuator; whether an element name is
 * an actuator (motor, position, velocity, intvelocity, general; or one grit refuses, e.g. muscle); an
 * element's attributes applied to `a` (in a default class or in <actuator>); the <actuator> section; the
 * builder definition of an actuator (its transmission's joint left to the caller). */
void mjcf_actuator_defaults(mjcf_actuator *a);
int mjcf_is_actuator(const char *element);
void mjcf_actuator_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_actuator *a);
void mjcf_read_actuators(mjcf_ctx *c, const mjcf_node *n);
grit_actuator_def mjcf_actuator_def(mjcf_ctx *c, const mjcf_actuator *a);
/* A slider-crank's sites and slider axis (the slider site's z axis in its body frame) into d (issue 24). */
void mjcf_actuator_crank(mjcf_ctx *c, const mjcf_actuator *a, grit_actuator_def *d);
/* A site transmission's site and its gear rotated from the site frame to the site's body frame into d. */
void mjcf_actuator_site(mjcf_ctx *c, const mjcf_actuator *a, grit_actuator_def *d);
/* A compile error of the builder that names an actuator ("actuator N: ...") reported at that actuator's
 * element, file and line; 0 if msg names none. */
int mjcf_actuator_compile_error(mjcf_ctx *c, grit_status s, const char *msg);
/* <compiler><lengthrange>: mode, useexisting and uselimit read into c (the options of MuJoCo's simulation
 * are accepted: grit does not simulate); mode "none" is refused (docs/actuation.md). */
void mjcf_read_lengthrange_options(mjcf_ctx *c, const mjcf_node *n);
/* The options' effect on a muscle's length range d->length_range: an explicit range dropped when not
 * useexisting; with uselimit, its limited joint's range (as MuJoCo: without the gear) or its limited
 * tendon's range (j, t: the mjcf joint and tendon indices, -1 if none). */
void mjcf_actuator_lengthrange(mjcf_ctx *c, int j, int t, grit_actuator_def *d);

/* mjcf_parse.c's class lookup and mjcf_build.c's helpers, for mjcf_actuator.c */
int mjcf_element_class(mjcf_ctx *c, const mjcf_node *n, int fallback);
int mjcf_resolve_limited(mjcf_ctx *c, int limited, const double range[2], const char *element, const char *file,
                         int line, const char *attr);
void mjcf_fail_at(mjcf_ctx *c, grit_status s, const char *element, const char *file, int line, const char *what,
                  const char *detail);

/* Body mass properties (mjcf_inertia.c): body b's (index self; its geometries geom_list[geom_start[self]
 * .. geom_start[self + 1])) from <inertial> or its geometries as the compiler's inertiafromgeom says, with
 * boundmass and boundinertia; and <compiler settotalmass> applied to every body. */
void mjcf_compile_body(mjcf_ctx *c, mjcf_body *b, int self, const int *geom_start, const int *geom_list);
void mjcf_set_total_mass(mjcf_ctx *c);
/* The bodies and joints into builder gb (mjcf_build.c); grit_joint[j]: the builder's index of joint j. */
void mjcf_build_bodies(mjcf_ctx *c, grit_builder *gb, const int *joint_start, const int *joint_list, int *grit_joint);
/* Joint springdamper="timeconst dampratio" into the joints' stiffness and damping, from the mass matrix at
 * qpos0 of the compiled bodies and joints, as MuJoCo 2.2.2's compiler does (mjcf_springdamper.c). */
void mjcf_springdamper(mjcf_ctx *c, const int *joint_start, const int *joint_list);

/* ------------------------------------ adhesion, geometry margin, gap, priority (mjcf_adhesion.c) */

/* <adhesion>'s attributes (an element or a default class) over the class's: gain >= 0, ctrlrange
 * (required, >= 0; ctrllimited), fixed gain, no bias, no dynamics, as MuJoCo 2.2.2 reads them. */
void mjcf_adhesion_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_actuator *a);
/* A geometry's margin, gap (>= 0) and priority. */
void mjcf_geom_contact_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_geom *g);
/* d's body transmission for actuator A (A->body set): the grit body of the MJCF body; 0 on failure
 * (reported). */
int mjcf_adhesion_body(mjcf_ctx *c, const mjcf_actuator *A, grit_actuator_def *d);
/* ------------------------------------------- sites, equality constraints, tendons (mjcf_cx.c) */

typedef struct mjcf_site {
  const char *name, *file; /* file: the one it was read from (NULL: the model file) */
  int line, body;
  double pos[3];
  double quat[4]; /* its orientation in the body frame (a slider-crank's slider axis is its z axis) */
} mjcf_site;

typedef struct mjcf_equality {
  const char *name, *obj1, *obj2; /* body, joint or tendon names (obj2 NULL: the world / none) */
  const char *file;               /* the file it was read from (NULL: the model file) */
  int line, type;                 /* grit_equality_type */
  double anchor[3], relpose[7], polycoef[5], solref[2];
} mjcf_equality;

typedef struct mjcf_tendon {
  const char *name, *file; /* file: the one it was read from (NULL: the model file) */
  int line, type, n; /* grit_tendon_type; path elements */
  const char **obj;  /* (n) joint or site names (a wrap element: its side site, or NULL) */
  const char **geom; /* (n) spatial: the wrap geometry's name, NULL for a site */
  int *obj_line;     /* (n) their lines */
  double *coef;      /* (n) fixed: coefficients */
  int limited;       /* 0 false, 1 true, 2 auto */
  double range[2], solreflimit[2], solimplimit[5], stiffness, springlength, damping, frictionloss;
} mjcf_tendon;

/* A joint's actuatorfrcrange (newer than MuJoCo 2.2.2), the clamp of the actuators' total force on it,
 * folded into the force range of joint actuator A's definition d when A is the one actuator that moves
 * the joint; a clamp shared by several actuators is unsupported (mjcf_actfrc.c). */
void mjcf_actfrc_apply(mjcf_ctx *c, const mjcf_actuator *A, const mjcf_joint *J, grit_actuator_def *d);

/* The MJCF attributes of grit's joint friction and limits; defaults (MuJoCo's). */
void mjcf_cx_joint_defaults(mjcf_joint *j);
void mjcf_cx_read_joint_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_joint *j);
/* <site> in body `body`; the <tendon> and <equality> sections. */
/* def: the default class in force there (the body's childclass); frame: a <frame>'s or NULL. */
void mjcf_cx_read_site(mjcf_ctx *c, const mjcf_node *n, int body, int def, const double *frame);
void mjcf_cx_read_tendons(mjcf_ctx *c, const mjcf_node *n);
void mjcf_cx_read_equalities(mjcf_ctx *c, const mjcf_node *n);
/* Adds the sites, tendons and equalities to the builder (after bodies, joints and geometries;
 * grit_joint: the grit index of each MJCF joint; geom_order[i]: the MJCF geometry of grit's geometry i). */
/* Keeps the geometries that spatial tendons wrap around in grit's model (visual ones included). */
void mjcf_cx_mark_wrap_geoms(mjcf_ctx *c);
void mjcf_cx_build(mjcf_ctx *c, grit_builder *gb, const int *grit_joint, const int *geom_order);
/* The index of the tendon named `name` (grit's: the file's order), -1 if there is none. */
int mjcf_cx_tendon_index(const mjcf_ctx *c, const char *name);
/* A builder compile error naming "tendon N:" or "equality N:" reported at that element's line; 0 when the
 * message names neither. (mjcf_cx.c) */
int mjcf_cx_compile_error(mjcf_ctx *c, grit_status s, const char *msg);
int mjcf_cx_site_index(const mjcf_ctx *c, const char *name); /* the grit site of that name, or -1 */
/* The frame of body k's child (pos, quat) in k's nearest unfolded ancestor-or-self; returns it. */
int mjcf_unfolded_frame(const mjcf_body *B, int k, double pos[3], double quat[4]);


/* Reads the tree into the context's description (mjcf_parse.c). */
void mjcf_read(mjcf_ctx *c, mjcf_node *root);

/* Compiles the description into a model and fills the info's keyframes (mjcf_build.c). */
void mjcf_build(mjcf_ctx *c, grit_model **model);

/* The keyframes against the compiled model (sizes, finite quaternions: errors with the key's line), and
 * into c->info, completed with qpos0, zero velocity and control (mjcf_keys.c). */
void mjcf_keys_check(mjcf_ctx *c, const grit_model *m);
void mjcf_keys_make(mjcf_ctx *c, const grit_model *m);

#endif /* GRIT_MJCF_INTERNAL_H */
