"""Trial ids are those of btlab 0.1: the move to one import name (``btlab``) changed none.

The id hashes the problem's name as a config writes it, the canonical parameters,
the budget, the seed, the repeat and the trial keys -- never a module path -- so
folders written before the move resume with nothing to run. The pinned values
were computed by btlab 0.1 (commit 287da08, the ``runner`` / ``experiments``
layout) on the configs of ``tests/data/ids``, whose folders that version wrote.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from btlab.cli.main import main
from btlab.config.model import load_config
from btlab.sweep.expand import expand
from btlab.sweep.trial import Trial

DATA = Path(__file__).parent / "data" / "ids"

#: config -> (trial_id, solver_seed) of each trial in config order, from btlab 0.1.
PINNED: dict[str, list[tuple[str, int]]] = {
    # knight's tours without trial keys (the config's seed only)
    "knights": [("5a9281ec2c3282b2", 7102374343169322407),
                ("c3b494309883921f", 18409681937557185268),
                ("3576baaa38f63652", 4371087584689370301),
                ("df083974a1719781", 9447761035661273463)],
    # trial keys (a backtrack budget, restarts) and a swept seed
    "knights_keys": [("0f006c984d825001", 16370404049846489477),
                     ("96c2381d0b393253", 13385343559228208122),
                     ("f5d6573200e56b05", 16370404049846489477),
                     ("727db1c470d4eee0", 13385343559228208122),
                     ("3bcaff0e7c4e4b94", 16370404049846489477),
                     ("feb87c6a58f2b206", 13385343559228208122)],
    # N-Queens: counts, an estimate (probes), two repeats
    "queens": [("c31c03223f9d3fd4", 18228722157760469828),
               ("3bfb15b5470d5cdb", 18228722157760469828),
               ("d83068a826c6585b", 18228722157760469828),
               ("979d35d8f6911517", 18228722157760469828),
               ("c966e5331e235525", 10194098638150505184),
               ("57a12c75cdc562e6", 10194098638150505184),
               ("c7e0c45cc7481977", 10194098638150505184),
               ("247b385c4d055047", 10194098638150505184),
               ("61da9a9fb4ffb25a", 4710284571073411192),
               ("ee9fb59118aaf5c3", 4710284571073411192)],
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_trial_ids_are_those_of_btlab_0_1(name):
    trials = expand(load_config(DATA / f"{name}.yaml"))
    assert [(t.trial_id, t.solver_seed) for t in trials] == PINNED[name]


def test_the_id_of_one_trial_by_hand():
    """The first knight's-tour trial, built directly: its id needs no module of btlab."""
    columns = {"rows": 5, "cols": 5, "start_row": 0, "start_col": 0, "heuristic": "none",
               "tie_break": "move_order", "strategy": "recursive", "mode": "first",
               "move_order": "default", "closed": False, "engine": "python"}
    trial = Trial("knights_tour", columns, 2000, 60.0, 2026, 0)
    assert (trial.trial_id, trial.solver_seed) == PINNED["knights"][0]
    # the problem's name is what is hashed: a module path in its place is another trial
    moved = Trial("btlab.problems.knights_tour", columns, 2000, 60.0, 2026, 0)
    assert moved.trial_id != trial.trial_id


@pytest.mark.parametrize("name", sorted(PINNED))
def test_a_folder_written_before_the_move_resumes_with_nothing_to_run(name, tmp_path, capsys):
    folder = tmp_path / name
    shutil.copytree(DATA / name, folder)
    before = pd.read_parquet(folder)
    assert sorted(before["trial_id"]) == sorted(i for i, _ in PINNED[name])
    count = len(PINNED[name])
    assert main(["run", str(DATA / f"{name}.yaml"), "--backend", "serial", "--out",
                 str(folder), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"{count} trials, {count} already in {folder}, 0 to run" in out
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in
                                                              (DATA / name).iterdir())
    after = pd.read_parquet(folder)
    # the columns added since (the rewrite adds them): knuth where the row is an estimate;
    # the estimate rows' extra counter probes_done, unknown (null) for rows written before it
    assert "estimator" not in before.columns and "probes_done" not in before.columns
    assert list(after["estimator"]) == ["knuth" if pd.notna(p) else None
                                        for p in before["probes"]]
    assert after["probes_done"].isna().all()
    pd.testing.assert_frame_equal(after.drop(columns=["estimator", "probes_done"]), before)
