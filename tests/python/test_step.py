# SPDX-License-Identifier: Apache-2.0
"""data.step() against `grit sim` (the CLI's CSV), for every contact model; a failed step changes
nothing."""
import math

import numpy as np
import pytest

import grit
from conftest import cli_sim_csv, model_path

CONTACTS = ["lagged", "similar", "sap"]
# (model file, keyframe): scenes in contact from their first step
SCENES = [("falling_sphere.xml", "rest"), ("sliding_box.xml", "launch"), ("arm_push_ball.xml", "push"),
          ("conveyor.xml", "moving")]


@pytest.mark.parametrize("contact", CONTACTS)
@pytest.mark.parametrize("scene,key", SCENES)
def test_one_step_equals_grit_sim(tmp_path, contact, scene, key):
    path = model_path(scene)
    t, q, v = cli_sim_csv(tmp_path, path, 1, "--key", key, "--contact", contact)
    m = grit.load(path)
    d = grit.Data(m, contact=contact)
    d.reset(key)
    assert np.array_equal(d.qpos, q[0]) and np.array_equal(d.qvel, v[0])
    d.step()
    assert d.stats()["nconstraints"] > 0  # the step had contacts
    assert np.abs(d.qpos - q[1]).max() <= 1e-9
    assert np.abs(d.qvel - v[1]).max() <= 1e-9
    assert d.time == pytest.approx(t[1], abs=1e-12)


@pytest.mark.parametrize("contact", CONTACTS)
def test_steps_equal_grit_sim_through_the_clutter(tmp_path, contact):
    """150 steps of the clutter (objects land on the floor and on each other from step ~100)."""
    path = model_path("clutter.xml")
    t, q, v = cli_sim_csv(tmp_path, path, 150, "--contact", contact)
    m = grit.load(path)
    d = grit.Data(m, contact=contact)
    ncontacts = 0
    for k in range(1, 151):
        d.step()
        ncontacts = max(ncontacts, d.stats()["nconstraints"])
        assert np.abs(d.qpos - q[k]).max() <= 1e-9, k
        assert np.abs(d.qvel - v[k]).max() <= 1e-9, k
    assert ncontacts > 0


def snapshot(d):
    return d.qpos.copy(), d.qvel.copy(), d.ctrl.copy(), d.time


def assert_same(d, snap):
    q, v, u, t = snap
    assert np.array_equal(d.qpos, q) and np.array_equal(d.qvel, v) and np.array_equal(d.ctrl, u)
    assert d.time == t


@pytest.mark.parametrize("contact", CONTACTS)
def test_failed_step_leaves_the_data_unchanged(contact):
    m = grit.load(model_path("arm_push_ball.xml"))
    d = grit.Data(m, contact=contact, max_newton_iters=1)
    d.reset("push")
    d.qvel[:7] = 0.5  # a Newton iteration is not enough
    snap = snapshot(d)
    with pytest.raises(grit.Error) as e:
        d.step()
    assert e.value.status == "not converged" and e.value.steps_done == 0
    assert str(e.value)  # the library's message
    assert_same(d, snap)
    with pytest.raises(grit.Error):
        d.step(5)
    assert_same(d, snap)


def test_nan_control_raises_and_changes_nothing():
    m = grit.load(model_path("arm7.xml"))
    d = grit.Data(m)
    d.reset("reach")
    d.step(2)
    q, v, t = d.qpos.copy(), d.qvel.copy(), d.time
    d.ctrl[2] = math.nan  # written through the view: checked before the step
    with pytest.raises(grit.Error) as e:
        d.step()
    assert str(e.value) == "ctrl[2] is not finite" and e.value.status == "not finite"
    assert np.array_equal(d.qpos, q) and np.array_equal(d.qvel, v) and d.time == t
    d.ctrl[2] = 0.0
    d.step()
    assert d.time > t


def test_failure_midway_keeps_the_completed_steps():
    """step(n) stops at the first failed step: the state is that after e.steps_done steps."""
    m = grit.load(model_path("falling_sphere.xml"))
    d = grit.Data(m, max_newton_iters=2)
    d.reset("launch")
    d.qpos[2] = 0.3  # in the air: the first steps need no Newton iteration
    d.qvel[2] = -3.0
    ref = grit.Data(m, max_newton_iters=2)
    ref.qpos = d.qpos
    ref.qvel = d.qvel
    with pytest.raises(grit.Error) as e:
        d.step(1000)
    k = e.value.steps_done
    assert 0 < k < 1000
    ref.step(k)
    assert np.array_equal(d.qpos, ref.qpos) and np.array_equal(d.qvel, ref.qvel) and d.time == ref.time


def test_step_n_equals_n_steps():
    m = grit.load(model_path("sliding_box.xml"))
    a, b = grit.Data(m), grit.Data(m)
    a.reset("launch"), b.reset("launch")
    a.step(40)
    for _ in range(40):
        b.step()
    assert np.array_equal(a.qpos, b.qpos) and np.array_equal(a.qvel, b.qvel)


def test_hydroelastic_load_option_equals_grit_sim(tmp_path):
    """grit.load(path, hydroelastic=E) is the CLI's --hydroelastic E: every geometry but the ground
    compliant (the arm's capsules and the ball press by patches); 20 steps agree with `grit sim`."""
    path = model_path("arm_push_ball.xml")
    t, q, v = cli_sim_csv(tmp_path, path, 20, "--key", "push", "--hydroelastic", "1e6")
    d, point = grit.Data(grit.load(path, hydroelastic=1e6)), grit.Data(grit.load(path))
    for x in (d, point):
        x.reset("push")
        for _ in range(20):
            x.step()
    assert np.abs(d.qpos - q[-1]).max() <= 1e-9 and np.abs(d.qvel - v[-1]).max() <= 1e-9
    assert d.stats()["nconstraints"] > 4 * point.stats()["nconstraints"]  # patches, not points
    with pytest.raises(ValueError):
        grit.load(path, hydroelastic=-1.0)


def test_gradient_smoothing_barrier_reaches_the_step():
    """grit_step_settings.gradient_smoothing_barrier (docs/contact.md, "A force at a distance"): only read
    under gradient smoothing, refused when negative, and with smoothing it changes the arm's push of the
    ball (two moving bodies within the smoothing distance) from the film's."""
    m = grit.load(model_path("arm_push_ball.xml"))

    def run(**kw):
        d = grit.Data(m, **kw)
        d.reset("push")
        d.step(20)
        return d.qvel.copy()

    exact = run()
    assert np.array_equal(run(gradient_smoothing_barrier=0.3), exact)  # no smoothing: not read
    film, barrier = run(gradient_smoothing=0.05), run(gradient_smoothing=0.05, gradient_smoothing_barrier=0.3)
    assert np.all(np.isfinite(barrier)) and not np.array_equal(film, barrier)
    with pytest.raises(grit.Error):
        grit.Data(m, gradient_smoothing=0.05, gradient_smoothing_barrier=-1.0)


def test_warm_start_keyword():
    """grit_step_settings.warm_start (off by default): with warm_start=True the sliding rod's steps start
    from the previous step's acceleration and take fewer Newton iterations than the default's; the same
    motion to the solver's tolerance; a state set between steps starts cold (its step equals the cold one)."""
    m = grit.load(model_path("sliding_rod.xml"))
    warm, cold = grit.Data(m, warm_start=True), grit.Data(m)
    nw = nc = 0
    for _ in range(300):
        warm.step(), cold.step()
        nw += warm.stats()["newton_iters"]
        nc += cold.stats()["newton_iters"]
    assert nw < nc, (nw, nc)
    assert np.allclose(warm.qpos, cold.qpos, rtol=0, atol=1e-5)
    warm.qvel = cold.qvel  # a state set: no history is assumed of it
    warm.qpos = cold.qpos
    warm.step(), cold.step()
    assert np.array_equal(warm.qvel, cold.qvel) and np.array_equal(warm.qpos, cold.qpos)
