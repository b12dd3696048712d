/* SPDX-License-Identifier: Apache-2.0 */
/* pygrit.h — declarations shared by the files of the extension module grit._grit (docs/python.md).
 *
 * The module is a CPython extension over grit's C API with NumPy's C API: arrays cross the boundary as
 * contiguous float64 buffers (the state is viewed in place, without copies), and every call that runs
 * grit's step releases the GIL. */
#ifndef PYGRIT_H
#define PYGRIT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* One table of NumPy's C API for the whole module, imported by module.c (the only file without
 * NO_IMPORT_ARRAY). */
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL pygrit_numpy_api
#ifndef PYGRIT_MODULE_C
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "grit/grit.h"
#include "grit/replay.h"
#include "grit_ilqr/grit_dynamics.h"
#include "grit_ilqr/ilqr.h"

/* PyCFunction casts of functions taking keywords (through void (*)(void) to keep -Wcast-function-type
 * quiet: CPython calls them with the right arguments given METH_KEYWORDS). */
#define PG_KW(f) ((PyCFunction)(void (*)(void))(f))

/* ------------------------------------------------------------------------------------ module.c */

/* grit.Error, created at import (a module-level object, as every extension's exception type). */
extern PyObject *pg_error;

/* Raises grit.Error with the library's message `msg` and the status' name as its `status` attribute;
 * returns NULL for `return pg_raise(...)`. */
PyObject *pg_raise(grit_status status, const char *msg);

/* A C-contiguous float64 array of `ndim` dimensions converted from `obj`; dims[i] >= 0 must match,
 * -1 accepts any size. TypeError for None or what cannot be converted to float64 safely, ValueError for
 * a wrong shape (`what` names the argument). New reference or NULL. */
PyArrayObject *pg_array(PyObject *obj, int ndim, const npy_intp *dims, const char *what);

/* A new C-contiguous float64 array of the given shape, zero-filled. */
/* A numeric field of an options struct set by keyword (name, byte offset, int or double). */
typedef struct pg_option {
  const char *name;
  size_t offset;
  int is_int;
} pg_option;
/* Applies the entries of dict kw (may be NULL) to the struct at `options` through the table; TypeError
 * naming `what` for an unknown name. 0 or -1 with an exception set. */
int pg_apply_options(PyObject *kw, const pg_option *table, size_t n, void *options, const char *what);
PyArrayObject *pg_zeros(int ndim, const npy_intp *dims);

/* The contact model named by `obj` (None keeps *model; "lagged", "similar", "sap"); -1 with ValueError
 * or TypeError set. */
int pg_contact_model(PyObject *obj, grit_contact_model *model);
const char *pg_contact_name(grit_contact_model model);

/* Parameters of the derivatives from a sequence of (kind, index) pairs of ints (the pure-Python layer
 * resolves names): a new array of *np entries (PyMem_Free it), or NULL with an exception set. An empty
 * sequence gives a non-NULL array with *np = 0. */
grit_param *pg_params(PyObject *seq, int *np);

/* Number of hardware threads (at least 1). */
int pg_cpu_count(void);

/* ------------------------------------------------------------------------------------- model.c */

typedef struct PgModel {
  PyObject_HEAD
  grit_model *model;
  grit_mjcf_info info; /* keyframes and the file's step settings */
  PyObject *path;      /* str */
} PgModel;

extern PyTypeObject PgModel_Type;
PyObject *pg_load(PyObject *module, PyObject *args, PyObject *kwargs);

/* The model's step settings (from its file) with the contact model `contact` (None: the file's). -1 with
 * an exception set. */
int pg_model_settings(const PgModel *m, PyObject *contact, grit_step_settings *settings);

/* -------------------------------------------------------------------------------------- data.c */

typedef struct PgData {
  PyObject_HEAD
  PgModel *model;
  grit_data *data;
  double *shadow; /* nq + nv + nu: the state and controls as grit last saw them (docs/python.md) */
  int busy;       /* a call runs without the GIL on this data */
} PgData;

extern PyTypeObject PgData_Type;

/* Passes values written through the state views to grit's setters (see data.c); -1 with grit.Error set
 * when grit rejects them. */
int pg_data_sync(PgData *d);

/* blocks.c: Data.derivative_blocks() -> [(state, ctrl, A, B), ...] (grit_step_derivatives_blocks). */
PyObject *pg_data_derivative_blocks(PgData *self, PyObject *unused);
extern PyTypeObject PgContacts_Type; /* grit.Contacts, a struct sequence */

/* ------------------------------------------------------------------------------------- batch.c */

PyObject *pg_linearize(PyObject *module, PyObject *args, PyObject *kwargs);
PyObject *pg_rollout(PyObject *module, PyObject *args, PyObject *kwargs);

/* -------------------------------------------------------------------------------------- ilqr.c */

extern PyTypeObject PgILQR_Type;
extern PyTypeObject PgILQRResult_Type;

/* ----------------------------------------------------------------------------------- offline.c */

PyObject *pg_fit(PyObject *module, PyObject *args, PyObject *kwargs);
extern PyTypeObject PgFitResult_Type;
extern PyTypeObject PgReplay_Type;

/* Struct sequence types are initialized at import (module.c calls these). */
int pg_init_contacts_type(void);
int pg_init_ilqr_types(void);
int pg_init_offline_types(void);

#endif /* PYGRIT_H */
