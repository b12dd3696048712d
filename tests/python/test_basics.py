# SPDX-License-Identifier: Apache-2.0
"""The package's surface: import, version, models and their names, data views, keyframes, errors."""
import math

import numpy as np
import pytest

import grit
from conftest import model_path, run_cli


def test_version_and_error_type():
    assert isinstance(grit.__version__, str) and grit.__version__.count(".") == 2
    assert issubclass(grit.Error, Exception)


def test_model_sizes_and_names():
    m = grit.load(model_path("arm7.xml"))
    assert (m.nq, m.nv, m.nu) == (7, 7, 7)
    assert m.timestep == pytest.approx(0.002)
    assert m.joint_names == ["j1", "j2", "j3", "j4", "j5", "j6", "j7"]
    assert m.actuator_names == ["m1", "m2", "m3", "m4", "m5", "m6", "m7"]
    assert m.body_names[1:] == ["base", "link1", "link2", "link3", "link4", "link5", "link6", "link7"]
    assert len(m.body_names) == m.nbody
    assert m.key_names == ["home", "reach"]
    assert m.qpos0.shape == (7,)
    b = grit.load(model_path("arm_push_ball.xml"))
    assert "ball" in b.body_names and b.nq == 14 and b.nv == 13


def test_load_error_has_the_library_message():
    missing = model_path("no_such_model.xml")
    with pytest.raises(grit.Error) as e:
        grit.load(missing)
    rc, _, err = run_cli("sim", missing, "--quiet")
    assert rc == 1
    assert err.strip() == "grit: error: " + str(e.value)  # the same message as the CLI's
    assert e.value.status == "input/output error"


def test_load_parse_error(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body><geom size='x'/></body></worldbody></mujoco>")
    with pytest.raises(grit.Error) as e:
        grit.load(str(bad))
    assert "bad.xml" in str(e.value) and ":1" in str(e.value)


def test_views_are_in_place_and_checked():
    m = grit.load(model_path("falling_sphere.xml"))
    d = grit.Data(m)
    q = d.qpos
    assert q.dtype == np.float64 and q.shape == (7,) and q.flags.writeable
    q[0] = 0.5  # writes the data's own buffer
    assert d.qpos[0] == 0.5
    d.qvel = [1, 0, 0, 0, 0, 0]
    assert d.qvel[0] == 1
    with pytest.raises(ValueError):
        d.qpos = np.zeros(6)
    with pytest.raises(ValueError):
        d.qvel = np.zeros((2, 3))
    with pytest.raises(TypeError):
        d.qvel = "fast"
    with pytest.raises(TypeError):
        d.qvel = None
    with pytest.raises(grit.Error) as e:
        d.qvel = [math.nan, 0, 0, 0, 0, 0]
    assert str(e.value) == "qvel[0] is not finite" and e.value.status == "not finite"
    assert d.qvel[0] == 1  # unchanged by the rejected assignment


def test_quaternion_written_through_the_view_is_normalized_before_the_step():
    m = grit.load(model_path("falling_sphere.xml"))
    d = grit.Data(m)
    d.qpos[3:7] = [2, 0, 0, 0]
    d.step()
    assert np.allclose(d.qpos[3:7], [1, 0, 0, 0])


def test_contact_model_names():
    m = grit.load(model_path("falling_sphere.xml"))
    for c in ("lagged", "similar", "sap"):
        assert grit.Data(m, contact=c).contact == c
    assert grit.Data(m).contact == "lagged"
    with pytest.raises(ValueError):
        grit.Data(m, contact="soft")
    with pytest.raises(TypeError):
        grit.Data(m, contact=3)
    with pytest.raises(TypeError):
        grit.Data("not a model")


def test_keyframes_and_reset():
    m = grit.load(model_path("arm7.xml"))
    d = grit.Data(m)
    d.reset("reach")
    assert np.array_equal(d.qpos, [0.3, 0.6, -0.2, -1.2, 0.4, 1.1, 0.1])
    assert np.array_equal(d.ctrl, [0, 0.3, 0, -0.2, 0, 0.1, 0])
    d.step(3)
    assert d.time == pytest.approx(3 * m.timestep)
    d.reset()
    assert np.array_equal(d.qpos, m.qpos0) and d.time == 0 and not d.ctrl.any()
    d.reset(1)
    assert d.qpos[0] == 0.3
    with pytest.raises(KeyError):
        d.reset("nowhere")
    with pytest.raises(IndexError):
        d.reset(5)


def test_contacts_of_a_resting_sphere():
    m = grit.load(model_path("falling_sphere.xml"))
    d = grit.Data(m)
    d.reset("rest")
    d.step(50)
    c = d.contacts()
    assert c.positions.shape[1] == 3 and c.normals.shape == c.positions.shape
    assert c.geoms.shape == (len(c.positions), 2) and c.bodies.shape == c.geoms.shape
    n = len(c.positions)
    assert n >= 1
    # resting: the normal impulse carries the weight over the step (m g h)
    mass = m.body_masses[1]
    assert c.impulses[:, 2].sum() == pytest.approx(mass * 9.81 * m.timestep, rel=1e-3)
    assert np.allclose(np.einsum("nij,nj->ni", c.frames, c.impulses), c.impulses_world)
    assert np.allclose(c.normals, c.frames[:, :, 2])


def test_replay_page(tmp_path):
    m = grit.load(model_path("falling_sphere.xml"))
    d = grit.Data(m)
    d.reset("launch")
    r = grit.Replay(m, title="sphere")
    r.add_data(d, after_step=False)
    for _ in range(20):
        d.step()
        r.add_data(d)
    r.add_marker("sphere", (0.02, 0, 0), (0.3, 0, 0.02))
    r.add_plot("x", [("x", None, np.arange(5.0))])
    out = tmp_path / "page.html"
    r.write(str(out))
    assert r.nframes == 21 and "grit-scene" in out.read_text()
    q = np.tile(m.qpos0, (10, 1))
    grit.replay(m, str(tmp_path / "p2.html"), q)
    assert (tmp_path / "p2.html").stat().st_size > 100000
    grit.replay(m, q, tmp_path / "p3.html")  # either order, a path object
    assert (tmp_path / "p3.html").read_text() == (tmp_path / "p2.html").read_text()
    with pytest.raises(grit.Error):
        grit.Replay(m).write(str(tmp_path / "empty.html"))  # no frame


def test_writes_through_views_stay_pending_until_the_step():
    """Assigning one buffer does not validate (nor lose) what was written through another view."""
    m = grit.load(model_path("arm7.xml"))
    d = grit.Data(m)
    d.ctrl[0] = math.nan
    d.qpos = np.full(7, 0.1)  # accepted: qpos is fine
    assert np.array_equal(d.qpos, np.full(7, 0.1))
    with pytest.raises(grit.Error) as e:
        d.step()
    assert str(e.value) == "ctrl[0] is not finite"
    assert np.array_equal(d.qpos, np.full(7, 0.1)) and d.time == 0


def test_uninitialized_objects_raise():
    d = grit.Data.__new__(grit.Data)
    for use in (lambda: d.qpos, lambda: d.time, lambda: d.model, lambda: d.step(), lambda: d.contacts()):
        with pytest.raises(RuntimeError):
            use()
    s = grit.ILQR.__new__(grit.ILQR)
    with pytest.raises(RuntimeError):
        s.solve()
    with pytest.raises(RuntimeError):
        s.states
    r = grit.Replay.__new__(grit.Replay)
    with pytest.raises(RuntimeError):
        r.write("x.html")
    with pytest.raises(TypeError):
        grit.Model()  # only grit.load makes models


def test_load_lenient_and_package_path(tmp_path):
    """grit.load takes the CLI's --lenient (dynamics grit does not simulate become warnings) and
    --package-path (URDF package:// names), and loads URDF files by content."""
    p = tmp_path / "spring.xml"
    p.write_text("<mujoco><worldbody><body><geom size='.1'/>\n<joint type='ball' stiffness='1'/></body></worldbody>"
                 "</mujoco>")
    with pytest.raises(grit.Error, match=r"spring.xml:2: <joint>.*lenient"):
        grit.load(str(p))
    assert grit.load(str(p), lenient=True).nv == 3
    pkg = tmp_path / "store" / "checkout"  # a package whose directory is named otherwise: found by package.xml
    (pkg / "meshes").mkdir(parents=True)
    (pkg / "package.xml").write_text("<package><name>boxes</name></package>")
    v = [(x, y, z) for x in (0, 0.1) for y in (0, 0.1) for z in (0, 0.1)]
    (pkg / "meshes" / "c.obj").write_text("".join(f"v {x} {y} {z}\n" for x, y, z in v))
    inertia = '<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>'
    u = tmp_path / "r.urdf"
    u.write_text(f'<robot name="r"><link name="a"/><link name="b">{inertia}<collision><geometry>'
                 '<mesh filename="package://boxes/meshes/c.obj"/></geometry></collision></link>'
                 '<joint name="j" type="continuous"><parent link="a"/><child link="b"/></joint></robot>')
    with pytest.raises(grit.Error, match="package 'boxes' not found"):
        grit.load(str(u))
    m = grit.load(str(u), package_path=str(pkg))
    assert (m.nv, m.nu, m.ngeom) == (1, 1, 1)


def test_springdamper_and_urdf_links_without_inertial(tmp_path):
    """Unseen files as MuJoCo 2.2.2 compiles them: an MJCF joint's springdamper="timeconst dampratio" loads
    strictly as the stiffness I / (tc dr)^2 and damping 2 I / tc of its effective inertia I at qpos0 (here
    izz 0.02 + armature 0.01: k = 12, b = 0.6, so its motion is that of the explicit spring, to rounding);
    a bad springdamper is an error with file and line; a URDF link without <inertial> weighs its collision
    geometry at density 1000 (a 0.2 x 0.1 x 0.05 m box: 1 kg)."""
    body = ("<mujoco><option gravity='0 0 0'/><worldbody><body>"
            "<inertial pos='0 0 0' mass='2' diaginertia='0.05 0.04 0.02'/>\n<joint axis='0 0 1' armature='0.01' {}/>"
            "</body></worldbody></mujoco>")
    paths = []
    for name, attrs in (("sd", "springdamper='0.1 0.5'"), ("kb", "stiffness='12' damping='0.6'"),
                        ("bad", "springdamper='0.1 -1'")):
        paths.append(tmp_path / f"{name}.xml")
        paths[-1].write_text(body.format(attrs))
    with pytest.raises(grit.Error, match=r"bad.xml:2: <joint>.*springdamper"):
        grit.load(str(paths[2]))
    runs = []
    for p in paths[:2]:
        m = grit.load(str(p))
        q, v = grit.rollout(m, np.array([[0.3]]), np.array([[0.0]]), np.zeros((1, 200, 0)))
        runs.append(q[0, :, 0])
    assert runs[0][-1] < 0.1 * 0.3  # it springs back and decays
    np.testing.assert_allclose(runs[0], runs[1], rtol=0, atol=1e-12)
    u = tmp_path / "box.urdf"
    u.write_text('<robot name="r"><link name="a"/><link name="b"><collision><geometry><box size="0.2 0.1 0.05"/>'
                 '</geometry></collision></link><joint name="j" type="continuous"><parent link="a"/>'
                 '<child link="b"/></joint></robot>')
    assert grit.load(str(u)).body_masses[1] == pytest.approx(1.0, rel=1e-15)
