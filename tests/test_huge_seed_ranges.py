"""A seed range of any size stays lazy: ``validate`` counts it by arithmetic, ``run`` refuses
it over the trial cap, and neither fills the memory nor overflows ``len``."""

from __future__ import annotations

import itertools

import pytest

from btlab.config.model import parse_config
from btlab.config.seeds import seed_count, seed_values
from btlab.sweep.expand import iter_trials, plan_size
from btlab.sweep.matrix import _product
from tests.helpers.cli import run_main, write

HEAD = ("name: s\nproblem: knights_tour\n"
        "fixed: {board: 5, heuristic: warnsdorff, tie_break: random}\n")


def test_the_lazy_product_walks_itertools_order():
    for sizes in ([3, 1, 2], [2], [4, 3], [1, 1, 1], []):
        assert list(_product(sizes)) == list(itertools.product(*(range(n) for n in sizes)))
    assert list(_product([3, 0, 2])) == []
    assert next(_product([10 ** 12, 2])) == (0, 0)


def test_seed_counts_of_ranges_beyond_ssize_t():
    assert seed_count(seed_values("1..1000000000000")) == 10 ** 12
    assert seed_count(seed_values("-9223372036854775808..9223372036854775807")) == 1 << 64
    assert seed_count(seed_values("5..5")) == 1


@pytest.mark.parametrize("seeds, count", [
    ("1..1000000000000", 10 ** 12),
    ("-9223372036854775808..9223372036854775807", 1 << 64),
])
def test_a_huge_seed_range_is_counted_not_walked(tmp_path, capsys, seeds, count):
    config = parse_config(HEAD + f"matrix: {{seed: {seeds}}}\n")
    assert plan_size(config) == (count, "exact")
    first = list(itertools.islice(iter_trials(config), 3))
    lo = int(seeds.split("..")[0])
    assert [t.seed for t in first] == [lo, lo + 1, lo + 2]
    path = write(tmp_path / "s.yaml", HEAD + "matrix: {seed: 1..3}\n")
    assert run_main("validate", path, f"matrix.seed={seeds}") == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"{count:,} trials: over the cap of 1,000,000" in out
    assert run_main("run", path, f"matrix.seed={seeds}", "--out", tmp_path / "out") == 2
    assert "pass --yes to run it anyway" in " ".join(capsys.readouterr().err.split())
    assert not (tmp_path / "out").exists()
