/* SPDX-License-Identifier: Apache-2.0 */
/* data.c — grit.Data: one grit_data with its state viewed in place by numpy, the step, keyframes and the
 * last step's contacts.
 *
 * data.qpos, data.qvel and data.ctrl are numpy arrays over the grit_data's own buffers (no copy). Writes
 * through them bypass grit's setters, which check finiteness, normalize quaternions and refresh the
 * cached kinematics, so before every step the extension compares the buffers with a shadow copy of what
 * grit last saw and passes whatever changed through the setters (a comparison of nq + nv + nu numbers). */
#include "pygrit.h"

#include <string.h>

static double *shadow_q(PgData *s) { return s->shadow; }
static double *shadow_v(PgData *s) { return s->shadow + grit_model_nq(s->model->model); }
static double *shadow_u(PgData *s) {
  return s->shadow + grit_model_nq(s->model->model) + grit_model_nv(s->model->model);
}

/* After grit changed the state: the shadow is the state again. */
static void shadow_update(PgData *s) {
  const grit_model *m = s->model->model;
  memcpy(shadow_q(s), grit_data_qpos(s->data), sizeof(double) * (size_t)grit_model_nq(m));
  memcpy(shadow_v(s), grit_data_qvel(s->data), sizeof(double) * (size_t)grit_model_nv(m));
  memcpy(shadow_u(s), grit_data_ctrl(s->data), sizeof(double) * (size_t)grit_model_nu(m));
}

/* Passes a buffer written through a view to grit's setter. The setter reads a copy (it writes the
 * buffer it is given to). On error the buffer keeps what was written and grit.Error is raised. */
static int sync_one(PgData *s, const double *now, double *shadow, int n,
                    grit_status (*set)(grit_data *, const double *, int)) {
  if (n == 0 || !memcmp(now, shadow, sizeof(double) * (size_t)n)) return 0;
  double buf[64], *tmp = n <= 64 ? buf : PyMem_Malloc(sizeof(double) * (size_t)n);
  if (!tmp) return PyErr_NoMemory(), -1;
  memcpy(tmp, now, sizeof(double) * (size_t)n);
  grit_status st = set(s->data, tmp, n);
  if (tmp != buf) PyMem_Free(tmp);
  if (st != GRIT_OK) return pg_raise(st, grit_data_last_error(s->data)), -1;
  memcpy(shadow, now, sizeof(double) * (size_t)n);
  return 0;
}

int pg_data_sync(PgData *s) {
  const grit_model *m = s->model->model;
  if (sync_one(s, grit_data_qpos(s->data), shadow_q(s), grit_model_nq(m), grit_data_set_qpos) < 0) return -1;
  if (sync_one(s, grit_data_qvel(s->data), shadow_v(s), grit_model_nv(m), grit_data_set_qvel) < 0) return -1;
  return sync_one(s, grit_data_ctrl(s->data), shadow_u(s), grit_model_nu(m), grit_data_set_ctrl);
}

static int check_idle(PgData *s) {
  if (!s->data) return PyErr_SetString(PyExc_RuntimeError, "grit.Data is not initialized"), -1;
  if (s->busy) return PyErr_SetString(PyExc_RuntimeError, "grit.Data is in use by another thread"), -1;
  return 0;
}

static int data_init(PgData *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"model", "contact", "rel_tol", "max_newton_iters", "stiction_tolerance", "integrator",
                       "gradient_smoothing", "gradient_smoothing_barrier", "warm_start", NULL};
  PgModel *model;
  PyObject *contact = NULL;
  double rel_tol = 0, stiction = 0, smoothing = 0, barrier = 0;
  int max_iters = 0, warm = -1;
  const char *integrator = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|O$didzddp:Data", kw, &PgModel_Type, &model, &contact, &rel_tol,
                                   &max_iters, &stiction, &integrator, &smoothing, &barrier, &warm))
    return -1;
  if (self->data) return PyErr_SetString(PyExc_RuntimeError, "grit.Data is already initialized"), -1;
  grit_step_settings st;
  if (pg_model_settings(model, contact, &st) < 0) return -1; /* None: the file's contact model */
  if (!contact) st.contact_model = GRIT_CONTACT_LAGGED;
  if (rel_tol != 0) st.rel_tol = rel_tol;
  if (max_iters != 0) st.max_newton_iters = max_iters;
  if (stiction != 0) st.stiction_tolerance = stiction;
  st.gradient_smoothing = smoothing;
  st.gradient_smoothing_barrier = barrier; /* checked by grit_data_set_step_settings below */
  if (warm >= 0) st.warm_start = warm;     /* (default: the file's, off: grit_step_settings.warm_start) */
  if (integrator) { /* grit_step_settings.integrator (docs/theory.md, docs/quasistatic.md) */
    static const char *const names[] = {"euler", "variational", "quasistatic"};
    int k = 0;
    while (k < 3 && strcmp(integrator, names[k])) ++k;
    if (k == 3)
      return PyErr_Format(PyExc_ValueError, "integrator must be 'euler', 'variational' or 'quasistatic', not '%s'",
                          integrator), -1;
    st.integrator = (grit_integrator)k;
  }
  const grit_model *m = model->model;
  size_t n = (size_t)(grit_model_nq(m) + grit_model_nv(m) + grit_model_nu(m));
  self->shadow = PyMem_Malloc(sizeof(double) * (n + 1));
  if (!self->shadow) return PyErr_NoMemory(), -1;
  grit_status s = grit_data_create(m, &self->data);
  if (s != GRIT_OK) return pg_raise(s, "cannot create the simulation data"), -1;
  self->model = (PgModel *)Py_NewRef(model);
  if ((s = grit_data_set_step_settings(self->data, &st)) != GRIT_OK) {
    pg_raise(s, grit_data_last_error(self->data));
    grit_data_free(self->data);
    self->data = NULL; /* not initialized */
    return -1;
  }
  shadow_update(self);
  return 0;
}

static void data_dealloc(PgData *self) {
  grit_data_free(self->data);
  PyMem_Free(self->shadow);
  Py_XDECREF(self->model);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* ------------------------------------------------------------------------------ state views */

static PyObject *view(PgData *s, const double *p, int n) {
  npy_intp dim = n;
  /* grit's buffers are heap memory of the grit_data, which is not const: the view may write them. */
  PyObject *a = PyArray_SimpleNewFromData(1, &dim, NPY_DOUBLE, (void *)(uintptr_t)p);
  if (a && PyArray_SetBaseObject((PyArrayObject *)a, Py_NewRef((PyObject *)s)) < 0) Py_CLEAR(a);
  return a;
}

/* data.qpos = value and its siblings: through grit's setter at once. Only this buffer's shadow follows
 * (values written through the other views stay pending, to be checked before the next step). */
static int assign(PgData *s, PyObject *value, int n, const char *what, double *shadow, const double *buffer,
                  grit_status (*set)(grit_data *, const double *, int)) {
  if (check_idle(s) < 0) return -1;
  if (!value) return PyErr_Format(PyExc_AttributeError, "cannot delete data.%s", what), -1;
  npy_intp dim = n;
  PyArrayObject *a = pg_array(value, 1, &dim, what);
  if (!a) return -1;
  grit_status st = set(s->data, (const double *)PyArray_DATA(a), n);
  Py_DECREF(a);
  if (st != GRIT_OK) return pg_raise(st, grit_data_last_error(s->data)), -1;
  memcpy(shadow, buffer, sizeof(double) * (size_t)n); /* what grit now holds (quaternions normalized) */
  return 0;
}

/* Getters of a Data whose __init__ did not run or failed raise instead of reading NULL. */
static int initialized(PgData *s) {
  return s->data ? 1 : (PyErr_SetString(PyExc_RuntimeError, "grit.Data is not initialized"), 0);
}

static PyObject *get_qpos(PgData *s, void *c) {
  return (void)c, initialized(s) ? view(s, grit_data_qpos(s->data), grit_model_nq(s->model->model)) : NULL;
}
static PyObject *get_qvel(PgData *s, void *c) {
  return (void)c, initialized(s) ? view(s, grit_data_qvel(s->data), grit_model_nv(s->model->model)) : NULL;
}
static PyObject *get_ctrl(PgData *s, void *c) {
  return (void)c, initialized(s) ? view(s, grit_data_ctrl(s->data), grit_model_nu(s->model->model)) : NULL;
}
static int set_qpos(PgData *s, PyObject *v, void *c) {
  if ((void)c, check_idle(s) < 0) return -1;
  return assign(s, v, grit_model_nq(s->model->model), "qpos", shadow_q(s), grit_data_qpos(s->data), grit_data_set_qpos);
}
static int set_qvel(PgData *s, PyObject *v, void *c) {
  if ((void)c, check_idle(s) < 0) return -1;
  return assign(s, v, grit_model_nv(s->model->model), "qvel", shadow_v(s), grit_data_qvel(s->data), grit_data_set_qvel);
}
static int set_ctrl(PgData *s, PyObject *v, void *c) {
  if ((void)c, check_idle(s) < 0) return -1;
  return assign(s, v, grit_model_nu(s->model->model), "ctrl", shadow_u(s), grit_data_ctrl(s->data), grit_data_set_ctrl);
}
/* The activations (na,): a copy (there is no shadow to sync a view with); assigned through grit's setter. */
static PyObject *get_act(PgData *s, void *c) {
  (void)c;
  if (!initialized(s)) return NULL;
  npy_intp n = grit_model_na(s->model->model);
  PyArrayObject *a = pg_zeros(1, &n);
  if (a && n) memcpy(PyArray_DATA(a), grit_data_act(s->data), sizeof(double) * (size_t)n);
  return (PyObject *)a;
}
static int set_act(PgData *s, PyObject *v, void *c) {
  (void)c;
  if (check_idle(s) < 0) return -1;
  if (!v) return PyErr_SetString(PyExc_AttributeError, "cannot delete data.act"), -1;
  npy_intp n = grit_model_na(s->model->model);
  PyArrayObject *a = pg_array(v, 1, &n, "act");
  if (!a) return -1;
  grit_status st = n ? grit_data_set_act(s->data, PyArray_DATA(a), (int)n) : GRIT_OK;
  Py_DECREF(a);
  return st == GRIT_OK ? 0 : (pg_raise(st, grit_data_last_error(s->data)), -1);
}
static PyObject *get_time(PgData *s, void *c) {
  return (void)c, initialized(s) ? PyFloat_FromDouble(grit_data_time(s->data)) : NULL;
}
static int set_time(PgData *s, PyObject *v, void *c) {
  (void)c;
  if (check_idle(s) < 0) return -1;
  if (!v) return PyErr_SetString(PyExc_AttributeError, "cannot delete data.time"), -1;
  double t = PyFloat_AsDouble(v);
  if (t == -1.0 && PyErr_Occurred()) return -1;
  grit_status st = grit_data_set_time(s->data, t);
  return st == GRIT_OK ? 0 : (pg_raise(st, grit_data_last_error(s->data)), -1);
}
static PyObject *get_model(PgData *s, void *c) {
  return (void)c, initialized(s) ? Py_NewRef((PyObject *)s->model) : NULL;
}
static PyObject *get_contact(PgData *s, void *c) {
  (void)c;
  if (!initialized(s)) return NULL;
  return PyUnicode_FromString(pg_contact_name(grit_data_step_settings(s->data).contact_model));
}

static PyGetSetDef data_getset[] = {
    {"qpos", (getter)get_qpos, (setter)set_qpos, "positions (nq,): a writable view of the data's own buffer", NULL},
    {"qvel", (getter)get_qvel, (setter)set_qvel, "velocities (nv,): a writable view", NULL},
    {"ctrl", (getter)get_ctrl, (setter)set_ctrl, "controls (nu,): a writable view", NULL},
    {"act", (getter)get_act, (setter)set_act, "actuator activations (na,): a copy; assign to set them", NULL},
    {"time", (getter)get_time, (setter)set_time, "simulated time, s", NULL},
    {"model", (getter)get_model, NULL, "the grit.Model", NULL},
    {"contact", (getter)get_contact, NULL, "the contact model of the step", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* ------------------------------------------------------------------------------------ step */

static PyObject *data_step(PgData *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"n", NULL};
  long n = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|l:step", kw, &n)) return NULL;
  if (n < 0) return PyErr_SetString(PyExc_ValueError, "step: n must be >= 0"), NULL;
  if (check_idle(self) < 0 || pg_data_sync(self) < 0) return NULL;
  grit_data *d = self->data;
  grit_status s = GRIT_OK;
  long k = 0;
  int interrupted = 0;
  self->busy = 1;
  while (k < n && s == GRIT_OK && !interrupted) {
    /* chunks of 64 steps without the GIL; between them Python's signal handlers run, so that Ctrl-C
     * ends a long step(n) with KeyboardInterrupt (e.steps_done set) instead of waiting for its end */
    const long end = n - k > 64 ? k + 64 : n;
    Py_BEGIN_ALLOW_THREADS
    for (; k < end; ++k)
      if ((s = grit_step(d)) != GRIT_OK) break;
    Py_END_ALLOW_THREADS
    if (k < n && s == GRIT_OK) interrupted = PyErr_CheckSignals() < 0;
  }
  self->busy = 0;
  shadow_update(self);
  if (s != GRIT_OK || interrupted) {
    /* Each failed grit_step leaves the data as it was: the state is that after the k steps done. */
    if (!interrupted) pg_raise(s, grit_data_last_error(d));
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *done = PyLong_FromLong(k);
    if (value && done) PyObject_SetAttrString(value, "steps_done", done);
    Py_XDECREF(done);
    PyErr_Restore(type, value, tb);
    return NULL;
  }
  Py_RETURN_NONE;
}

static PyObject *data_reset(PgData *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"key", NULL};
  PyObject *key = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:reset", kw, &key)) return NULL;
  if (check_idle(self) < 0) return NULL;
  const grit_mjcf_info *info = &self->model->info;
  int k = -1;
  if (PyUnicode_Check(key)) {
    const char *name = PyUnicode_AsUTF8(key);
    if (!name) return NULL;
    if ((k = grit_mjcf_key_index(info, name)) < 0)
      return PyErr_Format(PyExc_KeyError, "the model has no keyframe \"%s\"", name);
  } else if (key != Py_None) {
    long i = PyLong_AsLong(key);
    if (i == -1 && PyErr_Occurred()) return PyErr_SetString(PyExc_TypeError, "reset: key is a name or an index"), NULL;
    if (i < 0 || i >= info->nkey) return PyErr_Format(PyExc_IndexError, "keyframe %ld of %d", i, info->nkey);
    k = (int)i;
  }
  grit_data_reset(self->data);
  grit_status s = k >= 0 ? grit_mjcf_apply_key(info, k, self->data) : GRIT_OK;
  shadow_update(self);
  if (s != GRIT_OK) return pg_raise(s, grit_data_last_error(self->data));
  Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------------- contacts */

static PyStructSequence_Field contact_fields[] = {
    {"positions", "(n, 3) midpoints of the witness points, world, m"},
    {"normals", "(n, 3) contact normals, world, from geoms[:, 0] towards geoms[:, 1]"},
    {"impulses", "(n, 3) impulses on geoms[:, 1]'s body over the step in the contact frame (t1, t2, n), N s"},
    {"impulses_world", "(n, 3) the same impulses in world coordinates, N s"},
    {"frames", "(n, 3, 3) contact frames: the columns are t1, t2, n, world"},
    {"distances", "(n,) signed distances at the start of the step, m (negative in penetration)"},
    {"geoms", "(n, 2) the geometries of each contact (int)"},
    {"bodies", "(n, 2) their bodies (int)"},
    {NULL, NULL}};
static PyStructSequence_Desc contact_desc = {
    "grit.Contacts", "The contact candidates of the last step (active or not), as arrays.", contact_fields, 8};
PyTypeObject PgContacts_Type;

int pg_init_contacts_type(void) { return PyStructSequence_InitType2(&PgContacts_Type, &contact_desc); }

static PyObject *data_contacts(PgData *self, PyObject *unused) {
  (void)unused;
  if (check_idle(self) < 0) return NULL;
  const int n = grit_data_ncontacts(self->data);
  npy_intp d2[2] = {n, 3}, d3[3] = {n, 3, 3}, d1 = n, di[2] = {n, 2};
  PyArrayObject *pos = pg_zeros(2, d2), *nrm = pg_zeros(2, d2), *imp = pg_zeros(2, d2), *impw = pg_zeros(2, d2);
  PyArrayObject *fr = pg_zeros(3, d3), *phi = pg_zeros(1, &d1);
  PyArrayObject *geoms = (PyArrayObject *)PyArray_ZEROS(2, di, NPY_INT64, 0);
  PyArrayObject *bodies = (PyArrayObject *)PyArray_ZEROS(2, di, NPY_INT64, 0);
  PyObject *out = PyStructSequence_New(&PgContacts_Type);
  if (!pos || !nrm || !imp || !impw || !fr || !phi || !geoms || !bodies || !out) goto fail;
  for (int i = 0; i < n; ++i) {
    grit_contact_info c;
    grit_status s = grit_data_contact(self->data, i, &c);
    if (s != GRIT_OK) {
      pg_raise(s, grit_data_last_error(self->data));
      goto fail;
    }
    double *p = (double *)PyArray_DATA(pos) + 3 * i, *nn = (double *)PyArray_DATA(nrm) + 3 * i;
    double *im = (double *)PyArray_DATA(imp) + 3 * i, *iw = (double *)PyArray_DATA(impw) + 3 * i;
    for (int r = 0; r < 3; ++r) {
      p[r] = c.pos[r];
      nn[r] = c.frame[3 * r + 2];
      im[r] = c.impulse[r];
      iw[r] = c.frame[3 * r] * c.impulse[0] + c.frame[3 * r + 1] * c.impulse[1] + c.frame[3 * r + 2] * c.impulse[2];
    }
    memcpy((double *)PyArray_DATA(fr) + 9 * i, c.frame, sizeof c.frame);
    ((double *)PyArray_DATA(phi))[i] = c.phi0;
    for (int j = 0; j < 2; ++j) {
      ((npy_int64 *)PyArray_DATA(geoms))[2 * i + j] = c.geom[j];
      ((npy_int64 *)PyArray_DATA(bodies))[2 * i + j] = c.body[j];
    }
  }
  PyObject *items[8] = {(PyObject *)pos, (PyObject *)nrm, (PyObject *)imp,   (PyObject *)impw,
                        (PyObject *)fr,  (PyObject *)phi, (PyObject *)geoms, (PyObject *)bodies};
  for (int i = 0; i < 8; ++i) PyStructSequence_SetItem(out, i, items[i]); /* steals */
  return out;
fail:
  Py_XDECREF(pos), Py_XDECREF(nrm), Py_XDECREF(imp), Py_XDECREF(impw);
  Py_XDECREF(fr), Py_XDECREF(phi), Py_XDECREF(geoms), Py_XDECREF(bodies), Py_XDECREF(out);
  return NULL;
}

/* Seed 001's criteria of the last step (grit/diagnostics.h): per contact arrays and their maxima. */
static PyObject *data_diagnostics(PgData *self, PyObject *unused) {
  (void)unused;
  if (check_idle(self) < 0) return NULL;
  static const char *const names[5] = {"signorini_violation", "penetration_violation", "coulomb_violation",
                                       "dissipation_violation", "complementarity"};
  const int n = grit_data_ncontacts(self->data);
  npy_intp d1 = n;
  PyArrayObject *arr[5] = {NULL};
  PyObject *out = PyDict_New();
  if (!out) return NULL;
  for (int k = 0; k < 5; ++k)
    if (!(arr[k] = pg_zeros(1, &d1))) goto fail;
  for (int i = 0; i < n; ++i) {
    grit_contact_diagnostics g;
    grit_status s = grit_data_contact_diagnostics(self->data, i, &g);
    if (s != GRIT_OK) {
      pg_raise(s, grit_data_last_error(self->data));
      goto fail;
    }
    const double v[5] = {g.signorini_violation, g.penetration_violation, g.coulomb_violation, g.dissipation_violation,
                         g.complementarity};
    for (int k = 0; k < 5; ++k) ((double *)PyArray_DATA(arr[k]))[i] = v[k];
  }
  grit_contact_diagnostics mx;
  grit_data_step_diagnostics(self->data, &mx);
  const double vmax[5] = {mx.signorini_violation, mx.penetration_violation, mx.coulomb_violation,
                          mx.dissipation_violation, mx.complementarity};
  for (int k = 0; k < 5; ++k) {
    char key[64];
    snprintf(key, sizeof key, "%s_max", names[k]);
    PyObject *f = PyFloat_FromDouble(vmax[k]);
    if (!f || PyDict_SetItemString(out, names[k], (PyObject *)arr[k]) < 0 || PyDict_SetItemString(out, key, f) < 0) {
      Py_XDECREF(f);
      goto fail;
    }
    Py_DECREF(f);
  }
  for (int k = 0; k < 5; ++k) Py_DECREF(arr[k]);
  return out;
fail:
  for (int k = 0; k < 5; ++k) Py_XDECREF(arr[k]);
  Py_DECREF(out);
  return NULL;
}

static PyObject *data_stats(PgData *self, PyObject *unused) {
  (void)unused;
  if (check_idle(self) < 0) return NULL;
  grit_step_stats st;
  grit_status s = grit_data_step_stats(self->data, &st);
  if (s != GRIT_OK) return pg_raise(s, grit_data_last_error(self->data));
  return Py_BuildValue("{s:i,s:i,s:i,s:i,s:d,s:d,s:d}", "nconstraints", st.nconstraints, "ncontacts", st.ncontacts,
                       "newton_iters", st.newton_iters, "ls_iters", st.ls_iters, "residual", st.residual,
                       "residual_ref", st.residual_ref, "cond_estimate", st.cond_estimate);
}

/* The Jacobians of the last step: derivatives(params=None) -> (A, B) or (A, B, P). */
static PyObject *data_derivatives(PgData *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"params", NULL};
  PyObject *pobj = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:derivatives", kw, &pobj)) return NULL;
  if (check_idle(self) < 0) return NULL;
  int np = 0;
  grit_param *params = pobj == Py_None ? NULL : pg_params(pobj, &np);
  if (pobj != Py_None && !params) return NULL;
  const grit_model *m = self->model->model;
  const npy_intp nx = 2 * grit_model_nv(m) + grit_model_na(m); /* x = (q, v, act) with activations */
  npy_intp da[2] = {nx, nx}, db[2] = {nx, grit_model_nu(m)}, dp[2] = {nx, np};
  PyArrayObject *A = pg_zeros(2, da), *B = pg_zeros(2, db), *P = params ? pg_zeros(2, dp) : NULL;
  grit_status s = GRIT_ERR_OUT_OF_MEMORY;
  if (A && B && (P || !params)) {
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    s = grit_step_derivatives(self->data, PyArray_DATA(A), db[1] ? PyArray_DATA(B) : NULL, params, np,
                              P && np ? PyArray_DATA(P) : NULL);
    Py_END_ALLOW_THREADS
    self->busy = 0;
  }
  PyMem_Free(params);
  if (s != GRIT_OK) {
    Py_XDECREF(A), Py_XDECREF(B), Py_XDECREF(P);
    return PyErr_Occurred() ? NULL : pg_raise(s, grit_data_last_error(self->data));
  }
  return P ? Py_BuildValue("(NNN)", A, B, P) : Py_BuildValue("(NN)", A, B);
}

static PyMethodDef data_methods[] = {
    {"step", PG_KW(data_step), METH_VARARGS | METH_KEYWORDS,
     "step(n=1): n time steps. On failure raises grit.Error (e.steps_done steps were taken; the failed step "
     "changed nothing)."},
    {"reset", PG_KW(data_reset), METH_VARARGS | METH_KEYWORDS,
     "reset(key=None): back to qpos0, zero velocity, control and time; or to a keyframe (name or index)."},
    {"contacts", (PyCFunction)data_contacts, METH_NOARGS, "contacts() -> grit.Contacts of the last step."},
    {"diagnostics", (PyCFunction)data_diagnostics, METH_NOARGS,
     "diagnostics() -> dict: seed 001's criteria of the last step's contacts ('signorini_violation', "
     "'penetration_violation', 'coulomb_violation', 'dissipation_violation', 'complementarity': (n,) arrays) "
     "and their maxima ('..._max'); docs/contact.md."},
    {"stats", (PyCFunction)data_stats, METH_NOARGS, "stats() -> dict: statistics of the last step."},
    {"derivatives", PG_KW(data_derivatives), METH_VARARGS | METH_KEYWORDS,
     "derivatives(params=None) -> (A, B) or (A, B, P): the Jacobians of the last step."},
    {"derivative_blocks", (PyCFunction)pg_data_derivative_blocks, METH_NOARGS,
     "derivative_blocks() -> [(state, ctrl, A, B), ...]: A and B of the last step in block-sparse form, one "
     "block per island (state, ctrl: int64 indices into the tangent state and the controls)."},
    {NULL, NULL, 0, NULL}};

static PyObject *data_repr(PgData *s) {
  return PyUnicode_FromFormat("<grit.Data of %R, contact=%s>", s->model ? s->model->path : Py_None,
                              s->data ? pg_contact_name(grit_data_step_settings(s->data).contact_model) : "?");
}

PyTypeObject PgData_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "grit.Data",
    .tp_basicsize = sizeof(PgData),
    .tp_dealloc = (destructor)data_dealloc,
    .tp_repr = (reprfunc)data_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Data(model, contact=\"lagged\", *, rel_tol=None, max_newton_iters=None, stiction_tolerance=None,\n"
              "     integrator=\"euler\", gradient_smoothing=0.0, gradient_smoothing_barrier=0.0, warm_start=False)\n"
              "The state, controls and workspaces of one simulation of a model (contact: \"lagged\", "
              "\"similar\", \"sap\", or None for the model file's).",
    .tp_methods = data_methods,
    .tp_getset = data_getset,
    .tp_init = (initproc)data_init,
    .tp_new = PyType_GenericNew,
};
