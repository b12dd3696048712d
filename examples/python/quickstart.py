# SPDX-License-Identifier: Apache-2.0
"""grit from Python: load a model, simulate it, take the Jacobians of a step, design an LQR gain with
numpy, and run a batch of rollouts on threads. (docs/python.md includes this file; a test runs it.)

Run: PYTHONPATH=build/python /usr/bin/python3 examples/python/quickstart.py"""
import os
import sys
import time

import numpy as np

import grit

here = os.path.dirname(os.path.abspath(__file__))
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "models", "arm_push_ball.xml")

# --- 1. Load: a Kinova Gen3 arm (7 hinges, 7 torque actuators) and a ball (a free joint) on a floor.
model = grit.load(path)
print(f"grit {grit.__version__}: {os.path.basename(path)} nq={model.nq} nv={model.nv} nu={model.nu} "
      f"dt={model.timestep}")
print("actuators:", model.actuator_names)

# --- 2. Simulate from the keyframe "start" for 0.1 s; the state is viewed in place as numpy arrays.
data = grit.Data(model, contact="lagged")
data.reset("start")
data.step(int(round(0.1 / model.timestep)))
contacts = data.contacts()
print(f"t={data.time:.3f} s  ball at {np.round(data.qpos[7:10], 4)}  contacts: {len(contacts.positions)}, "
      f"normal impulse {contacts.impulses[:, 2].sum():.3e} N s")

# --- 3. Jacobians of one step, x+ = f(x, u): A = dx+/dx (2nv x 2nv, tangent space: dq then dv) and
# B = dx+/du. First the control that holds the arm still at "start" (gravity compensation): the step is
# affine in u (below the effort limits), so one Newton iteration on v+(u) = 0 finds it; a second one
# cleans up what the contact between ball and floor adds.
data.reset("start")
q0, v0 = data.qpos.copy(), np.zeros(model.nv)
u0 = np.zeros(model.nu)
nv = model.nv
for _ in range(2):
    A, B = grit.linearize(model, q0, v0, u0)
    data.qpos, data.qvel, data.ctrl = q0, v0, u0
    data.step()
    u0 -= np.linalg.lstsq(B[nv:], data.qvel, rcond=None)[0]
A, B = grit.linearize(model, q0, v0, u0)
print(f"holding torques u0 = {np.array2string(u0, precision=3, suppress_small=True)} N m; "
      f"|A| = {np.linalg.norm(A):.3f}, |B| = {np.linalg.norm(B):.3f}")

# --- 4. LQR on the arm's 14 states (the ball's do not depend on the arm's while they do not touch):
# the discrete Riccati equation by fixed-point iteration, then the closed loop from a perturbed state.
arm = np.r_[0:7, nv:nv + 7]  # the arm's dq and dv in the tangent space
Aa, Ba = A[np.ix_(arm, arm)], B[arm]
Q, R = np.diag(np.r_[np.full(7, 100.0), np.full(7, 1.0)]), 1e-3 * np.eye(model.nu)
P = Q.copy()
for it in range(10000):
    K = -np.linalg.solve(R + Ba.T @ P @ Ba, Ba.T @ P @ Aa)
    P_next = Q + Aa.T @ P @ (Aa + Ba @ K)
    if np.abs(P_next - P).max() <= 1e-9 * np.abs(P).max():
        break
    P = P_next
rho = max(abs(np.linalg.eigvals(Aa + Ba @ K)))
print(f"LQR: Riccati converged in {it} iterations, closed-loop spectral radius {rho:.6f}")

data.reset("start")
data.qpos[:7] += 0.05  # every arm joint 0.05 rad off
for k in range(500):
    dx = np.r_[data.qpos[:7] - q0[:7], data.qvel[:7]]  # hinges: the tangent-space difference
    data.ctrl = u0 + K @ dx
    data.step()
print(f"after {500 * model.timestep:.2f} s of LQR: max joint error {np.abs(data.qpos[:7] - q0[:7]).max():.2e} rad "
      f"(from 5.0e-02)")

# --- 5. A batch of rollouts: 16 trajectories of 50 steps (0.5 s) with random torques around u0, on 1 and 2
# threads (the GIL is released; the results are bitwise the same).
rng = np.random.default_rng(0)
n, T = 16, 50
qs, vs = np.tile(q0, (n, 1)), np.zeros((n, nv))
us = u0 + 0.2 * rng.standard_normal((n, T, model.nu))
for threads in (1, 2):
    t0 = time.perf_counter()
    qt, vt = grit.rollout(model, qs, vs, us, threads=threads)
    dt = time.perf_counter() - t0
    print(f"rollout of {n}x{T} steps on {threads} thread(s): {dt * 1e3:.1f} ms ({n * T / dt:.0f} steps/s)")
    if threads == 1:
        first = qt
assert np.array_equal(first, qt)
spread = qt[:, -1, :7].std(axis=0)
print(f"final joint spread over the batch: {np.round(spread, 4)}")
