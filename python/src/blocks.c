/* SPDX-License-Identifier: Apache-2.0 */
/* blocks.c — grit.Data.derivative_blocks(): the Jacobians A, B of the last step in block-sparse form
 * (grit_step_derivatives_blocks, issue #31): one dense block per island of coupled trees, so that memory
 * follows the coupling rather than (2nv + na)^2; with activations a block's state ends with its
 * actuators' activations (state indices 2nv + k, include/grit/derivatives.h). */
#include "pygrit.h"

#include <string.h>

/* A new int64 array of n indices. */
static PyObject *indices(const int *idx, int n) {
  npy_intp d = n;
  PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(1, &d, NPY_INT64);
  if (!a) return NULL;
  for (int i = 0; i < n; ++i) ((npy_int64 *)PyArray_DATA(a))[i] = idx[i];
  return (PyObject *)a;
}

/* A new (rows, cols) float64 copy of a row-major block. */
static PyObject *matrix(const double *v, int rows, int cols) {
  npy_intp d[2] = {rows, cols};
  PyArrayObject *a = pg_zeros(2, d);
  if (a && rows && cols) memcpy(PyArray_DATA(a), v, sizeof(double) * (size_t)rows * (size_t)cols);
  return (PyObject *)a;
}

/* The blocks of J as a list of (state, ctrl, A, B) tuples. */
static PyObject *block_list(const grit_jacobian_blocks *J) {
  const int n = grit_jacobian_blocks_count(J);
  PyObject *out = PyList_New(n);
  for (int k = 0; out && k < n; ++k) {
    grit_jacobian_block b;
    grit_status s = grit_jacobian_blocks_get(J, k, &b);
    PyObject *t = s == GRIT_OK ? Py_BuildValue("(NNNN)", indices(b.state, b.nx), indices(b.ctrl, b.nu),
                                                matrix(b.A, b.nx, b.nx), matrix(b.B, b.nx, b.nu))
                               : pg_raise(s, "derivative_blocks: a block could not be read");
    if (!t) Py_CLEAR(out);
    else PyList_SET_ITEM(out, k, t);
  }
  return out;
}

PyObject *pg_data_derivative_blocks(PgData *self, PyObject *unused) {
  (void)unused;
  if (!self->data) return PyErr_SetString(PyExc_RuntimeError, "grit.Data is not initialized"), NULL;
  if (self->busy) return PyErr_SetString(PyExc_RuntimeError, "grit.Data is in use by another thread"), NULL;
  grit_jacobian_blocks *J = NULL;
  grit_status s = grit_jacobian_blocks_create(self->model->model, &J);
  if (s != GRIT_OK) return pg_raise(s, "derivative_blocks: the block container could not be created");
  self->busy = 1;
  Py_BEGIN_ALLOW_THREADS
  s = grit_step_derivatives_blocks(self->data, J);
  Py_END_ALLOW_THREADS
  self->busy = 0;
  PyObject *out = s == GRIT_OK ? block_list(J) : pg_raise(s, grit_data_last_error(self->data));
  grit_jacobian_blocks_free(J);
  return out;
}
