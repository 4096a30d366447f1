"""The wheel `pip install .` builds holds every module of the source tree, under ``btlab/``;
installed by ``pip install .`` and by ``pip install -e .``, btlab imports and runs.

A package missing from the distribution (a new subpackage setup.py does not
find) would break the README's quick start on a fresh machine; a file outside
``btlab/`` would install a second top-level name. Each install goes into a
fresh venv whose only btlab is the one installed (its dependencies are this
Python's, linked), and is run from the checkout's root and from elsewhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel ``pip install .`` builds from this checkout."""
    folder = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
         "-w", str(folder), str(ROOT)],
        capture_output=True, text=True, timeout=300, check=False)
    assert build.returncode == 0, build.stderr
    return next(folder.glob("btlab-*.whl"))


def test_wheel_holds_every_module(wheel):
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


# ------------------------------------------------------------------ installed, two ways

#: A small config: two 5 x 5 knight's tours (one solved, one censored at 2,000 placements).
SMALL = """\
name: installed
problem: knights_tour
fixed: {board: [5, 5], strategy: recursive, mode: first, heuristic: none}
matrix:
  start: [[0, 0], [2, 2]]
budget: {nodes: 2000}
"""


def _dependencies(folder: Path) -> Path:
    """A folder of links to this Python's installed packages, btlab's own left out (a .pth
    line puts it on a fresh venv's path: the dependencies without a second btlab)."""
    import sysconfig

    folder.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        name = entry.name.lower()
        if not (name.startswith(("btlab", "__editable__", "_btlab")) or name.endswith(".pth")
                or name == "__pycache__"):
            (folder / entry.name).symlink_to(entry)
    return folder


#: ``pip install .`` (what CI installs) in the default run; ``pip install -e .`` with -m slow
#: (each install and its runs take about 25 s).
INSTALLS = [pytest.param("wheel", id="wheel"),
            pytest.param("editable", id="editable", marks=pytest.mark.slow)]


@pytest.fixture(scope="module", params=INSTALLS)
def installed(request, tmp_path_factory) -> tuple[str, Path]:
    """A fresh venv (no pip of its own) with btlab installed from this checkout by
    ``pip install .`` (the wheel it builds) or ``pip install -e .``; the dependencies are
    this Python's."""
    kind = request.param
    source = str(ROOT) if kind == "editable" else str(request.getfixturevalue("wheel"))
    base = tmp_path_factory.mktemp(f"install-{kind}")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"], text=True,
                             capture_output=True, check=True, timeout=60).stdout.strip()
    Path(purelib, "_dependencies.pth").write_text(f"{_dependencies(base / 'deps')}\n")
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
               "--no-deps", *(["-e"] if kind == "editable" else []), source]
    done = subprocess.run(install, capture_output=True, text=True, timeout=300,
                          env=_clean_env(), check=False)
    assert done.returncode == 0, done.stderr
    return kind, venv


def _clean_env() -> dict[str, str]:
    """The environment without PYTHONPATH (nothing but the venv decides what imports)."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RAY_ADDRESS")} | {
        "RAY_ADDRESS": ""}


@pytest.mark.parametrize("where", ["checkout-root", "elsewhere"])
def test_installed_btlab_imports_and_runs_serial(installed, where, tmp_path):
    kind, venv = installed
    cwd = ROOT if where == "checkout-root" else tmp_path
    config = tmp_path / "installed.yaml"
    config.write_text(SMALL)
    code = ("import btlab, btlab.experiments, btlab.testing, sys; print(btlab.__file__); "
            "print(btlab.experiments.__file__); print('runner' in sys.modules, "
            "'experiments' in sys.modules)")
    out = subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=cwd, text=True,
                         capture_output=True, env=_clean_env(), timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    face, searches, tops = out.stdout.splitlines()
    if kind == "editable":   # the checkout's own folders, under the one name
        assert (Path(face), Path(searches)) == (ROOT / "runner" / "__init__.py",
                                                ROOT / "experiments" / "__init__.py")
    else:                    # the copy in the venv's site-packages
        assert Path(face).parent.name == "btlab" and Path(face).is_relative_to(venv)
        assert Path(searches).is_relative_to(venv) and Path(searches).parent.name == "experiments"
    assert tops == "False False"
    run = subprocess.run([str(venv / "bin" / "btlab"), "run", str(config), "--backend",
                          "serial", "--out", str(tmp_path / "out"), "--quiet"], cwd=cwd,
                         text=True, capture_output=True, env=_clean_env(), timeout=300,
                         check=False)
    assert run.returncode == 0, run.stderr
    assert f"2 trials, 0 already in {tmp_path / 'out'}, 2 to run (serial backend" in run.stdout
    df = pd.read_parquet(tmp_path / "out").sort_values("start_row")
    assert df["status"].tolist() == ["solved", "node_limit"]
    assert df["nodes"].tolist() == [288, 2000]


@pytest.mark.slow   # 25 s: the child starts a Ray of its own
def test_installed_btlab_runs_on_ray_from_elsewhere(installed, tmp_path):
    kind, venv = installed
    (tmp_path / "installed.yaml").write_text(SMALL)
    run = subprocess.run([str(venv / "bin" / "btlab"), "run", "installed.yaml", "--quiet"],
                         cwd=tmp_path, text=True, capture_output=True, env=_clean_env(),
                         timeout=600, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "2 trials, 0 already in results/installed, 2 to run (ray backend" in run.stdout
    df = pd.read_parquet(tmp_path / "results" / "installed").sort_values("start_row")
    assert df["node_id"].notna().all()
    assert df["nodes"].tolist() == [288, 2000]


def test_a_stale_build_folder_never_reaches_the_wheel(tmp_path):
    """A clone built before (btlab 0.1's ``build/lib/runner``, a module since removed from
    ``build/lib/btlab``): the wheel holds this tree's modules only, under ``btlab/``."""
    import shutil

    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "results", "__pycache__", "*.egg-info", ".mypy_cache"))
    for stale in ("build/lib/runner/spec.py", "build/lib/experiments/core.py",
                  "build/lib/btlab/renamed.py"):
        (src / stale).parent.mkdir(parents=True, exist_ok=True)
        (src / stale).write_text("STALE = True\n")
    out = tmp_path / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
         "-w", str(out), str(src)], capture_output=True, text=True, timeout=300, check=False)
    assert build.returncode == 0, build.stderr
    names = zipfile.ZipFile(next(out.glob("btlab-*.whl"))).namelist()
    assert {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")} == {
        "btlab"}
    assert "btlab/renamed.py" not in names and "btlab/errors.py" in names


def test_the_code_shipped_to_cluster_workers_is_one_package_btlab(tmp_path):
    """From a checkout (runner/ and experiments/ side by side), Ray's ``py_modules`` gets one
    folder named ``btlab`` laid out as the wheel's, ``experiments`` inside, no bytecode."""
    from btlab.execution.ray_backend import _code_runtime_env, _package_copy

    copy = _package_copy(ROOT / "runner", ROOT / "experiments")
    assert copy.name == "btlab"
    assert (copy / "errors.py").is_file() and (copy / "store" / "schema.py").is_file()
    assert (copy / "experiments" / "compiled" / "knights" / "kernel.py").is_file()
    assert not list(copy.rglob("__pycache__"))
    shipped = {p.relative_to(copy).as_posix() for p in copy.rglob("*.py")}
    source = {p.relative_to(ROOT / "runner").as_posix() for p in (ROOT / "runner").rglob("*.py")
              if "__pycache__" not in p.parts}
    source |= {"experiments/" + p.relative_to(ROOT / "experiments").as_posix()
               for p in (ROOT / "experiments").rglob("*.py") if "__pycache__" not in p.parts}
    assert shipped == source
    (folder,) = _code_runtime_env()["py_modules"]
    assert Path(folder).name == "btlab" and (Path(folder) / "experiments").is_dir()
