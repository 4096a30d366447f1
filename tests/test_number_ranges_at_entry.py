"""Every number from a file, an override, an option or a part's metadata is range-checked
where it enters: a clear error and exit 2, never a traceback (issue 26, kind 14)."""

from __future__ import annotations

import glob

import pyarrow.parquet as pq
import pytest

import btlab
from btlab.cli.main import main
from btlab.errors import ConfigError

BASE = """\
name: s
problem: knights_tour
fixed: {board: 5, heuristic: warnsdorff, tie_break: random}
budget: {nodes: 30}
"""
HUGE = "9" * 5000


def write(tmp_path, text: str):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("matrix", [f"1..{HUGE}", f"-{HUGE}..1", f"1..{'0' * 4400}7"],
                         ids=["end", "negative-start", "leading-zeros"])
def test_a_seed_range_end_of_thousands_of_digits(tmp_path, capsys, matrix):
    path = write(tmp_path, BASE + f"matrix: {{seed: {matrix}}}\n")
    assert main(["validate", path]) == 2
    err = capsys.readouterr().err
    assert "error at matrix.seed" in err and "column seed is int64" in err
    assert "digits" in err and "fix:" in err


def test_a_seed_range_end_of_thousands_of_digits_in_an_override(tmp_path, capsys):
    path = write(tmp_path, BASE)
    assert main(["validate", path, f"+matrix.seed=1..{HUGE}"]) == 2
    assert "an end of 5,000 digits" in capsys.readouterr().err


@pytest.mark.parametrize("option, value, found", [
    # ids: the 5,000-digit value is no test name
    ("--batch-size", "99999999999999999999", "found 99,999,999,999,999,999,999"),
    ("--batch-size", HUGE, "found a number of 5,000 digits"),
    ("--batch-size", "1000001", "found 1,000,001"),
    ("--workers", "100000", "found 100,000"),
], ids=["20-digits", "5000-digits", "one-over", "workers"])
def test_option_ranges(tmp_path, capsys, option, value, found):
    path = write(tmp_path, BASE)
    with pytest.raises(SystemExit) as exc:
        main(["run", path, "--out", str(tmp_path / "out"), option, value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "expected a whole number from 1 to" in err and found in err and "fix:" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("key, digits", [("batch_size", 20), ("batch_size", 5000),
                                         ("workers", 6)])
def test_library_option_ranges(tmp_path, key, digits):
    value = 10**digits
    with pytest.raises(ConfigError) as exc:
        btlab.run(write(tmp_path, BASE), backend="serial", out=str(tmp_path / "out"),
                  **{key: value})
    assert f"error at {key}" in str(exc.value) and "a whole number from 1 to" in str(exc.value)


def test_the_largest_batch_size_runs(tmp_path):
    out = tmp_path / "out"
    assert main(["run", write(tmp_path, BASE), "--out", str(out), "--backend", "serial",
                 "--batch-size", "1000000", "--quiet"]) == 0


@pytest.mark.parametrize("key, value, says", [
    (b"btlab.config", b"{not json", "btlab.config is not a JSON object"),
    (b"btlab.config", b"[1, 2]", "btlab.config is not a JSON object (JSON, but not"),
    (b"btlab.overrides", b"\xff\xfe", "btlab.overrides is not UTF-8 text"),
    (b"btlab.config", b'{"n": ' + HUGE.encode() + b"}", "btlab.config is not a JSON object"),
], ids=["not-json", "not-an-object", "not-utf8", "huge-number"])
def test_a_part_whose_metadata_is_not_json(tmp_path, capsys, key, value, says):
    out = tmp_path / "out"
    assert main(["run", write(tmp_path, BASE), "--out", str(out), "--backend", "serial",
                 "--quiet"]) == 0
    part = sorted(glob.glob(str(out / "*.parquet")))[0]
    table = pq.read_table(part)
    pq.write_table(table.replace_schema_metadata({**table.schema.metadata, key: value}), part)
    capsys.readouterr()
    assert main(["show", str(out)]) == 2
    err = capsys.readouterr().err
    assert says in err and "damaged part file" in err
    assert "fix: move it out of the folder" in err and "Traceback" not in err
