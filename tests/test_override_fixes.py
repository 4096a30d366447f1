"""Comma sweeps on the command line (Hydra's ``key=a,b``), and every fix an override's
error suggests, applied: the overrides it says to write instead are written, and the
config then loads (or fails later, at another key, for another reason)."""

from __future__ import annotations

import re
import shlex
import textwrap
from pathlib import Path

import pytest

from btlab.cli.main import main
from btlab.config.model import load_config
from btlab.config.overrides import split_commas
from btlab.errors import ConfigError
from btlab.sweep.expand import expand

ROOT = Path(__file__).resolve().parents[1]
MAIN = ROOT / "configs" / "warnsdorff_64_starts.yaml"

#: A config without matrix and without seed: the fixes that add them must say `+`.
BARE = textwrap.dedent("""\
    name: bare
    problem: knights_tour
    fixed: {board: [5, 5], start: [0, 0], heuristic: warnsdorff}
    budget: {nodes: 1000}
""")


def ids(path, overrides) -> list[str]:
    return [t.trial_id for t in expand(load_config(path, overrides))]


@pytest.mark.parametrize("commas, brackets", [
    pytest.param(["matrix.heuristic=none,warnsdorff"], ["matrix.heuristic=[none,warnsdorff]"],
                 id="heuristics"),
    pytest.param(["matrix.heuristic=none, warnsdorff ,static_degree"],
                 ["matrix.heuristic=[none,warnsdorff,static_degree]"], id="spaces"),
    pytest.param(["matrix.start=[0,0],[7,7]"], ["matrix.start=[[0,0],[7,7]]"], id="squares"),
    pytest.param(["matrix.heuristic='none',\"warnsdorff\""],
                 ["matrix.heuristic=[none,warnsdorff]"], id="quoted"),
    pytest.param(["+matrix.seed=1,2,3"], ["+matrix.seed=[1,2,3]"], id="added"),
    pytest.param(["+matrix.budget={nodes: 1000, seconds: 5},{nodes: 2000}"],
                 ["+matrix.budget=[{nodes: 1000, seconds: 5},{nodes: 2000}]"], id="budgets"),
])
def test_a_comma_sweep_is_the_bracketed_list(commas, brackets):
    swept = ids(MAIN, commas)
    assert swept == ids(MAIN, brackets)
    assert len(swept) >= 6 and len(set(swept)) == len(swept)


def test_the_cli_runs_a_comma_sweep_as_the_list(tmp_path, capsys):
    """`btlab run c.yaml 'matrix.heuristic=none,warnsdorff'` writes the trial ids of
    `'matrix.heuristic=[none,warnsdorff]'`: the second run finds them all."""
    import pandas as pd

    small = ["fixed.board=[5,5]", "budget.nodes=500", "matrix.start=[0,0],[2,2]"]
    out = tmp_path / "out"
    assert main(["run", str(MAIN), *small, "matrix.heuristic=none,warnsdorff",
                 "--backend", "serial", "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["run", str(MAIN), *small, "matrix.heuristic=[none,warnsdorff]",
                 "--backend", "serial", "--out", str(out), "--quiet"]) == 0
    assert "4 trials, 4 already in" in capsys.readouterr().out
    assert sorted(pd.read_parquet(out)["heuristic"]) == ["none", "none", "warnsdorff",
                                                         "warnsdorff"]


@pytest.mark.parametrize("raw, pieces", [
    ("none,warnsdorff", ["none", "warnsdorff"]),
    ("[0,0],[7,7]", ["[0,0]", "[7,7]"]),
    ("{nodes: 1, seconds: 2},{nodes: 3}", ["{nodes: 1, seconds: 2}", "{nodes: 3}"]),
    ("'a,b',c", ["'a,b'", "c"]),
    ('"a\\",b",c', ['"a\\",b"', "c"]),
    ("it's,fine", ["it's", "fine"]),
    ("[none,warnsdorff]", None),
    ("'a,b'", None),
    ("plain", None),
])
def test_split_commas(raw, pieces):
    assert split_commas(raw) == pieces


def test_free_text_keys_keep_their_commas():
    config = load_config(MAIN, ["description=8 x 8, all starts, three heuristics"])
    assert config.model.description == "8 x 8, all starts, three heuristics"


# --------------------------------------------------------------------------- fixes applied


def suggested(fix: str) -> list[str]:
    """The overrides a fix says to write: after "write instead", "write", "use" (to "to
    add it"/"to change it"), "close them:" or "e.g."."""
    m = re.search(r"(?:write instead|close them:|write|use|e\.g\.) (.+?)(?: to (?:add|change|"
                  r"delete) it.*| \(.*)?$", fix)
    assert m, f"no override in the fix {fix!r}"
    words = shlex.split(m.group(1))
    return words[1:] if words[:1] == ["e.g."] else words


#: (config, overrides, the override at fault (1-based), what the fix must say)
CASES = [
    pytest.param(MAIN, ["board=6"], "fixed.board=6", id="a-parameter-at-the-top-level"),
    pytest.param(BARE, ["closed=true"], "+fixed.closed=true", id="a-new-parameter-at-the-top"),
    pytest.param(MAIN, ["heuristic=warnsdorff"], "matrix.heuristic=[warnsdorff]",
                 id="a-swept-parameter-at-the-top"),
    pytest.param(MAIN, ["+board=6"], "fixed.board=6", id="a-parameter-added-at-the-top"),
    pytest.param(MAIN, ["++board=[6,6]"], "fixed.board=[6,6]", id="a-parameter-forced-at-top"),
    pytest.param(MAIN, ["fixed.heuristic=none,warnsdorff"], "matrix.heuristic=none,warnsdorff",
                 id="commas-in-fixed-swept-there"),
    pytest.param(MAIN, ["fixed.strategy=recursive,iterative"],
                 "~fixed.strategy +matrix.strategy=recursive,iterative", id="commas-in-fixed"),
    pytest.param(BARE, ["fixed.heuristic=none,warnsdorff"],
                 "~fixed.heuristic +matrix.heuristic=none,warnsdorff", id="commas-no-matrix"),
    pytest.param(MAIN, ["heuristic=none,warnsdorff"], "matrix.heuristic=none,warnsdorff",
                 id="commas-at-the-top"),
    pytest.param(MAIN, ["seed=1,2"], "+matrix.seed=1,2", id="commas-in-the-seed"),
    pytest.param(BARE, ["+seed=1,2"], "+matrix.seed=1,2", id="commas-in-an-added-seed"),
    pytest.param(MAIN, ["budget.nodes=1000,2000"],
                 "+matrix.budget={nodes: 1000},{nodes: 2000}", id="commas-in-the-budget"),
    pytest.param(MAIN, ["+probes=10,20", "fixed.mode=estimate"], "+matrix.probes=10,20",
                 id="commas-in-probes"),
    pytest.param(MAIN, ["repeats=1,2"], "repeats=1", id="commas-where-one-value-goes"),
    pytest.param(MAIN, ["+include.0.heuristic=a,b"], None, id="commas-in-include"),
    pytest.param(MAIN, ["matrix.heuristic=none,,warnsdorff"], "matrix.heuristic=none,warnsdorff",
                 id="an-empty-piece"),
    pytest.param(MAIN, ["matrix.heuristic=none,"], "matrix.heuristic=[none]",
                 id="a-trailing-comma"),
    pytest.param(MAIN, ["matrix.heuristic=[none,warnsdorff"], "matrix.heuristic=[none,warnsdorff]",
                 id="an-open-bracket"),
    pytest.param(MAIN, ["fixed.board=[6,"], "fixed.board=[6,6]", id="an-open-list"),
    pytest.param(MAIN, ["matrix.heuristic=warnsdorff"], "matrix.heuristic=[warnsdorff]",
                 id="one-value-in-matrix"),
    pytest.param(MAIN, ["++matrix.heuristic='static_degree'"],
                 "++matrix.heuristic=['static_degree']", id="one-forced-value-in-matrix"),
    pytest.param(MAIN, ["fixed.closed=true"], "+fixed.closed=true", id="a-missing-fixed-key"),
    pytest.param(MAIN, ["matrix.closed=true"], "+matrix.closed=[true]",
                 id="a-missing-matrix-key"),
    pytest.param(MAIN, ["matrix.closed=true,false"], "+matrix.closed=true,false",
                 id="a-missing-matrix-sweep"),
    pytest.param(MAIN, ["fixed.heuristic=warnsdorff"],
                 "~matrix.heuristic +fixed.heuristic=warnsdorff", id="fixing-a-swept-key"),
    pytest.param(MAIN, ["matrix.strategy=recursive,iterative"],
                 "~fixed.strategy +matrix.strategy=recursive,iterative", id="sweeping-a-fixed-key"),
    pytest.param(MAIN, ["fixed.boar=[6,6]"], "fixed.board=[6,6]", id="a-typo-in-fixed"),
    pytest.param(MAIN, ["sed=7"], "seed=7", id="a-typo-at-the-top"),
    pytest.param(MAIN, ["budgt.nodes=5000"], "budget.nodes=5000", id="a-typo-in-a-section"),
    pytest.param(BARE, ["seed=7"], "+seed=7", id="a-missing-top-level-key"),
    pytest.param(BARE, ["restarts.policy=luby"], "+restarts.policy=luby", id="a-missing-section"),
    pytest.param(BARE, ["budget.seconds=5"], "+budget.seconds=5", id="a-missing-budget-key"),
    pytest.param(BARE, ["matrix.start=all"], "~fixed.start +matrix.start=all", id="no-matrix-yet"),
    pytest.param(BARE, ["matrix.closed=true,false"], "+matrix.closed=true,false",
                 id="no-matrix-yet-new-key"),
    pytest.param(MAIN, ["+fixed.mode=count"], "fixed.mode=count", id="adding-a-key-that-exists"),
    pytest.param(MAIN, ["~seed=3"], "~seed", id="deleting-another-value"),
    pytest.param(MAIN, ["budget.nodes.max=5000"], "budget.nodes=5000", id="through-a-number"),
    pytest.param(MAIN, ["fixed.board.rows=6"], "fixed.board.0=6", id="a-list-by-name"),
    pytest.param(MAIN, ["fixed.board.2=6"], "fixed.board.1=6", id="past-the-list"),
    pytest.param(MAIN, ["fixed..board=6"], "fixed.board=[6,6]", id="an-empty-key-part"),
    pytest.param(MAIN, [".".join(["fixed"] * 65) + "=1"], "fixed.board=[6,6]",
                 id="too-deep-a-key"),
    pytest.param(BARE, ["+restarts={policy: luby, scale: 100"],
                 "+restarts={policy: luby, scale: 100}", id="closing-an-added-section"),
    pytest.param(BARE, ["+seed=\x1b7"], "+seed=7", id="a-control-character"),
    pytest.param(BARE, ["+seed=7\x00"], "+seed=7", id="a-nul-after-a-value"),
    pytest.param(MAIN, ["seed"], "++seed=7", id="no-value"),
    pytest.param(MAIN, ["fixed.board"], "++seed=7", id="no-value-nested"),
]


@pytest.mark.parametrize("path, overrides, fix", CASES)
def test_each_fix_works_when_followed(tmp_path, path, overrides, fix):
    """The override's error suggests overrides; written instead of the faulty one, the
    config loads (or fails at another key: never the same error again)."""
    if path is BARE:
        path = tmp_path / "bare.yaml"
        path.write_text(BARE)
    with pytest.raises(ConfigError) as info:
        load_config(path, overrides)
    error = info.value
    assert error.where == f"override 1 ({overrides[0]})", str(error)
    if fix is None:  # no override can fix it: the fix says what to write
        assert "give it one value" in error.fix, str(error)
        return
    new = suggested(error.fix)
    assert " ".join(new) == fix, str(error)
    try:
        config = load_config(path, [*new, *overrides[1:]])
    except ConfigError as later:  # a later error, at another key, may remain
        assert later.key_path != error.key_path, f"{error.fix!r} fails when followed:\n{later}"
        assert later.key_path[:1] == error.key_path[:1] == ("restarts",), later
    else:
        assert expand(config)


def test_the_issue_samples(capsys):
    """matrix.heuristic=none,warnsdorff simply works; board=6 suggests fixed.board=6."""
    assert main(["validate", str(MAIN), "matrix.heuristic=none,warnsdorff"]) == 0
    assert "128 trials" in capsys.readouterr().out.replace("\n", " ")
    assert main(["validate", str(MAIN), "board=6"]) == 2
    err = capsys.readouterr().err
    assert "write instead fixed.board=6" in err and "+board" not in err
    assert main(["validate", str(MAIN), "fixed.board=6"]) == 0
