/* SPDX-License-Identifier: Apache-2.0 */
/* model.c — grit.Model: a compiled model loaded from a file, with its keyframes and the file's step
 * settings; grit.load. */
#include "pygrit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The one place a model file is read: MJCF or URDF by content (grit/load.h), with the CLI's --lenient and
 * --package-path. */
static grit_status load_model_file(const char *path, double hydroelastic, int lenient, const char *package_path,
                                   grit_model **model, grit_mjcf_info *info, char msg[GRIT_MESSAGE_SIZE]) {
  grit_load_options o = grit_default_load_options();
  o.mjcf.hydro_modulus = hydroelastic; /* every non-plane geometry compliant (docs/hydroelastic.md) */
  o.mjcf.lenient = o.urdf.lenient = lenient;
  o.urdf.model.lenient = lenient;
  o.urdf.package_path = package_path;
  return grit_load_file(path, &o, model, info, msg);
}

PyObject *pg_load(PyObject *module, PyObject *args, PyObject *kwargs) {
  (void)module;
  static char *kw[] = {"path", "hydroelastic", "lenient", "package_path", NULL};
  PyObject *path = NULL, *pkg = NULL;
  double hydroelastic = 0.0;
  int lenient = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|$dpO&:load", kw, PyUnicode_FSDecoder, &path, &hydroelastic,
                                   &lenient, PyUnicode_FSConverter, &pkg))
    return NULL;
  if (!(hydroelastic >= 0)) {
    Py_DECREF(path);
    Py_XDECREF(pkg);
    PyErr_SetString(PyExc_ValueError, "hydroelastic: a modulus >= 0 (Pa) is expected");
    return NULL;
  }
  PgModel *self = PyObject_New(PgModel, &PgModel_Type);
  if (!self) {
    Py_DECREF(path);
    Py_XDECREF(pkg);
    return NULL;
  }
  self->model = NULL;
  memset(&self->info, 0, sizeof self->info);
  self->path = path;
  PyObject *bytes = PyUnicode_EncodeFSDefault(path);
  if (!bytes) {
    Py_XDECREF(pkg);
    Py_DECREF(self);
    return NULL;
  }
  char msg[GRIT_MESSAGE_SIZE] = "";
  const char *pkgs = pkg ? PyBytes_AS_STRING(pkg) : NULL;
  grit_status s;
  Py_BEGIN_ALLOW_THREADS
  s = load_model_file(PyBytes_AS_STRING(bytes), hydroelastic, lenient, pkgs, &self->model, &self->info, msg);
  Py_END_ALLOW_THREADS
  Py_DECREF(bytes);
  Py_XDECREF(pkg);
  if (s != GRIT_OK) {
    Py_DECREF(self);
    return pg_raise(s, msg);
  }
  return (PyObject *)self;
}

static void model_dealloc(PgModel *self) {
  grit_mjcf_info_free(&self->info);
  grit_model_free(self->model);
  Py_XDECREF(self->path);
  PyObject_Free(self);
}

int pg_model_settings(const PgModel *m, PyObject *contact, grit_step_settings *settings) {
  *settings = m->info.settings;
  return pg_contact_model(contact, &settings->contact_model);
}

/* A list of n names given by name(m, i). */
static PyObject *names(const grit_model *m, int n, const char *(*name)(const grit_model *, int)) {
  PyObject *list = PyList_New(n);
  for (int i = 0; list && i < n; ++i) {
    PyObject *s = PyUnicode_FromString(name(m, i));
    if (!s) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, i, s);
  }
  return list;
}

static PyObject *get_nq(PgModel *s, void *c) { return (void)c, PyLong_FromLong(grit_model_nq(s->model)); }
static PyObject *get_nv(PgModel *s, void *c) { return (void)c, PyLong_FromLong(grit_model_nv(s->model)); }
static PyObject *get_nu(PgModel *s, void *c) { return (void)c, PyLong_FromLong(grit_model_nu(s->model)); }
static PyObject *get_na(PgModel *s, void *c) { return (void)c, PyLong_FromLong(grit_model_na(s->model)); }
static PyObject *get_nbody(PgModel *s, void *c) { return (void)c, PyLong_FromLong(grit_model_nbody(s->model)); }
static PyObject *get_njoint(PgModel *s, void *c) { return (void)c, PyLong_FromLong(grit_model_njoint(s->model)); }
static PyObject *get_ngeom(PgModel *s, void *c) { return (void)c, PyLong_FromLong(grit_model_ngeom(s->model)); }
static PyObject *get_timestep(PgModel *s, void *c) {
  return (void)c, PyFloat_FromDouble(grit_model_options(s->model).timestep);
}
static PyObject *get_body_names(PgModel *s, void *c) {
  return (void)c, names(s->model, grit_model_nbody(s->model), grit_model_body_name);
}
static PyObject *get_joint_names(PgModel *s, void *c) {
  return (void)c, names(s->model, grit_model_njoint(s->model), grit_model_joint_name);
}
static PyObject *get_actuator_names(PgModel *s, void *c) {
  return (void)c, names(s->model, grit_model_nu(s->model), grit_model_actuator_name);
}
static PyObject *get_geom_names(PgModel *s, void *c) {
  return (void)c, names(s->model, grit_model_ngeom(s->model), grit_model_geom_name);
}
static PyObject *get_key_names(PgModel *s, void *c) {
  (void)c;
  PyObject *list = PyList_New(s->info.nkey);
  for (int i = 0; list && i < s->info.nkey; ++i) {
    PyObject *k = PyUnicode_FromString(s->info.keys[i].name);
    if (!k) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, i, k);
  }
  return list;
}
static PyObject *get_path(PgModel *s, void *c) { return (void)c, Py_NewRef(s->path); }
static PyObject *get_contact(PgModel *s, void *c) {
  return (void)c, PyUnicode_FromString(pg_contact_name(s->info.settings.contact_model));
}
static PyObject *get_qpos0(PgModel *s, void *c) {
  (void)c;
  npy_intp n = grit_model_nq(s->model);
  PyArrayObject *a = pg_zeros(1, &n);
  if (a) grit_model_qpos0(s->model, (double *)PyArray_DATA(a));
  return (PyObject *)a;
}
static PyObject *get_body_masses(PgModel *s, void *c) {
  (void)c;
  npy_intp n = grit_model_nbody(s->model);
  PyArrayObject *a = pg_zeros(1, &n);
  for (npy_intp i = 0; a && i < n; ++i) ((double *)PyArray_DATA(a))[i] = grit_model_body_mass(s->model, (int)i);
  return (PyObject *)a;
}

/* (nu, 2): each actuator's control range where it is limited (MJCF ctrlrange with ctrllimited), else
 * (-inf, inf); grit.ILQR takes it as its default control box. */
static PyObject *get_ctrl_range(PgModel *s, void *c) {
  (void)c;
  npy_intp n[2] = {grit_model_nu(s->model), 2};
  PyArrayObject *a = pg_zeros(2, n);
  for (npy_intp i = 0; a && i < n[0]; ++i) {
    grit_actuator_def def;
    double *r = (double *)PyArray_DATA(a) + 2 * i;
    const int limited = grit_model_actuator(s->model, (int)i, &def) == GRIT_OK && def.ctrl_limited;
    r[0] = limited ? def.ctrl_range[0] : -INFINITY;
    r[1] = limited ? def.ctrl_range[1] : INFINITY;
  }
  return (PyObject *)a;
}

/* A deep copy of the keyframes (grit_mjcf_info_free frees them with free()). */
static int copy_info(const grit_mjcf_info *from, grit_mjcf_info *to) {
  *to = *from;
  to->nkey = 0;
  to->keys = from->nkey ? calloc((size_t)from->nkey, sizeof *to->keys) : NULL;
  if (from->nkey && !to->keys) return -1;
  for (int k = 0; k < from->nkey; ++k) {
    grit_mjcf_key *a = &to->keys[k];
    const grit_mjcf_key *b = &from->keys[k];
    *a = *b;
    a->qpos = malloc(sizeof(double) * (size_t)(from->nq + 1));
    a->qvel = malloc(sizeof(double) * (size_t)(from->nv + 1));
    a->ctrl = b->ctrl ? malloc(sizeof(double) * (size_t)(from->nu + 1)) : NULL;
    to->nkey = k + 1;
    if (!a->qpos || !a->qvel || (b->ctrl && !a->ctrl)) return -1;
    memcpy(a->qpos, b->qpos, sizeof(double) * (size_t)from->nq);
    memcpy(a->qvel, b->qvel, sizeof(double) * (size_t)from->nv);
    if (b->ctrl) memcpy(a->ctrl, b->ctrl, sizeof(double) * (size_t)from->nu);
  }
  return 0;
}

/* with_params(params, values) -> Model: a copy with parameters changed (grit_model_with_params). */
static PyObject *model_with_params(PgModel *self, PyObject *args) {
  PyObject *pobj, *vobj;
  if (!PyArg_ParseTuple(args, "OO:with_params", &pobj, &vobj)) return NULL;
  int np = 0;
  grit_param *params = pg_params(pobj, &np);
  if (!params) return NULL;
  npy_intp n = np;
  PyArrayObject *v = pg_array(vobj, 1, &n, "with_params: values");
  PgModel *out = v ? PyObject_New(PgModel, &PgModel_Type) : NULL;
  if (out) {
    out->model = NULL;
    memset(&out->info, 0, sizeof out->info);
    out->path = Py_NewRef(self->path);
    char msg[GRIT_MESSAGE_SIZE] = "";
    grit_status s = grit_model_with_params(self->model, params, PyArray_DATA(v), np, &out->model, msg);
    if (s != GRIT_OK) {
      Py_CLEAR(out);
      pg_raise(s, msg);
    } else if (copy_info(&self->info, &out->info) < 0) {
      Py_CLEAR(out);
      PyErr_NoMemory();
    }
  }
  PyMem_Free(params);
  Py_XDECREF(v);
  return (PyObject *)out;
}

static PyMethodDef model_methods[] = {
    {"with_params", (PyCFunction)model_with_params, METH_VARARGS,
     "with_params(params, values) -> Model: a copy with parameters (kind, index) set to values "
     "(grit.with_params takes names)."},
    {NULL, NULL, 0, NULL}};

#define GET(name, doc) {#name, (getter)get_##name, NULL, doc, NULL}
static PyGetSetDef model_getset[] = {
    GET(nq, "number of position coordinates"),
    GET(nv, "number of velocity coordinates (degrees of freedom)"),
    GET(nu, "number of actuators (controls)"),
    GET(na, "number of actuator activations (the state is x = (q, v, act) when > 0; docs/actuation.md)"),
    GET(nbody, "number of bodies, the world (body 0) included"),
    GET(njoint, "number of joints"),
    GET(ngeom, "number of collision geometries"),
    GET(timestep, "the time step, s"),
    GET(body_names, "names of the bodies (index 0 is the world; \"\" for an unnamed body)"),
    GET(joint_names, "names of the joints"),
    GET(actuator_names, "names of the actuators, in the order of the controls"),
    GET(geom_names, "names of the geometries"),
    GET(key_names, "names of the file's keyframes, in document order"),
    GET(path, "the file the model was loaded from"),
    GET(contact, "the contact model the file asks for (\"lagged\" unless it says otherwise)"),
    GET(qpos0, "the reference configuration (nq,)"),
    GET(body_masses, "body masses, kg (nbody,); the world's is 0"),
    GET(ctrl_range, "each actuator's control range (nu, 2) where limited (ctrlrange), else (-inf, inf); "
                    "grit.ILQR's default control box"),
    {NULL, NULL, NULL, NULL, NULL}};
#undef GET

static PyObject *model_repr(PgModel *s) {
  return PyUnicode_FromFormat("<grit.Model %R nq=%d nv=%d nu=%d>", s->path, grit_model_nq(s->model),
                              grit_model_nv(s->model), grit_model_nu(s->model));
}

PyTypeObject PgModel_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "grit.Model",
    .tp_basicsize = sizeof(PgModel),
    .tp_dealloc = (destructor)model_dealloc,
    .tp_repr = (reprfunc)model_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A compiled, immutable grit model (grit.load(path) makes one). Many grit.Data may share it.",
    .tp_getset = model_getset,
    .tp_methods = model_methods,
};
