"""``btlab validate --print`` (Hydra's ``--cfg job``): the whole config after overrides and
defaults as YAML on stdout, and only that; ``btlab run`` takes it as it is, with the same
trial ids."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import yaml

from btlab.cli.main import main
from btlab.config.model import DEFAULT_TRIAL_CAP, config_yaml, load_config
from btlab.config.sweep_config import SweepModel
from btlab.sweep.expand import iter_trials, plan_size

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))

#: Trials compared one by one per config (a million-trial sweep is compared by its
#: first ones and its count).
COMPARED = 20_000


def same_trials(a, b) -> None:
    ids_a = [t.trial_id for t in itertools.islice(iter_trials(a), COMPARED)]
    ids_b = [t.trial_id for t in itertools.islice(iter_trials(b), COMPARED)]
    assert ids_a == ids_b and ids_a
    assert plan_size(a, DEFAULT_TRIAL_CAP) == plan_size(b, DEFAULT_TRIAL_CAP)


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_every_config_printed_reads_back_as_the_same_trials(path, tmp_path):
    config = load_config(path)
    text = config_yaml(config)
    data = yaml.safe_load(text)
    assert list(data) == list(SweepModel.model_fields)  # every key, defaults included
    printed = tmp_path / "printed.yaml"
    printed.write_text(text)
    again = load_config(printed)
    assert again.model == config.model
    same_trials(config, again)
    assert config_yaml(again) == text  # a fixed point


def test_validate_print_writes_only_yaml_and_run_takes_it(tmp_path, capsys):
    """With overrides (a comma sweep among them): stdout is the YAML alone, the count is on
    stderr; `btlab run` of the printed file finds every trial of the overridden run."""
    main_cfg = ROOT / "configs" / "warnsdorff_64_starts.yaml"
    overrides = ["fixed.board=[5,5]", "matrix.heuristic=none,warnsdorff", "budget.nodes=500",
                 "matrix.start=[0,0],[2,2],[4,4]"]
    capsys.readouterr()
    assert main(["validate", str(main_cfg), *overrides, "--print"]) == 0
    out, err = capsys.readouterr()
    assert out == config_yaml(load_config(main_cfg, overrides))
    data = yaml.safe_load(out)
    assert data["matrix"]["heuristic"] == ["none", "warnsdorff"]
    assert data["fixed"]["board"] == [5, 5] and data["max_failures"] is None
    assert "OK -- problem knights_tour, 6 trials" in err
    printed = tmp_path / "printed.yaml"
    printed.write_text(out)
    folder = tmp_path / "out"
    assert main(["run", str(main_cfg), *overrides, "--backend", "serial", "--out", str(folder),
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["run", str(printed), "--backend", "serial", "--out", str(folder),
                 "--quiet"]) == 0
    assert "6 trials, 6 already in" in capsys.readouterr().out


def test_validate_print_of_a_bad_config_prints_no_yaml(tmp_path, capsys):
    capsys.readouterr()
    assert main(["validate", str(ROOT / "configs" / "warnsdorff_64_starts.yaml"), "board=6",
                 "--print"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "fixed.board=6" in err
