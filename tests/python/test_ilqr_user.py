# SPDX-License-Identifier: Apache-2.0
"""grit.ILQR as a new user meets it (issue 28), on tasks of this file's own: a planar 3-link arm swinging
to a pose (no contact) and a slider pushing a ball on a floor (contact, started 1 cm away). Checks the
documented options and result fields, path constraints, the time budget, the log callback (user stop,
exceptions), goals and weights changed between solves (MPC), gradient smoothing, the GIL and the busy
flag, argument validation, and A, B against central differences of the Python step with a free joint."""
import threading

import numpy as np
import pytest

import grit

ARM3 = """<mujoco model="arm3"><option timestep="0.01"/><worldbody>
<body name="l1"><joint name="j1" type="hinge" axis="0 1 0" damping="0.05"/>
<inertial pos="0 0 -0.25" mass="1" diaginertia="0.02 0.02 0.001"/>
<body name="l2" pos="0 0 -0.5"><joint name="j2" type="hinge" axis="0 1 0" damping="0.05"/>
<inertial pos="0 0 -0.2" mass="0.7" diaginertia="0.01 0.01 0.001"/>
<body name="l3" pos="0 0 -0.4"><joint name="j3" type="hinge" axis="0 1 0" damping="0.05"/>
<inertial pos="0 0 -0.15" mass="0.4" diaginertia="0.004 0.004 0.0005"/></body></body></body></worldbody>
<actuator><motor joint="j1"/><motor joint="j2"/><motor joint="j3"/></actuator></mujoco>"""

SLIDER_BALL = """<mujoco model="slider_ball"><option timestep="0.02"/><default><geom friction="0.4"/></default>
<worldbody><geom name="floor" type="plane" size="2 2 0.1"/>
<body name="pusher" pos="0 0 0.05"><joint name="px" type="slide" axis="1 0 0" damping="1"/>
<joint name="py" type="slide" axis="0 1 0" damping="1"/>
<geom name="tip" type="sphere" size="0.02" mass="0.2" contype="1" conaffinity="2"/></body>
<body name="ball" pos="0.08 0 0.05"><freejoint/>
<geom name="ball" type="sphere" size="0.05" mass="0.3" contype="2" conaffinity="3"/></body></worldbody>
<actuator><motor joint="px"/><motor joint="py"/></actuator></mujoco>"""

# docs/python.md's list of grit_ilqr_options fields, each with a valid value
OPTIONS = dict(max_iterations=50, tol_cost=1e-6, tol_feedforward=1e-6, reg_init=1e-6, reg_min=1e-8, reg_max=1e10,
               reg_factor=1.6, ls_decrease=0.5, ls_max_trials=10, ls_accept=1e-4, tol_constraint=1e-6,
               penalty_init=1.0, penalty_factor=10.0, penalty_max=1e8, max_time=0.0, tol_gradient=1e-2,
               alpha_converged=0.5, inner_max_iterations=20, kink_alpha=0.0, reg_limit_ends_inner=1,
               stall_short_steps=0, reg_reset_on_update=0)
STOPS = {"converged_cost", "converged_feedforward", "max_iterations", "no_progress", "line_search_stalled",
         "zero_gradient", "not_finite", "time_limit", "user_stop"}


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    p = tmp_path_factory.mktemp("m") / "arm3.xml"
    p.write_text(ARM3)
    return grit.load(str(p))


@pytest.fixture(scope="module")
def slider(tmp_path_factory):
    p = tmp_path_factory.mktemp("m") / "slider_ball.xml"
    p.write_text(SLIDER_BALL)
    return grit.load(str(p))


GOAL = np.r_[1.0, -0.5, 0.3, 0.0, 0.0, 0.0]


def arm_solver(model, N=60, **kw):
    kw.setdefault("max_iterations", 40)
    return grit.ILQR(model, N, np.zeros(6), x_goal=GOAL, Q=np.r_[np.ones(3), np.full(3, 0.01)],
                     Qf=np.full(6, 100.0), R=np.full(3, 1e-3), **kw)


def test_every_documented_option_and_result_field(arm):
    s = arm_solver(arm, **{k: v for k, v in OPTIONS.items() if k != "max_iterations"})
    s.set_options(**OPTIONS)
    r = s.solve()
    assert r.stop in STOPS and r.converged == r.stop.startswith("converged")
    for f in ("reason", "rollouts", "no_step_iterations", "rejected_line_searches", "derivative_evaluations",
              "gradient", "path_violation"):
        assert hasattr(r, f), f
    assert r.rollouts >= r.iterations and r.derivative_evaluations >= 1 and np.isfinite(r.gradient)
    assert r.path_violation == 0 and s.path_multipliers is None
    with pytest.raises(TypeError, match="unknown option 'max_iter'"):
        s.set_options(max_iter=3)
    with pytest.raises(TypeError, match="'max_iterations' needs an integer"):
        s.set_options(max_iterations=2.5)
    with pytest.raises(ValueError, match="out of range"):  # (int) used to wrap 2**32 to 0 silently
        s.set_options(max_iterations=2**32)


def test_path_constraint_bounds_the_joint_speed(arm):
    free = arm_solver(arm, max_iterations=100)
    free.solve()
    assert free.states[:-1, 3].max() > 2.5  # unconstrained, j1 swings faster than 2 rad/s
    Cx = np.zeros((1, 6))
    Cx[0, 3] = 1.0  # h = v1 - 2 <= 0 (the goal's v1 is 0)
    s = arm_solver(arm, Cx_path=Cx, d_path=[2.0], max_iterations=200)
    r = s.solve()
    assert r.converged, r.reason
    assert s.states[:-1, 3].max() <= 2.0 + 1e-3 and r.path_violation <= 1e-3
    assert s.path_multipliers.shape == (60, 1) and s.path_multipliers.min() >= 0
    s.set_path_bounds([1.5])  # tighter between solves
    r = s.solve()
    assert s.states[:-1, 3].max() <= 1.5 + 1e-3, r.reason
    with pytest.raises(ValueError, match=r"d_path: shape \(1,\) needed"):
        s.set_path_bounds([1.0, 2.0])
    with pytest.raises(ValueError, match="no path constraints"):
        free.set_path_bounds([1.0])


def test_log_callback_time_budget_and_user_stop(arm):
    seen = []
    s = arm_solver(arm, max_iterations=100, log=lambda it: seen.append(it) or it["iteration"] >= 3)
    r = s.solve()
    assert r.stop == "user_stop" and not r.converged and r.iterations == 3 and len(seen) == 3
    assert {"cost", "alpha", "gradient", "regularization", "path_violation"} <= set(seen[0])

    def calls_request_stop(it):
        s.request_stop()
    s = arm_solver(arm, max_iterations=100, log=calls_request_stop)
    r = s.solve()
    assert r.stop == "user_stop" and r.iterations == 1

    def raises(it):
        raise KeyError("from the callback")
    s.log = raises
    with pytest.raises(KeyError, match="from the callback"):
        s.solve()
    s.log = None
    with pytest.raises(RuntimeError, match="log callback"):
        s.request_stop()  # outside a solve
    with pytest.raises(TypeError, match="callable"):
        s.log = 3
    t = arm_solver(arm, max_iterations=1000, max_time=1e-4, tol_cost=0.0, tol_feedforward=0.0)
    r = t.solve()
    assert r.stop == "time_limit" and not r.converged and r.iterations < 1000


def test_mpc_goal_weights_and_reference_change_between_solves(arm):
    s = arm_solver(arm)
    s.solve()
    goal2 = GOAL.copy()
    goal2[0] = -0.5
    s.set_goal(goal2)
    s.solve(max_iterations=30)
    assert abs(s.states[-1, 0] - goal2[0]) < 0.05  # the plan follows the new goal
    # set_weights keeps the weights it is not given: same as a solver created with the new Qf
    s.set_weights(Qf=np.full(6, 300.0))
    fresh = grit.ILQR(arm, 60, np.zeros(6), x_goal=goal2, Q=np.r_[np.ones(3), np.full(3, 0.01)],
                      Qf=np.full(6, 300.0), R=np.full(3, 1e-3), max_iterations=1)
    fresh.set_controls(s.controls)
    r1, r2 = s.solve(max_iterations=1), fresh.solve()
    assert r1.initial_cost == pytest.approx(r2.initial_cost, rel=1e-12)
    s.set_control_reference(np.full(3, 0.5))
    s.set_weights(R=None)  # None removes a term
    # the receding-horizon loop
    d = grit.Data(arm)
    for _ in range(5):
        d.ctrl = s.controls[0]
        d.step()
        s.set_initial_state(np.r_[d.qpos, d.qvel])
        s.shift()
        assert s.solve(max_iterations=2).stop in STOPS


def test_gradient_smoothing_lets_the_slider_feel_the_ball(slider):
    d = grit.Data(slider)
    d.step(20)  # the ball settles on the floor; the tip 1 cm from it
    x0 = np.r_[d.qpos, np.zeros(slider.nv)]
    goal = x0.copy()
    goal[2] += 0.10
    Q = np.zeros(16)
    Q[2] = Q[3] = 10
    kw = dict(x_goal=goal, Q=Q, Qf=100 * Q, R=np.full(2, 1e-3), u_min=[-5, -5], u_max=[5, 5], max_iterations=8)
    r = grit.ILQR(slider, 30, x0, **kw).solve()
    assert r.stop == "zero_gradient" and not r.converged and r.iterations == 1
    s = grit.ILQR(slider, 30, x0, gradient_smoothing=0.05, **kw)
    r = s.solve()
    assert r.iterations > 1 and r.cost < 0.9 * r.initial_cost
    s.set_smoothing(0.0)  # back to the exact model: the next solve rolls the controls out again
    assert s.solve(max_iterations=1).initial_cost != r.cost
    with pytest.raises(ValueError, match="got -1"):
        s.set_smoothing(-1.0)
    with pytest.raises(ValueError, match="factor must be in"):
        s.solve_annealed(0.05, factor=1.5)


def test_the_gil_is_released_and_a_busy_solver_refuses(arm):
    ref = arm_solver(arm)
    rref = ref.solve()
    a, b = arm_solver(arm), arm_solver(arm, threads=2)
    out = {}
    threads = [threading.Thread(target=lambda n=n, s=s: out.__setitem__(n, (s.solve(), s.controls)))
               for n, s in (("a", a), ("b", b))]
    [t.start() for t in threads]
    [t.join() for t in threads]
    for name in "ab":  # bitwise the sequential result, on 1 or 2 Jacobian threads
        assert out[name][0].cost == rref.cost and np.array_equal(out[name][1], ref.controls)
    c = arm_solver(arm, max_iterations=6)
    started, errors = threading.Event(), []

    def log(it):
        started.set()
        if it["iteration"] == 1:
            t = threading.Thread(target=lambda: errors.extend(_try(c.solve, c.set_goal, lambda: c.states)))
            t.start()
            t.join()  # the GIL is given up here; the other thread finds the solver busy
    c.log = log
    c.solve()
    assert started.is_set() and len(errors) == 3 and all("solving" in e for e in errors)


def _try(*fs):
    out = []
    for f in fs:
        try:
            f(GOAL) if f.__name__ == "set_goal" else f()
            out.append("no error")
        except RuntimeError as e:
            out.append(str(e))
    return out


@pytest.mark.parametrize("kw,exc,msg", [
    (dict(x0=np.r_[np.nan, np.zeros(5)]), grit.Error, "x0 has a non-finite entry"),
    (dict(x0=np.zeros(5)), ValueError, r"x0: shape \(6,\) needed, got \(5,\)"),
    (dict(x0="abc"), TypeError, "x0: cannot be read"),
    (dict(horizon=0), ValueError, "horizon must be in 1.."),
    (dict(horizon=10**9), ValueError, "horizon must be in 1.."),  # used to be killed for lack of memory
    (dict(Q=np.ones(6)), grit.Error, "without x_goal"),
    (dict(x_goal=GOAL, Q=np.r_[np.nan, np.ones(5)]), grit.Error, "non-finite"),
    (dict(x_goal=GOAL, R=np.ones((3, 3, 1))), ValueError, r"R: shape \(3, 3\) needed"),
    (dict(u_min=np.ones(3)), ValueError, "go together"),
    (dict(u_min=np.ones(3), u_max=-np.ones(3)), grit.Error, "not an interval"),
    (dict(threads=1000), ValueError, "threads must be in"),
    (dict(gradient_smoothing=-0.1), ValueError, "gradient_smoothing"),
    (dict(x_goal=GOAL, Cx_path=np.ones((1, 6))), ValueError, "need d_path"),
    (dict(x_goal=GOAL, Cx_path=np.ones((2, 6)), d_path=[1.0]), ValueError, "as many rows"),
    (dict(Cu_path=np.ones((1, 3)), d_path=[np.nan]), grit.Error, "non-finite"),
    (dict(log=3), TypeError, "callable"),
    (dict(tol_cost=np.nan), grit.Error, "tolerances"),
])
def test_bad_arguments_raise_with_a_message(arm, kw, exc, msg):
    args = dict(horizon=10, x0=np.zeros(6))
    args.update(kw)
    with pytest.raises(exc, match=msg):
        grit.ILQR(arm, args.pop("horizon"), args.pop("x0"), **args)


def test_bad_arguments_between_solves(arm):
    s = arm_solver(arm, N=10)
    with pytest.raises(ValueError, match=r"controls: shape \(10, 3\) needed"):
        s.set_controls(np.zeros((9, 3)))
    with pytest.raises(grit.Error, match="not finite"):
        s.set_controls(np.full((10, 3), np.nan))
    with pytest.raises(grit.Error, match="non-finite"):
        s.set_initial_state(np.full(6, np.inf))
    with pytest.raises(grit.Error, match="x_goal is needed"):
        s.set_goal(None)
    with pytest.raises(grit.Error, match="positive semidefinite"):
        s.set_weights(R=-np.ones(3))
    with pytest.raises(TypeError):
        s.set_weights(np.ones(6))  # keywords only
    with pytest.raises(ValueError, match="max_iterations"):
        s.solve(max_iterations=0)
    assert s.solve().stop in STOPS  # the solver is intact after every refusal
    # a rollout that fails says where and why (grit's reason from the adapter, not only "failed")
    t = grit.ILQR(arm, 10, np.r_[0, 0, 0, 1e300, 0, 0], x_goal=GOAL, Q=np.ones(6))
    with pytest.raises(grit.Error, match="initial controls failed.*knot 0.*not finite"):
        t.solve()


# ---- A, B against central differences of the Python step (a free joint: the tangent space of docs/conventions.md)

def _qmul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def _qexp(w):
    th = np.linalg.norm(w)
    return np.r_[1.0, 0, 0, 0] if th == 0 else np.r_[np.cos(th / 2), np.sin(th / 2) * w / th]


def _qlog(q):
    q = q if q[0] >= 0 else -q
    s = np.linalg.norm(q[1:])
    return q[1:] * (2 * np.arctan2(s, q[0]) / s if s > 0 else 2.0)


def _integrate(q, dq):  # px, py, then the ball's free joint (position, quaternion perturbed in the body frame)
    q = q.copy()
    q[:5] += dq[:5]
    q[5:9] = _qmul(q[5:9], _qexp(dq[5:8]))
    return q


def _difference(qa, qb):
    return np.r_[qb[:5] - qa[:5], _qlog(_qmul(qa[5:9] * np.r_[1, -1, -1, -1], qb[5:9]))]


@pytest.mark.parametrize("contact", ["lagged", "similar", "sap"])
def test_jacobians_match_central_differences_of_the_python_step(slider, contact):
    d = grit.Data(slider, contact=contact)
    d.step(20)  # the ball settles on the floor
    d.qpos[0] = 0.0095  # the tip 0.5 mm from the ball, moving into it at 0.3 m/s (6 mm per step)
    q0, v0, u0 = d.qpos.copy(), d.qvel.copy() + np.r_[0.3, 0, 0, 0, 0, 0, 0, 0], np.array([2.0, 0.3])

    def step(q, v, u):
        e = grit.Data(slider, contact=contact, rel_tol=1e-12)
        e.qpos, e.qvel, e.ctrl = q, v, u
        e.step()
        return e.qpos.copy(), e.qvel.copy(), e.stats()["ncontacts"]

    e = grit.Data(slider, contact=contact, rel_tol=1e-12)
    e.qpos, e.qvel, e.ctrl = q0, v0, u0
    e.step()
    A, B = e.derivatives()
    assert e.stats()["ncontacts"] >= 2 and np.abs(B[2:8]).max() > 0  # the tip pushes the ball
    # h well below the ball's 3 um penetration of the stiff floor (at 1e-6 the ball-height column of the
    # differences crosses the contact's nonlinearity: 0.99 relative error under Lagged, 0.05 under SAP)
    nv, h = slider.nv, 1e-8
    Afd, Bfd = np.zeros_like(A), np.zeros_like(B)
    for j in range(2 * nv + slider.nu):
        dx = np.zeros(2 * nv + slider.nu)
        dx[j] = h
        qp, vp, _ = step(_integrate(q0, dx[:nv]), v0 + dx[nv:2 * nv], u0 + dx[2 * nv:])
        qm, vm, _ = step(_integrate(q0, -dx[:nv]), v0 - dx[nv:2 * nv], u0 - dx[2 * nv:])
        col = np.r_[_difference(qm, qp), vp - vm] / (2 * h)
        if j < 2 * nv:
            Afd[:, j] = col
        else:
            Bfd[:, j - 2 * nv] = col
    # a step solved to 1e-12 differenced over 1e-8: ~1e-4 per column (measured 1.1e-4 at most)
    assert np.linalg.norm(A - Afd) <= 1e-3 * np.linalg.norm(Afd)
    assert np.linalg.norm(B - Bfd) <= 1e-3 * np.linalg.norm(Bfd)


def test_derivative_blocks_are_the_dense_jacobians_bitwise(slider, models):
    for model in (slider, grit.load(models("clutter.xml"))):
        d = grit.Data(model)
        with pytest.raises(grit.Error, match="no step"):
            d.derivative_blocks()
        d.step(30)
        A, B = d.derivatives()
        blocks = d.derivative_blocks()
        A2, B2 = np.zeros_like(A), np.zeros_like(B)
        for state, ctrl, a, b in blocks:
            assert state.dtype == np.int64 and a.shape == (len(state), len(state)) and b.shape == (len(state), len(ctrl))
            A2[np.ix_(state, state)] = a
            B2[np.ix_(state, ctrl)] = b
        assert np.array_equal(A, A2) and np.array_equal(B, B2)
    assert len(blocks) > 1  # the clutter's objects are islands of their own


FILTERED = """<mujoco model="filtered"><option timestep="0.01"/><worldbody>
<body name="l"><joint name="j" type="hinge" axis="0 1 0" damping="0.1"/>
<inertial pos="0 0 -0.25" mass="1" diaginertia="0.02 0.02 0.001"/></body></worldbody>
<actuator><general joint="j" dyntype="filter" dynprm="0.05" gainprm="5" ctrlrange="-1 1" ctrllimited="true"/>
</actuator></mujoco>"""


def test_derivative_blocks_with_activations_are_the_dense_jacobians_bitwise(tmp_path):
    """The block form with x = (q, v, act): the activation's state index is 2nv + k, in its actuator's block."""
    p = tmp_path / "filtered.xml"
    p.write_text(FILTERED)
    d = grit.Data(grit.load(str(p)))
    d.ctrl = [0.7]
    d.step(10)
    A, B = d.derivatives()
    (state, ctrl, a, b), = d.derivative_blocks()
    assert list(state) == [0, 1, 2] and list(ctrl) == [0]
    assert np.array_equal(A[np.ix_(state, state)], a) and np.array_equal(B[np.ix_(state, ctrl)], b)


def test_activations_size_every_jacobian_and_the_ilqr_state(tmp_path):
    """With actuator activations the state is x = (q, v, act) (docs/actuation.md): the binding used to size
    A as 2nv x 2nv while grit wrote (2nv + na)^2 numbers into it (heap corruption), and grit.ILQR read
    x0, Q, ... with nq + nv numbers where grit's adapter wants nq + nv + na."""
    p = tmp_path / "filtered.xml"
    p.write_text(FILTERED)
    m = grit.load(str(p))
    assert (m.nq, m.nv, m.nu, m.na) == (1, 1, 1, 1)
    d = grit.Data(m)
    d.ctrl = [0.7]
    d.step(10)
    q, v, a = d.qpos.copy(), d.qvel.copy(), d.act.copy()
    assert a[0] > 0
    d.step()
    A, B = d.derivatives()
    assert A.shape == (3, 3) and B.shape == (3, 1)
    A1, B1 = grit.linearize(m, q, v, [0.7], act=a)
    assert np.array_equal(A, A1) and np.array_equal(B, B1)

    def step(x, u):  # x = (q, v, act)
        e = grit.Data(m)
        e.qpos, e.qvel, e.act, e.ctrl = x[:1], x[1:2], x[2:], u
        e.step()
        return np.r_[e.qpos, e.qvel, e.act]
    x0, h = np.r_[q, v, a], 1e-6
    Afd = np.array([(step(x0 + h * e, [0.7]) - step(x0 - h * e, [0.7])) / (2 * h) for e in np.eye(3)]).T
    Bfd = ((step(x0, [0.7 + h]) - step(x0, [0.7 - h])) / (2 * h))[:, None]
    # smooth dynamics (no contact): central differences good to ~1e-8 relative
    assert np.linalg.norm(A - Afd) <= 1e-7 * np.linalg.norm(Afd)
    assert np.linalg.norm(B - Bfd) <= 1e-7 * np.linalg.norm(Bfd)
    qt, vt, At, Bt = grit.rollout(m, np.zeros((2, 1)), np.zeros((2, 1)), np.ones((2, 4, 1)), derivatives=True)
    assert At.shape == (2, 4, 3, 3) and Bt.shape == (2, 4, 3, 1)
    with pytest.raises(ValueError, match=r"x0: shape \(3,\) needed"):
        grit.ILQR(m, 10, np.zeros(2))
    s = grit.ILQR(m, 20, np.zeros(3), x_goal=np.r_[0.5, 0, 0], Q=np.r_[1.0, 0.1, 0], Qf=np.r_[100.0, 1, 0],
                  R=np.ones(1) * 1e-3, u_min=[-1], u_max=[1])
    r = s.solve()
    assert s.states.shape == (21, 3) and s.gains.shape == (20, 1, 3) and r.cost < r.initial_cost
    with pytest.raises(grit.Error, match="not finite"):
        d.act = [np.nan]


def test_ctrl_c_ends_a_long_solve_with_keyboard_interrupt(tmp_path):
    """Python's signal handlers run after each iteration (the GIL is taken there), so SIGINT ends a solve
    with KeyboardInterrupt after the current iteration rather than at its end (this solve would run
    for minutes: no tolerance can stop it; max_time bounds it should the signal be lost), and the solver
    stays usable."""
    import os
    import signal
    p = tmp_path / "arm3_limited.xml"  # the arm with its motors limited (MuJoCo's ctrlrange, clamped by the step)
    p.write_text(ARM3.replace('<motor joint="j1"/><motor joint="j2"/><motor joint="j3"/>',
                              '<motor joint="j1" ctrlrange="-20 20"/><motor joint="j2" ctrlrange="-15 15"/>'
                              '<motor joint="j3" ctrlrange="-8 8"/>'))
    arm = grit.load(str(p))
    goal = np.r_[np.pi * 0.75, -0.5, 0.3, 0, 0, 0]  # measured: 34884 iterations, 305 s, without the signal
    s = grit.ILQR(arm, 80, np.zeros(6), x_goal=goal, Q=np.r_[np.ones(3), np.full(3, 0.01)],
                  Qf=np.r_[np.full(3, 1000.0), np.full(3, 100.0)], R=np.full(3, 1e-3), max_iterations=10**6,
                  tol_cost=0.0, tol_feedforward=0.0, tol_gradient=1e-300, max_time=60.0,
                  u_min=np.full(3, -np.inf), u_max=np.full(3, np.inf))  # unbounded (the ctrlrange box ends it early)
    timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        s.solve()
    timer.join()
    assert s.solve(max_iterations=2).stop == "max_iterations"


def test_ctrl_c_ends_a_long_step_n(models):
    """data.step(n) releases the GIL in chunks of 64 steps and runs Python's signal handlers between
    them: SIGINT ends it with KeyboardInterrupt whose steps_done says how far it got (the data hold the
    state after those steps), rather than after all n (here 1e7 steps, hours)."""
    import os
    import signal
    m = grit.load(models("clutter.xml"))
    d = grit.Data(m)
    timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt) as e:
        d.step(10**7)
    timer.join()
    assert 0 < e.value.steps_done < 10**7
    assert d.time == pytest.approx(e.value.steps_done * m.timestep, rel=1e-9)
    d.step(2)  # still usable


def test_a_stop_from_the_log_ends_every_stage_of_an_annealed_solve(slider):
    """grit_ilqr_grit_solve_annealed runs one solve per smoothing stage and each clears a stop request:
    a true return from the log must end the whole annealed solve, every later stage after its first
    iteration (5 stages here: 0.05, 0.025, 0.0125, 0.00625, then exact)."""
    d = grit.Data(slider)
    d.step(20)
    x0 = np.r_[d.qpos, np.zeros(slider.nv)]
    goal = x0.copy()
    goal[2] += 0.10
    Q = np.zeros(16)
    Q[2] = Q[3] = 10
    seen = []
    s = grit.ILQR(slider, 30, x0, x_goal=goal, Q=Q, Qf=100 * Q, R=np.full(2, 1e-3), u_min=[-5, -5], u_max=[5, 5],
                  max_iterations=50, log=lambda it: seen.append(it["iteration"]) or True)
    r = s.solve_annealed(0.05, 0.5, 0.005)
    assert r.stop == "user_stop" and not r.converged
    assert r.iterations == len(seen) <= 5


def test_ctrlrange_is_the_default_control_box(tmp_path):
    """Model.ctrl_range is the actuators' ctrlrange where ctrllimited, else (-inf, inf); grit.ILQR takes it
    as u_min, u_max when neither is given (the plan then never asks for a torque the step would clamp),
    and explicit bounds win. The swing to GOAL asks for more than 3 N m on j1 unbounded (measured below)."""
    p = tmp_path / "arm3_ctrlrange.xml"
    p.write_text(ARM3.replace('<motor joint="j1"/><motor joint="j2"/>',
                              '<motor joint="j1" ctrlrange="-3 3" ctrllimited="true"/>'
                              '<motor joint="j2" ctrlrange="-2 2"/>'))
    m = grit.load(str(p))
    r = m.ctrl_range
    assert r.shape == (3, 2)
    assert np.array_equal(r[:2], [[-3, 3], [-2, 2]])  # ctrllimited "auto" (the default) with a range: limited
    assert r[2, 0] == -np.inf and r[2, 1] == np.inf
    s = arm_solver(m, max_iterations=30)
    s.solve()
    U = s.controls
    assert np.all(U[:, 0] >= -3 - 1e-12) and np.all(U[:, 0] <= 3 + 1e-12)
    assert np.all(np.abs(U[:, 1]) <= 2 + 1e-12)
    free = arm_solver(m, max_iterations=30, u_min=np.full(3, -np.inf), u_max=np.full(3, np.inf))
    free.solve()
    assert np.max(np.abs(free.controls[:, 0])) > 3  # explicit bounds win: here none
    wide = arm_solver(m, max_iterations=30, u_min=np.full(3, -1.0), u_max=np.full(3, 1.0))
    wide.solve()
    assert np.max(np.abs(wide.controls)) <= 1 + 1e-12
