/* SPDX-License-Identifier: Apache-2.0 */
/* module.c — the extension module grit._grit: its table of functions and types, grit.Error, and the
 * conversions every file uses (arrays, contact models, parameter lists). */
#define PYGRIT_MODULE_C
#include "pygrit.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

#ifndef PYGRIT_VERSION
#define PYGRIT_VERSION "0.0.0"
#endif

PyObject *pg_error = NULL;

PyObject *pg_raise(grit_status status, const char *msg) {
  PyObject *exc = PyObject_CallFunction(pg_error, "s", msg && msg[0] ? msg : grit_status_string(status));
  if (!exc) return NULL;
  PyObject *name = PyUnicode_FromString(grit_status_string(status));
  if (name && PyObject_SetAttrString(exc, "status", name) == 0) PyErr_SetObject(pg_error, exc);
  Py_XDECREF(name);
  Py_DECREF(exc);
  return NULL;
}

PyArrayObject *pg_array(PyObject *obj, int ndim, const npy_intp *dims, const char *what) {
  if (obj == Py_None) { /* numpy would turn None into NaN */
    PyErr_Format(PyExc_TypeError, "%s: an array of numbers is needed, not None", what);
    return NULL;
  }
  /* Safe casting only: integers and floats are accepted, complex numbers and strings are not. */
  PyArray_Descr *f64 = PyArray_DescrFromType(NPY_DOUBLE);
  PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(obj, f64, 0, 0, NPY_ARRAY_IN_ARRAY, NULL);
  if (!a) {
    if (PyErr_ExceptionMatches(PyExc_ValueError) || PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "%s: cannot be read as an array of float64 numbers", what);
    }
    return NULL;
  }
  int ok = PyArray_NDIM(a) == ndim;
  for (int i = 0; ok && i < ndim; ++i) ok = dims[i] < 0 || PyArray_DIM(a, i) == dims[i];
  if (!ok) {
    char want[160] = "(", got[160] = "(";
    for (int i = 0; i < ndim; ++i)
      snprintf(want + strlen(want), sizeof want - strlen(want), dims[i] < 0 ? "%s:" : "%s%ld", i ? ", " : "",
               (long)dims[i]);
    for (int i = 0; i < PyArray_NDIM(a) && i < 8; ++i)
      snprintf(got + strlen(got), sizeof got - strlen(got), "%s%ld", i ? ", " : "", (long)PyArray_DIM(a, i));
    /* ':' marks a free size: "(:, 7)" */
    for (char *p = want; *p; ++p)
      if (p[0] == ':' && p[1] == '\0') p[0] = '\0';
    PyErr_Format(PyExc_ValueError, "%s: shape %s%s needed, got %s%s", what, want, ndim == 1 ? ",)" : ")", got,
                 PyArray_NDIM(a) == 1 ? ",)" : ")");
    Py_DECREF(a);
    return NULL;
  }
  return a;
}

PyArrayObject *pg_zeros(int ndim, const npy_intp *dims) {
  return (PyArrayObject *)PyArray_ZEROS(ndim, (npy_intp *)dims, NPY_DOUBLE, 0);
}

static const char *const contact_names[] = {"lagged", "similar", "sap"};

const char *pg_contact_name(grit_contact_model model) {
  return (int)model >= 0 && (int)model < 3 ? contact_names[model] : "unknown";
}

int pg_contact_model(PyObject *obj, grit_contact_model *model) {
  if (obj == NULL || obj == Py_None) return 0;
  if (!PyUnicode_Check(obj)) {
    PyErr_SetString(PyExc_TypeError, "contact: a string is needed (\"lagged\", \"similar\" or \"sap\")");
    return -1;
  }
  const char *s = PyUnicode_AsUTF8(obj);
  if (!s) return -1;
  for (int k = 0; k < 3; ++k)
    if (!strcmp(s, contact_names[k])) {
      *model = (grit_contact_model)k;
      return 0;
    }
  PyErr_Format(PyExc_ValueError, "contact: \"lagged\", \"similar\" or \"sap\", not \"%s\"", s);
  return -1;
}

grit_param *pg_params(PyObject *seq, int *np) {
  PyObject *fast = PySequence_Fast(seq, "params: a sequence of (kind, index) pairs is needed");
  if (!fast) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  grit_param *p = PyMem_Malloc(sizeof(grit_param) * (size_t)(n + 1));
  if (!p) {
    Py_DECREF(fast);
    return (grit_param *)PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    int kind, index;
    PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
    if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "ii", &kind, &index)) {
      if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "params: each entry must be a (kind, index) pair of ints");
      }
      PyMem_Free(p);
      Py_DECREF(fast);
      return NULL;
    }
    p[i].kind = (grit_param_kind)kind;
    p[i].index = index;
  }
  Py_DECREF(fast);
  *np = (int)n;
  return p;
}

int pg_cpu_count(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

static PyMethodDef methods[] = {
    {"load", PG_KW(pg_load), METH_VARARGS | METH_KEYWORDS,
     "load(path, *, hydroelastic=0.0, lenient=False, package_path=None) -> Model: a model file (MJCF or URDF) "
     "with its keyframes and step settings; hydroelastic=E > 0 makes every geometry of an MJCF file but planes "
     "and height fields compliant-hydroelastic with modulus E, Pa (docs/hydroelastic.md); lenient: dynamics "
     "grit does not simulate become warnings (grit --lenient); package_path: ':'-separated directories for "
     "URDF package:// names (grit --package-path)."},
    {"linearize", PG_KW(pg_linearize), METH_VARARGS | METH_KEYWORDS,
     "linearize(model, qpos, qvel, ctrl, contact, params) -> (A, B) or (A, B, P): the Jacobians of one step."},
    {"rollout", PG_KW(pg_rollout), METH_VARARGS | METH_KEYWORDS,
     "rollout(model, qpos, qvel, ctrl, contact, threads, derivatives): a batch of trajectories."},
    {"fit", PG_KW(pg_fit), METH_VARARGS | METH_KEYWORDS,
     "fit(model, trajectories, params, guesses, contact, options) -> FitResult (grit_fit)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_grit",
                                        "grit's C library for Python (use the package grit).", -1, methods,
                                        NULL, NULL, NULL, NULL};

static int add_type(PyObject *m, PyTypeObject *t, const char *name) {
  if (PyType_Ready(t) < 0) return -1;
  Py_INCREF(t);
  if (PyModule_AddObject(m, name, (PyObject *)t) < 0) {
    Py_DECREF(t);
    return -1;
  }
  return 0;
}

PyMODINIT_FUNC PyInit__grit(void) {
  import_array();
  PyObject *m = PyModule_Create(&module_def);
  if (!m) return NULL;
  if (!pg_error) pg_error = PyErr_NewExceptionWithDoc(
                     "grit.Error", "A grit function returned an error status; str(e) is the library's message "
                                   "and e.status the status' name.", PyExc_Exception, NULL);
  if (!pg_error || pg_init_contacts_type() < 0 || pg_init_ilqr_types() < 0 || pg_init_offline_types() < 0) goto fail;
  Py_INCREF(pg_error);
  if (PyModule_AddObject(m, "Error", pg_error) < 0) goto fail;
  if (add_type(m, &PgModel_Type, "Model") < 0 || add_type(m, &PgData_Type, "Data") < 0 ||
      add_type(m, &PgILQR_Type, "ILQR") < 0 || add_type(m, &PgReplay_Type, "Replay") < 0 ||
      add_type(m, &PgContacts_Type, "Contacts") < 0 || add_type(m, &PgILQRResult_Type, "ILQRResult") < 0 ||
      add_type(m, &PgFitResult_Type, "FitResult") < 0)
    goto fail;
  if (PyModule_AddStringConstant(m, "__version__", PYGRIT_VERSION) < 0) goto fail;
  if (PyModule_AddStringConstant(m, "ilqr_version", grit_ilqr_version()) < 0) goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}

int pg_apply_options(PyObject *kw, const pg_option *table, size_t n, void *options, const char *what) {
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (kw && PyDict_Next(kw, &pos, &key, &value)) {
    const char *name = PyUnicode_AsUTF8(key);
    if (!name) return -1;
    size_t i = 0;
    while (i < n && strcmp(table[i].name, name)) ++i;
    if (i == n) return PyErr_Format(PyExc_TypeError, "%s: unknown option '%s'", what, name), -1;
    char *field = (char *)options + table[i].offset;
    if (table[i].is_int) {
      long x = PyLong_AsLong(value);
      if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return PyErr_Format(PyExc_TypeError, "%s: option '%s' needs an integer", what, name), -1;
      }
      if (x < INT_MIN || x > INT_MAX) /* (int) would wrap it silently */
        return PyErr_Format(PyExc_ValueError, "%s: option '%s' = %ld is out of range", what, name, x), -1;
      *(int *)field = (int)x;
    } else {
      double x = PyFloat_AsDouble(value);
      if (x == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return PyErr_Format(PyExc_TypeError, "%s: option '%s' needs a number", what, name), -1;
      }
      *(double *)field = x;
    }
  }
  return 0;
}
