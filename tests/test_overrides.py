"""Command-line overrides (``btlab run CONFIG key=value ...``), Hydra style: values, errors,
trial counts, the stored config, and the edited-config rules of a results folder."""

from __future__ import annotations

import json
import textwrap

import pyarrow.parquet as pq
import pytest

from btlab.cli.main import main
from btlab.config.model import load_config, parse_config
from btlab.errors import ConfigError
from btlab.store.folder import config_of, load_rows, newest_meta, part_files
from btlab.sweep.expand import expand

SWEEP = textwrap.dedent("""\
    name: over
    problem: knights_tour
    fixed:
      board: [8, 8]
      strategy: recursive
      mode: first
    matrix:
      heuristic: [none, warnsdorff, static_degree]
      start: all
    budget: {nodes: 1_000_000, seconds: 120}
    seed: 2026
""")

#: A small sweep to run: 2 heuristics x 2 starts of 5 x 5.
SMALL = textwrap.dedent("""\
    name: small-over
    problem: knights_tour
    fixed: {board: [5, 5], strategy: recursive, mode: first}
    matrix:
      heuristic: [none, warnsdorff]
      start: [[0, 0], [2, 2]]
    budget: {nodes: 20000}
    seed: 1
""")


@pytest.fixture
def sweep(tmp_path):
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP)
    return path


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    return path


def cli(*args) -> int:
    try:
        return main([str(a) for a in args])
    except SystemExit as exc:  # argparse
        return int(exc.code)


def flat(text: str) -> str:
    return " ".join(text.split())


# --------------------------------------------------------------------------- values


def test_overrides_change_nested_keys_with_yaml_values(sweep):
    config = load_config(sweep, ["fixed.board=[6,6]", "matrix.heuristic=[none,warnsdorff]",
                                 "budget.nodes=10_000_000", "name=foo", "seed=7"])
    m = config.model
    assert m.fixed == {"board": [6, 6], "strategy": "recursive", "mode": "first"}
    assert m.matrix == {"heuristic": ["none", "warnsdorff"], "start": "all"}
    assert (m.budget.nodes, m.budget.seconds) == (10_000_000, 120)
    assert (m.name, m.seed) == ("foo", 7)
    assert len(expand(config)) == 72  # 36 starts x 2 heuristics
    assert config.overrides == ("fixed.board=[6,6]", "matrix.heuristic=[none,warnsdorff]",
                                "budget.nodes=10_000_000", "name=foo", "seed=7")


def test_add_delete_and_force(sweep):
    config = load_config(sweep, ["~matrix.start", "+fixed.start=[2,3]", "fixed.mode=count",
                                 "~budget.seconds", "++fixed.board=[5,5]", "++repeats=2",
                                 "+exclude=[{heuristic: none}]", "exclude.0.heuristic=warnsdorff"])
    m = config.model
    assert m.fixed == {"board": [5, 5], "strategy": "recursive", "mode": "count",
                       "start": [2, 3]}
    assert m.matrix == {"heuristic": ["none", "warnsdorff", "static_degree"]}
    assert (m.budget.nodes, m.budget.seconds, m.repeats) == (1_000_000, None, 2)
    assert m.exclude == [{"heuristic": "warnsdorff"}]
    assert [(t.columns["heuristic"], t.repeat) for t in expand(config)] == [
        ("none", 0), ("none", 1), ("static_degree", 0), ("static_degree", 1)]


def test_an_override_gives_the_trials_of_the_edited_file(sweep):
    by_override = load_config(sweep, ["fixed.board=[6,6]", "budget.nodes=5000", "seed=3"])
    edited = parse_config(SWEEP.replace("[8, 8]", "[6, 6]").replace("1_000_000", "5000")
                          .replace("2026", "3"), "edited.yaml")
    assert by_override.expanded() == edited.expanded()
    assert [t.trial_id for t in expand(by_override)] == [t.trial_id for t in expand(edited)]


def test_overrides_apply_in_order_and_leave_the_file_alone(sweep):
    config = load_config(sweep, ["seed=1", "seed=2", "~seed", "+seed=5"])
    assert config.model.seed == 5
    assert load_config(sweep).model.seed == 2026
    assert config.text == SWEEP


def test_an_empty_value_is_the_empty_string_and_null_is_null(sweep):
    assert load_config(sweep, ["+description="]).model.description == ""
    with pytest.raises(ConfigError) as info:
        load_config(sweep, ["budget.nodes=null", "seed=null"])
    assert str(info.value).splitlines()[0] == f"{sweep}, override 2 (seed=null): error at seed"


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("overrides, message", [
    (["seed=7", "budget.nodes=abc"],
     "{f}, override 2 (budget.nodes=abc): error at budget.nodes\n"
     "  expected: a value that is a valid integer\n"
     "  found:    'abc'\n"
     "  fix:      write a whole number without quotes, e.g. 3"),
    (["fixed.mode=count", "fixed.closed=true"],
     "{f}, override 2 (fixed.closed=true): error at fixed.closed\n"
     "  expected: a key that is in {f}: key=value changes a key, +key=value adds one\n"
     "  found:    no key fixed.closed\n"
     "  fix:      use +fixed.closed=true to add it"),
    (["+fixed.mode=count"],
     "{f}, override 1 (+fixed.mode=count): error at fixed.mode\n"
     "  expected: a key that is not in {f}: +key=value adds a key\n"
     "  found:    fixed.mode is already there (\"first\")\n"
     "  fix:      use fixed.mode=count to change it"),
    (["matrix.heuristic=[none,warnsdorf]"],
     "{f}, override 1 (matrix.heuristic=[none,warnsdorf]): error at matrix.heuristic[1]\n"
     "  expected: one of 'none', 'warnsdorff', 'static_degree' or a plug-in 'module:function'\n"
     "  found:    'warnsdorf'\n"
     "  fix:      did you mean 'warnsdorff'?"),
    (["~fixed.board"],
     "{f}, override 1 (~fixed.board): error at fixed.board\n"
     "  expected: the parameter 'board' in fixed or matrix\n"
     "  found:    no such key\n"
     "  fix:      drop the override ~fixed.board"),
    (["fixed.board=[6,"],
     "{f}, override 1 (fixed.board=[6,): error at fixed.board\n"
     "  expected: a YAML flow value, e.g. 7, [6,6], [none,warnsdorff] or 'text'\n"
     "  found:    '[6,': expected the node content, but found '<stream end>'\n"
     "  fix:      close the brackets or quotes; quote the whole override for the shell, "
     "e.g. 'fixed.board=[6,6]'"),
    (["seed"],
     "{f}, override 1 (seed): error at (top level)\n"
     "  expected: key=value (or +key=value to add a key, ~key to delete one)\n"
     "  found:    'seed'\n"
     "  fix:      give the key a value: seed=VALUE, e.g. ++seed=7 (++ sets a key whether or "
     "not the file has it)"),
    (["+fixed.colour=red"],
     "{f}, override 1 (+fixed.colour=red): error at fixed.colour\n"
     "  expected: a parameter of knights_tour: board, start, heuristic, tie_break, strategy, "
     "mode, move_order, closed, engine\n"
     "  found:    unknown parameter 'colour'\n"
     "  fix:      remove it"),
    (["~seed=3"],
     "{f}, override 1 (~seed=3): error at seed\n"
     "  expected: seed holding 3 (~key=value deletes only then)\n"
     "  found:    seed holds 2026\n"
     "  fix:      write ~seed to delete it anyway"),
    (["fixed.board.rows=6"],
     "{f}, override 1 (fixed.board.rows=6): error at fixed.board.rows\n"
     "  expected: a number to index the list fixed.board\n"
     "  found:    the key 'rows'\n"
     "  fix:      index it, e.g. fixed.board.0=6"),
    (["budget.nodes.max=6"],
     "{f}, override 1 (budget.nodes.max=6): error at budget.nodes.max\n"
     "  expected: budget.nodes to be a mapping, to hold budget.nodes.max\n"
     "  found:    budget.nodes is 1000000 (int)\n"
     "  fix:      set budget.nodes itself, e.g. budget.nodes=6"),
    (["seed=!!python/object/apply:os.system [ls]"],
     "{f}, override 1 (seed=!!python/object/apply:os.system [ls]): error at seed\n"
     "  expected: plain YAML data: a mapping, list, string, number or boolean\n"
     "  found:    '!!python/object/apply:os.system [ls]': could not determine a constructor "
     "for the tag 'tag:yaml.org,2002:python/object/apply:os.system'\n"
     "  fix:      remove the tag: btlab reads values with yaml.safe_load and never builds "
     "Python objects"),
])
def test_bad_overrides_are_named_as_the_position(sweep, overrides, message):
    with pytest.raises(ConfigError) as info:
        load_config(sweep, overrides)
    assert str(info.value) == message.format(f=sweep)


def test_an_error_in_the_file_keeps_its_line_when_other_keys_are_overridden(tmp_path, sweep):
    path = tmp_path / "bad.yaml"
    path.write_text(SWEEP.replace("seed: 2026", "seed: 2026\nrepeats: 0"))
    with pytest.raises(ConfigError) as info:
        load_config(path, ["seed=7"])
    assert str(info.value).splitlines()[0] == f"{path}:12:1: error at repeats"
    with pytest.raises(ConfigError) as info:  # ...and the override's name when it set it
        load_config(sweep, ["seed=7", "+repeats=0"])
    assert str(info.value).splitlines()[0] == f"{sweep}, override 2 (+repeats=0): error at repeats"


# --------------------------------------------------------------------------- CLI


def test_validate_prints_the_trial_count_of_the_overridden_config(sweep, capsys):
    assert cli("validate", sweep) == 0
    assert "OK -- problem knights_tour, 192 trials" in flat(
        capsys.readouterr().out)
    # an option before the overrides, and one between them (argparse leaves those over)
    assert cli("validate", sweep, "fixed.board=[6,6]", "matrix.heuristic=[none,warnsdorff]") == 0
    assert flat(capsys.readouterr().out).startswith(
        f"{sweep} fixed.board=[6,6] matrix.heuristic=[none,warnsdorff]: OK -- problem "
        "knights_tour, 72 trials")


def test_validate_exits_2_naming_the_override(sweep, capsys):
    assert cli("validate", sweep, "seed=7", "budget.nodes=abc") == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0] == (f"btlab: {sweep}, override 2 (budget.nodes=abc): error at "
                                   "budget.nodes")
    assert "fix:      write a whole number without quotes, e.g. 3" in err


def test_unknown_options_are_still_refused(sweep, capsys):
    assert cli("validate", sweep, "seed=7", "--bogus") == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_a_bad_override_writes_nothing(small, tmp_path, capsys):
    out = tmp_path / "out"
    assert cli("run", small, "--backend", "serial", "--out", out, "seed=x") == 2
    assert not out.exists()
    assert "override 1 (seed=x): error at seed" in capsys.readouterr().err


def test_run_stores_the_overridden_config_and_the_overrides(small, tmp_path, capsys):
    out = tmp_path / "out"
    # options after the overrides and between them
    assert cli("run", small, "--backend", "serial", "matrix.heuristic=[warnsdorff]",
               "--out", out, "--quiet", "budget.nodes=5000") == 0
    text = flat(capsys.readouterr().out)
    assert "btlab small-over: 2 trials, 0 already in" in text
    assert "overrides: matrix.heuristic=[warnsdorff] budget.nodes=5000" in text
    df = load_rows(out)
    assert sorted(df["heuristic"]) == ["warnsdorff", "warnsdorff"]
    assert set(df["budget_nodes"]) == {5000}
    stored = config_of(out)
    assert stored["matrix"] == {"heuristic": ["warnsdorff"], "start": [[0, 0], [2, 2]]}
    assert stored["budget"] == {"nodes": 5000, "seconds": None, "backtracks": None}
    assert json.loads(newest_meta(out)["btlab.overrides"]) == [
        "matrix.heuristic=[warnsdorff]", "budget.nodes=5000"]
    meta = pq.read_schema(part_files(out)[0]).metadata
    assert json.loads(meta[b"btlab.config"]) == stored


def test_other_overrides_into_the_same_folder_follow_the_edited_config_rules(small, tmp_path,
                                                                            capsys):
    out = tmp_path / "out"
    run = ("run", small, "--backend", "serial", "--out", out, "--quiet")
    assert cli(*run, "matrix.heuristic=[warnsdorff]") == 0
    capsys.readouterr()
    assert cli(*run, "matrix.heuristic=[none]") == 0
    text = flat(capsys.readouterr().out)
    assert "btlab small-over: 2 trials, 0 already in" in text
    assert "moved 2 row(s) of trials no longer in the config out of" in text
    assert sorted(load_rows(out)["heuristic"]) == ["none", "none"]
    df = load_rows(out, superseded=True)
    assert sorted(df["heuristic"]) == ["none", "none", "warnsdorff", "warnsdorff"]
    assert json.loads(newest_meta(out)["btlab.overrides"]) == ["matrix.heuristic=[none]"]

    assert cli("show", out) == 0
    shown = flat(capsys.readouterr().out)
    assert "2 superseded row(s) (trials no longer in the config last run) are kept beside" in shown
    assert "overrides of the config last run: matrix.heuristic=[none]" in shown
    # the tables hold the 2 trials of heuristic none only: 263 + 9,884 backtracks
    assert "│ 2 │ 2 │ 0 │ 0 │ 0 │ 0 │" in shown
    assert "│ 10,197 │ 5,098 │ 9,909 │ 10,147 │ 5,074 │ 9,884 │" in shown

    # the file's own config: all 4 trials are on disk, nothing runs, the config is recorded
    assert cli(*run) == 0
    text = flat(capsys.readouterr().out)
    assert "btlab small-over: 4 trials, 4 already in" in text and "0 to run" in text
    assert "took back 2 row(s) of this config's trials" in text
    assert json.loads(newest_meta(out)["btlab.overrides"]) == []
    assert config_of(out)["matrix"]["heuristic"] == ["none", "warnsdorff"]
    assert cli("show", out) == 0
    shown = flat(capsys.readouterr().out)
    assert "no longer in" not in shown and "overrides of the config" not in shown


def test_a_changed_name_is_another_config(small, tmp_path, capsys):
    out = tmp_path / "out"
    assert cli("run", small, "--backend", "serial", "--out", out, "--quiet") == 0
    capsys.readouterr()
    assert cli("run", small, "--backend", "serial", "--out", out, "--quiet", "name=other") == 2
    assert "holds results of config 'small-over' (knights_tour), not of 'other'" in (
        capsys.readouterr().err)


def test_the_report_names_the_overrides(small, tmp_path):
    from btlab.views.report.page import write_report

    out = tmp_path / "out"
    assert cli("run", small, "--backend", "serial", "--out", out, "--quiet",
               "matrix.heuristic=[warnsdorff]", "seed=3") == 0
    html = write_report(out, tmp_path / "r.html").read_text()
    assert ("Run with the command-line overrides (already in the config above): "
            "<code>matrix.heuristic=[warnsdorff] seed=3</code>") in html
    assert "seed: 3\n" in html


def documented_override_commands() -> list[list[str]]:
    """The btlab commands with overrides in `btlab --help` and in the README's Running section."""
    import re
    import shlex
    from pathlib import Path

    from btlab.cli.main import _EPILOG

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    lines = _EPILOG.splitlines() + [x for block in re.findall(r"```bash\n(.*?)```", readme, re.S)
                                    for x in block.splitlines()]
    return [shlex.split(x)[1:] for x in lines
            if re.match(r"\s*btlab (run|validate) configs/\S+ \S*=", x)]


def test_the_documented_overrides_validate(capsys, monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    commands = documented_override_commands()
    assert len(commands) == 4, commands  # 2 in --help, 2 in the README
    counts = []
    for command in commands:
        assert cli("validate", *command[1:]) == 0, command
        counts.append(flat(capsys.readouterr().out).split("OK -- problem knights_tour, ")[1]
                      .split(" trials")[0])
    # 36 starts x 3 heuristics; 192 in count mode; 36 x 2; 64 starts, warnsdorff only
    assert counts == ["108", "192", "72", "64"]
