# SPDX-License-Identifier: Apache-2.0
"""Issue 28's gripper through the Python package, written as an MJCF file of this test's own: a lift
(z slide) carrying two fingers (y slides, 2 cm spheres) whose surfaces start 1 cm either side of a free
8 cm, 0.2 kg box on the floor; 40 steps of 20 ms; the box must rise 5 cm. From the fingers' own weight
(open, no squeeze, the lift at its holding force) the exact model has no gradient toward the lift;
grit.ILQR.solve_squeezed plans under gradient smoothing, turns the plan's grip into a squeeze and
finishes on the exact model (docs/ilqr.md, "Grip to squeeze"). Asserted on a replay of the plan on the
exact model: the box within 1 cm of its goal (issue 28's bound), and an honest stop."""
import numpy as np
import pytest

import grit

I_BOX = 0.2 * 0.08 ** 2 / 6
GRIPPER = f"""<mujoco model="gripper"><option timestep="0.02"/><worldbody>
<geom type="plane" size="1 1 0.1" friction="0.5"/>
<body name="lift" pos="0 0 0.04"><inertial pos="0 0 0" mass="0.3" diaginertia="1e-4 1e-4 1e-4"/>
 <joint name="lift" type="slide" axis="0 0 1" damping="1"/>
 <body name="left" pos="0 -0.07 0"><inertial pos="0 0 0" mass="0.1" diaginertia="1e-4 1e-4 1e-4"/>
  <joint name="left" type="slide" axis="0 1 0" damping="1"/><geom type="sphere" size="0.02" friction="0.8"/></body>
 <body name="right" pos="0 0.07 0"><inertial pos="0 0 0" mass="0.1" diaginertia="1e-4 1e-4 1e-4"/>
  <joint name="right" type="slide" axis="0 1 0" damping="1"/><geom type="sphere" size="0.02" friction="0.8"/></body>
</body>
<body name="box" pos="0 0 0.04"><freejoint/><inertial pos="0 0 0" mass="0.2" diaginertia="{I_BOX} {I_BOX} {I_BOX}"/>
 <geom type="box" size="0.04 0.04 0.04" friction="0.8"/></body>
</worldbody><actuator>
<motor joint="lift" ctrllimited="true" ctrlrange="-30 30"/>
<motor joint="left" ctrllimited="true" ctrlrange="-20 20"/>
<motor joint="right" ctrllimited="true" ctrlrange="-20 20"/>
</actuator></mujoco>"""
N = 40
HOLD = 0.5 * 9.81  # the lift holding itself and its fingers


@pytest.fixture
def gripper(tmp_path):
    p = tmp_path / "gripper.xml"
    p.write_text(GRIPPER)
    return grit.load(str(p))


def problem(m):
    d = grit.Data(m)
    x0 = np.concatenate([d.qpos, d.qvel])
    goal = x0.copy()
    goal[5] += 0.05  # the box's z
    Q = np.zeros(2 * m.nv)
    Q[3:6] = 100  # the box's position
    Qf = 10 * Q
    Qf[m.nv + 3:m.nv + 6] = 10  # at rest
    s = grit.ILQR(m, N, x0, x_goal=goal, Q=Q, Qf=Qf, R=np.full(3, 1e-3), u_ref=[HOLD, 0, 0],
                  u_min=[-30, -20, -20], u_max=[30, 20, 20], max_iterations=150, tol_cost=1e-4)
    s.set_controls(np.tile([HOLD, 0, 0], (N, 1)))
    return s, goal


def box_error(m, controls, goal):
    d = grit.Data(m)  # the exact model
    for u in controls:
        d.ctrl = u
        d.step()
    return float(np.linalg.norm(d.qpos[3:6] - goal[3:6]))


def honest(r):
    if r.converged:
        assert r.stop in ("converged_cost", "converged_feedforward") and r.gradient <= 1e-2
    else:
        assert r.stop not in ("converged_cost", "converged_feedforward")


def test_from_its_own_weight_the_exact_model_has_no_way_up(gripper):
    s, goal = problem(gripper)
    r = s.solve()
    honest(r)
    assert not r.converged, r.reason
    assert box_error(gripper, s.controls, goal) > 0.045  # still on the floor


@pytest.mark.parametrize("delta", [0.04, 0.05, 0.06])
def test_grip_squeezed_reaches_the_goal_on_the_exact_model(gripper, delta):
    s, goal = problem(gripper)
    r = s.solve_squeezed(delta)
    honest(r)
    err = box_error(gripper, s.controls, goal)
    assert err < 0.01, f"delta {delta}: the box ends {1e3 * err:.1f} mm from its goal ({r.stop})"
    assert r.cost < r.initial_cost


def test_solve_squeezed_rejects_bad_arguments(gripper):
    s, _ = problem(gripper)
    for bad in (dict(delta=0.0), dict(delta=float("nan")), dict(delta=0.05, margin=0.0), dict(delta=0.05, margin=-1)):
        with pytest.raises(ValueError):
            s.solve_squeezed(**bad)
