# SPDX-License-Identifier: Apache-2.0
"""grit.linearize against `grit deriv --json`; parameter Jacobians against central differences of the
step; Data.derivatives."""
import numpy as np
import pytest

import grit
from conftest import cli_deriv, model_path

CONTACTS = ["lagged", "similar", "sap"]
SCENES = [("arm_push_ball.xml", "push"), ("falling_sphere.xml", "launch"), ("arm7.xml", "reach")]


def rel_err(x, ref):
    return np.abs(x - ref).max() / max(np.abs(ref).max(), 1e-300)


@pytest.mark.parametrize("contact", CONTACTS)
@pytest.mark.parametrize("scene,key", SCENES)
def test_linearize_equals_grit_deriv(contact, scene, key):
    path = model_path(scene)
    A_cli, B_cli = cli_deriv(path, "--key", key, "--contact", contact)
    m = grit.load(path)
    d = grit.Data(m)
    d.reset(key)
    A, B = grit.linearize(m, d.qpos, d.qvel, d.ctrl, contact=contact)
    assert A.shape == (2 * m.nv, 2 * m.nv) and B.shape == (2 * m.nv, m.nu)
    assert rel_err(A, A_cli) <= 1e-10
    if m.nu:
        assert rel_err(B, B_cli) <= 1e-10


def test_data_derivatives_equal_linearize():
    m = grit.load(model_path("arm_push_ball.xml"))
    d = grit.Data(m)
    d.reset("push")
    A, B = grit.linearize(m, d.qpos, d.qvel, d.ctrl)
    d.step()
    A2, B2 = d.derivatives()
    assert np.array_equal(A, A2) and np.array_equal(B, B2)


def next_state(m, q, v, u, contact="lagged"):
    d = grit.Data(m, contact=contact, rel_tol=1e-12)
    d.qpos, d.qvel, d.ctrl = q, v, u
    d.step()
    return d.qpos.copy(), d.qvel.copy()


def test_parameter_jacobians_against_central_differences():
    """P = dx+/dparams (friction, stiffness, dissipation, the ball's mass) against central differences of
    whole steps on model copies with the parameter changed (relative step 1e-6). The velocity rows are
    compared (the position rows are h times them, for these joints)."""
    m = grit.load(model_path("arm_push_ball.xml"))
    d = grit.Data(m)
    d.reset("push")
    q, v, u = d.qpos.copy(), d.qvel.copy(), d.ctrl.copy()
    specs = ["friction", "stiffness", "dissipation", "mass:ball"]
    A, B, P = grit.linearize(m, q, v, u, params=specs)
    assert P.shape == (2 * m.nv, 4)
    Pall = grit.linearize(m, q, v, u, params=True)[2]
    assert Pall.shape == (2 * m.nv, 3 + m.nbody - 1)
    assert np.array_equal(Pall[:, :3], P[:, :3])
    ball = m.body_names.index("ball")
    assert np.array_equal(Pall[:, 3 + ball - 1], P[:, 3])
    d.step()  # data.derivatives takes the same (kind, index) pairs
    assert np.array_equal(d.derivatives(params=grit.params(m, specs))[2], P)
    # central differences on a model whose geometries share one value of each contact parameter (so
    # that setting every geometry's value at once moves along the parameter P's column differentiates)
    nominal = {"friction": 0.5, "stiffness": 2e4, "dissipation": 1.0}
    mu = grit.with_params(m, nominal)
    P = grit.linearize(mu, q, v, u, params=specs)[2]
    nominal["mass:ball"] = m.body_masses[ball]
    for j, spec in enumerate(specs):
        x = nominal[spec]
        h = 1e-6 * x
        _, vp = next_state(grit.with_params(mu, {spec: x + h}), q, v, u)
        _, vm = next_state(grit.with_params(mu, {spec: x - h}), q, v, u)
        fd = (vp - vm) / (2 * h)
        err = np.abs(P[m.nv:, j] - fd).max() / np.abs(fd).max()
        assert np.abs(fd).max() > 0 and err <= 1e-4, (spec, err)  # measured 2e-9 to 2e-6


def test_linearize_errors():
    m = grit.load(model_path("arm7.xml"))
    q, v, u = np.zeros(7), np.zeros(7), np.zeros(7)
    with pytest.raises(ValueError):
        grit.linearize(m, q[:6], v, u)
    with pytest.raises(ValueError):
        grit.linearize(m, q, v, np.zeros(3))
    A, B = grit.linearize(m, q, v, None)  # no controls: zero
    assert np.array_equal(B, grit.linearize(m, q, v, u)[1])
    with pytest.raises(TypeError):
        grit.linearize(m, q, None, u)
    with pytest.raises(grit.Error) as e:
        grit.linearize(m, q, v, np.full(7, np.inf))
    assert str(e.value) == "ctrl[0] is not finite"
    with pytest.raises(ValueError):
        grit.linearize(m, q, v, u, params=["viscosity"])
    with pytest.raises(grit.Error):
        grit.linearize(m, q, v, u, params=[(3, 99)])  # no body 99: the library says so
    with pytest.raises(grit.Error) as e:
        grit.Data(m).derivatives()  # no step yet
    assert e.value.status == "invalid state"
