"""A broken or unwritable kernel cache is a warning and a recompile, never a failed trial.

Each case is a real ``btlab run --backend serial`` with a fresh ``BTLAB_CACHE_DIR``:
the cache's files overwritten with random bytes, truncated to 0 bytes, or one byte
of a kernel's machine code flipped (caught by the digest every cache file carries,
:func:`btlab.experiments.compiled._cache.seal`); and a cache folder where every save
fails as a full disk does (test hook ``enospc:kernel-cache``). Every trial's row is
right, the run exits 0, and stderr carries one ``KernelCacheWarning``; a damaged cache
is rewritten, so the run after it loads the kernels without a warning.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from helpers.cli import write

pytest.importorskip("numba")

from btlab.experiments.compiled import _cache  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

CONFIG = """\
    name: cached
    problem: knights_tour
    fixed: {board: [5, 5], strategy: iterative, mode: count, engine: compiled}
    matrix: {start: [[0, 0], [2, 2]]}
"""
#: Open tours of 5 x 5 from a corner and from the centre.
TOURS = {(0, 0): 304, (2, 2): 64}


def run(tmp_path: Path, cache: Path, out: str, **env: str) -> subprocess.CompletedProcess:
    cfg = tmp_path / "c.yaml"
    if not cfg.exists():
        write(cfg, CONFIG)
    environ = {key: value for key, value in os.environ.items()
               if key not in ("NUMBA_CACHE_DIR", "BTLAB_TEST_FAULT")}
    environ.update(BTLAB_CACHE_DIR=str(cache), **env)
    proc = subprocess.run([sys.executable, "-m", "btlab", "run", cfg, "--out", tmp_path / out,
                           "--backend", "serial", "--quiet"], cwd=ROOT, env=environ,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = pd.read_parquet(tmp_path / out)
    assert len(rows) == 2
    assert rows["error"].isna().all(), rows["error"].tolist()
    assert (rows["status"] == "exhausted").all()
    for _, row in rows.iterrows():
        assert row["solutions"] == TOURS[(row["start_row"], row["start_col"])]
    return proc


def warnings_in(proc: subprocess.CompletedProcess) -> int:
    return proc.stderr.count("KernelCacheWarning")


def cache_files(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*") if p.suffix in (".nbi", ".nbc"))


@pytest.mark.parametrize("damage", ["random", pytest.param("empty", marks=pytest.mark.slow),
                                    pytest.param("flipped", marks=pytest.mark.slow)])
def test_a_damaged_cache_is_one_warning_and_a_recompile(tmp_path, damage):
    cache = tmp_path / "cache"
    first = run(tmp_path, cache, "a")
    assert warnings_in(first) == 0
    files = cache_files(cache)
    assert files
    for i, path in enumerate(files):
        if damage == "random":
            path.write_bytes(os.urandom(200 + i))
        elif damage == "empty":
            path.write_bytes(b"")
        elif path.suffix == ".nbc":  # one byte of machine code: unpickles, runs wrong
            data = bytearray(path.read_bytes())
            data[len(data) * 2 // 3] ^= 0x5A
            path.write_bytes(bytes(data))
    damaged = run(tmp_path, cache, "b")
    assert warnings_in(damaged) == 1, damaged.stderr
    assert "is damaged" in damaged.stderr and "fix: nothing is needed" in damaged.stderr
    repaired = run(tmp_path, cache, "c")  # rewritten: loaded, no warning, nothing compiled
    assert warnings_in(repaired) == 0, repaired.stderr


def test_a_cache_that_cannot_be_saved_is_one_warning_and_kernels_in_memory(tmp_path):
    cache = tmp_path / "cache"
    full = run(tmp_path, cache, "a", BTLAB_TEST_FAULT=_cache.TEST_FAULT)
    assert warnings_in(full) == 1, full.stderr
    assert "No space left on device" in full.stderr
    assert "fix: free space there, or set BTLAB_CACHE_DIR" in full.stderr
    assert cache_files(cache) == []
    assert not [p for p in cache.rglob("*.tmp.*")]  # no half-written temporary left
    later = run(tmp_path, cache, "b")  # the disk has room again: saved, no warning
    assert warnings_in(later) == 0, later.stderr
    assert cache_files(cache)


def test_seal_and_unseal():
    body = b"numba's pickled bytes"
    assert _cache.unseal(_cache.seal(body), "x.nbc") == body
    for bad in (b"", b"junk", _cache.seal(body)[:-1], _cache.seal(body) + b"!"):
        with pytest.raises(_cache.DamagedCacheFile, match="x.nbc"):
            _cache.unseal(bad, "/a/x.nbc")


def test_every_kernel_of_the_package_has_a_checked_cache():
    import importlib
    import pkgutil

    import btlab.experiments.compiled as package

    modules = [package] + [importlib.import_module(info.name) for info in
                           pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
    assert _cache.unchecked_kernels(modules) == []
    kernel = package.knights_kernel.knights_run
    assert isinstance(kernel._cache, _cache._checked_cache_class())


def test_the_warning_is_told_once_and_never_raises(monkeypatch, capsys):
    import warnings

    monkeypatch.setattr(_cache, "_TOLD", set())
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _cache._tell("load", EOFError("Ran out of input"))
        _cache._tell("load", EOFError("again"))
    assert [type(w.message) for w in seen] == [_cache.KernelCacheWarning]
    assert "EOFError: Ran out of input" in str(seen[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # python -W error: still a warning, on stderr
        _cache._tell("save", OSError(28, "No space left on device"))
    assert "KernelCacheWarning: btlab: cannot save" in capsys.readouterr().err
