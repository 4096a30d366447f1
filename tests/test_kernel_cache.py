"""The compiled kernels' disk cache is keyed on every source the kernels use.

Numba checks a cached kernel against its own file only; the kernels also inline
the return codes of ``experiments/compiled/_driver.py`` and call kernels of other
files. These tests edit a dependency in a copy of the package and check that the
cache follows (:mod:`btlab.experiments.compiled._cache`).
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from helpers.site import btlab_site

from btlab.errors import OLD_NAMES

ROOT = Path(__file__).resolve().parent.parent
DRIVER_CODES = "PAUSED, SOLVED, EXHAUSTED, NODE_LIMIT, BACKTRACK_LIMIT = 0, 1, 2, 3, 4"
#: The same names, SOLVED and EXHAUSTED swapped: self-consistent (STATUS maps names).
RENUMBERED = "PAUSED, SOLVED, EXHAUSTED, NODE_LIMIT, BACKTRACK_LIMIT = 0, 2, 1, 3, 4"


def copy_package(dest: Path) -> Path:
    """A copy of ``experiments/`` and ``runner/`` under ``dest`` (no cache files), with
    ``dest/site`` the package ``btlab`` made of links into them; returns ``dest``."""
    for part in ("experiments", "runner"):
        shutil.copytree(ROOT / part, dest / part, ignore=shutil.ignore_patterns("__pycache__"))
    btlab_site(dest, dest / "site")
    return dest


def load_cache_module(root: Path):
    """``root/experiments/compiled/_cache.py`` loaded by path (numba not imported)."""
    path = root / "experiments" / "compiled" / "_cache.py"
    spec = importlib.util.spec_from_file_location(f"_cache_{abs(hash(root))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- the key (fast)

def test_the_key_changes_with_every_dependency_and_only_with_them(tmp_path):
    root = copy_package(tmp_path / "code")
    cache = load_cache_module(root)
    sources = cache.kernel_sources()
    names = {p.relative_to(root).as_posix() for p in sources}
    # the package itself and what its kernels inline: return codes, geometry, counters' shapes
    assert {"experiments/compiled/_driver.py", "experiments/compiled/knights/kernel.py",
            "experiments/compiled/queens_kernel.py", "experiments/compiled/estimate_kernel.py",
            "experiments/compiled/__init__.py", "experiments/compiled/_cache.py",
            "experiments/core.py", "experiments/knights/solve.py",
            "experiments/knights/board.py"} <= names
    assert "experiments/queens/solve.py" not in names          # no kernel imports it
    key = cache.cache_key()
    assert key.startswith("kernels-") and len(key) == len("kernels-") + 20
    assert cache.cache_key() == key                       # nothing changed: the same key
    seen = {key}
    for path in sources:
        data = path.read_bytes()
        path.write_bytes(data + b"\n")                    # one byte more
        edited = cache.cache_key()
        assert edited not in seen, path
        seen.add(edited)
        path.write_bytes(data)
        assert cache.cache_key() == key, path
    # a module no kernel imports: the same key
    other = root / "experiments" / "queens" / "solve.py"
    other.write_bytes(other.read_bytes() + b"\n# an edit\n")
    assert cache.cache_key() == key
    # btlab's version is part of the key
    assert cache.cache_key(version="99.0") != cache.cache_key(version="99.1")


def test_the_sources_are_named_by_the_new_layout_and_an_edit_there_is_a_new_key(tmp_path):
    """The key hashes each source under its path in the ``btlab.experiments`` folder (one
    import name): the kernels' geometry lives in ``experiments/knights/board.py``
    (``btlab.experiments.knights.board``; btlab 0.1's ``experiments/knights_geometry.py``)."""
    root = copy_package(tmp_path / "code")
    cache = load_cache_module(root)
    names = sorted(p.relative_to(root).as_posix() for p in cache.kernel_sources())
    modules = [("btlab." + n[:-3].replace("/", ".")).removesuffix(".__init__") for n in names]
    assert all(importlib.util.find_spec(m) is not None for m in modules), modules
    moved = {f"{old.replace('.', '/')}.py" for old, new in OLD_NAMES.items()
             if old.startswith("experiments.") and new != f"btlab.{old}"}
    assert "experiments/knights_geometry.py" in moved and not moved & set(names)
    board = root / "experiments" / "knights" / "board.py"
    assert board in cache.kernel_sources()
    key = cache.cache_key()
    board.write_text(board.read_text() + "\n# an edit of the board geometry\n")
    assert cache.cache_key() != key


def test_the_key_is_the_same_wherever_the_code_is(tmp_path):
    """A clone, an install, the copy a Ray worker unpacks: same bytes, same key."""
    first = load_cache_module(copy_package(tmp_path / "a"))
    second = load_cache_module(copy_package(tmp_path / "deeper" / "b"))
    assert first.cache_key(version="1") == second.cache_key(version="1")
    assert first._PACKAGE_DIR != second._PACKAGE_DIR


def test_a_new_import_in_a_kernel_module_joins_the_key(tmp_path):
    root = copy_package(tmp_path / "code")
    cache = load_cache_module(root)
    queens = root / "experiments" / "queens" / "solve.py"
    assert queens not in cache.kernel_sources()
    kernel = root / "experiments" / "compiled" / "queens_kernel.py"
    kernel.write_text(kernel.read_text() + textwrap.dedent("""
        def _later():
            from ..queens import (
                solve,  # a deferred import, in parentheses
            )
            return solve
        """))
    assert queens in cache.kernel_sources()
    before = cache.cache_key()
    queens.write_bytes(queens.read_bytes() + b"\n")
    assert cache.cache_key() != before


def _ast_imports(path: Path, top: Path) -> set[Path]:
    """The :mod:`experiments` files ``path`` imports, by a full parse (the reference)."""
    package = list(path.relative_to(top).parts[:-1])
    out: set[Path] = set()

    def add(parts: list[str]) -> None:
        base = top.joinpath(*parts)
        for candidate in (base / "__init__.py", base.with_suffix(".py")):
            if candidate.is_file() and (parts or candidate.name == "__init__.py"):
                out.add(candidate)
                return

    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                words = alias.name.split(".")
                if words[0] == top.name:
                    add(words[1:])
        elif isinstance(node, ast.ImportFrom):
            words = node.module.split(".") if node.module else []
            if node.level:
                words = package[:len(package) - (node.level - 1)] + words
            elif words[:1] == [top.name]:
                words = words[1:]
            else:
                continue
            add(words)
            for alias in node.names:
                add(words + [alias.name])
    return out


def test_the_sources_cover_every_module_the_kernels_import():
    """The text scan of :func:`kernel_sources` against a full parse of the same modules."""
    from btlab.experiments.compiled import _cache

    sources = set(_cache.kernel_sources())
    top = _cache._TOP_DIR  # the btlab.experiments that runs: a checkout's or an install's
    assert set((top / "compiled").glob("*.py")) <= sources
    closure: set[Path] = set()
    todo = sorted((top / "compiled").glob("*.py"))
    while todo:
        path = todo.pop()
        if path not in closure:
            closure.add(path)
            todo.extend(_ast_imports(path, top) - closure)
    assert closure <= sources, sorted(map(str, closure - sources))


def test_the_version_is_the_one_btlab_reports():
    from btlab.experiments.compiled import _cache
    from btlab.store.provenance import version

    assert _cache.btlab_version() == version()


def test_an_unusable_root_is_skipped_and_the_folder_is_keyed(tmp_path, monkeypatch):
    pytest.importorskip("numba")
    import numba

    from btlab.experiments.compiled import _cache

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("BTLAB_CACHE_DIR", str(blocker / "cache"))   # cannot be created
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(_cache, "_writable", lambda folder: False)   # no in-tree __pycache__
    monkeypatch.setattr(numba.config, "CACHE_DIR", numba.config.CACHE_DIR)
    folder = _cache.configure()
    assert folder == tmp_path / "xdg" / "btlab" / "numba" / _cache.cache_key()
    assert folder.is_dir() and numba.config.CACHE_DIR == str(folder)

    # no root usable at all: a temporary folder of this process's own, never a shared stale one
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    folder = _cache.configure()
    assert folder.parent == tmp_path / "tmp" and folder.name.startswith("btlab-numba-")
    assert numba.config.CACHE_DIR == str(folder)


def test_the_code_shipped_to_cluster_workers_leaves_the_caches_behind(tmp_path):
    """``py_modules`` ships the one package ``btlab`` to the workers; the driver's
    ``__pycache__`` (bytecode, compiled kernels a copy at another path never reads) stays."""
    packaging = pytest.importorskip("ray._private.runtime_env.packaging")
    from btlab.execution.ray_backend import _code_runtime_env

    root = copy_package(tmp_path / "code") / "experiments"
    (root / "compiled" / "__pycache__" / "kernels-0" / "compiled_0").mkdir(parents=True)
    (root / "compiled" / "__pycache__" / "kernels-0" / "compiled_0" / "k.nbc").write_bytes(b"x")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "core.cpython-311.pyc").write_bytes(b"x")
    env = _code_runtime_env()
    shipped: list[Path] = []
    kwargs = {"include_gitignore": True} if "include_gitignore" in inspect.signature(
        packaging._dir_travel).parameters else {}
    packaging._dir_travel(root, [packaging._get_excludes(root, env["excludes"])],
                          shipped.append, **kwargs)
    names = {p.relative_to(root).as_posix() for p in shipped}
    assert "compiled/_driver.py" in names and "core.py" in names
    assert not [n for n in names if "__pycache__" in n], names


# ---------------------------------------------------------------- an edited dependency (slow)

_PROBE = textwrap.dedent("""\
    import json
    from btlab.experiments.compiled import (CACHE_DIR, knights_kernel, queens_kernel,
                                      solve_knights_compiled, solve_queens_compiled, warm_up)
    ns = warm_up("knights") + warm_up("queens")
    tour = solve_knights_compiled(5, 5, (0, 0))
    count = solve_queens_compiled(8, "count")
    hits = misses = 0
    for f in (knights_kernel.knights_run, knights_kernel.build_geometry, queens_kernel.queens_run):
        hits += sum(f.stats.cache_hits.values())
        misses += sum(f.stats.cache_misses.values())
    print(json.dumps({"tour": tour.status.value, "tour_len": len(tour.solution or ()),
                      "count": count.status.value, "solutions": count.solutions,
                      "warm_ns": ns, "hits": hits, "misses": misses, "dir": str(CACHE_DIR)}))
""")


def _start(root: Path, cache: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env.update(PYTHONPATH=str(root / "site"), BTLAB_CACHE_DIR=str(cache))
    return subprocess.Popen([sys.executable, "-c", _PROBE], cwd=root, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _finish(process: subprocess.Popen) -> dict:
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr
    return json.loads(stdout.strip().splitlines()[-1])


def _probe(root: Path, cache: Path) -> dict:
    return _finish(_start(root, cache))


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.relative_to(folder).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_renumbered_return_codes_with_a_warm_cache_are_compiled_afresh(tmp_path):
    root = copy_package(tmp_path / "code")
    cache = tmp_path / "cache"
    right = {"tour": "solved", "tour_len": 25, "count": "exhausted", "solutions": 92}

    cold = _probe(root, cache)
    assert {k: cold[k] for k in right} == right
    assert cold["misses"] == 3 and cold["hits"] == 0
    assert Path(cold["dir"]).parent == cache

    driver = root / "experiments" / "compiled" / "_driver.py"
    text = driver.read_text()
    assert text.count(DRIVER_CODES) == 1
    driver.write_text(text.replace(DRIVER_CODES, RENUMBERED))

    # the warm cache holds the old codes: not used. Two processes compile at once into
    # the new folder (numba writes each file under a temporary name, then renames it)
    both = [_finish(p) for p in [_start(root, cache), _start(root, cache)]]
    for edited in both:
        assert {k: edited[k] for k in right} == right
        assert edited["misses"] + edited["hits"] == 3
        assert edited["dir"] != cold["dir"] and Path(edited["dir"]).parent == cache
    assert sum(e["misses"] for e in both) >= 3          # each kernel compiled afresh
    edited = both[0]
    assert both[1]["dir"] == edited["dir"]
    assert not list(cache.rglob("*.tmp.*"))            # no temporary left behind

    before = _snapshot(cache)
    again = _probe(root, cache)        # nothing edited since: loaded, not compiled
    assert {k: again[k] for k in right} == right
    assert again["misses"] == 0 and again["hits"] == 3
    assert again["dir"] == edited["dir"]
    assert _snapshot(cache) == before
    print(f"compiled in {edited['warm_ns'] / 1e9:.2f} s after the edit, "
          f"loaded in {again['warm_ns'] / 1e9:.3f} s by the next process")


TOUR = textwrap.dedent("""\
    name: cache-tour
    problem: knights_tour
    fixed: {board: [5, 5], start: [0, 0], strategy: iterative, engine: compiled}
""")
COUNT = textwrap.dedent("""\
    name: cache-count
    problem: n_queens
    fixed: {n: 8, mode: count, strategy: bitmask, engine: compiled}
""")


@pytest.mark.slow
def test_cluster_workers_sharing_a_cache_folder_follow_an_edited_dependency(tmp_path):
    """The copy Ray unpacks on a worker (the node has no btlab on its path), with
    ``BTLAB_CACHE_DIR`` in the node's environment (one folder for every code version the node
    is sent): the driver's edit of _driver.py reaches the worker, whose warm cache of the
    kernels is not used for the edited code."""
    import pandas as pd
    from helpers.ray_cli import ray_cli_cluster, user_env

    root = copy_package(tmp_path / "code")
    cache = tmp_path / "cache"
    (tmp_path / "home").mkdir()
    node = {k: v for k, v in user_env(tmp_path / "home").items()
            if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    node["BTLAB_CACHE_DIR"] = str(cache)
    driver_env = {**node, "PYTHONPATH": str(root / "site")}
    (tmp_path / "tour.yaml").write_text(TOUR)
    (tmp_path / "count.yaml").write_text(COUNT)

    def run(address: str, tag: str) -> tuple[tuple, tuple]:
        rows = []
        for config in ("tour", "count"):
            out = tmp_path / f"{config}-{tag}"
            cmd = [sys.executable, "-m", "btlab", "run", tmp_path / f"{config}.yaml",
                   "--address", address, "--out", out, "--quiet"]
            done = subprocess.run(cmd, env=driver_env, cwd=root, capture_output=True,
                                  text=True, timeout=600)
            assert done.returncode == 0, done.stderr[-3000:]
            row = pd.read_parquet(out).iloc[0]
            rows.append((row["status"], int(row["solutions"])))
        return rows[0], rows[1]

    def unpacked_drivers(temp_dir: Path) -> list[str]:
        return [p.read_text() for p in temp_dir.rglob("experiments/compiled/_driver.py")]

    with ray_cli_cluster() as cluster:
        cluster.start_node(node, head=True)
        assert run(cluster.address, "before") == (("solved", 1), ("exhausted", 92))
        assert [DRIVER_CODES in t for t in unpacked_drivers(cluster.temp_dir)] == [True]
        warm = set(cache.iterdir())
        assert list(cache.rglob("*.nbc"))                       # the worker cached its kernels
        driver = root / "experiments" / "compiled" / "_driver.py"
        driver.write_text(driver.read_text().replace(DRIVER_CODES, RENUMBERED))
        assert run(cluster.address, "after") == (("solved", 1), ("exhausted", 92))
        assert sorted(RENUMBERED in t for t in unpacked_drivers(cluster.temp_dir)) == [False,
                                                                                    True]
        assert len(set(cache.iterdir()) - warm) == 1            # compiled afresh, in its folder
