# SPDX-License-Identifier: Apache-2.0
"""Seed 001's criteria from Python equal the C library's (the maxima grit sim prints), and the step's
integrators are reachable from Python: the variational one conserves a double pendulum's energy, the
quasistatic one moves a servo to its command in one step and its Jacobians equal `grit deriv
--quasistatic`'s (docs/contact.md, theory.md, quasistatic.md)."""
import json

import numpy as np
import pytest

import grit
from conftest import cli_deriv, model_path, run_cli


@pytest.mark.parametrize("contact", ["lagged", "similar", "sap"])
def test_diagnostics_maxima_equal_grit_sim(contact):
    path = model_path("clutter.xml")
    rc, out, err = run_cli("sim", path, "--steps", "200", "--contact", contact, "--quiet")
    assert rc == 0, err
    js = json.loads(out.strip().splitlines()[-1])
    d = grit.Data(grit.load(path), contact=contact)
    worst = {"signorini_violation": 0.0, "coulomb_violation": 0.0, "dissipation_violation": 0.0}
    for _ in range(200):
        d.step()
        g = d.diagnostics()
        n = len(d.contacts().distances)
        for k in worst:
            assert g[k].shape == (n,)
            assert g[k + "_max"] == (g[k].max() if n else 0.0)
            worst[k] = max(worst[k], g[k + "_max"])
    for k, v in worst.items():
        assert v == pytest.approx(js[k + "_max"], rel=1e-5, abs=1e-12), k  # the JSON has 6 digits


def _pendulum_energy(q, v, g=9.81, inertia=1.0 / 12.0):
    """The double pendulum of examples/models/double_pendulum.xml: two 1 m, 1 kg rods on y hinges."""
    a, b = q[0], q[0] + q[1]
    wa, wb = v[0], v[0] + v[1]
    z1, z2 = -0.5 * np.cos(a), -np.cos(a) - 0.5 * np.cos(b)
    vx2 = -np.cos(a) * wa - 0.5 * np.cos(b) * wb
    vz2 = np.sin(a) * wa + 0.5 * np.sin(b) * wb
    kinetic = 0.5 * (0.25 * wa**2 + inertia * wa**2) + 0.5 * (vx2**2 + vz2**2 + inertia * wb**2)
    return kinetic + g * (z1 + z2)


@pytest.mark.parametrize("integrator,bound", [("variational", 1e-3), ("euler", 0.05)])
def test_integrators_energy_on_the_double_pendulum(integrator, bound):
    """Released from horizontal, 10 s at 1 ms: the variational step keeps the energy within 0.1 % of what
    the motion releases (measured 0.006 %), the Euler step within 5 % (measured 2.3 %, as MuJoCo's)."""
    d = grit.Data(grit.load(model_path("double_pendulum.xml")), integrator=integrator)
    d.reset("chaotic")
    e0 = _pendulum_energy(d.qpos, d.qvel)
    available = e0 - (-2.0 * 9.81)
    worst = 0.0
    for _ in range(10000):
        d.step()
        worst = max(worst, abs(_pendulum_energy(d.qpos, d.qvel) - e0))
    assert worst < bound * available, worst / available


def test_unknown_integrator_is_a_value_error():
    with pytest.raises(ValueError, match="integrator"):
        grit.Data(grit.load(model_path("double_pendulum.xml")), integrator="rk4")


FINGER = """<mujoco><option timestep='0.1'/><worldbody>
<geom type='plane' size='1 1 0.1'/>
<body name='finger' pos='0 0 0.5'><joint name='x' type='slide' axis='1 0 0'/>
<geom type='sphere' size='0.02' mass='0.1'/></body></worldbody>
<actuator><position joint='x' kp='1000'/></actuator></mujoco>"""


def test_quasistatic_servo_reaches_its_command_in_one_step(tmp_path):
    path = tmp_path / "finger.xml"
    path.write_text(FINGER)
    d = grit.Data(grit.load(str(path)), integrator="quasistatic")
    d.ctrl = np.array([0.2])
    d.step()
    assert d.qpos[0] == pytest.approx(0.2, abs=1e-6)


SQUEEZE = """<mujoco><option timestep='0.01'/><worldbody>
<geom type='plane' size='1 1 0.1'/>
<body name='ball' pos='0 0 0.1'><joint type='slide' axis='1 0 0'/><joint type='slide' axis='0 0 1'/>
<geom type='sphere' size='0.1' mass='1'/></body>
<body name='left' pos='-0.125 0 0.1'><joint name='lx' type='slide' axis='1 0 0'/>
<geom type='box' size='0.02 0.05 0.05' mass='0.01'/></body>
<body name='right' pos='0.125 0 0.1'><joint name='rx' type='slide' axis='1 0 0'/>
<geom type='box' size='0.02 0.05 0.05' mass='0.01'/></body></worldbody>
<actuator><position joint='lx' kp='1000'/><position joint='rx' kp='1000'/></actuator></mujoco>"""


def test_quasistatic_derivatives_equal_grit_deriv(tmp_path):
    """A gripper squeezing a sphere: Data.derivatives() after a quasistatic step equals
    `grit deriv --quasistatic` bit for bit; the velocity columns are zero (docs/quasistatic.md)."""
    path = tmp_path / "squeeze.xml"
    path.write_text(SQUEEZE)
    q, u = [0.0, 0.0, 0.006, -0.006], [0.015, -0.015]
    d = grit.Data(grit.load(str(path)), integrator="quasistatic")
    d.qpos, d.ctrl = np.array(q), np.array(u)
    d.step()
    assert len(d.contacts().distances) > 0
    A, B = d.derivatives()
    A_cli, B_cli = cli_deriv(str(path), "--quasistatic", "--qpos", " ".join(map(str, q)), "--ctrl",
                             " ".join(map(str, u)))
    assert np.array_equal(A, A_cli) and np.array_equal(B, B_cli)
    assert not A[:, 4:].any()
    assert np.abs(A[:, :4]).max() > 0 and np.abs(B).max() > 0
