#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# fit_mpi.sh MPIEXEC GRIT SOURCE_DIR — `grit fit` on 2 MPI ranks gives the single-process answer
# (docs/sysid.md, MPI): friction, stiffness, dissipation and the cost agree to 1e-6 relative (they are
# bitwise equal by construction: per-trajectory sums added in one global order).
set -e
MPIEXEC=$1 GRIT=$2 SRC=$3
D=$SRC/tests/data/contactnets/fit
ARGS="fit $SRC/examples/models/cube_toss.xml --data $D/toss_0.csv --data $D/toss_1.csv --data $D/toss_2.csv
      --data $D/toss_3.csv --data $D/toss_4.csv --param friction=0.18 --param stiffness=2e4 --param dissipation=1
      --segment 0 --sigma-q 0.005 --sigma-r 0.05 --sigma-v 0.1 --sigma-w 1 --max-iters 8 --coarse 2 --quiet"
ONE=$("$GRIT" $ARGS)
TWO=$("$MPIEXEC" --allow-run-as-root --oversubscribe -n 2 "$GRIT" $ARGS)
echo "1 process: $ONE"
echo "2 ranks:   $TWO"
for key in friction stiffness dissipation cost; do
  a=$(echo "$ONE" | sed -n "s/.*\"$key\":\([^,}]*\).*/\1/p")
  b=$(echo "$TWO" | sed -n "s/.*\"$key\":\([^,}]*\).*/\1/p")
  awk -v k="$key" -v a="$a" -v b="$b" 'BEGIN {
    d = a - b; if (d < 0) d = -d; s = a < 0 ? -a : a;
    if (a == "" || b == "" || d > 1e-6 * s) { printf "%s: %s (1 process) vs %s (2 ranks)\n", k, a, b; exit 1 }
    printf "%s: %s, relative difference %.3g\n", k, a, s > 0 ? d / s : d }'
done
case "$TWO" in *'"trajectories":5'*) ;; *) echo "the 2-rank fit did not see the 5 trajectories"; exit 1 ;; esac
