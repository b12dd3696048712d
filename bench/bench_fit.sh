#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench_fit.sh [GRIT] [SOURCE_DIR] — fit time against the number of trajectories, one process against
# two MPI ranks (and one process on two threads): `grit fit` on the first N of ContactNets' 80 cube tosses
# in the repository (tests/data/contactnets/fit, then validate), a fixed amount of work per run (no coarse stage, 5 iterations) so that
# times compare across N. Prints one line per N: N, seconds for 1 process, 1 process x 2 threads,
# 2 ranks, and the speed-ups. docs/sysid.md has a run.
GRIT=${1:-build/grit}
SRC=${2:-.}
MPIEXEC=${MPIEXEC:-mpirun}
FILES=$(ls "$SRC"/tests/data/contactnets/fit/*.csv "$SRC"/tests/data/contactnets/validate/*.csv)
now() { date +%s.%N; }
printf "%4s %10s %12s %10s %10s %10s\n" N "1 proc s" "2 threads s" "2 ranks s" "x threads" "x ranks"
for N in 2 4 8 16 30 60 80; do
  DATA=$(echo "$FILES" | head -n $N | sed 's/^/--data /' | tr '\n' ' ')
  ARGS="fit $SRC/examples/models/cube_toss.xml $DATA --param friction=0.18 --param stiffness=2e4 --param dissipation=1
        --segment 0 --sigma-q 0.005 --sigma-r 0.05 --sigma-v 0.1 --sigma-w 1 --coarse 1 --max-iters 5 --quiet"
  t0=$(now); "$GRIT" $ARGS >/dev/null; t1=$(now)
  "$GRIT" $ARGS --threads 2 >/dev/null; t2=$(now)
  "$MPIEXEC" --allow-run-as-root --oversubscribe -n 2 "$GRIT" $ARGS >/dev/null; t3=$(now)
  awk -v n=$N -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN {
    p = b - a; t = c - b; r = d - c; printf "%4d %10.3f %12.3f %10.3f %10.2f %10.2f\n", n, p, t, r, p / t, p / r }'
done
