#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The dense factorization's results do not depend on the BLAS library's threads (docs/errors.md,
# Determinism): the clutter (nv = 240, where OpenBLAS's dpotrf ran threaded and differed by an ulp from
# step 52 on) simulated with --factor dense under OPENBLAS_NUM_THREADS=1 and =2, CSV files (17 digits:
# every bit) compared byte for byte. usage: dense_threads.sh GRIT_PROGRAM SOURCE_DIR
set -eu
grit=$1 src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/grit_dense.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for n in 1 2; do
  OPENBLAS_NUM_THREADS=$n OMP_NUM_THREADS=$n "$grit" sim "$src/examples/models/clutter.xml" --factor dense \
      --steps 80 --csv "$tmp/threads$n.csv" --quiet > "$tmp/out$n.json"
done
cmp "$tmp/threads1.csv" "$tmp/threads2.csv"
echo "dense factorization: 80 clutter steps bitwise equal on 1 and 2 BLAS threads"
