# SPDX-License-Identifier: Apache-2.0
"""grit.rollout: shapes, bitwise the same on 1 and 2 threads, equal to sequential data.step() calls, its
Jacobians equal to data.derivatives(), errors."""
import threading

import numpy as np
import pytest

import grit
from conftest import model_path

N, T = 5, 30


def batch(m, key, seed=1):
    rng = np.random.default_rng(seed)
    d = grit.Data(m)
    d.reset(key)
    q = np.tile(d.qpos, (N, 1))
    v = np.tile(d.qvel, (N, 1)) + 0.05 * rng.standard_normal((N, m.nv))
    u = np.tile(d.ctrl, (N, T, 1)) + 0.5 * rng.standard_normal((N, T, m.nu))
    return q, v, u


@pytest.mark.parametrize("contact", ["lagged", "similar", "sap"])
def test_rollout_threads_bitwise_and_equal_to_steps(contact):
    m = grit.load(model_path("arm_push_ball.xml"))
    q, v, u = batch(m, "push")
    q1, v1 = grit.rollout(m, q, v, u, contact=contact, threads=1)
    q2, v2 = grit.rollout(m, q, v, u, contact=contact, threads=2)
    assert q1.shape == (N, T + 1, m.nq) and v1.shape == (N, T + 1, m.nv)
    assert np.array_equal(q1, q2) and np.array_equal(v1, v2)
    q0, v0 = grit.rollout(m, q, v, u, contact=contact)  # one thread per CPU
    assert np.array_equal(q0, q1) and np.array_equal(v0, v1)
    for i in range(N):
        d = grit.Data(m, contact=contact)
        d.qpos, d.qvel = q[i], v[i]
        assert np.array_equal(d.qpos, q1[i, 0]) and np.array_equal(d.qvel, v1[i, 0])
        for k in range(T):
            d.ctrl = u[i, k]
            d.step()
            assert np.array_equal(d.qpos, q1[i, k + 1]) and np.array_equal(d.qvel, v1[i, k + 1])


def test_rollout_derivatives():
    m = grit.load(model_path("arm_push_ball.xml"))
    q, v, u = batch(m, "push")
    qt, vt, A, B = grit.rollout(m, q[:2], v[:2], u[:2, :4], threads=2, derivatives=True)
    assert A.shape == (2, 4, 2 * m.nv, 2 * m.nv) and B.shape == (2, 4, 2 * m.nv, m.nu)
    d = grit.Data(m)
    d.qpos, d.qvel = q[1], v[1]
    for k in range(4):
        d.ctrl = u[1, k]
        d.step()
        Ak, Bk = d.derivatives()
        assert np.array_equal(Ak, A[1, k]) and np.array_equal(Bk, B[1, k])
    q1, v1, A1, B1 = grit.rollout(m, q[:2], v[:2], u[:2, :4], threads=1, derivatives=True)
    assert np.array_equal(A1, A) and np.array_equal(B1, B)


def test_rollout_releases_the_gil():
    """Two Python threads each running a rollout finish with the same results as one after the other."""
    m = grit.load(model_path("arm_push_ball.xml"))
    q, v, u = batch(m, "push")
    ref = grit.rollout(m, q, v, u, threads=1)
    out = [None, None]

    def run(i):
        out[i] = grit.rollout(m, q, v, u, threads=1)

    ts = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for o in out:
        assert np.array_equal(o[0], ref[0]) and np.array_equal(o[1], ref[1])


def test_rollout_errors():
    m = grit.load(model_path("arm7.xml"))
    q, v, u = np.zeros((3, 7)), np.zeros((3, 7)), np.zeros((3, 10, 7))
    with pytest.raises(ValueError):
        grit.rollout(m, q, v[:2], u)
    with pytest.raises(ValueError):
        grit.rollout(m, q, v, u[:, :, :3])
    with pytest.raises(ValueError):
        grit.rollout(m, q[0], v, u)
    with pytest.raises(ValueError):
        grit.rollout(m, q, v, u, threads=-1)
    u[2, 4, 1] = np.nan
    for threads in (1, 2):
        with pytest.raises(grit.Error) as e:
            grit.rollout(m, q, v, u, threads=threads)
        assert str(e.value) == "trajectory 2, step 4: ctrl[1] is not finite"
    qt, vt = grit.rollout(m, q[:, :], v, np.zeros((3, 0, 7)))  # T = 0: the initial states
    assert qt.shape == (3, 1, 7)


def test_ctrl_c_ends_a_long_rollout_with_keyboard_interrupt():
    """The calling thread waits for rollout's workers with the GIL released and wakes every 50 ms to run
    Python's signal handlers: SIGINT ends the batch (every worker stops at its next step) with
    KeyboardInterrupt, its steps_done the steps all workers took, instead of after all of it (here
    2 x 10^5 steps of the clutter, about a minute on one core at the 0.2 to 0.5 ms a step measured here;
    the result arrays, 0.8 GB, are touched only as far as the batch got); the model stays usable."""
    import os
    import signal
    m = grit.load(model_path("clutter.xml"))
    d = grit.Data(m)
    q = np.tile(d.qpos, (2, 1))
    v = np.tile(d.qvel, (2, 1))
    u = np.zeros((2, 10**5, m.nu))
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt) as e:
        grit.rollout(m, q, v, u, threads=2)
    timer.join()
    assert 0 <= e.value.steps_done < 2 * 10**5  # ended within the batch, not after it
    qt, vt = grit.rollout(m, q, v, u[:, :3], threads=2)  # still usable
    assert qt.shape == (2, 4, m.nq)
