# SPDX-License-Identifier: Apache-2.0
"""Benchmark of the Python package (not a test): the per-step overhead of data.step() against grit's C
step, and the throughput of grit.rollout on 1 and 2 threads. docs/python.md reports its numbers.

Run: PYTHONPATH=build/python /usr/bin/python3 bench/bench_python.py [--quick]

The C step's time is data.step(n) divided by n: one call, n grit_step() in a C loop (the GIL released
once). The Python step's time is n calls of data.step() from a Python loop. Their difference is what the
binding adds per call (argument parsing, the check of the state views, the GIL release and the
re-acquisition). Each figure is the median of several repetitions, alternating the two loops."""
import os
import statistics
import sys
import time

import numpy as np

import grit

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "examples", "models")
QUICK = "--quick" in sys.argv


def per_step_overhead(name, key, nchunks, chunk):
    """Two data at the same state advance chunk by chunk over the same trajectory: `a` by a.step(chunk)
    (grit's C loop), `b` by chunk calls of b.step() (and `c` by chunk times c.ctrl = u; c.step()). Each
    chunk is the same work for the three (grit is deterministic), so the per-chunk differences are what
    the binding adds; their median is robust to the other jobs of a shared machine."""
    m = grit.load(os.path.join(MODELS, name))
    a, b, c = grit.Data(m), grit.Data(m), grit.Data(m)
    for d in (a, b, c):
        d.reset(key)
    u = a.ctrl.copy()
    tc, tp, tu = [], [], []
    step_b, step_c = b.step, c.step
    clock = time.perf_counter
    for _ in range(nchunks):
        t0 = clock()
        a.step(chunk)
        t1 = clock()
        for _ in range(chunk):
            step_b()
        t2 = clock()
        for _ in range(chunk):
            c.ctrl = u
            step_c()
        t3 = clock()
        tc.append((t1 - t0) / chunk)
        tp.append((t2 - t1) / chunk)
        tu.append((t3 - t2) / chunk)
    assert np.array_equal(a.qpos, b.qpos) and np.array_equal(a.qpos, c.qpos)
    med = lambda x: statistics.median(x) * 1e6
    over = med([p - q for p, q in zip(tp, tc)])
    over_u = med([p - q for p, q in zip(tu, tc)])
    print(f"{name:20s} C step {med(tc):8.3f} us   data.step() {med(tp):8.3f} us   overhead {over:6.3f} us   "
          f"with data.ctrl = u first: +{over_u:.3f} us")
    return over


def call_cost(name, nchunks=400, chunk=1000):
    """data.step(0): the whole binding path of a call (parsing, the views' check, the GIL released and
    re-acquired) without a step; the median over chunks of calls (robust to preemption)."""
    m = grit.load(os.path.join(MODELS, name))
    d = grit.Data(m)
    step = d.step
    times = []
    for _ in range(nchunks):
        t0 = time.perf_counter()
        for _ in range(chunk):
            step(0)
        times.append((time.perf_counter() - t0) / chunk)
    print(f"{name:20s} data.step(0), the binding alone: median {statistics.median(times) * 1e6:.3f} us per call, "
          f"min {min(times) * 1e6:.3f} us ({nchunks} chunks of {chunk})")


def rollout_throughput(name, key, n, T, reps, noise):
    m = grit.load(os.path.join(MODELS, name))
    d = grit.Data(m)
    d.reset(key)
    rng = np.random.default_rng(0)
    q = np.tile(d.qpos, (n, 1))
    v = np.tile(d.qvel, (n, 1))
    u = d.ctrl + noise * rng.standard_normal((n, T, m.nu))
    out = {}
    for threads in (1, 2):
        times, cpu = [], []
        for _ in range(reps):
            t0, c0 = time.perf_counter(), time.process_time()
            r = grit.rollout(m, q, v, u, threads=threads)
            times.append(time.perf_counter() - t0)
            cpu.append((time.process_time() - c0) / times[-1])
        out[threads] = (statistics.median(times), r, statistics.median(cpu))
    assert all(np.array_equal(a, b) for a, b in zip(out[1][1], out[2][1]))  # bitwise, any thread count
    (t1, _, c1), (t2, _, c2) = out[1], out[2]
    # CPU time / wall time: how many cores the process had on average (2 threads on an idle machine: ~2)
    # and CPU time per step: equal on 1 and 2 threads when the threads add no work (then an idle machine's
    # 2 cores give 2x the throughput, whatever this machine's other jobs leave of them)
    steps = n * T
    print(f"{name:20s} rollout {n} x {T} steps:\n"
          f"    1 thread : {steps / t1:9.0f} steps/s ({t1 * 1e3:7.1f} ms, CPU/wall {c1:.2f}, "
          f"CPU {c1 * t1 / steps * 1e6:.2f} us/step)\n"
          f"    2 threads: {steps / t2:9.0f} steps/s ({t2 * 1e3:7.1f} ms, CPU/wall {c2:.2f}, "
          f"CPU {c2 * t2 / steps * 1e6:.2f} us/step), speed-up {t1 / t2:.2f}")


def main():
    print(f"grit {grit.__version__}, Python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    reps = 3 if QUICK else 9
    nchunks = 40 if QUICK else 400
    print("-- per-step overhead of data.step() (medians over %d chunks of 50 steps)" % nchunks)
    per_step_overhead("falling_sphere.xml", "launch", nchunks, 50)
    per_step_overhead("arm7.xml", "home", nchunks, 50)
    per_step_overhead("arm_push_ball.xml", "push", nchunks // 4, 50)
    call_cost("arm_push_ball.xml", 40 if QUICK else 400)
    print("-- rollout throughput (median of %d)" % reps)
    rollout_throughput("falling_sphere.xml", "launch", 64, 200 if QUICK else 1000, reps, 0.0)
    rollout_throughput("arm_push_ball.xml", "push", 16, 50 if QUICK else 100, reps, 0.1)


if __name__ == "__main__":
    main()
