"""Which code made a row: ``btlab --version``, and ``git_commit`` / ``git_dirty`` also after a
non-editable install (the build hook in setup.py writes ``runner/_build_info.py``).

The fast tests build from a temporary git repository holding a copy of this
source tree (``setup.py build_py`` and ``sdist``); the slow one does the
README's ``pip install .`` into a temporary venv and checks a row.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from btlab.cli.main import main
from btlab.store import provenance
from btlab.store.provenance import build_info_source, git_state, write_build_info

ROOT = Path(__file__).resolve().parent.parent
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
TINY = textwrap.dedent("""\
    name: tiny
    problem: knights_tour
    fixed: {board: [5, 5], heuristic: warnsdorff}
    matrix: {start: [[0, 0], [2, 2]]}
""")

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    out = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                         env=env, check=True)
    return out.stdout.strip()


def source_copy(dest: Path) -> str:
    """This source tree as it is now (committed or not), as a new git repo; returns its HEAD."""
    listed = git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard").splitlines()
    for name in listed:
        if name.split("/")[0] in ("runner", "experiments", "setup.py", "pyproject.toml",
                                  "README.md", ".gitignore") and (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "copy")
    return git(dest, "rev-parse", "HEAD")


def clean_env() -> dict:
    """No PYTHONPATH: the code under test is the one built, not this tree."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RAY_ADDRESS")}


# --------------------------------------------------------------------------- --version


def test_version_prints_the_version_and_the_commit(capsys):
    provenance.code_state.cache_clear()  # asked once per process: ask now
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    commit, dirty = git_state(ROOT)
    if commit is None:  # not run from a clone
        assert out == f"btlab {VERSION} (git commit unknown)\n"
    else:
        assert out == f"btlab {VERSION} (git {commit}{', uncommitted changes' * dirty})\n"


def test_version_exits_0_as_a_command():
    proc = subprocess.run([sys.executable, "-m", "btlab", "--version"], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"btlab {VERSION} (git ")


# --------------------------------------------------------------------------- the mechanism


def test_git_state_of_a_repository(tmp_path):
    assert git_state(tmp_path) == (None, None)  # not a clone
    (tmp_path / "a.txt").write_text("one\n")
    git(tmp_path, "init", "-q")
    assert git_state(tmp_path) == (None, None)  # no commit yet
    git(tmp_path, "add", "a.txt")
    git(tmp_path, "commit", "-q", "-m", "first")
    head = git(tmp_path, "rev-parse", "HEAD")
    assert git_state(tmp_path) == (head, False)
    (tmp_path / "notes.txt").write_text("untracked\n")
    assert git_state(tmp_path) == (head, False)  # untracked files do not count
    (tmp_path / "a.txt").write_text("two\n")
    assert git_state(tmp_path) == (head, True)
    git(tmp_path, "commit", "-q", "-am", "second")
    assert git_state(tmp_path) == (git(tmp_path, "rev-parse", "HEAD"), False) != (head, False)


def test_write_build_info_records_the_repository_state(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    head = source_copy(repo)
    out = write_build_info(tmp_path / "build" / "runner", repo)
    assert out == tmp_path / "build" / "runner" / "_build_info.py"
    assert out.read_text() == build_info_source(head, False)
    namespace: dict = {}
    exec(out.read_text(), namespace)
    assert (namespace["COMMIT"], namespace["DIRTY"]) == (head, False)
    assert write_build_info(tmp_path / "elsewhere", tmp_path / "build") is None  # no clone
    assert not (tmp_path / "elsewhere").exists()


def test_build_py_and_sdist_record_the_commit_and_the_installed_code_reads_it(tmp_path):
    pytest.importorskip("setuptools")
    src = tmp_path / "src"
    src.mkdir()
    head = source_copy(src)

    def build(where: Path, lib: Path) -> dict:
        subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)],
                       cwd=where, env=clean_env(), check=True, capture_output=True, timeout=120)
        namespace: dict = {}
        exec((lib / "btlab" / "_build_info.py").read_text(), namespace)
        return {"commit": namespace["COMMIT"], "dirty": namespace["DIRTY"]}

    lib = tmp_path / "lib"
    assert build(src, lib) == {"commit": head, "dirty": False}
    assert not (src / "runner" / "_build_info.py").exists()  # never written into the source
    assert (lib / "btlab" / "problems" / "knights_tour" / "__init__.py").is_file()
    assert (lib / "btlab" / "experiments" / "knights" / "solve.py").is_file()

    # the built code, run with no .git next to it, reads the record: rows and --version
    (tmp_path / "tiny.yaml").write_text(TINY)
    env = {**clean_env(), "PYTHONPATH": str(lib)}
    run = subprocess.run([sys.executable, "-m", "btlab", "run", "tiny.yaml", "--backend",
                          "serial", "--out", "out", "--quiet"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    df = pd.read_parquet(tmp_path / "out")
    assert list(df["git_commit"]) == [head, head]
    assert list(df["git_dirty"]) == [False, False]
    version = subprocess.run([sys.executable, "-m", "btlab", "--version"], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=60)
    # a bare build folder has no pyproject.toml: the version is the installed distribution's
    # (this interpreter's, if btlab is installed in it), else unknown
    probe = ("from importlib import metadata\ntry:\n    print(metadata.version('btlab'))\n"
             "except metadata.PackageNotFoundError:\n    print('unknown')\n")
    installed = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=60).stdout.strip()
    assert version.stdout == f"btlab {installed} (git {head})\n"

    # a tracked file changed before the build: dirty; and an sdist carries the record,
    # so a build from the unpacked sdist (no .git) keeps it
    with open(src / "README.md", "a") as fh:
        fh.write("\nan uncommitted line\n")
    subprocess.run([sys.executable, "setup.py", "-q", "sdist", "--dist-dir", str(tmp_path / "d")],
                   cwd=src, env=clean_env(), check=True, capture_output=True, timeout=120)
    (archive,) = (tmp_path / "d").glob("btlab-*.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    assert not (unpacked / ".git").exists()
    assert build(unpacked, tmp_path / "lib3") == {"commit": head, "dirty": True}


def test_a_live_clone_wins_over_a_build_record(monkeypatch):
    """Run from a clone (an editable install), the clone itself is asked. The test runs
    btlab as installed (CI: a wheel in a venv), so the code's folder is made the clone's."""
    record = ("0123456789abcdef0123456789abcdef01234567", True)
    monkeypatch.setattr(provenance, "_build_info", lambda: record)
    monkeypatch.setattr(provenance, "SOURCE_ROOT", ROOT)
    provenance.code_state.cache_clear()
    try:
        live = git_state(ROOT)
        assert provenance.code_state() == (live if live[0] is not None else record)
        provenance.code_state.cache_clear()
        monkeypatch.setattr(provenance, "git_state", lambda root: (None, None))
        assert provenance.code_state() == record
    finally:
        provenance.code_state.cache_clear()


def test_a_malformed_record_is_unknown(monkeypatch, tmp_path):
    pkg = tmp_path / "fakepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "_build_info.py").write_text("COMMIT = 'not a commit'\nDIRTY = 'maybe'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(provenance, "__package__", "fakepkg")
    assert provenance._build_info() == (None, None)
    (pkg / "_build_info.py").write_text(build_info_source("ab" * 20, None))
    sys.modules.pop("fakepkg._build_info", None)
    assert provenance._build_info() == ("ab" * 20, None)
    sys.modules.pop("fakepkg._build_info", None)
    sys.modules.pop("fakepkg", None)


# --------------------------------------------------------------------------- end to end


@pytest.mark.slow
def test_pip_install_from_a_clone_records_its_head(tmp_path):
    """The README's ``pip install .`` from a clone, into a new venv: rows carry HEAD."""
    clone = tmp_path / "clone"
    clone.mkdir()
    head = source_copy(clone)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    # the dependencies come from this environment (quick, offline); btlab itself is built
    purelib = subprocess.run([str(venv / "bin" / "python"), "-c",
                              "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    import sysconfig

    Path(purelib, "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                    "install", "-q", "--no-deps", "."], cwd=clone, env=clean_env(), check=True,
                   timeout=600)
    assert not (clone / "runner" / "_build_info.py").exists()
    (tmp_path / "tiny.yaml").write_text(TINY)
    btlab = str(venv / "bin" / "btlab")
    run = subprocess.run([btlab, "run", "tiny.yaml", "--backend", "serial", "--out", "out",
                          "--quiet"], cwd=tmp_path, env=clean_env(), capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    df = pd.read_parquet(tmp_path / "out")
    assert list(df["git_commit"]) == [head, head]
    assert list(df["git_dirty"]) == [False, False]
    version = subprocess.run([btlab, "--version"], cwd=tmp_path, env=clean_env(),
                             capture_output=True, text=True, timeout=60)
    assert (version.returncode, version.stdout) == (0, f"btlab {VERSION} (git {head})\n")


def test_rows_run_from_this_tree_carry_its_state_and_compare_ignores_it(tmp_path, capsys):
    import pyarrow.parquet as pq

    from btlab.analysis.folder_diff import compare_folders
    from btlab.store.folder import part_files
    from btlab.views.report.page import write_report

    config = tmp_path / "tiny.yaml"
    config.write_text(TINY)
    provenance.code_state.cache_clear()  # asked once per process: ask now
    for out in ("a", "b"):
        assert main(["run", str(config), "--backend", "serial", "--out", str(tmp_path / out),
                     "--quiet"]) == 0
    commit, dirty = git_state(ROOT)
    df = pd.read_parquet(tmp_path / "a")
    assert list(df["git_commit"]) == [commit, commit]
    assert list(df["git_dirty"]) == [dirty, dirty]
    # the same trials from another state of the tree compare identical
    (part,) = part_files(tmp_path / "b")
    table = pq.read_table(part)
    flipped = table.set_column(table.schema.get_field_index("git_dirty"), "git_dirty",
                               pa_bools([not dirty, not dirty]))
    pq.write_table(flipped.replace_schema_metadata(table.schema.metadata), part)
    assert list(pd.read_parquet(tmp_path / "b")["git_dirty"]) == [not dirty, not dirty]
    assert compare_folders(tmp_path / "a", tmp_path / "b").identical
    html = write_report(tmp_path / "a", tmp_path / "a.html").read_text()
    assert f"<dt>git commit</dt><dd>{commit}</dd>" in html
    assert f"<dt>uncommitted changes</dt><dd>{dirty}</dd>" in html


def pa_bools(values):
    import pyarrow as pa

    return pa.array(values, type=pa.bool_())
