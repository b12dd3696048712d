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
  int line;
  int nattr;
  const char **attr;   /* 2 nattr strings: name, value, name, value, ... */
  unsigned char *used; /* nattr flags: the attribute was read (the others are reported as ignored) */
  struct mjcf_node *parent, *child, *last_child, *next;
} mjcf_node;

/* Parses `size` bytes into a tree allocated in `pool`. On failure writes "name:line: ..." to msg. */
grit_status mjcf_xml_parse(const char *data, size_t size, const char *name, mjcf_pool *pool, mjcf_node **root,
                           char msg[GRIT_MESSAGE_SIZE]);

/* ------------------------------------------------------------------------- model description */

enum { MJCF_ORI_NONE, MJCF_ORI_QUAT, MJCF_ORI_AXISANGLE, MJCF_ORI_EULER, MJCF_ORI_XYAXES, MJCF_ORI_ZAXIS,
       MJCF_ORI_FULLINERTIA };

/* One of MJCF's ways to give an orientation (or, for <inertial>, fullinertia). */
typedef struct mjcf_orient {
  int kind;
  double v[6];
} mjcf_orient;

enum { MJCF_GEOM_PLANE, MJCF_GEOM_SPHERE, MJCF_GEOM_CAPSULE, MJCF_GEOM_ELLIPSOID, MJCF_GEOM_CYLINDER,
       MJCF_GEOM_BOX, MJCF_GEOM_MESH };

typedef struct mjcf_joint {
  const char *name;
  int line, body;
  int type; /* grit_joint_type */
  double pos[3], axis[3], range[2], damping, armature, stiffness, springref, ref;
  int limited; /* 0 false, 1 true, 2 auto */
} mjcf_joint;

typedef struct mjcf_geom {
  const char *name;
  const char *mesh; /* asset name for type mesh */
  int line, body;
  int type; /* MJCF_GEOM_* */
  double size[3], pos[3], fromto[6], mass, density, friction;
  int has_fromto, has_mass, condim, group;
  unsigned contype, conaffinity;
  mjcf_orient ori;
  /* compiled: frame in the body, sizes, mass and principal inertia along the geom's axes */
  double cpos[3], cquat[4], csize[3], cmass, cinertia[3];
  int mesh_mass;             /* a mesh's mass from its faces: its centre and inertia are the two below */
  double mcom[3], mfull[9];  /* its centre and inertia about it, in the body frame */
  int mesh_index;
} mjcf_geom;

typedef struct mjcf_actuator {
  const char *name, *joint;
  int line;
  double gear, gain, ctrlrange[2], forcerange[2];
  int ctrllimited, forcelimited; /* 0 false, 1 true, 2 auto */
  int supported;                 /* 0: skipped with a warning (not a joint transmission, not a motor) */
} mjcf_actuator;

typedef struct mjcf_default {
  const char *name;
  int parent;
  mjcf_joint joint;
  mjcf_geom geom;
  mjcf_actuator act;
} mjcf_default;

typedef struct mjcf_body {
  const char *name;
  int line, parent, def; /* def: the default class of its elements (childclass, inherited) */
  double pos[3];
  mjcf_orient ori;
  int has_inertial;
  double ipos[3], imass, idiag[3];
  mjcf_orient iori;
  /* compiled */
  double quat[4], mass, com[3], inertia[9];
  int njoint, folded_into, grit_index;
} mjcf_body;

typedef struct mjcf_mesh {
  const char *name;
  int line, nvert, ntri;
  double *vert;
  int *tri; /* (ntri x 3) from a mesh file's faces, for its mass (none from a 'vertex' list) */
} mjcf_mesh;

/* A geometry declared compliant-hydroelastic in <custom> (docs/hydroelastic.md). */
typedef struct mjcf_hydro {
  const char *geom; /* the geometry's name */
  double modulus;   /* Pa, > 0 */
  int line, used;
} mjcf_hydro;

typedef struct mjcf_keyframe {
  const char *name;
  int line;
  double time;
  double *qpos, *qvel, *ctrl;
  int nqpos, nqvel, nctrl;
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
  const char *meshdir, *assetdir; /* where mesh files are, relative to base_dir (NULL: base_dir) */
  char eulerseq[4];
  double boundmass;
  /* <option>, <custom> */
  grit_options opt;
  grit_step_settings settings;
  double stiffness, dissipation, tau_d;

  mjcf_array defs, bodies, joints, geoms, acts, meshes, keys; /* of the mjcf_* types above */
  mjcf_array hydro; /* of mjcf_hydro: <custom><numeric name="grit_hydro_modulus:GEOM" data="E"/> */
  const char *model_name;
} mjcf_ctx;

void *mjcf_push(mjcf_ctx *c, mjcf_array *a, size_t size); /* a new zeroed element, NULL on failure */

/* A whole file into memory (at most 64 MiB), for the model file and its mesh files; on failure writes
 * "path: why" to msg. (mjcf_mesh.c) */
grit_status mjcf_read_file(const char *path, char **data, size_t *size, char *msg);
/* The distinct vertices (4 to 4096) of a mesh file (.stl, binary or ASCII; .obj) and its triangles
 * (indices into them; none if the file has no faces), in `pool`. On failure writes why to msg
 * (GRIT_MESSAGE_SIZE bytes). (mjcf_mesh.c) */
grit_status mjcf_mesh_file_read(const char *path, mjcf_pool *pool, double **vert, int *nvert, int **tri, int *ntri,
                                char *msg);
/* The same from `size` bytes of a file's content (followed by a zero byte), STL if `stl`, else OBJ;
 * `path` names it in messages. */
grit_status mjcf_mesh_parse(const char *text, size_t size, int stl, const char *path, mjcf_pool *pool, double **vert,
                            int *nvert, int **tri, int *ntri, char *msg);
/* Volume, centre and inertia about the centre (unit density) of a closed triangle mesh; 0 if it
 * encloses no volume. */
int mjcf_mesh_mass_properties(const double *v, const int *tri, int ntri, double *volume, double com[3],
                              double inertia[9]);
#define MJCF_AT(array, type, i) (((type *)(array).data) + (i))

/* Errors and warnings, "file:line: <element> ..." (node may be NULL: no line). */
void mjcf_fail(mjcf_ctx *c, grit_status s, const mjcf_node *node, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
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
double mjcf_geom_volume(const mjcf_geom *g); /* from the compiled sizes csize */
void mjcf_geom_inertia(mjcf_geom *g);        /* principal inertia cinertia of the mass cmass */

/* Reads the tree into the context's description (mjcf_parse.c). */
void mjcf_read(mjcf_ctx *c, mjcf_node *root);

/* Compiles the description into a model and fills the info's keyframes (mjcf_build.c). */
void mjcf_build(mjcf_ctx *c, grit_model **model);

#endif /* GRIT_MJCF_INTERNAL_H */
