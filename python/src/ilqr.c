/* SPDX-License-Identifier: Apache-2.0 */
/* ilqr.c — grit.ILQR: the iLQR solver of grit_ilqr over grit's dynamics (grit_ilqr/grit_dynamics.h) with
 * the quadratic tracking cost given as arrays, warm start and shift for receding horizon. */
#include "pygrit.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

typedef struct PgILQR {
  PyObject_HEAD
  PgModel *model;
  grit_ilqr_grit *adapter;
  grit_ilqr *solver;
  grit_ilqr_options options; /* as last set (the C API has no getter) */
  int nx, ndx, nu, horizon, nc, busy;
} PgILQR;

/* ---------------------------------------------------------------------------- the result */

static PyStructSequence_Field result_fields[] = {
    {"stop", "why the last run of iterations stopped: \"converged_cost\", \"converged_feedforward\", "
             "\"max_iterations\", \"no_progress\" (the regularization limit), \"line_search_stalled\", "
             "\"zero_gradient\", \"not_finite\", \"time_limit\" or \"user_stop\""},
    {"converged", "True for the two converged stops (with a final constraint: and it is met)"},
    {"iterations", "iterations of this solve"},
    {"initial_cost", "cost of the rollout of the initial controls"},
    {"cost", "final cost"},
    {"violation", "final constraint: max |c_i| at the end (0 without one)"},
    {"multiplier_updates", "augmented-Lagrangian updates of the multipliers"},
    {"time", "seconds spent in this solve"},
    {"reason", "the stop as a sentence a user can act on (grit_ilqr_stop_string); by name only"},
    {NULL, NULL}};
static PyStructSequence_Desc result_desc = {"grit.ILQRResult", "What grit.ILQR.solve did.", result_fields, 8};
PyTypeObject PgILQRResult_Type;

int pg_init_ilqr_types(void) { return PyStructSequence_InitType2(&PgILQRResult_Type, &result_desc); }

/* The switch is on an int so that a reason added to grit_ilqr_stop later builds (as "other") until it is
 * named here. */
static const char *stop_name(grit_ilqr_stop s) {
  switch ((int)s) {
  case GRIT_ILQR_CONVERGED_COST: return "converged_cost";
  case GRIT_ILQR_CONVERGED_FEEDFORWARD: return "converged_feedforward";
  case GRIT_ILQR_MAX_ITERATIONS: return "max_iterations";
  case GRIT_ILQR_NO_PROGRESS: return "no_progress";
  case GRIT_ILQR_LINE_SEARCH_STALLED: return "line_search_stalled";
  case GRIT_ILQR_ZERO_GRADIENT: return "zero_gradient";
  case GRIT_ILQR_NOT_FINITE: return "not_finite";
  case GRIT_ILQR_TIME_LIMIT: return "time_limit";
  case GRIT_ILQR_USER_STOP: return "user_stop";
  default: return "other";
  }
}

/* ---------------------------------------------------------------------------- options */


#define OPT_D(f) {#f, offsetof(grit_ilqr_options, f), 0}
#define OPT_I(f) {#f, offsetof(grit_ilqr_options, f), 1}
static const pg_option option_fields[] = {
    OPT_I(max_iterations), OPT_D(tol_cost),       OPT_D(tol_feedforward), OPT_D(reg_init),    OPT_D(reg_min),
    OPT_D(reg_max),        OPT_D(reg_factor),     OPT_D(ls_decrease),     OPT_I(ls_max_trials), OPT_D(ls_accept),
    OPT_I(nthreads),       OPT_D(tol_constraint), OPT_D(penalty_init),    OPT_D(penalty_factor), OPT_D(penalty_max),
    OPT_D(max_time),       OPT_D(tol_gradient),   OPT_D(alpha_converged), OPT_I(inner_max_iterations),
    OPT_D(kink_alpha),     OPT_I(reg_limit_ends_inner), OPT_I(stall_short_steps), OPT_I(reg_reset_on_update)};
#undef OPT_D
#undef OPT_I

static int apply_options(PyObject *kw, grit_ilqr_options *o) {
  return pg_apply_options(kw, option_fields, sizeof option_fields / sizeof option_fields[0], o, "ILQR");
}

/* ---------------------------------------------------------------------------- arrays */

/* A (n, n) matrix, or a (n,) diagonal made into one; NULL for None (no error set). */
static PyArrayObject *matrix_or_diagonal(PyObject *obj, int n, const char *what) {
  if (!obj || obj == Py_None) return NULL;
  PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(obj, NPY_DOUBLE, 0, 0, NPY_ARRAY_IN_ARRAY);
  if (!a) return NULL;
  const int diag = PyArray_NDIM(a) == 1;
  Py_DECREF(a);
  npy_intp d1 = n, d2[2] = {n, n};
  PyArrayObject *in = diag ? pg_array(obj, 1, &d1, what) : pg_array(obj, 2, d2, what);
  if (!in || !diag) return in;
  PyArrayObject *full = pg_zeros(2, d2);
  for (int i = 0; full && i < n; ++i) ((double *)PyArray_DATA(full))[i * n + i] = ((double *)PyArray_DATA(in))[i];
  Py_DECREF(in);
  return full;
}

static PyArrayObject *vector_or_none(PyObject *obj, int n, const char *what) {
  npy_intp d = n;
  return obj && obj != Py_None ? pg_array(obj, 1, &d, what) : NULL;
}

static const double *ptr(PyArrayObject *a) { return a ? (const double *)PyArray_DATA(a) : NULL; }

/* ------------------------------------------------------------------------------- init */

static int ilqr_init(PgILQR *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"model", "horizon", "x0", "contact", "x_goal", "Q", "Qf", "R", "u_ref", "u_min", "u_max",
                       "C_final", "threads", "options", NULL};
  PgModel *model;
  int horizon, threads = 1;
  PyObject *x0o, *contact = NULL, *xg = NULL, *Qo = NULL, *Qfo = NULL, *Ro = NULL, *uref = NULL, *umin = NULL;
  PyObject *umax = NULL, *Co = NULL, *opts = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!iO|$OOOOOOOOOiO!:ILQR", kw, &PgModel_Type, &model, &horizon, &x0o,
                                   &contact, &xg, &Qo, &Qfo, &Ro, &uref, &umin, &umax, &Co, &threads, &PyDict_Type,
                                   &opts))
    return -1;
  if (self->solver) return PyErr_SetString(PyExc_RuntimeError, "grit.ILQR is already initialized"), -1;
  if (horizon < 1) return PyErr_SetString(PyExc_ValueError, "ILQR: horizon must be >= 1"), -1;
  const grit_model *m = model->model;
  self->nx = grit_model_nq(m) + grit_model_nv(m), self->ndx = 2 * grit_model_nv(m), self->nu = grit_model_nu(m);
  self->horizon = horizon;
  grit_step_settings st;
  if (pg_model_settings(model, contact, &st) < 0) return -1;
  if (!contact) st.contact_model = GRIT_CONTACT_LAGGED;
  grit_ilqr_options o = grit_ilqr_default_options();
  o.nthreads = threads < 1 ? pg_cpu_count() : threads;
  if (apply_options(opts, &o) < 0) return -1;

  npy_intp dc[2] = {-1, self->ndx};
  PyArrayObject *x0 = vector_or_none(x0o, self->nx, "x0"), *goal = NULL, *Q = NULL, *Qf = NULL, *R = NULL;
  PyArrayObject *ur = NULL, *lo = NULL, *hi = NULL, *C = NULL;
  int rc = -1;
  if (!x0 && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "ILQR: x0 is needed");
  if (PyErr_Occurred()) goto done;
  if (!(goal = vector_or_none(xg, self->nx, "x_goal")) && PyErr_Occurred()) goto done;
  if (!(Q = matrix_or_diagonal(Qo, self->ndx, "Q")) && PyErr_Occurred()) goto done;
  if (!(Qf = matrix_or_diagonal(Qfo, self->ndx, "Qf")) && PyErr_Occurred()) goto done;
  if (!(R = matrix_or_diagonal(Ro, self->nu, "R")) && PyErr_Occurred()) goto done;
  if (!(ur = vector_or_none(uref, self->nu, "u_ref")) && PyErr_Occurred()) goto done;
  if (!(lo = vector_or_none(umin, self->nu, "u_min")) && PyErr_Occurred()) goto done;
  if (!(hi = vector_or_none(umax, self->nu, "u_max")) && PyErr_Occurred()) goto done;
  if (Co && Co != Py_None && !(C = pg_array(Co, 2, dc, "C_final"))) goto done;
  if (!lo != !hi) {
    PyErr_SetString(PyExc_ValueError, "ILQR: u_min and u_max go together");
    goto done;
  }
  char msg[GRIT_MESSAGE_SIZE] = "";
  grit_status s = grit_ilqr_grit_create(m, horizon, &st, &self->adapter, msg);
  if (s != GRIT_OK) {
    pg_raise(s, msg);
    goto done;
  }
  self->model = (PgModel *)Py_NewRef(model);
  grit_ilqr_problem p = {.dynamics = grit_ilqr_grit_dynamics(self->adapter), .horizon = horizon, .x0 = ptr(x0),
                         .x_goal = ptr(goal), .Q = ptr(Q), .Qf = ptr(Qf), .R = ptr(R), .u_ref = ptr(ur),
                         .u_min = ptr(lo), .u_max = ptr(hi), .nc_final = C ? (int)PyArray_DIM(C, 0) : 0,
                         .C_final = ptr(C)};
  if ((s = grit_ilqr_create(&p, &o, &self->solver, msg)) != GRIT_OK) {
    pg_raise(s, msg);
    goto done;
  }
  self->options = o;
  self->nc = (int)p.nc_final;
  rc = 0;
done:
  Py_XDECREF(x0), Py_XDECREF(goal), Py_XDECREF(Q), Py_XDECREF(Qf), Py_XDECREF(R);
  Py_XDECREF(ur), Py_XDECREF(lo), Py_XDECREF(hi), Py_XDECREF(C);
  return rc;
}

static void ilqr_dealloc(PgILQR *self) {
  grit_ilqr_free(self->solver);
  grit_ilqr_grit_free(self->adapter);
  Py_XDECREF(self->model);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static int ready(PgILQR *s) {
  if (!s->solver) return PyErr_SetString(PyExc_RuntimeError, "grit.ILQR is not initialized"), -1;
  if (s->busy) return PyErr_SetString(PyExc_RuntimeError, "grit.ILQR is solving in another thread"), -1;
  return 0;
}

/* ------------------------------------------------------------------------------ methods */

static PyObject *ilqr_solve(PgILQR *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"max_iterations", NULL};
  int max_iter = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|i:solve", kw, &max_iter) || ready(self) < 0) return NULL;
  grit_ilqr_result r;
  grit_status s = GRIT_OK;
  if (max_iter > 0) { /* a one-off limit, as for the few iterations of a receding-horizon update */
    grit_ilqr_options o = self->options;
    o.max_iterations = max_iter;
    s = grit_ilqr_set_options(self->solver, &o);
  }
  if (s == GRIT_OK) {
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    s = grit_ilqr_solve(self->solver, &r);
    Py_END_ALLOW_THREADS
    self->busy = 0;
  }
  if (max_iter > 0 && s != GRIT_ERR_INVALID_ARGUMENT) grit_ilqr_set_options(self->solver, &self->options);
  if (s != GRIT_OK) return pg_raise(s, grit_ilqr_last_error(self->solver));
  PyObject *out = PyStructSequence_New(&PgILQRResult_Type);
  if (!out) return NULL;
  PyObject *items[9] = {PyUnicode_FromString(stop_name(r.stop)), PyBool_FromLong(r.converged),
                        PyLong_FromLong(r.iterations), PyFloat_FromDouble(r.initial_cost), PyFloat_FromDouble(r.cost),
                        PyFloat_FromDouble(r.violation), PyLong_FromLong(r.multiplier_updates),
                        PyFloat_FromDouble(r.t_total), PyUnicode_FromString(grit_ilqr_stop_string(r.stop))};
  int ok = 1;
  for (int i = 0; i < 9; ++i) {
    ok = ok && items[i];
    PyStructSequence_SetItem(out, i, items[i] ? items[i] : Py_NewRef(Py_None));
  }
  if (!ok) Py_CLEAR(out);
  return out;
}

static PyObject *ilqr_set_options(PgILQR *self, PyObject *args, PyObject *kwargs) {
  if (PyTuple_GET_SIZE(args) || ready(self) < 0)
    return PyTuple_GET_SIZE(args) ? PyErr_Format(PyExc_TypeError, "set_options takes keywords only") : NULL;
  grit_ilqr_options o = self->options;
  if (apply_options(kwargs, &o) < 0) return NULL;
  grit_status s = grit_ilqr_set_options(self->solver, &o);
  if (s != GRIT_OK) return pg_raise(s, grit_ilqr_last_error(self->solver));
  self->options = o;
  Py_RETURN_NONE;
}

static PyObject *ilqr_set_initial_state(PgILQR *self, PyObject *x) {
  if (ready(self) < 0) return NULL;
  npy_intp d = self->nx;
  PyArrayObject *a = pg_array(x, 1, &d, "x0");
  if (!a) return NULL;
  grit_status s = grit_ilqr_set_initial_state(self->solver, PyArray_DATA(a));
  Py_DECREF(a);
  if (s != GRIT_OK) return pg_raise(s, grit_ilqr_last_error(self->solver));
  Py_RETURN_NONE;
}

static PyObject *ilqr_set_controls(PgILQR *self, PyObject *u) {
  if (ready(self) < 0) return NULL;
  npy_intp d[2] = {self->horizon, self->nu};
  PyArrayObject *a = pg_array(u, 2, d, "controls");
  if (!a) return NULL;
  grit_status s = grit_ilqr_set_controls(self->solver, PyArray_DATA(a));
  Py_DECREF(a);
  if (s != GRIT_OK) return pg_raise(s, grit_ilqr_last_error(self->solver));
  Py_RETURN_NONE;
}

static PyObject *ilqr_shift(PgILQR *self, PyObject *unused) {
  (void)unused;
  if (ready(self) < 0) return NULL;
  grit_status s = grit_ilqr_shift(self->solver);
  if (s != GRIT_OK) return pg_raise(s, grit_ilqr_last_error(self->solver));
  Py_RETURN_NONE;
}

/* A copy of a solver view (the views change with the next call). */
static PyObject *copy_of(PgILQR *s, const double *p, int ndim, const npy_intp *dims) {
  if (ready(s) < 0) return NULL;
  PyArrayObject *a = pg_zeros(ndim, dims);
  if (!a) return NULL;
  if (p) memcpy(PyArray_DATA(a), p, (size_t)PyArray_NBYTES(a));
  return (PyObject *)a;
}

static PyObject *get_states(PgILQR *s, void *c) {
  npy_intp d[2] = {s->horizon + 1, s->nx};
  return (void)c, copy_of(s, s->solver ? grit_ilqr_states(s->solver) : NULL, 2, d);
}
static PyObject *get_controls(PgILQR *s, void *c) {
  npy_intp d[2] = {s->horizon, s->nu};
  return (void)c, copy_of(s, s->solver ? grit_ilqr_controls(s->solver) : NULL, 2, d);
}
static PyObject *get_gains(PgILQR *s, void *c) {
  npy_intp d[3] = {s->horizon, s->nu, s->ndx};
  return (void)c, copy_of(s, s->solver ? grit_ilqr_gains(s->solver) : NULL, 3, d);
}
static PyObject *get_multipliers(PgILQR *s, void *c) {
  (void)c;
  if (ready(s) < 0) return NULL;
  const double *lam = grit_ilqr_multipliers(s->solver);
  if (!lam) Py_RETURN_NONE;
  npy_intp d = s->nc;
  return copy_of(s, lam, 1, &d);
}
static PyObject *get_cost(PgILQR *s, void *c) {
  return (void)c, ready(s) < 0 ? NULL : PyFloat_FromDouble(grit_ilqr_cost(s->solver));
}
static PyObject *get_horizon(PgILQR *s, void *c) { return (void)c, PyLong_FromLong(s->horizon); }
static PyObject *get_nx(PgILQR *s, void *c) { return (void)c, PyLong_FromLong(s->nx); }
static PyObject *get_ndx(PgILQR *s, void *c) { return (void)c, PyLong_FromLong(s->ndx); }

static PyGetSetDef ilqr_getset[] = {
    {"states", (getter)get_states, NULL, "(N + 1, nq + nv) states x = (q, v) of the current solution", NULL},
    {"controls", (getter)get_controls, NULL, "(N, nu) controls of the current solution", NULL},
    {"gains", (getter)get_gains, NULL, "(N, nu, 2 nv) feedback gains: u = u_k + K_k (x (-) x_k)", NULL},
    {"multipliers", (getter)get_multipliers, NULL, "(nc,) the final constraint's multipliers (None without one)",
     NULL},
    {"cost", (getter)get_cost, NULL, "cost of the current solution", NULL},
    {"horizon", (getter)get_horizon, NULL, "N", NULL},
    {"nx", (getter)get_nx, NULL, "size of a state (nq + nv)", NULL},
    {"ndx", (getter)get_ndx, NULL, "size of its tangent space (2 nv)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef ilqr_methods[] = {
    {"solve", PG_KW(ilqr_solve), METH_VARARGS | METH_KEYWORDS,
     "solve() -> grit.ILQRResult: iLQR iterations from the current controls (the GIL is released)."},
    {"set_options", PG_KW(ilqr_set_options), METH_VARARGS | METH_KEYWORDS,
     "set_options(**options): changes the named options (the others keep their values)."},
    {"set_initial_state", (PyCFunction)ilqr_set_initial_state, METH_O, "set_initial_state(x0): a new x_0 (nq + nv)."},
    {"set_controls", (PyCFunction)ilqr_set_controls, METH_O,
     "set_controls(U): warm start from the (N, nu) controls U (clamped to the limits)."},
    {"shift", (PyCFunction)ilqr_shift, METH_NOARGS,
     "shift(): receding horizon: drops u_0, moves the rest one knot earlier, repeats the last control."},
    {NULL, NULL, 0, NULL}};

PyTypeObject PgILQR_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "grit.ILQR",
    .tp_basicsize = sizeof(PgILQR),
    .tp_dealloc = (destructor)ilqr_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "ILQR(model, horizon, x0, *, contact=\"lagged\", x_goal=None, Q=None, Qf=None, R=None, u_ref=None, "
              "u_min=None, u_max=None, C_final=None, threads=1, options=None)\n"
              "iLQR over grit's step: minimizes sum 1/2 e'Qe + 1/2 (u-u_ref)'R(u-u_ref) + 1/2 e_N'Qf e_N, "
              "e = x (-) x_goal, subject to u_min <= u <= u_max and C_final (x_N (-) x_goal) = 0.",
    .tp_methods = ilqr_methods,
    .tp_getset = ilqr_getset,
    .tp_init = (initproc)ilqr_init,
    .tp_new = PyType_GenericNew,
};
