# SPDX-License-Identifier: Apache-2.0
"""grit.ILQR (costs as arrays, limits, final constraint, warm start, shift, result) and grit.fit (several
trajectories)."""
import numpy as np
import pytest

import grit
from conftest import model_path

N = 40


def arm_problem():
    """The 7-joint arm from its 'reach' keyframe to the state a known control sequence reaches (so the
    goal is feasible within the effort limits |u| <= 1)."""
    m = grit.load(model_path("arm7.xml"))
    d = grit.Data(m)
    d.reset("reach")
    x0 = np.concatenate([d.qpos, d.qvel])
    u0 = d.ctrl.copy()
    t = np.arange(N)[:, None] * m.timestep
    u_true = np.clip(u0 + 0.3 * np.sin(20 * t + np.arange(m.nu)), -1, 1)
    qt, vt = grit.rollout(m, d.qpos[None], d.qvel[None], u_true[None])
    return m, x0, u0, np.concatenate([qt[0, -1], vt[0, -1]])


def test_ilqr_tracks_a_feasible_goal():
    m, x0, u0, goal = arm_problem()
    ndx = 2 * m.nv
    s = grit.ILQR(m, N, x0, x_goal=goal, Q=np.full(ndx, 1e-2), Qf=np.full(ndx, 1e3), R=np.full(m.nu, 1e-3),
                  u_ref=u0, u_min=-np.ones(m.nu), u_max=np.ones(m.nu), threads=2, max_iterations=8)
    r = s.solve()
    assert isinstance(r, grit.ILQRResult)
    assert r.stop in ("converged_cost", "converged_feedforward", "max_iterations", "no_progress",
                      "line_search_stalled")
    assert isinstance(r.reason, str) and r.reason and len(r) == 8  # reason by name only
    assert 1 <= r.iterations <= 8 and r.cost < 0.5 * r.initial_cost and r.cost == pytest.approx(s.cost)
    X, U = s.states, s.controls
    assert X.shape == (N + 1, m.nq + m.nv) and U.shape == (N, m.nu) and s.gains.shape == (N, m.nu, ndx)
    assert np.array_equal(X[0], x0) and np.abs(U).max() <= 1.0
    # the states are grit's rollout of the controls
    qt, vt = grit.rollout(m, X[None, 0, :m.nq], X[None, 0, m.nq:], U[None], threads=1)
    assert np.array_equal(qt[0], X[:, :m.nq]) and np.array_equal(vt[0], X[:, m.nq:])
    # warm start: from its own solution the cost does not go up
    s.set_controls(U)
    r2 = s.solve(max_iterations=2)
    assert r2.initial_cost == pytest.approx(r.cost, rel=1e-12) and r2.cost <= r2.initial_cost
    # receding horizon: shift drops u_0 and repeats the last control
    U = s.controls
    s.set_initial_state(s.states[1])
    s.shift()
    assert np.array_equal(s.controls[:-1], U[1:]) and np.array_equal(s.controls[-1], U[-1])
    r3 = s.solve(max_iterations=2)
    assert r3.iterations <= 2
    # controls are clamped to the box
    s.set_controls(np.full((N, m.nu), 5.0))
    assert np.array_equal(s.controls, np.ones((N, m.nu)))


def test_ilqr_stops_are_named_and_newer_options_apply():
    m, x0, u0, goal = arm_problem()
    ndx = 2 * m.nv
    # three iterations with the newer options set end at a named stop (max_iterations here), never "other"
    s = grit.ILQR(m, N, x0, x_goal=goal, Qf=np.full(ndx, 1e3), R=np.full(m.nu, 1e-3), u_ref=u0,
                  max_iterations=3, stall_short_steps=10, reg_reset_on_update=1, kink_alpha=2.0 ** -7,
                  tol_gradient=1e-2, max_time=60.0)
    r = s.solve()
    assert r.stop != "other" and r.reason
    # a time budget of zero stops at once with its own name (docs/ilqr.md, "Termination")
    s.set_options(max_time=1e-12, max_iterations=50)
    s.set_controls(np.clip(u0 + 0.5, -1, 1)[None].repeat(N, axis=0))
    r = s.solve()
    assert r.stop == "time_limit" and not r.converged
    with pytest.raises(TypeError):
        s.set_options(stall_short=10)  # the option is stall_short_steps


def test_ilqr_final_constraint():
    m, x0, u0, goal = arm_problem()
    C = np.eye(2 * m.nv)[: m.nv]  # the final positions reach the goal's
    s = grit.ILQR(m, N, x0, x_goal=goal, Qf=np.ones(2 * m.nv), R=np.full(m.nu, 1e-3), u_ref=u0, C_final=C,
                  u_min=-np.ones(m.nu), u_max=np.ones(m.nu), threads=2, max_iterations=15)
    r = s.solve()
    err = np.abs(s.states[-1, : m.nq] - goal[: m.nq]).max()
    assert r.violation == pytest.approx(err, rel=1e-9)
    assert err < 0.02 and s.multipliers.shape == (m.nv,)  # measured 0.0074 after 15 iterations


def test_ilqr_errors():
    m, x0, u0, goal = arm_problem()
    with pytest.raises(ValueError):
        grit.ILQR(m, 0, x0)
    with pytest.raises(ValueError):
        grit.ILQR(m, N, x0[:5])
    with pytest.raises(ValueError):
        grit.ILQR(m, N, x0, x_goal=goal, Q=np.ones((3, 3)))
    with pytest.raises(TypeError):
        grit.ILQR(m, N, x0, max_iters=3)  # the option is max_iterations
    with pytest.raises(grit.Error) as e:
        grit.ILQR(m, N, x0, max_iterations=0)
    assert "max_iterations" in str(e.value)
    with pytest.raises(grit.Error) as e:
        grit.ILQR(m, N, x0, Q=np.eye(14))  # a state weight needs a goal
    assert e.value.status == "invalid argument"


def ball_trajectory(m, qvel, steps):
    d = grit.Data(m)
    d.reset("throw")
    if qvel is not None:
        d.qvel = qvel
    q, v = [d.qpos.copy()], [d.qvel.copy()]
    for _ in range(steps):
        d.step()
        q.append(d.qpos.copy())
        v.append(d.qvel.copy())
    return {"qpos": np.array(q), "qvel": np.array(v), "ctrl": None}


def test_fit_recovers_contact_parameters_from_two_trajectories():
    """Exact data of two throws of the ball (mu 0.3, k 2e4, d 0.5) from guesses 2x off: recovered to
    1e-5 (noise-free data: only the solver tolerances remain)."""
    m = grit.load(model_path("thrown_ball.xml"))
    trajs = [ball_trajectory(m, None, 300), ball_trajectory(m, [1.5, -0.2, 0, 0, 30, 0], 300)]
    r = grit.fit(m, trajs, {"friction": 0.6, "stiffness": 4e4, "dissipation": 1.0})
    assert isinstance(r, grit.FitResult) and r.converged
    assert np.allclose(r.values, [0.3, 2e4, 0.5], rtol=1e-5)
    assert r.std.shape == (3,) and r.cov.shape == (3, 3) and r.cost < r.initial_cost
    assert r.nsegments == 6  # 300 steps in segments of 100, twice
    one = grit.fit(m, trajs[:1], {"friction": 0.6, "stiffness": 4e4, "dissipation": 1.0})
    assert one.nsegments == 3
    # tuples work too, and options reach grit_fit
    r2 = grit.fit(m, [(t["qpos"], t["qvel"]) for t in trajs], {"friction": 0.6}, segment_steps=150)
    assert r2.nsegments == 4 and abs(r2.values[0] - 0.3) < 1e-5


def test_fit_errors():
    m = grit.load(model_path("thrown_ball.xml"))
    t = ball_trajectory(m, None, 10)
    with pytest.raises(grit.Error) as e:
        grit.fit(m, [t], {"friction": -1.0})
    assert e.value.status == "invalid argument"
    with pytest.raises(ValueError):
        grit.fit(m, [{"qpos": t["qpos"], "qvel": t["qvel"][:5]}], {"friction": 0.5})
    with pytest.raises(TypeError):
        grit.fit(m, [t], ["friction"])
    r = grit.fit(m, [t], [("friction", 0.3)])  # (spec, guess) pairs work too
    assert r.values.shape == (1,)
    with pytest.raises(TypeError):
        grit.fit(m, [t], {"friction": 0.5}, iterations=3)
