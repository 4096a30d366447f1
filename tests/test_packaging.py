"""The wheel `pip install .` builds holds every module of the source tree.

The tests import btlab from the source tree, so a package missing from the
distribution (a new subpackage not listed in pyproject.toml) would pass them
all and break the README's quick start on a fresh machine.
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
    inside = {n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".py")}
    source = {str(p.relative_to(ROOT)) for pkg in ("experiments", "runner")
              for p in (ROOT / pkg).rglob("*.py") if "__pycache__" not in p.parts}
    assert "runner/problems/knights_tour/views.py" in source
    assert source - inside == set()
