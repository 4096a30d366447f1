"""Every echo of user text reaches the terminal escaped (issue 26, kind 15).

An override, a file or folder name, a plug-in's name or error message, a stored value:
whatever btlab prints of them goes through :func:`btlab.errors.shown`, so that ESC, CR,
NUL, DEL, the C1 controls and the bidirectional overrides are printed as ``\\x1b``,
``\\x0d``, ``\\u202e`` -- never raw, where they would colour, clear or reorder the screen.
"""

from __future__ import annotations

import re

import pytest
from helpers.cli import run_main, write

from btlab.errors import ConfigError, shown
from btlab.views.failures import FailureLog
from btlab.views.progress import ShownConsole
from btlab.views.tables import literal

#: Raw control characters (what :func:`shown` escapes) in printed text.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

BASE = """\
    name: shown
    problem: knights_tour
    fixed: {board: [5, 5], start: [0, 0], heuristic: warnsdorff}
    budget: {nodes: 200}
"""


@pytest.mark.parametrize("text, lines, expected", [
    pytest.param("a\x1b[31mred", False, "a\\x1b[31mred", id="esc"),
    pytest.param("x\r\x00\x7f", False, "x\\x0d\\x00\\x7f", id="cr-nul-del"),
    pytest.param("\x9b2J", False, "\\x9b2J", id="c1-csi"),
    pytest.param("abc\u202edef", False, "abc\\u202edef", id="bidi-override"),
    pytest.param("one\ntwo", False, "one\\x0atwo", id="newline-in-one-line"),
    pytest.param("one\ntwo\x1b", True, "one\ntwo\\x1b", id="newline-kept"),
    pytest.param("C:\\x1b [red] é ü 中", False, "C:\\x1b [red] é ü 中", id="printable-unchanged"),
])
def test_shown_escapes_control_characters_only(text, lines, expected):
    assert shown(text, lines=lines) == expected
    assert shown(shown(text, lines=lines), lines=lines) == expected
    assert not RAW.search(shown(text, lines=lines))


def test_the_issue_example_override_is_escaped_in_every_line(tmp_path, capsys):
    cfg = write(tmp_path / "base.yaml", BASE)
    assert run_main("validate", cfg, "+description=\x1b[31mred") == 2
    err = capsys.readouterr().err
    assert not RAW.search(err), repr(err)
    first = err.splitlines()[0]
    assert first == f"btlab: {cfg}, override 1 (+description=\\x1b[31mred): error at description"
    assert "found:    '\\x1b[31mred'" in err
    # the fix works when followed: the value without its control character
    fix = re.search(r"fix: +remove the control characters: write '(.*)'$", err, re.M)
    assert fix and fix[1] == '+description="[31mred"'
    assert run_main("validate", cfg, fix[1]) == 0
    assert "OK -- problem knights_tour, 1 trials" in capsys.readouterr().out


def test_a_config_error_escapes_its_file_key_and_values():
    error = ConfigError("c\x1b]0;x\x07.yaml", 3, 1, ("fixed", "bo\x1bard"), "a number",
                        "'\x1b[2J'", "write \x1b 6", where="")
    text = str(error)
    assert not RAW.search(text.replace("\n", ""))
    assert text.splitlines()[0] == "c\\x1b]0;x\\x07.yaml:3:1: error at fixed.bo\\x1bard"
    assert text.splitlines()[3] == "  fix:      write \\x1b 6"


def test_a_file_name_and_a_folder_name_are_escaped(tmp_path, capsys):
    assert run_main("validate", tmp_path / "a\x1b[2J.yaml") == 2
    err = capsys.readouterr().err
    assert not RAW.search(err) and "a\\x1b[2J.yaml: error at (top level)" in err
    assert run_main("show", tmp_path / "no\rpe") == 2
    err = capsys.readouterr().err
    assert not RAW.search(err) and "no\\x0dpe: no btlab results here" in err
    # a run into a folder whose name holds ESC: show, report and ls print it escaped
    cfg = write(tmp_path / "base.yaml", BASE)
    out = tmp_path / "out\x1b[31m"
    assert run_main("run", cfg, "--out", out, "--backend", "serial", "--quiet") == 0
    assert run_main("show", out) == 0
    said = capsys.readouterr()
    assert not RAW.search(said.out + said.err), repr(said.out)
    assert "out\\x1b[31m: 1 trials of shown" in " ".join(said.out.split())


def test_a_plugin_name_in_an_error_is_escaped(tmp_path, capsys):
    cfg = write(tmp_path / "base.yaml", BASE.replace("heuristic: warnsdorff",
                                                     'heuristic: "no\\emod:rule"'))
    assert run_main("validate", cfg) == 2
    err = capsys.readouterr().err
    assert not RAW.search(err), repr(err)
    assert "no\\x1bmod:rule" in err


def test_a_plugins_error_message_is_escaped_in_the_failure_lines(tmp_path, capsys,
                                                                 monkeypatch):
    (tmp_path / "loud_rule.py").write_text(
        "def rule(board, square, candidates):\n"
        "    raise RuntimeError('\\x1b[2J\\x1b[31mcleared\\x07\\u202eevil')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cfg = write(tmp_path / "base.yaml", BASE.replace("heuristic: warnsdorff",
                                                     'heuristic: "loud_rule:rule"'))
    assert run_main("run", cfg, "--out", tmp_path / "r", "--backend", "serial",
                    "--quiet") == 1
    said = capsys.readouterr()
    assert not RAW.search(said.out + said.err), repr(said.out)
    assert "RuntimeError: \\x1b[2J\\x1b[31mcleared\\x07\\u202eevil" in said.out
    assert run_main("show", tmp_path / "r") == 1
    said = capsys.readouterr()
    assert not RAW.search(said.out + said.err), repr(said.out)
    assert "\\x1b[2J\\x1b[31mcleared" in said.out
    # the report printed on the terminal (-o -) and written to a file: the same text
    assert run_main("report", tmp_path / "r", "-o", "-") == 0
    page = capsys.readouterr().out
    assert not RAW.search(page) and "\\x1b[2J\\x1b[31mcleared" in page
    assert run_main("report", tmp_path / "r", "-o", tmp_path / "r.html") == 0
    assert not RAW.search((tmp_path / "r.html").read_text())


def test_failure_lines_escape_parameter_values_and_the_folder():
    lines: list[str] = []
    log = FailureLog(["name"], lines.append)
    log.seen({"status": "error", "trial_id": "t\x1b1", "name": "a\x1b[31m", "repeat": 0,
              "error": "E: \x1b[2J"})
    summary = log.summary("res\x1bults")
    assert not any(RAW.search(line) for line in lines + summary), lines + summary
    assert lines[0].startswith("failed: trial t\\x1b1 (name=a\\x1b[31m, repeat=0)")
    assert "res\\x1bults" in summary[-1]


def test_table_cells_and_console_prints_are_escaped(capsys):
    assert literal("\x1b[31m[/bold]").plain == "\\x1b[31m[/bold]"
    console = ShownConsole(highlight=False, markup=False, force_terminal=False)
    console.print("folder\x1b[2J done\x07")
    out = capsys.readouterr().out
    assert out == "folder\\x1b[2J done\\x07\n"


def test_a_parts_metadata_is_shown_escaped(tmp_path, capsys):
    """A part whose stored config name and overrides hold ESC (written by hand): show
    prints them escaped."""
    import json

    import pyarrow.parquet as pq

    from btlab.store.folder import part_files

    cfg = write(tmp_path / "base.yaml", BASE)
    out = tmp_path / "out"
    assert run_main("run", cfg, "--out", out, "--backend", "serial", "--quiet") == 0
    for part in part_files(out):
        table = pq.read_table(part)
        meta = dict(table.schema.metadata)
        stored = json.loads(meta[b"btlab.config"])
        stored["name"] = "sh\x1b[2Jown"
        meta[b"btlab.config"] = json.dumps(stored).encode()
        meta[b"btlab.overrides"] = json.dumps(["+description=\x1b]0;title\x07"]).encode()
        pq.write_table(table.replace_schema_metadata(meta), part)
    capsys.readouterr()
    status = run_main("show", out)
    said = capsys.readouterr()
    assert not RAW.search(said.out + said.err), repr(said.out + said.err)
    assert "1 trials of sh\\x1b[2Jown" in " ".join(said.out.split()), said.out + said.err
    assert "+description=\\x1b]0;title\\x07" in said.out
    assert status == 0
