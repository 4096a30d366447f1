"""N-Queens sweeps through the runner: counts, equal counters across strategies, the table."""

from __future__ import annotations

import textwrap

import pandas as pd
import pytest

from btlab.cli.main import main
from btlab.config.model import load_config, parse_config
from btlab.errors import ConfigError
from btlab.experiments.checker import check_queens
from btlab.sweep.expand import expand

A000170 = {4: 2, 5: 10, 6: 4, 7: 40, 8: 92, 9: 352}
SAME_TREE = ["recursive", "iterative", "amb", "bitmask"]
COUNTERS = ["nodes", "backtracks", "dead_ends", "checks", "solutions", "max_depth", "status"]


def test_queens_sweep_counts_and_equal_counters(tmp_path, ray_session, capsys):
    config = tmp_path / "q.yaml"
    config.write_text(textwrap.dedent("""\
        name: queens-small
        problem: n_queens
        fixed: {mode: count}
        matrix:
          strategy: [brute_force, recursive, iterative, amb, functional, bitmask]
          n: [4, 5, 6, 7, 8, 9]
        exclude: [{strategy: [brute_force, amb], n: [8, 9]}]
        include: [{strategy: construction, mode: first, n: 8}]
    """))
    out = tmp_path / "r"
    assert main(["run", str(config), "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "vs recursive" in text and "construction" in text
    df = pd.read_parquet(out)
    assert len(df) == len(expand(load_config(config))) == 6 * 6 - 4 + 1
    counted = df[df["mode"] == "count"]
    assert (counted["solutions"] == counted["n"].map(A000170)).all()
    assert (counted["status"] == "exhausted").all()
    by = counted.set_index(["strategy", "n"])
    for n in A000170:
        for strategy in ("iterative", "bitmask") + (("amb",) if n < 8 else ()):
            for col in COUNTERS:
                assert by.loc[(strategy, n), col] == by.loc[("recursive", n), col], \
                    (strategy, n, col)
        assert by.loc[("functional", n), "nodes"] == by.loc[("recursive", n), "nodes"]
    assert by.loc[("recursive", 8), "nodes"] == 2056 and by.loc[("recursive", 8), "checks"] == 15720
    # amb: one execution per failed safety test and per solution, the first not a restart
    amb = by.xs("amb", level="strategy").sort_index()
    assert list(amb.index) == [4, 5, 6, 7]
    assert (amb["amb_restarts"] == amb["checks"] - amb["nodes"] + amb["solutions"] - 1).all()
    assert list(amb["amb_restarts"]) == [45, 176, 745, 3_072]
    for rec in df.itertuples():
        if rec.solution is not None:
            check_queens(rec.n, list(rec.solution))


@pytest.mark.parametrize("body, fragments", [
    pytest.param("fixed: {n: 0}\n", ["fixed.n", "a number of at least 1"], id="n-under-1"),
    pytest.param("fixed: {n: 8, strategy: bitmsk}\n", ["did you mean 'bitmask'"], id="misspelt"),
    pytest.param("fixed: {n: 8, unique: true}\n", ["unique", "mode: count"], id="unique-first"),
    pytest.param("fixed: {n: 8, strategy: construction, method: product}\n", ["5^k"],
                 id="product-not-power-of-5"),
    pytest.param("fixed: {n: 8, method: formula}\n", ["only with strategy: construction"],
                 id="method-without-construction"),
    pytest.param("fixed: {n: 100, strategy: brute_force}\n", ["at most 64"], id="too-large"),
])
def test_bad_queens_configs(body, fragments):
    with pytest.raises(ConfigError) as info:
        expand(parse_config("name: q\nproblem: n_queens\n" + body, "q.yaml"))
    for fragment in fragments:
        assert fragment in str(info.value)


def test_shipped_queens_config():
    trials = expand(load_config("configs/queens_algorithms.yaml"))
    counts = pd.Series([t.columns["strategy"] for t in trials]).value_counts().to_dict()
    assert counts == {"bitmask": 13, "recursive": 9, "iterative": 9, "amb": 9, "functional": 9,
                      "brute_force": 7}
    assert {t.columns["mode"] for t in trials} == {"count"}
