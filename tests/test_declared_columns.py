"""The end of ``btlab run`` reads only the columns its tables declare (btlab.analysis.columns
reads; btlab.views.headline.tables_columns), a column of one value costs nothing per trial
key (btlab.views.headline_rows, ``share``), and the tables and the finding printed from that
frame are those of the frame of every headline column."""

from __future__ import annotations

import io

import numpy as np
import pytest
from rich.console import Console

from btlab.analysis.columns import SPEC_PARAMETERS, columns_read, reads
from btlab.config.model import parse_config
from btlab.problems import get_problem
from btlab.store.schema import headline_columns
from btlab.sweep.expand import expand
from btlab.sweep.trial_ids import TrialIds
from btlab.views.findings import folder_finding
from btlab.views.headline import headline_items, tables_columns
from btlab.views.headline_rows import headline_rows
from btlab.views.tables import TRIAL_COLUMNS

SWEEPS = {
    "knights-first-seeds": """\
problem: knights_tour
fixed: {board: 5, strategy: iterative, mode: first, tie_break: random}
matrix: {heuristic: [none, warnsdorff], start: [[0, 0], [2, 2]], seed: 1..4}
budget: {nodes: 400}
""",
    "knights-count": """\
problem: knights_tour
fixed: {board: [3, 4], strategy: recursive, mode: count}
matrix: {start: all}
""",
    "knights-estimate": """\
problem: knights_tour
fixed: {board: 5, start: [0, 0], mode: estimate}
matrix: {seed: 1..3}
probes: 20
""",
    "queens-strategies": """\
problem: n_queens
fixed: {mode: count}
matrix: {n: [4, 5, 6], strategy: [recursive, bitmask]}
repeats: 2
""",
}


def _run(tmp_path, text: str):
    from btlab.cli.main import main

    cfg = tmp_path / "sweep.yaml"
    cfg.write_text("name: s\n" + text)
    assert main(["run", str(cfg), "--out", str(tmp_path / "o"), "--backend", "serial",
                 "--quiet", "--yes"]) == 0
    return parse_config("name: s\n" + text, "<s>")


def _printed(found, config) -> str:
    console = Console(width=150, record=True, file=io.StringIO())
    errors = (found.errors, found.first_error)
    for item in headline_items(found.frame, errors=errors):
        console.print(item)
    text = console.export_text()
    return text + folder_finding(found.frame, config=config.expanded(), errors=errors)


@pytest.mark.parametrize("name", list(SWEEPS))
def test_the_declared_columns_print_the_tables_of_every_headline_column(tmp_path, name):
    config = _run(tmp_path, SWEEPS[name])
    trials = expand(config)
    wanted = TrialIds(t.trial_id for t in trials)
    keys = [*config.problem.columns.names, *TRIAL_COLUMNS]
    every = headline_rows(tmp_path / "o", headline_columns(config.problem), wanted, keys,
                          config=config)
    declared = tables_columns(config.problem)
    assert declared is not None and "repeat" not in declared
    lean = headline_rows(tmp_path / "o", declared, wanted, keys, config=config, share=True)
    assert lean.trials == every.trials == len(trials)
    assert len(lean.frame) == len(trials) // config.model.repeats  # one row a trial key
    assert list(lean.frame.columns) == declared
    assert _printed(lean, config) == _printed(every, config)
    assert "Finding:" in _printed(lean, config)


def test_the_knights_tables_never_read_the_counters_they_do_not_show():
    knights = tables_columns(get_problem("knights_tour"))
    queens = tables_columns(get_problem("n_queens"))
    assert knights is not None and queens is not None
    # cpu_ns is read: the finding of an estimate sweep gives the probes' CPU seconds
    for column in ("dead_ends", "checks", "max_depth", "repeat", "trial_id",
                   "solution", "host"):
        assert column not in knights, column
    assert {"status", "nodes", "backtracks", "solutions", "wall_ns", "start_row", "rows",
            "heuristic", "budget_nodes", "seed", "estimate", "error"} <= set(knights)
    assert "checks" in queens and "start_row" not in queens  # its table shows checks


def test_a_view_that_names_an_undeclared_function_may_read_any_column():
    spec = get_problem("n_queens")

    def undeclared(df):
        return df

    @reads("status", undeclared)
    def view(df):
        return df

    @reads(SPEC_PARAMETERS, "status")
    def declared(df):
        return df

    assert columns_read(view, spec) is None
    assert columns_read(declared, spec) == [*spec.columns.names, "status"]
    assert columns_read(undeclared, spec) is None


def test_a_seed_sweep_frame_holds_only_what_varies(tmp_path):
    text = SWEEPS["knights-first-seeds"].replace("seed: 1..4", "seed: 1..300")
    config = _run(tmp_path, text)
    trials = expand(config)
    found = headline_rows(tmp_path / "o", tables_columns(config.problem),
                          TrialIds(t.trial_id for t in trials),
                          [*config.problem.columns.names, *TRIAL_COLUMNS], config=config,
                          share=True)
    frame = found.frame
    assert len(frame) == len(trials) == 1200
    held = {}
    for column in frame.columns:
        values = frame[column].array
        array = getattr(values, "codes", None)
        array = np.asarray(values) if array is None else array
        held[column] = 0 if array.strides == (0,) else array.nbytes
    # one board, strategy, mode, budget, status and no estimate: no memory per key
    for column in ("problem", "rows", "cols", "strategy", "mode", "budget_nodes",
                   "estimate", "solutions_estimate_se", "error", "probes"):
        assert held[column] == 0, column
        assert frame[column].nunique(dropna=False) == 1, column
    # what varies costs its bytes: the seed, the start, the heuristic, the counters
    assert held["seed"] == 8 * len(frame) and held["start_row"] == 4 * len(frame)
    assert held["heuristic"] == len(frame)  # 1-byte categorical codes
    assert sum(held.values()) / len(frame) <= 64, held
    # a broadcast column is read-only: a table cannot change the rows it is shown
    with pytest.raises(ValueError):
        frame.loc[frame.index[:1], "rows"] = 6
    # the same values as every headline column gives
    every = headline_rows(tmp_path / "o", headline_columns(config.problem),
                          TrialIds(t.trial_id for t in trials),
                          [*config.problem.columns.names, *TRIAL_COLUMNS], config=config)
    # (an extra column a view declares, such as probes_done, is not a headline column: the
    # lean frame holds it, all null in a first-mode sweep)
    assert frame["probes_done"].isna().all()
    for column in [c for c in frame.columns if c != "probes_done"]:
        assert frame[column].dtype == every.frame[column].dtype, column
        assert frame[column].astype("object").equals(every.frame[column].astype("object")), \
            column  # nulls where they were (NaN equals NaN here)
