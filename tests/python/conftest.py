# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the Python package's tests: where the grit CLI and the example models are (ctest
sets GRIT_CLI and GRIT_SOURCE_DIR; the defaults fit a build in build/)."""
import json
import os
import subprocess

import numpy as np
import pytest

SOURCE = os.environ.get("GRIT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("GRIT_CLI", os.path.join(SOURCE, "build", "grit"))


def model_path(name):
    return os.path.join(SOURCE, "examples", "models", name)


def run_cli(*args):
    """Runs the grit CLI; returns (exit status, stdout, stderr)."""
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def cli_sim_csv(tmp_path, model, steps, *args):
    """The trajectory `grit sim --csv` writes: times (T+1,), qpos (T+1, nq), qvel (T+1, nv)."""
    csv = tmp_path / "traj.csv"
    rc, out, err = run_cli("sim", model, "--steps", str(steps), "--csv", str(csv), "--quiet", *args)
    assert rc == 0, err
    header = csv.read_text().splitlines()[0].split(",")
    rows = np.loadtxt(csv, delimiter=",", skiprows=1, ndmin=2)
    nq = sum(1 for h in header if h.startswith("q"))
    return rows[:, 0], rows[:, 1:1 + nq], rows[:, 1 + nq:]


def cli_deriv(model, *args):
    rc, out, err = run_cli("deriv", model, "--json", "--quiet", *args)
    assert rc == 0, err
    j = json.loads(out)
    nx = 2 * j["nv"]
    return np.array(j["A"], dtype=float).reshape(nx, nx), np.array(j["B"], dtype=float).reshape(nx, j["nu"])


@pytest.fixture
def models():
    return model_path
