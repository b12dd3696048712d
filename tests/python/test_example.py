# SPDX-License-Identifier: Apache-2.0
"""docs/python.md's complete example: the file examples/python/quickstart.py is in the doc verbatim, and
it runs (load, simulate, Jacobians, an LQR gain, a batch of rollouts)."""
import os
import re
import subprocess
import sys

from conftest import SOURCE

EXAMPLE = os.path.join(SOURCE, "examples", "python", "quickstart.py")
DOC = os.path.join(SOURCE, "docs", "python.md")


def test_the_doc_holds_the_example_verbatim():
    code = open(EXAMPLE).read()
    doc = open(DOC).read()
    blocks = re.findall(r"```python\n(.*?)```", doc, re.S)
    assert code in blocks


def test_the_example_runs():
    p = subprocess.run([sys.executable, EXAMPLE], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "LQR: Riccati converged" in out
    err = float(re.search(r"max joint error (\S+) rad", out).group(1))
    assert err < 1e-6  # the closed loop brought 0.05 rad back to the equilibrium
    rho = float(re.search(r"spectral radius (\S+)", out).group(1))
    assert rho < 1
    assert out.count("rollout of 16x50 steps") == 2
