"""Results folders holding what plain readers choke on, and results locations that cannot be opened.

* pandas and pyarrow given a folder read every visible file in it (Polars refuses
  mixed extensions): a ``notes.txt``, a file of any name in a subfolder, is refused
  by ``run`` (``--fresh`` too), ``show``, ``report`` and ``compare`` with exit 2,
  naming the file and the command that moves it aside; moved aside, the folder
  reads again, in btlab and in pandas.
* A URI that :mod:`pyarrow.fs` cannot open (``file://`` with a relative path, an
  unknown scheme) is exit 2 and one message, never a traceback.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.cli import run_main

from btlab import analysis
from btlab.errors import ResultsError
from btlab.store.folder import part_files

SWEEP = """\
    name: s
    problem: knights_tour
    fixed: {board: 5, strategy: iterative, heuristic: none}
    matrix: {start: [[0, 0], [0, 1], [0, 2]]}
    budget: {nodes: 500}
"""



@pytest.fixture
def folder(tmp_path: Path) -> tuple[Path, Path]:
    cfg = tmp_path / "s.yaml"
    cfg.write_text(textwrap.dedent(SWEEP))
    out = tmp_path / "a"
    assert run_main("run", cfg, "--out", out, "--backend", "serial", "--quiet") == 0
    return cfg, out


@pytest.mark.parametrize("name", ["notes.txt", "sub/README.md", "part-0.parquet.bak"])
def test_a_file_that_is_not_parquet_in_a_folder_is_refused_by_name(folder, tmp_path, capsys,
                                                                    name):
    cfg, out = folder
    stray = out / name
    stray.parent.mkdir(exist_ok=True)
    stray.write_text("written by hand\n")
    with pytest.raises(pa.ArrowInvalid):  # what btlab protects readers from
        pd.read_parquet(out)
    capsys.readouterr()
    aside = out.parent / f".{out.name}.aside"  # hidden: readers of the parent skip it
    for args in (["run", cfg, "--out", out, "--backend", "serial", "--quiet"],
                 ["run", cfg, "--out", out, "--backend", "serial", "--quiet", "--fresh"],
                 ["show", out], ["report", out, "-o", tmp_path / "r.html"],
                 ["compare", out, out]):
        assert run_main(*args) == 2, args
        err = capsys.readouterr().err
        assert f"{stray}: not a part file, and not Parquet" in err, (args, err)
        assert f"mkdir -p {aside} && mv {stray} {aside}/" in err, err
        assert "Traceback" not in err
    assert not (tmp_path / "r.html").exists()
    assert len(part_files(out)) == 2  # --fresh deleted nothing: the stray file is listed
    aside.mkdir()
    shutil.move(stray, aside)
    if stray.parent != out:
        stray.parent.rmdir()
    assert len(pd.read_parquet(out)) == 3
    assert run_main("show", out) == 0
    assert "3 trials of s" in capsys.readouterr().out


@pytest.mark.parametrize("uri, reason", [
    ("file://results/s", "Unsupported hostname"),
    ("file://", "cannot be relative"),
    ("nosuchscheme://bucket/x", "Unrecognized filesystem type"),
])
def test_a_uri_that_cannot_be_opened_is_one_message(folder, tmp_path, capsys, uri, reason):
    cfg, out = folder
    capsys.readouterr()
    for args in (["run", cfg, "--out", uri, "--backend", "serial", "--quiet"], ["show", uri],
                 ["report", uri, "-o", tmp_path / "r.html"], ["compare", out, uri]):
        assert run_main(*args) == 2, args
        err = capsys.readouterr().err
        assert err.startswith(f"btlab: {uri}: not a results location btlab can open"), err
        # a relative path after file:// gets its own absolute form; others, the forms
        relative = uri.startswith("file://") and uri != "file://"
        assert reason in err, err
        assert (f"file://{Path('results/s').absolute()}, or give the path itself, results/s"
                if relative else "file:///abs/path/x") in err, err
    assert not (tmp_path / "r.html").exists()


def test_a_part_of_another_schema_version_is_the_one_named(folder, capsys):
    """One part of each version: the odd one out is the part not in this btlab's version,
    whichever was written last."""
    _, out = folder
    (first,) = part_files(out)
    second = first.with_name(first.name.replace(".parquet", "z.parquet"))
    second.write_bytes(first.read_bytes())
    for victim in (first, second):
        table = pq.read_table(victim)
        old = table.schema.metadata
        table = table.replace_schema_metadata({**old, b"btlab.schema_version": b"0"})
        pq.write_table(table, victim)
        capsys.readouterr()
        assert run_main("show", out) == 2
        err = capsys.readouterr().err
        assert "which the folder holds" in err and "schema version 1 or 2), which" in err, err
        assert f"    {victim}: config 's' (knights_tour, schema version 0)" in err, err
        pq.write_table(table.replace_schema_metadata(old), victim)


def test_a_part_of_a_newer_schema_version_is_refused_by_readers_and_writers(folder, capsys):
    """Schema version 3 (a newer btlab): show, analysis.load and a resumed run refuse the
    folder, naming the part, its version and the upgrade; the part is left unchanged."""
    cfg, out = folder
    (part,) = part_files(out)
    table = pq.read_table(part)
    table = table.replace_schema_metadata({**table.schema.metadata,
                                           b"btlab.schema_version": b"3"})
    pq.write_table(table, part)
    before = part.read_bytes()
    capsys.readouterr()
    for args in (["show", out], ["run", cfg, "--out", out, "--backend", "serial", "--quiet"]):
        assert run_main(*args) == 2, args
        err = capsys.readouterr().err
        assert err.startswith(f"btlab: {part}: written by a newer btlab (schema version 3); "
                              "this btlab reads schema versions 1, 2 (1 of the 1 part(s) of "), err
        assert "fix: upgrade btlab" in err, err
    with pytest.raises(ResultsError, match="written by a newer btlab"):
        analysis.load(out)
    assert part.read_bytes() == before


def test_a_run_into_a_folder_inside_a_results_folder_is_refused(folder, tmp_path, capsys):
    """Readers of the outer folder would read the inner one's rows as foreign rows."""
    cfg, out = folder
    capsys.readouterr()
    inner = out / "more" / "b"
    assert run_main("run", cfg, "--out", inner, "--backend", "serial", "--quiet") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"btlab: {inner}: is inside the results folder {out} (it holds "
                          f"{part_files(out)[0].name})"), err
    assert f"fix: write elsewhere with --out, e.g. {tmp_path / 'a-b'}" in err
    assert sorted(p.name for p in out.iterdir()) == [part_files(out)[0].name]
    assert run_main("show", out) == 0
    # below a hidden folder, which plain readers skip, it is allowed
    hidden = out / ".runs" / "b"
    assert run_main("run", cfg, "--out", hidden, "--backend", "serial", "--quiet") == 0
    assert len(pd.read_parquet(out)) == 3 and len(pd.read_parquet(hidden)) == 3
