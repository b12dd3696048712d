/* SPDX-License-Identifier: Apache-2.0 */
/* batch.c — functions over a model that make their own grit_data: linearize (one step and its Jacobians,
 * as `grit deriv`) and rollout (a batch of trajectories on POSIX threads, one grit_data per thread).
 *
 * Determinism: each trajectory is simulated from a freshly reset grit_data by one thread, and grit's step
 * depends only on the data's state and controls, so the results do not depend on the number of threads
 * or on which thread took which trajectory. */
#include "pygrit.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

/* A new grit_data of `m` with `settings`, or NULL with grit.Error set. */
static grit_data *new_data(const grit_model *m, const grit_step_settings *settings) {
  grit_data *d = NULL;
  grit_status s = grit_data_create(m, &d);
  if (s != GRIT_OK) return pg_raise(s, "cannot create the simulation data"), NULL;
  if ((s = grit_data_set_step_settings(d, settings)) != GRIT_OK) {
    pg_raise(s, grit_data_last_error(d));
    grit_data_free(d);
    return NULL;
  }
  return d;
}

/* ------------------------------------------------------------------------------- linearize */

PyObject *pg_linearize(PyObject *module, PyObject *args, PyObject *kwargs) {
  (void)module;
  static char *kw[] = {"model", "qpos", "qvel", "ctrl", "contact", "params", "act", NULL};
  PgModel *model;
  PyObject *qo, *vo, *uo = Py_None, *contact = NULL, *pobj = Py_None, *ao = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OO|OOOO:linearize", kw, &PgModel_Type, &model, &qo, &vo, &uo,
                                   &contact, &pobj, &ao))
    return NULL;
  const grit_model *m = model->model;
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m), na = grit_model_na(m);
  grit_step_settings st;
  if (pg_model_settings(model, contact, &st) < 0) return NULL;
  if (!contact) st.contact_model = GRIT_CONTACT_LAGGED;
  npy_intp dq = nq, dv = nv, du = nu, dact = na;
  PyArrayObject *q = pg_array(qo, 1, &dq, "qpos"), *v = q ? pg_array(vo, 1, &dv, "qvel") : NULL;
  PyArrayObject *act = v && ao != Py_None ? pg_array(ao, 1, &dact, "act") : NULL; /* None: zero activations */
  PyArrayObject *u = !v ? NULL : uo == Py_None ? pg_zeros(1, &du) : pg_array(uo, 1, &du, "ctrl"); /* None: zero */
  int np = 0;
  grit_param *params = NULL;
  PyArrayObject *A = NULL, *B = NULL, *P = NULL;
  grit_data *d = NULL;
  PyObject *out = NULL;
  if (!v || (!u && nu > 0) || (ao != Py_None && !act)) goto done;
  if (pobj != Py_None && !(params = pg_params(pobj, &np))) goto done;
  const npy_intp nx = 2 * nv + na; /* x = (q, v, act) with activations (docs/actuation.md) */
  npy_intp da[2] = {nx, nx}, db[2] = {nx, nu}, dp[2] = {nx, np};
  A = pg_zeros(2, da), B = pg_zeros(2, db), P = params ? pg_zeros(2, dp) : NULL;
  if (!A || !B || (params && !P) || !(d = new_data(m, &st))) goto done;
  grit_status s = grit_data_set_qpos(d, PyArray_DATA(q), nq);
  if (s == GRIT_OK) s = grit_data_set_qvel(d, PyArray_DATA(v), nv);
  if (s == GRIT_OK && nu) s = grit_data_set_ctrl(d, PyArray_DATA(u), nu);
  if (s == GRIT_OK && act && na) s = grit_data_set_act(d, PyArray_DATA(act), na);
  if (s == GRIT_OK) {
    /* grit deriv's sequence: the step from the given state, then its Jacobians */
    Py_BEGIN_ALLOW_THREADS
    s = grit_step(d);
    if (s == GRIT_OK)
      s = grit_step_derivatives(d, PyArray_DATA(A), nu ? PyArray_DATA(B) : NULL, params, np,
                                np ? PyArray_DATA(P) : NULL);
    Py_END_ALLOW_THREADS
  }
  if (s != GRIT_OK) {
    pg_raise(s, grit_data_last_error(d));
    goto done;
  }
  out = P ? Py_BuildValue("(OOO)", A, B, P) : Py_BuildValue("(OO)", A, B);
done:
  grit_data_free(d);
  PyMem_Free(params);
  Py_XDECREF(q), Py_XDECREF(v), Py_XDECREF(u), Py_XDECREF(A), Py_XDECREF(B), Py_XDECREF(P), Py_XDECREF(act);
  return out;
}

/* --------------------------------------------------------------------------------- rollout */

typedef struct rollout_job {
  const grit_model *model;
  const grit_step_settings *settings;
  int n, T, nq, nv, nu, nthreads;
  int nx; /* the Jacobians' state dimension: 2 nv + na */
  const double *q0, *v0, *ctrl; /* (n, nq), (n, nv), (n, T, nu) */
  double *qt, *vt;              /* (n, T + 1, nq), (n, T + 1, nv) */
  double *A, *B;                /* (n, T, 2nv, 2nv), (n, T, 2nv, nu), or NULL */
  grit_status *status;          /* per trajectory */
  int *failed_step;             /* per trajectory: the step that failed */
  char (*message)[GRIT_MESSAGE_SIZE]; /* per trajectory */
  int thread;                   /* this worker's index */
  atomic_int *stop;             /* set by the calling thread on Ctrl-C: every worker ends at its next step */
  atomic_long *steps_done;      /* steps taken by all workers (KeyboardInterrupt's steps_done) */
  struct rollout_sync *sync;    /* the count of finished workers, for the calling thread's wait */
} rollout_job;

/* The calling thread waits for the workers on this, waking every RUN_SIGNAL_PERIOD to run Python's signal
 * handlers (a Ctrl-C then ends the batch within a step of each worker instead of after all of it). */
typedef struct rollout_sync {
  pthread_mutex_t lock;
  pthread_cond_t done;
  int finished;
} rollout_sync;
enum { RUN_SIGNAL_PERIOD_MS = 50 };

/* Trajectory i on data d (reset first, so that nothing of the previous trajectory carries over). */
static void rollout_one(const rollout_job *j, grit_data *d, int i) {
  const size_t nx = (size_t)j->nx, T = (size_t)j->T;
  double *qt = j->qt + (size_t)i * (T + 1) * (size_t)j->nq, *vt = j->vt + (size_t)i * (T + 1) * (size_t)j->nv;
  grit_data_reset(d);
  grit_status s = grit_data_set_qpos(d, j->q0 + (size_t)i * (size_t)j->nq, j->nq);
  if (s == GRIT_OK) s = grit_data_set_qvel(d, j->v0 + (size_t)i * (size_t)j->nv, j->nv);
  int k = 0;
  if (s == GRIT_OK) {
    memcpy(qt, grit_data_qpos(d), sizeof(double) * (size_t)j->nq); /* quaternions as grit normalized them */
    memcpy(vt, grit_data_qvel(d), sizeof(double) * (size_t)j->nv);
  }
  for (; s == GRIT_OK && k < j->T; ++k) {
    if (atomic_load_explicit(j->stop, memory_order_relaxed)) return; /* interrupted: the results are dropped */
    if (j->nu) s = grit_data_set_ctrl(d, j->ctrl + ((size_t)i * T + (size_t)k) * (size_t)j->nu, j->nu);
    if (s == GRIT_OK) s = grit_step(d);
    if (s == GRIT_OK && j->A) {
      const size_t at = (size_t)i * T + (size_t)k;
      s = grit_step_derivatives(d, j->A + at * nx * nx, j->nu ? j->B + at * nx * (size_t)j->nu : NULL, NULL, 0, NULL);
    }
    if (s != GRIT_OK) break;
    atomic_fetch_add_explicit(j->steps_done, 1, memory_order_relaxed);
    memcpy(qt + (size_t)(k + 1) * (size_t)j->nq, grit_data_qpos(d), sizeof(double) * (size_t)j->nq);
    memcpy(vt + (size_t)(k + 1) * (size_t)j->nv, grit_data_qvel(d), sizeof(double) * (size_t)j->nv);
  }
  j->status[i] = s;
  if (s != GRIT_OK) {
    j->failed_step[i] = k;
    snprintf(j->message[i], GRIT_MESSAGE_SIZE, "%s", grit_data_last_error(d));
  }
}

/* A worker takes trajectories thread, thread + nthreads, ... (a fixed assignment: any works). */
static void *rollout_worker(void *arg) {
  const rollout_job *j = arg;
  grit_data *d = NULL;
  grit_status s = grit_data_create(j->model, &d);
  if (s == GRIT_OK) s = grit_data_set_step_settings(d, j->settings);
  for (int i = j->thread; i < j->n && !atomic_load_explicit(j->stop, memory_order_relaxed); i += j->nthreads) {
    if (s == GRIT_OK) {
      rollout_one(j, d, i);
    } else {
      j->status[i] = s, j->failed_step[i] = 0;
      snprintf(j->message[i], GRIT_MESSAGE_SIZE, "%s", d ? grit_data_last_error(d) : "cannot create the data");
    }
  }
  grit_data_free(d);
  pthread_mutex_lock(&j->sync->lock);
  j->sync->finished++;
  pthread_cond_signal(&j->sync->done);
  pthread_mutex_unlock(&j->sync->lock);
  return NULL;
}

/* Waits until `count` workers have finished; every RUN_SIGNAL_PERIOD_MS it takes the GIL and runs
 * Python's signal handlers, and on an exception (KeyboardInterrupt) sets the stop flag. Called and
 * returns without the GIL (`*ts` is the thread state Py_BEGIN_ALLOW_THREADS saved). */
static void wait_workers(rollout_job *proto, int count, PyThreadState **ts) {
  rollout_sync *sy = proto->sync;
  pthread_mutex_lock(&sy->lock);
  while (sy->finished < count) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += RUN_SIGNAL_PERIOD_MS * 1000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec += 1, until.tv_nsec -= 1000000000L;
    if (pthread_cond_timedwait(&sy->done, &sy->lock, &until) != ETIMEDOUT ||
        atomic_load_explicit(proto->stop, memory_order_relaxed))
      continue;
    pthread_mutex_unlock(&sy->lock);
    PyEval_RestoreThread(*ts);
    if (PyErr_CheckSignals() < 0) atomic_store(proto->stop, 1); /* the exception stays set for the caller */
    *ts = PyEval_SaveThread();
    pthread_mutex_lock(&sy->lock);
  }
  pthread_mutex_unlock(&sy->lock);
}

/* Runs the job on nthreads worker threads while the calling thread (with the GIL on entry and on
 * return) waits and runs the signal handlers; a thread that cannot be started has its share run on the
 * calling thread (the same results; not interruptible). Returns 0, or -1 with the signal handler's
 * exception set, its attribute steps_done the steps all workers had taken (the results are dropped). */
static int run_workers(rollout_job *proto) {
  const int nt = proto->nthreads;
  rollout_job jobs[256];
  pthread_t tid[256];
  int started[256] = {0};
  atomic_int stop = 0;
  atomic_long steps_done = 0;
  rollout_sync sync = {.finished = 0};
  if (pthread_mutex_init(&sync.lock, NULL) != 0) return PyErr_NoMemory(), -1;
  if (pthread_cond_init(&sync.done, NULL) != 0) return pthread_mutex_destroy(&sync.lock), PyErr_NoMemory(), -1;
  proto->stop = &stop, proto->sync = &sync, proto->steps_done = &steps_done;
  PyThreadState *ts = PyEval_SaveThread();
  for (int t = 0; t < nt; ++t) jobs[t] = *proto, jobs[t].thread = t;
  for (int t = 0; t < nt; ++t) started[t] = pthread_create(&tid[t], NULL, rollout_worker, &jobs[t]) == 0;
  for (int t = 0; t < nt; ++t)
    if (!started[t]) rollout_worker(&jobs[t]); /* no thread: the same work here, the same results */
  wait_workers(proto, nt, &ts);
  for (int t = 0; t < nt; ++t)
    if (started[t]) pthread_join(tid[t], NULL);
  PyEval_RestoreThread(ts);
  pthread_cond_destroy(&sync.done), pthread_mutex_destroy(&sync.lock);
  if (!atomic_load(&stop)) return 0;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyObject *done = PyLong_FromLong(atomic_load(&steps_done));
  if (value && done) PyObject_SetAttrString(value, "steps_done", done);
  Py_XDECREF(done);
  PyErr_Restore(type, value, tb);
  return -1;
}

PyObject *pg_rollout(PyObject *module, PyObject *args, PyObject *kwargs) {
  (void)module;
  static char *kw[] = {"model", "qpos", "qvel", "ctrl", "contact", "threads", "derivatives", NULL};
  PgModel *model;
  PyObject *qo, *vo, *uo, *contact = NULL;
  int threads = 0, derivs = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OOO|Oip:rollout", kw, &PgModel_Type, &model, &qo, &vo, &uo,
                                   &contact, &threads, &derivs))
    return NULL;
  const grit_model *m = model->model;
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m);
  grit_step_settings st;
  if (pg_model_settings(model, contact, &st) < 0) return NULL;
  if (!contact) st.contact_model = GRIT_CONTACT_LAGGED;
  if (threads < 0) return PyErr_SetString(PyExc_ValueError, "rollout: threads must be >= 0 (0: one per CPU)"), NULL;
  npy_intp dq[2] = {-1, nq};
  PyArrayObject *q = pg_array(qo, 2, dq, "qpos"), *v = NULL, *u = NULL;
  PyArrayObject *qt = NULL, *vt = NULL, *A = NULL, *B = NULL;
  PyObject *out = NULL;
  rollout_job job = {0};
  if (!q) goto done;
  const npy_intp n = PyArray_DIM(q, 0);
  npy_intp dv[2] = {n, nv}, du[3] = {n, -1, nu};
  if (!(v = pg_array(vo, 2, dv, "qvel")) || !(u = pg_array(uo, 3, du, "ctrl"))) goto done;
  const npy_intp T = PyArray_DIM(u, 1);
  if (n > INT32_MAX || T > INT32_MAX) {
    PyErr_SetString(PyExc_ValueError, "rollout: too many trajectories or steps");
    goto done;
  }
  const int nx = 2 * nv + grit_model_na(m); /* x = (q, v, act) with activations (docs/actuation.md) */
  npy_intp dqt[3] = {n, T + 1, nq}, dvt[3] = {n, T + 1, nv}, da[4] = {n, T, nx, nx}, db[4] = {n, T, nx, nu};
  qt = pg_zeros(3, dqt), vt = pg_zeros(3, dvt);
  if (!qt || !vt || (derivs && (!(A = pg_zeros(4, da)) || !(B = pg_zeros(4, db))))) goto done;
  job = (rollout_job){.model = m, .settings = &st, .n = (int)n, .T = (int)T, .nq = nq, .nv = nv, .nu = nu, .nx = nx,
                      .q0 = PyArray_DATA(q), .v0 = PyArray_DATA(v), .ctrl = PyArray_DATA(u),
                      .qt = PyArray_DATA(qt), .vt = PyArray_DATA(vt), .A = A ? PyArray_DATA(A) : NULL,
                      .B = B ? PyArray_DATA(B) : NULL};
  job.nthreads = threads ? threads : pg_cpu_count();
  if (job.nthreads > n) job.nthreads = n > 0 ? (int)n : 1;
  if (job.nthreads > 256) job.nthreads = 256;
  job.status = PyMem_Calloc((size_t)n + 1, sizeof(grit_status));
  job.failed_step = PyMem_Calloc((size_t)n + 1, sizeof(int));
  job.message = PyMem_Calloc((size_t)n + 1, GRIT_MESSAGE_SIZE);
  if (!job.status || !job.failed_step || !job.message) {
    PyErr_NoMemory();
    goto done;
  }
  if (run_workers(&job) < 0) goto done; /* Ctrl-C: KeyboardInterrupt */
  for (npy_intp i = 0; i < n; ++i) /* the first failure by trajectory: the same for any thread count */
    if (job.status[i] != GRIT_OK) {
      char msg[2 * GRIT_MESSAGE_SIZE];
      snprintf(msg, sizeof msg, "trajectory %ld, step %d: %s", (long)i, job.failed_step[i], job.message[i]);
      pg_raise(job.status[i], msg);
      goto done;
    }
  out = A ? Py_BuildValue("(OOOO)", qt, vt, A, B) : Py_BuildValue("(OO)", qt, vt);
done:
  PyMem_Free(job.status), PyMem_Free(job.failed_step), PyMem_Free(job.message);
  Py_XDECREF(q), Py_XDECREF(v), Py_XDECREF(u), Py_XDECREF(qt), Py_XDECREF(vt), Py_XDECREF(A), Py_XDECREF(B);
  return out;
}
