/* SPDX-License-Identifier: Apache-2.0 */
/* offline.c — the offline tools: fitting contact parameters and masses to trajectories (grit/sysid.h)
 * and replay pages (grit/replay.h). */
#include "pygrit.h"

#include <stddef.h>
#include <string.h>

/* ------------------------------------------------------------------------------------- fit */

static PyStructSequence_Field fit_fields[] = {
    {"values", "(np,) the fitted values, in the order of the parameters"},
    {"std", "(np,) their standard deviations (Gauss-Newton, inf when the data do not determine one)"},
    {"cov", "(np, np) the covariance of log(values)"},
    {"converged", "the tolerance was met"},
    {"iterations", "Levenberg-Marquardt iterations"},
    {"evaluations", "rollouts of every trajectory with sensitivities"},
    {"initial_cost", "cost at the guesses"},
    {"cost", "cost at the result"},
    {"rms", "root mean square of the weighted residual"},
    {"sigma2", "residual variance per unit weight"},
    {"nsegments", "shooting segments over all trajectories"},
    {NULL, NULL}};
static PyStructSequence_Desc fit_desc = {"grit.FitResult", "What grit.fit found.", fit_fields, 11};
PyTypeObject PgFitResult_Type;

#define FO_D(f) {#f, offsetof(grit_fit_options, f), 0}
#define FO_I(f) {#f, offsetof(grit_fit_options, f), 1}
static const pg_option fit_options[] = {
    FO_I(segment_steps), FO_I(fit_initial_states), FO_D(position_sigma), FO_D(velocity_sigma), FO_I(max_iters),
    FO_D(tol), FO_D(max_log_step),
    {"rel_tol", offsetof(grit_fit_options, settings) + offsetof(grit_step_settings, rel_tol), 0}};
#undef FO_D
#undef FO_I

static int apply_fit_options(PyObject *kw, grit_fit_options *o) {
  return pg_apply_options(kw, fit_options, sizeof fit_options / sizeof fit_options[0], o, "fit");
}

/* The arrays of the trajectories, kept alive while grit_fit reads them: 3 per trajectory. */
typedef struct fit_inputs {
  Py_ssize_t n;
  PyArrayObject **arrays;
  grit_trajectory *trajs;
} fit_inputs;

static void fit_inputs_free(fit_inputs *in) {
  for (Py_ssize_t i = 0; in->arrays && i < 3 * in->n; ++i) Py_XDECREF(in->arrays[i]);
  PyMem_Free(in->arrays), PyMem_Free(in->trajs);
}

/* trajectories: a sequence of (qpos (T+1, nq), qvel (T+1, nv), ctrl (T, nu) or None). */
static int fit_inputs_read(PyObject *seq, const grit_model *m, fit_inputs *in) {
  PyObject *fast = PySequence_Fast(seq, "fit: trajectories must be a sequence of (qpos, qvel, ctrl)");
  if (!fast) return -1;
  in->n = PySequence_Fast_GET_SIZE(fast);
  in->arrays = PyMem_Calloc((size_t)(3 * in->n + 1), sizeof(PyArrayObject *));
  in->trajs = PyMem_Calloc((size_t)(in->n + 1), sizeof(grit_trajectory));
  int rc = in->arrays && in->trajs ? 0 : (PyErr_NoMemory(), -1);
  for (Py_ssize_t i = 0; rc == 0 && i < in->n; ++i) {
    PyObject *q, *v, *u = Py_None, *item = PySequence_Fast_GET_ITEM(fast, i);
    if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "OO|O", &q, &v, &u)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "fit: trajectory %zd must be a tuple (qpos, qvel, ctrl)", i);
      rc = -1;
      break;
    }
    npy_intp dq[2] = {-1, grit_model_nq(m)};
    PyArrayObject **a = in->arrays + 3 * i;
    if (!(a[0] = pg_array(q, 2, dq, "fit: a trajectory's qpos"))) {
      rc = -1;
      break;
    }
    const npy_intp T = PyArray_DIM(a[0], 0) - 1;
    npy_intp dv[2] = {T + 1, grit_model_nv(m)}, du[2] = {T, grit_model_nu(m)};
    if (!(a[1] = pg_array(v, 2, dv, "fit: a trajectory's qvel")) ||
        (u != Py_None && !(a[2] = pg_array(u, 2, du, "fit: a trajectory's ctrl")))) {
      rc = -1;
      break;
    }
    in->trajs[i] = (grit_trajectory){.nsteps = (int)T, .qpos = PyArray_DATA(a[0]), .qvel = PyArray_DATA(a[1]),
                                     .ctrl = a[2] ? PyArray_DATA(a[2]) : NULL};
  }
  Py_DECREF(fast);
  return rc;
}

PyObject *pg_fit(PyObject *module, PyObject *args, PyObject *kwargs) {
  (void)module;
  static char *kw[] = {"model", "trajectories", "params", "guesses", "contact", "options", NULL};
  PgModel *model;
  PyObject *trajs, *pobj, *gobj, *contact = NULL, *opts = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOO|OO!:fit", kw, &PgModel_Type, &model, &trajs, &pobj, &gobj,
                                   &contact, &PyDict_Type, &opts))
    return NULL;
  grit_fit_options o = grit_default_fit_options();
  if (pg_contact_model(contact, &o.settings.contact_model) < 0 || apply_fit_options(opts, &o) < 0) return NULL;
  int np = 0;
  grit_param *params = pg_params(pobj, &np);
  if (!params) return NULL;
  fit_inputs in = {0};
  PyArrayObject *values = NULL, *std = NULL, *cov = NULL;
  PyObject *out = NULL;
  npy_intp dn = np, dnn[2] = {np, np};
  PyArrayObject *g = pg_array(gobj, 1, &dn, "fit: guesses");
  if (!g || fit_inputs_read(trajs, model->model, &in) < 0) goto done;
  if (!(values = (PyArrayObject *)PyArray_NewCopy(g, NPY_CORDER)) || !(std = pg_zeros(1, &dn)) ||
      !(cov = pg_zeros(2, dnn)))
    goto done;
  grit_fit_result r;
  char msg[GRIT_MESSAGE_SIZE] = "";
  grit_status s;
  Py_BEGIN_ALLOW_THREADS
  s = grit_fit(model->model, in.trajs, (int)in.n, params, np, PyArray_DATA(values), &o, &r, PyArray_DATA(std),
               PyArray_DATA(cov), msg);
  Py_END_ALLOW_THREADS
  if (s != GRIT_OK) {
    pg_raise(s, msg);
    goto done;
  }
  if (!(out = PyStructSequence_New(&PgFitResult_Type))) goto done;
  PyObject *items[11] = {(PyObject *)values, (PyObject *)std, (PyObject *)cov, PyBool_FromLong(r.converged),
                         PyLong_FromLong(r.iterations), PyLong_FromLong(r.evaluations),
                         PyFloat_FromDouble(r.initial_cost), PyFloat_FromDouble(r.cost), PyFloat_FromDouble(r.rms),
                         PyFloat_FromDouble(r.sigma2), PyLong_FromLong(r.nsegments)};
  values = std = cov = NULL; /* stolen below */
  int ok = 1;
  for (int i = 0; i < 11; ++i) {
    ok = ok && items[i];
    PyStructSequence_SetItem(out, i, items[i] ? items[i] : Py_NewRef(Py_None));
  }
  if (!ok) Py_CLEAR(out);
done:
  fit_inputs_free(&in);
  PyMem_Free(params);
  Py_XDECREF(g), Py_XDECREF(values), Py_XDECREF(std), Py_XDECREF(cov);
  return out;
}

/* ---------------------------------------------------------------------------------- Replay */

typedef struct PgReplay {
  PyObject_HEAD
  PgModel *model;
  grit_replay *replay;
} PgReplay;

static int replay_init(PgReplay *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"model", "title", NULL};
  PgModel *model;
  const char *title = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|z:Replay", kw, &PgModel_Type, &model, &title)) return -1;
  if (self->replay) return PyErr_SetString(PyExc_RuntimeError, "grit.Replay is already initialized"), -1;
  grit_status s = grit_replay_create(model->model, &self->replay);
  if (s != GRIT_OK) return pg_raise(s, "cannot create the replay"), -1;
  self->model = (PgModel *)Py_NewRef(model);
  if (title && (s = grit_replay_set_title(self->replay, title)) != GRIT_OK)
    return pg_raise(s, grit_replay_last_error(self->replay)), -1;
  return 0;
}

static void replay_dealloc(PgReplay *self) {
  grit_replay_free(self->replay);
  Py_XDECREF(self->model);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *replay_status(PgReplay *self, grit_status s) {
  if (s != GRIT_OK) return pg_raise(s, grit_replay_last_error(self->replay));
  Py_RETURN_NONE;
}

static int replay_ready(PgReplay *s) {
  return s->replay ? 0 : (PyErr_SetString(PyExc_RuntimeError, "grit.Replay is not initialized"), -1);
}

static PyObject *replay_add_data(PgReplay *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"data", "after_step", NULL};
  PgData *d;
  int after = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|p:add_data", kw, &PgData_Type, &d, &after)) return NULL;
  if (replay_ready(self) < 0) return NULL;
  if (!d->data || d->model != self->model)
    return PyErr_SetString(PyExc_ValueError, "add_data: the data must be of the replay's model"), NULL;
  if (d->busy) return PyErr_SetString(PyExc_RuntimeError, "add_data: the data is in use by another thread"), NULL;
  if (pg_data_sync(d) < 0) return NULL; /* positions written through data.qpos are drawn as grit holds them */
  return replay_status(self, grit_replay_add_data(self->replay, d->data, after));
}

static PyObject *replay_add_frame(PgReplay *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"time", "qpos", NULL};
  double t;
  PyObject *q;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "dO:add_frame", kw, &t, &q) || replay_ready(self) < 0) return NULL;
  npy_intp n = grit_model_nq(self->model->model);
  PyArrayObject *a = pg_array(q, 1, &n, "add_frame: qpos");
  if (!a) return NULL;
  grit_status s = grit_replay_add_frame(self->replay, t, PyArray_DATA(a), (int)n, NULL, 0, -1);
  Py_DECREF(a);
  return replay_status(self, s);
}

static PyObject *replay_add_marker(PgReplay *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"shape", "size", "pos", "quat", "rgba", "name", NULL};
  static const char *shapes[] = {"plane", "sphere", "capsule", "box", "cylinder", "ellipsoid"};
  const char *shape, *name = NULL;
  grit_replay_marker mk = {.rgba = {1, 0.2, 0.2, 0.6}};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s(ddd)(ddd)|(dddd)(dddd)z:add_marker", kw, &shape, &mk.size[0],
                                   &mk.size[1], &mk.size[2], &mk.pos[0], &mk.pos[1], &mk.pos[2], &mk.quat[0],
                                   &mk.quat[1], &mk.quat[2], &mk.quat[3], &mk.rgba[0], &mk.rgba[1], &mk.rgba[2],
                                   &mk.rgba[3], &name) ||
      replay_ready(self) < 0)
    return NULL;
  int k = 1;
  while (k < 6 && strcmp(shapes[k], shape)) ++k;
  if (k == 6)
    return PyErr_Format(PyExc_ValueError, "add_marker: sphere, capsule, box, cylinder or ellipsoid, not '%s'", shape);
  mk.type = (grit_geom_type)k;
  mk.name = name;
  return replay_status(self, grit_replay_add_marker(self->replay, &mk));
}

/* add_plot(title, series, xlabel="", ylabel="", log_y=False, time_axis=False); series: [(name, x|None, y)] */
static PyObject *replay_add_plot(PgReplay *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"title", "series", "xlabel", "ylabel", "log_y", "time_axis", NULL};
  const char *title, *xl = "", *yl = "";
  PyObject *seq;
  int logy = 0, timeax = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO|ssp$p:add_plot", kw, &title, &seq, &xl, &yl, &logy, &timeax) ||
      replay_ready(self) < 0)
    return NULL;
  PyObject *fast = PySequence_Fast(seq, "add_plot: series must be a sequence of (name, x, y)");
  if (!fast) return NULL;
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  grit_replay_series *ser = PyMem_Calloc((size_t)n + 1, sizeof *ser);
  PyArrayObject **arrays = PyMem_Calloc(2 * (size_t)n + 1, sizeof *arrays);
  PyObject *out = NULL;
  int ok = ser && arrays;
  for (Py_ssize_t i = 0; ok && i < n; ++i) {
    PyObject *x, *y, *item = PySequence_Fast_GET_ITEM(fast, i);
    const char *name;
    ok = PyTuple_Check(item) && PyArg_ParseTuple(item, "zOO", &name, &x, &y);
    npy_intp any = -1;
    if (ok) ok = (arrays[2 * i + 1] = pg_array(y, 1, &any, "add_plot: y")) != NULL;
    npy_intp len = ok ? PyArray_DIM(arrays[2 * i + 1], 0) : 0;
    if (ok && x != Py_None) ok = (arrays[2 * i] = pg_array(x, 1, &len, "add_plot: x")) != NULL;
    if (ok)
      ser[i] = (grit_replay_series){.name = name, .x = arrays[2 * i] ? PyArray_DATA(arrays[2 * i]) : NULL,
                                    .y = PyArray_DATA(arrays[2 * i + 1]), .n = (int)len};
  }
  if (!ok && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "add_plot: each series is (name, x or None, y)");
  if (ok) {
    int flags = (logy ? GRIT_REPLAY_LOG_Y : 0) | (timeax ? GRIT_REPLAY_TIME_AXIS : 0);
    out = replay_status(self, grit_replay_add_plot(self->replay, title, xl, yl, flags, ser, (int)n));
  }
  for (Py_ssize_t i = 0; arrays && i < 2 * n; ++i) Py_XDECREF(arrays[i]);
  PyMem_Free(arrays), PyMem_Free(ser);
  Py_DECREF(fast);
  return out;
}

static PyObject *replay_write(PgReplay *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"path", NULL};
  PyObject *path;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&:write", kw, PyUnicode_FSConverter, &path) ||
      replay_ready(self) < 0)
    return NULL;
  grit_status s;
  Py_BEGIN_ALLOW_THREADS
  s = grit_replay_write_html(self->replay, PyBytes_AS_STRING(path));
  Py_END_ALLOW_THREADS
  Py_DECREF(path);
  return replay_status(self, s);
}

static PyObject *get_nframes(PgReplay *s, void *c) {
  return (void)c, replay_ready(s) < 0 ? NULL : PyLong_FromLong(grit_replay_nframes(s->replay));
}

static PyGetSetDef replay_getset[] = {{"nframes", (getter)get_nframes, NULL, "frames added so far", NULL},
                                      {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef replay_methods[] = {
    {"add_data", PG_KW(replay_add_data), METH_VARARGS | METH_KEYWORDS,
     "add_data(data, after_step=True): a frame at the data's time and positions (with its last step's contacts)."},
    {"add_frame", PG_KW(replay_add_frame), METH_VARARGS | METH_KEYWORDS, "add_frame(time, qpos): a frame."},
    {"add_marker", PG_KW(replay_add_marker), METH_VARARGS | METH_KEYWORDS,
     "add_marker(shape, size, pos, quat=(1,0,0,0), rgba=(1,.2,.2,.6), name=None): a fixed shape."},
    {"add_plot", PG_KW(replay_add_plot), METH_VARARGS | METH_KEYWORDS,
     "add_plot(title, series, xlabel='', ylabel='', *, log_y=False, time_axis=False); series [(name, x, y)]."},
    {"write", PG_KW(replay_write), METH_VARARGS | METH_KEYWORDS, "write(path): the HTML page."},
    {NULL, NULL, 0, NULL}};

PyTypeObject PgReplay_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "grit.Replay",
    .tp_basicsize = sizeof(PgReplay),
    .tp_dealloc = (destructor)replay_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Replay(model, title=None): frames of a trajectory written as one offline HTML page "
              "(docs/viewer.md).",
    .tp_methods = replay_methods,
    .tp_getset = replay_getset,
    .tp_init = (initproc)replay_init,
    .tp_new = PyType_GenericNew,
};

int pg_init_offline_types(void) { return PyStructSequence_InitType2(&PgFitResult_Type, &fit_desc); }
