/* SPDX-License-Identifier: Apache-2.0 */
/* ilqr.c — grit.ILQR: the iLQR solver of grit_ilqr over grit's dynamics (grit_ilqr/grit_dynamics.h) with
 * the quadratic tracking cost given as arrays, path inequality constraints, gradient smoothing (and its
 * annealing), a Python log callback that can stop a solve, warm start, shift, and the goal, weights,
 * control reference and path bounds changed between solves (MPC). */
#include "pygrit.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum { PG_MAX_HORIZON = 100000 };

typedef struct PgILQR {
  PyObject_HEAD
  PgModel *model;
  grit_ilqr_grit *adapter;
  grit_ilqr *solver;
  grit_ilqr_options options; /* as last set (the C API has no getter) */
  int nx, ndx, nu, horizon, nc, np, busy;
  PyArrayObject *Q, *Qf, *R; /* the weights as last set (set_weights keeps those not given) */
  PyObject *log;             /* the Python log callback (None: none) */
  PyObject *log_exc;         /* an exception the callback raised during a solve, re-raised after it */
  int in_log;                /* the callback is running (request_stop is allowed then) */
  int stopping;              /* a stop was asked in this call of solve(): every later stage stops too */
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
    {"rollouts", "rollouts in this solve (the initial one and every line-search trial); by name only"},
    {"no_step_iterations", "iterations that ended without a step; by name only"},
    {"rejected_line_searches", "line searches that rejected every trial; by name only"},
    {"derivative_evaluations", "linearizations (Jacobians of all knots) in this solve; by name only"},
    {"gradient", "the gradient measure at the last linearization (docs/ilqr.md, Termination); by name only"},
    {"path_violation", "path constraints: max max(h, 0) at the end (0 without); by name only"},
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

/* ValueError "what, got x" (PyErr_Format has no %g). */
static PyObject *value_error(const char *what, double x) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s, got %g", what, x);
  PyErr_SetString(PyExc_ValueError, buf);
  return NULL;
}

static const double *ptr(PyArrayObject *a) { return a ? (const double *)PyArray_DATA(a) : NULL; }

/* ------------------------------------------------------------------------- the log callback */

/* One iteration as a dict (the fields of grit_ilqr_iteration). */
static PyObject *iteration_dict(const grit_ilqr_iteration *it) {
  return Py_BuildValue(
      "{s:i,s:d,s:d,s:d,s:d,s:d,s:d,s:i,s:i,s:d,s:d,s:d,s:d,s:d,s:d,s:i,s:i,s:i,s:i,s:d,s:i}", "iteration",
      it->iteration, "cost", it->cost, "actual", it->actual, "expected", it->expected, "alpha", it->alpha,
      "regularization", it->regularization, "feedforward", it->feedforward, "line_search_trials",
      it->line_search_trials, "clamped", it->clamped, "t_rollout", it->t_rollout, "t_derivatives", it->t_derivatives,
      "t_backward", it->t_backward, "violation", it->violation, "penalty", it->penalty, "gradient", it->gradient,
      "rollouts", it->rollouts, "backward_passes", it->backward_passes, "derivatives_reused", it->derivatives_reused,
      "rejected", it->rejected, "path_violation", it->path_violation, "kink", it->kink);
}

/* Keeps the pending exception for solve() to raise, and asks the solve to stop. */
static void keep_exception(PgILQR *self) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb && value) PyException_SetTraceback(value, tb);
  self->log_exc = value ? value : Py_NewRef(Py_None);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  grit_ilqr_request_stop(self->solver);
}

/* grit_ilqr's log, after every iteration, on the thread running the solve (the GIL taken here): calls
 * the Python callable, if any, with the iteration's dict; a true return value stops the solve
 * (grit_ilqr_request_stop), an exception stops it too and is re-raised by solve(). Then Python's
 * signal handlers run (on the main thread), so that Ctrl-C ends a long solve after this iteration with
 * KeyboardInterrupt instead of being deferred to its end. */
static void log_callback(void *ctx, const grit_ilqr_iteration *it) {
  PgILQR *self = ctx;
  PyGILState_STATE g = PyGILState_Ensure();
  if (self->log && !self->log_exc) {
    PyObject *d = iteration_dict(it), *r = NULL;
    self->in_log = 1;
    if (d) r = PyObject_CallOneArg(self->log, d);
    self->in_log = 0;
    const int stop = r ? PyObject_IsTrue(r) : -1;
    if (stop < 0) keep_exception(self);
    else if (stop) self->stopping = 1;
    Py_XDECREF(d);
    Py_XDECREF(r);
  }
  if (!self->log_exc && PyErr_CheckSignals() < 0) keep_exception(self);
  /* a solve_annealed runs further solves after a stop (each clears the request): stop each of them too */
  if (self->log_exc || self->stopping) grit_ilqr_request_stop(self->solver);
  PyGILState_Release(g);
}

static int set_log(PgILQR *self, PyObject *log) {
  if (log && log != Py_None && !PyCallable_Check(log))
    return PyErr_SetString(PyExc_TypeError, "ILQR: log must be callable (or None)"), -1;
  Py_XSETREF(self->log, log && log != Py_None ? Py_NewRef(log) : NULL);
  self->options.log = log_callback; /* always: it also runs the signal handlers */
  self->options.log_ctx = self;
  return 0;
}

/* ------------------------------------------------------------------------------- init */

static int ilqr_init(PgILQR *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"model", "horizon", "x0", "contact", "x_goal", "Q", "Qf", "R", "u_ref", "u_min", "u_max",
                       "C_final", "threads", "options", "Cx_path", "Cu_path", "d_path", "gradient_smoothing",
                       "gradient_smoothing_barrier", "log", NULL};
  PgModel *model;
  int horizon, threads = 1;
  double smoothing = 0, barrier = 0;
  PyObject *x0o, *contact = NULL, *xg = NULL, *Qo = NULL, *Qfo = NULL, *Ro = NULL, *uref = NULL, *umin = NULL;
  PyObject *umax = NULL, *Co = NULL, *opts = NULL, *Cxo = NULL, *Cuo = NULL, *dpo = NULL, *log = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!iO|$OOOOOOOOOiO!OOOddO:ILQR", kw, &PgModel_Type, &model, &horizon,
                                   &x0o, &contact, &xg, &Qo, &Qfo, &Ro, &uref, &umin, &umax, &Co, &threads,
                                   &PyDict_Type, &opts, &Cxo, &Cuo, &dpo, &smoothing, &barrier, &log))
    return -1;
  if (self->solver) return PyErr_SetString(PyExc_RuntimeError, "grit.ILQR is already initialized"), -1;
  /* a grit_data per knot and rollout slot: a horizon in the millions would exhaust memory, not fail */
  if (horizon < 1 || horizon > PG_MAX_HORIZON)
    return PyErr_Format(PyExc_ValueError, "ILQR: horizon must be in 1..%d, got %d", PG_MAX_HORIZON, horizon), -1;
  if (threads < 0 || threads > 64) return PyErr_SetString(PyExc_ValueError, "ILQR: threads must be in 0..64"), -1;
  if (!(isfinite(smoothing) && smoothing >= 0) || !(isfinite(barrier) && barrier >= 0))
    return PyErr_SetString(PyExc_ValueError,
                           "ILQR: gradient_smoothing and gradient_smoothing_barrier must be finite and >= 0"), -1;
  const grit_model *m = model->model;
  /* x = (q, v, act) with actuator activations (grit_ilqr/grit_dynamics.h) */
  self->nx = grit_model_nq(m) + grit_model_nv(m) + grit_model_na(m);
  self->ndx = 2 * grit_model_nv(m) + grit_model_na(m), self->nu = grit_model_nu(m);
  self->horizon = horizon;
  grit_step_settings st;
  if (pg_model_settings(model, contact, &st) < 0) return -1;
  if (!contact) st.contact_model = GRIT_CONTACT_LAGGED;
  st.gradient_smoothing = smoothing;
  st.gradient_smoothing_barrier = barrier;
  grit_ilqr_options o = grit_ilqr_default_options();
  o.nthreads = threads < 1 ? pg_cpu_count() : threads;
  if (o.nthreads > 64) o.nthreads = 64;
  if (apply_options(opts, &o) < 0 || set_log(self, log) < 0) return -1;
  o.log = self->options.log, o.log_ctx = self->options.log_ctx;

  npy_intp dc[2] = {-1, self->ndx};
  PyArrayObject *x0 = vector_or_none(x0o, self->nx, "x0"), *goal = NULL, *Q = NULL, *Qf = NULL, *R = NULL;
  PyArrayObject *ur = NULL, *lo = NULL, *hi = NULL, *C = NULL, *Cx = NULL, *Cu = NULL, *dp = NULL;
  npy_intp dcx[2] = {-1, self->ndx}, dcu[2] = {-1, self->nu}, ddp = -1;
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
  if (Cxo && Cxo != Py_None && !(Cx = pg_array(Cxo, 2, dcx, "Cx_path"))) goto done;
  if (Cuo && Cuo != Py_None && !(Cu = pg_array(Cuo, 2, dcu, "Cu_path"))) goto done;
  if (dpo && dpo != Py_None && !(dp = pg_array(dpo, 1, &ddp, "d_path"))) goto done;
  const npy_intp npath = dp ? PyArray_DIM(dp, 0) : 0;
  if ((Cx || Cu) && !dp) {
    PyErr_SetString(PyExc_ValueError, "ILQR: path constraints Cx_path (nc, 2nv) or Cu_path (nc, nu) need d_path (nc,)");
    goto done;
  }
  if (dp && ((!Cx && !Cu) || (Cx && PyArray_DIM(Cx, 0) != npath) || (Cu && PyArray_DIM(Cu, 0) != npath))) {
    PyErr_Format(PyExc_ValueError, "ILQR: d_path has %ld rows: Cx_path and/or Cu_path with as many rows are needed",
                 (long)npath);
    goto done;
  }
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
                         .C_final = ptr(C), .nc_path = (int)npath, .Cx_path = ptr(Cx), .Cu_path = ptr(Cu),
                         .d_path = ptr(dp)};
  if ((s = grit_ilqr_create(&p, &o, &self->solver, msg)) != GRIT_OK) {
    pg_raise(s, msg);
    goto done;
  }
  self->options = o;
  self->nc = (int)p.nc_final;
  self->np = (int)npath;
  self->Q = Q, self->Qf = Qf, self->R = R; /* kept for set_weights */
  Q = Qf = R = NULL;
  rc = 0;
done:
  Py_XDECREF(x0), Py_XDECREF(goal), Py_XDECREF(Q), Py_XDECREF(Qf), Py_XDECREF(R);
  Py_XDECREF(ur), Py_XDECREF(lo), Py_XDECREF(hi), Py_XDECREF(C);
  Py_XDECREF(Cx), Py_XDECREF(Cu), Py_XDECREF(dp);
  return rc;
}

static void ilqr_dealloc(PgILQR *self) {
  grit_ilqr_free(self->solver);
  grit_ilqr_grit_free(self->adapter);
  Py_XDECREF(self->model);
  Py_XDECREF(self->Q), Py_XDECREF(self->Qf), Py_XDECREF(self->R);
  Py_XDECREF(self->log), Py_XDECREF(self->log_exc);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static int ready(PgILQR *s) {
  if (!s->solver) return PyErr_SetString(PyExc_RuntimeError, "grit.ILQR is not initialized"), -1;
  if (s->busy) return PyErr_SetString(PyExc_RuntimeError, "grit.ILQR is solving in another thread"), -1;
  return 0;
}

/* ------------------------------------------------------------------------------ methods */

/* The result of a solve as a grit.ILQRResult. */
static PyObject *result_object(const grit_ilqr_result *r) {
  PyObject *out = PyStructSequence_New(&PgILQRResult_Type);
  if (!out) return NULL;
  enum { NITEMS = 15 };
  PyObject *items[NITEMS] = {PyUnicode_FromString(stop_name(r->stop)), PyBool_FromLong(r->converged),
                             PyLong_FromLong(r->iterations), PyFloat_FromDouble(r->initial_cost),
                             PyFloat_FromDouble(r->cost), PyFloat_FromDouble(r->violation),
                             PyLong_FromLong(r->multiplier_updates), PyFloat_FromDouble(r->t_total),
                             PyUnicode_FromString(grit_ilqr_stop_string(r->stop)), PyLong_FromLong(r->rollouts),
                             PyLong_FromLong(r->no_step_iterations), PyLong_FromLong(r->rejected_line_searches),
                             PyLong_FromLong(r->derivative_evaluations), PyFloat_FromDouble(r->gradient),
                             PyFloat_FromDouble(r->path_violation)};
  int ok = 1;
  for (int i = 0; i < NITEMS; ++i) {
    ok = ok && items[i];
    PyStructSequence_SetItem(out, i, items[i] ? items[i] : Py_NewRef(Py_None));
  }
  if (!ok) Py_CLEAR(out);
  return out;
}

/* Runs `run` (a solve, or an annealed solve) with the GIL released and `max_iter` > 0 as a one-off
 * iteration limit; re-raises what the log callback raised. */
typedef grit_status (*solve_fn)(PgILQR *self, grit_ilqr_result *r, const double *args);
static PyObject *run_solve(PgILQR *self, int max_iter, solve_fn run, const double *args) {
  grit_ilqr_result r;
  memset(&r, 0, sizeof r);
  grit_status s = GRIT_OK;
  if (max_iter < 0) return PyErr_SetString(PyExc_ValueError, "solve: max_iterations must be >= 1 (or None)"), NULL;
  if (max_iter > 0) { /* a one-off limit, as for the few iterations of a receding-horizon update */
    grit_ilqr_options o = self->options;
    o.max_iterations = max_iter;
    s = grit_ilqr_set_options(self->solver, &o);
  }
  if (s == GRIT_OK) {
    self->busy = 1;
    self->stopping = 0;
    Py_BEGIN_ALLOW_THREADS
    s = run(self, &r, args);
    Py_END_ALLOW_THREADS
    self->busy = 0;
  }
  if (max_iter > 0 && s != GRIT_ERR_INVALID_ARGUMENT) grit_ilqr_set_options(self->solver, &self->options);
  if (self->log_exc) { /* the callback's exception, as the solve's */
    PyObject *e = self->log_exc;
    self->log_exc = NULL;
    PyErr_SetObject((PyObject *)Py_TYPE(e), e);
    Py_DECREF(e);
    return NULL;
  }
  if (s != GRIT_OK) { /* the solver's message, with grit's reason from the adapter when it has one */
    const char *m = grit_ilqr_last_error(self->solver);
    const char *why = s == GRIT_ERR_NUMERICAL ? grit_ilqr_grit_last_error(self->adapter) : "";
    char msg[2 * GRIT_MESSAGE_SIZE];
    snprintf(msg, sizeof msg, "%s%s%s", m, m[0] && why[0] && strcmp(m, why) ? ": " : "", strcmp(m, why) ? why : "");
    return pg_raise(s, msg);
  }
  return result_object(&r);
}

static grit_status plain_solve(PgILQR *self, grit_ilqr_result *r, const double *args) {
  (void)args;
  return grit_ilqr_solve(self->solver, r);
}

static int parse_max_iter(PyObject *obj, int *max_iter) {
  *max_iter = 0;
  if (!obj || obj == Py_None) return 0;
  long v = PyLong_AsLong(obj);
  if (v == -1 && PyErr_Occurred()) return -1;
  if (v < 1 || v > 100000000) return PyErr_SetString(PyExc_ValueError, "max_iterations must be in 1..1e8 (or None)"), -1;
  *max_iter = (int)v;
  return 0;
}

static PyObject *ilqr_solve(PgILQR *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"max_iterations", NULL};
  PyObject *mi = NULL;
  int max_iter;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:solve", kw, &mi) || ready(self) < 0) return NULL;
  if (parse_max_iter(mi, &max_iter) < 0) return NULL;
  return run_solve(self, max_iter, plain_solve, NULL);
}

static grit_status annealed_solve(PgILQR *self, grit_ilqr_result *r, const double *a) {
  return grit_ilqr_grit_solve_annealed(self->adapter, self->solver, a[0], a[1], a[2], r);
}

static PyObject *ilqr_solve_annealed(PgILQR *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"delta0", "factor", "delta_min", "max_iterations", NULL};
  double a[3] = {0, 0.5, -1};
  PyObject *mi = NULL;
  int max_iter;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "d|ddO:solve_annealed", kw, &a[0], &a[1], &a[2], &mi) ||
      ready(self) < 0 || parse_max_iter(mi, &max_iter) < 0)
    return NULL;
  if (a[2] < 0) a[2] = 0.1 * a[0];
  if (!(isfinite(a[0]) && a[0] > 0))
    return value_error("solve_annealed: delta0 must be a finite distance > 0 (m)", a[0]);
  if (!(a[1] > 0 && a[1] < 1)) return value_error("solve_annealed: factor must be in (0, 1)", a[1]);
  if (!(isfinite(a[2]) && a[2] > 0))
    return value_error("solve_annealed: delta_min must be a finite distance > 0 (m)", a[2]);
  return run_solve(self, max_iter, annealed_solve, a);
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

/* ------------------------------------------------------------ changing the problem between solves */

static PyObject *status_result(PgILQR *self, grit_status s) {
  if (s != GRIT_OK) return pg_raise(s, grit_ilqr_last_error(self->solver));
  Py_RETURN_NONE;
}

static PyObject *ilqr_set_goal(PgILQR *self, PyObject *x) {
  if (ready(self) < 0) return NULL;
  PyArrayObject *a = x == Py_None ? NULL : vector_or_none(x, self->nx, "x_goal");
  if (!a && x != Py_None) return NULL;
  grit_status s = grit_ilqr_set_goal(self->solver, ptr(a));
  Py_XDECREF(a);
  return status_result(self, s);
}

/* set_weights(*, Q, Qf, R): a weight not given keeps its value; None removes that term. */
static PyObject *ilqr_set_weights(PgILQR *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"Q", "Qf", "R", NULL};
  PyObject *in[3] = {NULL, NULL, NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOO:set_weights", kw, &in[0], &in[1], &in[2]) || ready(self) < 0)
    return NULL;
  PyArrayObject **kept[3] = {&self->Q, &self->Qf, &self->R}, *next[3] = {NULL, NULL, NULL};
  const int size[3] = {self->ndx, self->ndx, self->nu};
  static const char *const name[3] = {"Q", "Qf", "R"};
  for (int i = 0; i < 3; ++i) {
    if (!in[i]) next[i] = *kept[i] ? (PyArrayObject *)Py_NewRef(*kept[i]) : NULL;
    else if (!(next[i] = matrix_or_diagonal(in[i], size[i], name[i])) && PyErr_Occurred()) {
      for (int j = 0; j < i; ++j) Py_XDECREF(next[j]);
      return NULL;
    }
  }
  grit_status s = grit_ilqr_set_weights(self->solver, ptr(next[0]), ptr(next[1]), ptr(next[2]));
  for (int i = 0; i < 3; ++i) {
    if (s == GRIT_OK) Py_XSETREF(*kept[i], next[i]);
    else Py_XDECREF(next[i]);
  }
  return status_result(self, s);
}

static PyObject *ilqr_set_control_reference(PgILQR *self, PyObject *u) {
  if (ready(self) < 0) return NULL;
  PyArrayObject *a = u == Py_None ? NULL : vector_or_none(u, self->nu, "u_ref");
  if (!a && u != Py_None) return NULL;
  grit_status s = grit_ilqr_set_control_reference(self->solver, ptr(a));
  Py_XDECREF(a);
  return status_result(self, s);
}

static PyObject *ilqr_set_path_bounds(PgILQR *self, PyObject *d) {
  if (ready(self) < 0) return NULL;
  if (!self->np) return PyErr_SetString(PyExc_ValueError, "set_path_bounds: the problem has no path constraints"), NULL;
  npy_intp n = self->np;
  PyArrayObject *a = pg_array(d, 1, &n, "d_path");
  if (!a) return NULL;
  grit_status s = grit_ilqr_set_path_bounds(self->solver, PyArray_DATA(a));
  Py_DECREF(a);
  return status_result(self, s);
}

/* set_smoothing(delta) / set_derivative_smoothing(delta): the adapter's, then dynamics_changed. */
static PyObject *smoothing(PgILQR *self, PyObject *arg, int derivative) {
  if (ready(self) < 0) return NULL;
  const double delta = PyFloat_AsDouble(arg);
  if (delta == -1.0 && PyErr_Occurred()) return NULL;
  if (!(isfinite(delta) && delta >= 0))
    return value_error(derivative ? "set_derivative_smoothing: a finite distance >= 0 (m) is needed"
                                  : "set_smoothing: a finite distance >= 0 (m) is needed",
                       delta);
  grit_status s = derivative ? grit_ilqr_grit_set_derivative_smoothing(self->adapter, delta)
                             : grit_ilqr_grit_set_smoothing(self->adapter, delta);
  if (s != GRIT_OK) return pg_raise(s, grit_ilqr_grit_last_error(self->adapter));
  return status_result(self, grit_ilqr_dynamics_changed(self->solver));
}
static PyObject *ilqr_set_smoothing(PgILQR *self, PyObject *arg) { return smoothing(self, arg, 0); }
static PyObject *ilqr_set_derivative_smoothing(PgILQR *self, PyObject *arg) { return smoothing(self, arg, 1); }

static PyObject *ilqr_request_stop(PgILQR *self, PyObject *unused) {
  (void)unused;
  if (!self->solver) return PyErr_SetString(PyExc_RuntimeError, "grit.ILQR is not initialized"), NULL;
  if (!self->in_log)
    return PyErr_SetString(PyExc_RuntimeError, "request_stop: call it from the log callback (or return True from "
                                               "the callback); between solves there is nothing to stop"),
           NULL;
  self->stopping = 1;
  grit_ilqr_request_stop(self->solver);
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
static PyObject *get_path_multipliers(PgILQR *s, void *c) {
  (void)c;
  if (ready(s) < 0) return NULL;
  const double *mu = grit_ilqr_path_multipliers(s->solver);
  if (!mu) Py_RETURN_NONE;
  npy_intp d[2] = {s->horizon, s->np};
  return copy_of(s, mu, 2, d);
}
static PyObject *get_log(PgILQR *s, void *c) { return (void)c, Py_NewRef(s->log ? s->log : Py_None); }
static int put_log(PgILQR *s, PyObject *v, void *c) {
  (void)c;
  if (s->busy) return PyErr_SetString(PyExc_RuntimeError, "grit.ILQR is solving: log cannot change now"), -1;
  if (set_log(s, v) < 0) return -1;
  return s->solver ? (grit_ilqr_set_options(s->solver, &s->options) == GRIT_OK ? 0 : -1) : 0;
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
    {"path_multipliers", (getter)get_path_multipliers, NULL,
     "(N, nc_path) the path constraints' multipliers (None without path constraints)", NULL},
    {"log", (getter)get_log, (setter)put_log,
     "the log callback: called after each iteration with a dict of its numbers (grit_ilqr_iteration); a true "
     "return value stops the solve (stop \"user_stop\"), an exception stops it and solve() raises it",
     NULL},
    {"cost", (getter)get_cost, NULL, "cost of the current solution", NULL},
    {"horizon", (getter)get_horizon, NULL, "N", NULL},
    {"nx", (getter)get_nx, NULL, "size of a state (nq + nv)", NULL},
    {"ndx", (getter)get_ndx, NULL, "size of its tangent space (2 nv)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef ilqr_methods[] = {
    {"solve", PG_KW(ilqr_solve), METH_VARARGS | METH_KEYWORDS,
     "solve() -> grit.ILQRResult: iLQR iterations from the current controls (the GIL is released)."},
    {"solve_annealed", PG_KW(ilqr_solve_annealed), METH_VARARGS | METH_KEYWORDS,
     "solve_annealed(delta0, factor=0.5, delta_min=delta0/10, max_iterations=None) -> grit.ILQRResult: solves "
     "with gradient smoothing delta0 (m), then delta0*factor, ... while >= delta_min, then exact "
     "(grit_ilqr_grit_solve_annealed); the totals of all the solves, the last one's stop."},
    {"set_goal", (PyCFunction)ilqr_set_goal, METH_O, "set_goal(x_goal): a new goal (nq + nv; None: none)."},
    {"set_weights", PG_KW(ilqr_set_weights), METH_VARARGS | METH_KEYWORDS,
     "set_weights(*, Q, Qf, R): new weights (matrices or diagonals); one not given keeps its value, None removes "
     "that term."},
    {"set_control_reference", (PyCFunction)ilqr_set_control_reference, METH_O,
     "set_control_reference(u_ref): a new control reference (nu; None: zero)."},
    {"set_path_bounds", (PyCFunction)ilqr_set_path_bounds, METH_O,
     "set_path_bounds(d_path): a new right-hand side of the path constraints (their multipliers are kept)."},
    {"set_smoothing", (PyCFunction)ilqr_set_smoothing, METH_O,
     "set_smoothing(delta): gradient smoothing delta (m, 0: exact) of the dynamics from the next solve."},
    {"set_derivative_smoothing", (PyCFunction)ilqr_set_derivative_smoothing, METH_O,
     "set_derivative_smoothing(delta): exact rollouts, Jacobians of the step smoothed by delta (m; 0: off)."},
    {"request_stop", (PyCFunction)ilqr_request_stop, METH_NOARGS,
     "request_stop(): from the log callback, ends the solve after this iteration (stop \"user_stop\")."},
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
