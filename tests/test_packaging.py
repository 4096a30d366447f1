"""The wheel `pip install .` builds holds every module of the source tree, under ``btlab/``.

A package missing from the distribution (a new subpackage setup.py does not
find) would break the README's quick start on a fresh machine; a file outside
``btlab/`` would install a second top-level name.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_holds_every_module(tmp_path):
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
         "-w", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, timeout=300, check=False)
    assert build.returncode == 0, build.stderr
    wheel = next(tmp_path.glob("btlab-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    inside = {n for n in names if n.endswith(".py")}
    # runner/ installs as btlab/, experiments/ as btlab/experiments/
    where = {"runner": "btlab", "experiments": "btlab/experiments"}
    source = {f"{where[pkg]}/{p.relative_to(ROOT / pkg).as_posix()}"
              for pkg in ("experiments", "runner")
              for p in (ROOT / pkg).rglob("*.py") if "__pycache__" not in p.parts}
    assert "btlab/problems/knights_tour/views.py" in source
    assert "btlab/experiments/compiled/knights/kernel.py" in source
    assert source - inside == set()
    assert "btlab/_build_info.py" in inside and "btlab/py.typed" in names
    # one import name: nothing outside btlab/ but the dist-info
    assert {n.split("/")[0] for n in names} == {"btlab", wheel.name.split("-py3")[0] + ".dist-info"}
