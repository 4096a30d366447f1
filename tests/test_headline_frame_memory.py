"""The end-of-run headline's frame of a sweep of many seeds (one trial key per seed) is
compact: text columns categorical, no trial ids, a bounded number of bytes per trial key,
rows in sweep order, and the tables it prints are those of the full load."""

from __future__ import annotations

import pandas as pd

from btlab.config.model import parse_config
from btlab.store.folder import load_rows
from btlab.store.schema import headline_columns
from btlab.sweep.expand import expand
from btlab.sweep.trial_ids import TrialIds
from btlab.views.headline import headline_items
from btlab.views.headline_rows import headline_rows
from btlab.views.tables import TRIAL_COLUMNS

SEEDS = """\
name: seeds
problem: knights_tour
fixed: {board: [5, 5], start: [0, 0], strategy: iterative, mode: first, heuristic: warnsdorff,
        tie_break: random}
budget: {nodes: 30}
matrix: {seed: 1..600}
"""

#: The frame's bytes per trial key (DataFrame.memory_usage(deep=True)): 175 measured (35
#: columns of 8-byte numbers and 1-byte categorical codes); every text column as Python
#: strings, or the trial ids kept, would be 600 or more.
MAX_BYTES_PER_KEY = 200


def _run(tmp_path):
    from btlab.cli.main import main

    cfg = tmp_path / "seeds.yaml"
    cfg.write_text(SEEDS)
    assert main(["run", str(cfg), "--out", str(tmp_path / "o"), "--backend", "serial",
                 "--quiet", "--yes"]) == 0
    return parse_config(SEEDS, "<seeds>")


def test_the_frame_of_a_seed_sweep_is_compact_and_in_sweep_order(tmp_path):
    config = _run(tmp_path)
    trials = expand(config)
    names = config.problem.columns.names
    found = headline_rows(tmp_path / "o", headline_columns(config.problem),
                          TrialIds(t.trial_id for t in trials), [*names, *TRIAL_COLUMNS],
                          config=config)
    frame = found.frame
    assert (found.trials, found.stale, found.errors) == (600, 0, 0)
    assert len(frame) == 600 and "trial_id" not in frame.columns
    assert frame["seed"].tolist() == [t.seed for t in trials]  # sweep order
    for column in ("problem", "status", "heuristic", "tie_break", "strategy", "mode"):
        assert isinstance(frame[column].dtype, pd.CategoricalDtype), column
    assert frame["nodes"].dtype == "int64" and frame["rows"].dtype == "int32"
    per_key = frame.memory_usage(deep=True, index=False).sum() / len(frame)
    assert per_key <= MAX_BYTES_PER_KEY, per_key
    # the same values as the full load, column by column
    full = load_rows(tmp_path / "o").set_index("seed").loc[frame["seed"]]
    for column in ("status", "nodes", "backtracks", "rows", "start_row", "wall_ns"):
        assert frame[column].astype("object").tolist() == \
            full[column].astype("object").tolist(), column


def test_the_compact_frame_prints_the_tables_of_the_full_load(tmp_path):
    config = _run(tmp_path)
    trials = expand(config)
    found = headline_rows(tmp_path / "o", headline_columns(config.problem),
                          TrialIds(t.trial_id for t in trials),
                          [*config.problem.columns.names, *TRIAL_COLUMNS], config=config)

    def text(df) -> list[str]:
        import io

        from rich.console import Console

        console = Console(width=150, record=True, file=io.StringIO())
        for item in headline_items(df, errors=(0, None)):
            console.print(item)
        return console.export_text().splitlines()

    assert text(found.frame) == text(load_rows(tmp_path / "o"))
