"""Survival analysis of search cost (btlab.analysis.kaplan_meier, re-exported by btlab.analysis)."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from btlab import analysis


def _rows(spec, **fixed):
    """Trial rows from (status, nodes) pairs; one trial per pair (start = its index)."""
    return pd.DataFrame([{"heuristic": "h", "mode": "first", **fixed, "start": i,
                          "repeat": 0, "status": s, "nodes": n}
                         for i, (s, n) in enumerate(spec)])


# events at 10, 20, 20, 40; censored at 15 (node_limit) and 30 (time_limit)
SAMPLE = [("solved", 10), ("solved", 20), ("solved", 20), ("solved", 40),
          ("node_limit", 15), ("time_limit", 30)]


def test_survival_matches_hand_computed_kaplan_meier():
    out = analysis.survival(_rows(SAMPLE), by="heuristic")
    assert list(out.columns) == ["heuristic", "x", "survival", "ci_low", "ci_high",
                                 "at_risk", "events", "censored"]
    assert list(out["x"]) == [0, 10, 15, 20, 30, 40]
    # S(10) = 5/6; S(15) = 5/6 (a censoring); S(20) = 5/6 * (1 - 2/4) = 5/12;
    # S(30) = 5/12; S(40) = 5/12 * (1 - 1/1) = 0
    expected = [1, 5 / 6, 5 / 6, 5 / 12, 5 / 12, 0]
    assert list(out["survival"]) == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert list(out["at_risk"]) == [6, 6, 5, 4, 2, 1]
    assert list(out["events"]) == [0, 1, 0, 2, 0, 1]
    assert list(out["censored"]) == [0, 0, 1, 0, 1, 0]
    assert (out["heuristic"] == "h").all()
    # the bands: exponential Greenwood (log(-log S) scale), 95 %
    s = 5 / 12
    var = 1 / (6 * 5) + 2 / (4 * 2)  # Greenwood's sum d / (n (n - d)) up to x = 20
    z = norm.ppf(0.975)
    low = math.exp(-math.exp(math.log(-math.log(s)) - z * math.sqrt(var) / math.log(s)))
    high = math.exp(-math.exp(math.log(-math.log(s)) + z * math.sqrt(var) / math.log(s)))
    row = out[out["x"] == 20].iloc[0]
    assert row["ci_low"] == pytest.approx(low, rel=1e-9)
    assert row["ci_high"] == pytest.approx(high, rel=1e-9)
    assert row["ci_low"] < s < row["ci_high"]


def test_survival_left_out_rows_are_counted_apart():
    spec = SAMPLE + [("exhausted", 7), ("error", 3), ("error", 99)]
    out = analysis.survival(_rows(spec), by="heuristic")
    assert list(out["survival"]) == pytest.approx([1, 5 / 6, 5 / 6, 5 / 12, 5 / 12, 0],
                                                  rel=1e-12, abs=1e-12)
    assert out.attrs["left_out"] == {("h",): {"exhausted": 1, "error": 2,
                                              "censored_no_value": 0}}


def test_a_killed_trial_without_counters_is_left_out_and_counted():
    """A trial the runner killed past its time limit is time_limit with null counters:
    it cannot be placed on the placements axis, so the curve is SAMPLE's and it is
    counted; the quantiles are SAMPLE's too."""
    df = _rows(SAMPLE + [("time_limit", None)])
    df["nodes"] = df["nodes"].astype("Int64")
    out = analysis.survival(df, by="heuristic")
    assert list(out["survival"]) == pytest.approx([1, 5 / 6, 5 / 6, 5 / 12, 5 / 12, 0],
                                                  rel=1e-12, abs=1e-12)
    assert out.attrs["left_out"] == {("h",): {"exhausted": 0, "error": 0,
                                              "censored_no_value": 1}}
    assert analysis.quantiles(df, by="heuristic", q=0.5)["value"].tolist() == [20]


def test_survival_count_mode_event_is_exhausted():
    spec = [("exhausted", 10), ("exhausted", 20), ("node_limit", 15)]
    out = analysis.survival(_rows(spec, mode="count"), by="heuristic")
    # S(10) = 2/3, S(15) = 2/3, S(20) = 2/3 * (1 - 1/1) = 0
    assert list(out["survival"]) == pytest.approx([1, 2 / 3, 2 / 3, 0], abs=1e-12)
    assert out.attrs["left_out"] == {("h",): {"exhausted": 0, "error": 0,
                                              "censored_no_value": 0}}


def test_survival_folds_repeats():
    base = _rows(SAMPLE)
    again = base.assign(repeat=1)
    a = analysis.survival(base, by="heuristic")
    b = analysis.survival(pd.concat([base, again], ignore_index=True), by="heuristic")
    pd.testing.assert_frame_equal(a, b)
    assert list(b["at_risk"])[0] == 6


def test_survival_groups_and_no_grouping():
    df = pd.concat([_rows(SAMPLE), _rows([("solved", 5), ("solved", 6)], heuristic="w")],
                   ignore_index=True)
    out = analysis.survival(df, by=["heuristic"])
    assert list(out["heuristic"].unique()) == ["h", "w"]
    w = out[out["heuristic"] == "w"]
    assert list(w["survival"]) == pytest.approx([1, 1 / 2, 0], abs=1e-12)
    pooled = analysis.survival(df)
    assert "heuristic" not in pooled.columns and pooled["at_risk"].iloc[0] == 8


def test_quantiles_and_not_reached():
    df = pd.concat([_rows(SAMPLE),
                    _rows([("solved", 10), ("node_limit", 50), ("node_limit", 50),
                           ("node_limit", 50)], heuristic="c")], ignore_index=True)
    out = analysis.quantiles(df, by="heuristic", q=(0.5, 0.9))
    assert list(out.columns) == ["heuristic", "q", "value", "ci_low", "ci_high", "reached"]
    h = out[out["heuristic"] == "h"].set_index("q")
    # median: the smallest x with S(x) <= 1/2 is 20 (S = 5/12); 0.9: S <= 0.1 first at 40
    assert h.loc[0.5, "value"] == 20 and h.loc[0.9, "value"] == 40
    assert h["reached"].all()
    assert h.loc[0.5, "ci_low"] <= 20
    c = out[out["heuristic"] == "c"].set_index("q")
    # S never drops below 3/4: neither quantile is reached
    assert not c["reached"].any() and c["value"].isna().all()


def test_logrank_separates_different_groups_only():
    rng = np.random.default_rng(7)
    fast = [("solved", int(v)) for v in rng.integers(10, 100, 30)]
    slow = [("solved", int(v)) for v in rng.integers(1000, 5000, 25)] + [("node_limit", 5000)] * 5
    df = pd.concat([_rows(fast, heuristic="w"), _rows(slow, heuristic="none")],
                   ignore_index=True)
    res = analysis.logrank(df, {"heuristic": "w"}, {"heuristic": "none"})
    assert res.p_value < 0.01 and res.statistic > 0
    assert (res.trials_a, res.events_a, res.trials_b, res.events_b) == (30, 30, 30, 25)
    same = pd.concat([_rows(fast, heuristic="a"), _rows(fast, heuristic="b")],
                     ignore_index=True)
    assert analysis.logrank(same, {"heuristic": "a"}, {"heuristic": "b"}).p_value > 0.5


def test_bad_input_raises_value_error():
    df = _rows(SAMPLE)
    with pytest.raises(ValueError, match="no column 'backtracks'"):
        analysis.survival(df, by="heuristic", metric="backtracks")
    with pytest.raises(ValueError, match="no column 'board'"):
        analysis.survival(df, by="board")
    with pytest.raises(ValueError, match="empty"):
        analysis.survival(df.iloc[:0], by="heuristic")
    with pytest.raises(ValueError, match="no finished or censored trial"):
        analysis.survival(_rows([("error", 1)]), by="heuristic")
    with pytest.raises(ValueError, match="matches no trial"):
        analysis.logrank(df, {"heuristic": "h"}, {"heuristic": "nope"})
    with pytest.raises(ValueError, match=r"q must be numbers in \(0, 1\)"):
        analysis.quantiles(df, q=(0.5, 1.0))


def test_bad_arguments_give_clear_errors_not_library_tracebacks():
    """alpha, q, a metric that is no cost, and logrank sides that cannot be tested: a
    ValueError naming what was found and the fix (not lifelines' or float()'s words)."""
    df = _rows(SAMPLE)
    for alpha in (0, 1.5, "x", True):
        with pytest.raises(ValueError, match=r"alpha must be a number in \(0, 1\).*"
                           r"\n  fix: alpha=0.05"):
            analysis.survival(df, by="heuristic", alpha=alpha)
    with pytest.raises(ValueError, match="quantiles: alpha must be"):
        analysis.quantiles(df, alpha=1)
    for q in (("a",), (float("nan"),), (), (0.5, True), None, 2):
        with pytest.raises(ValueError, match=r"q must be numbers in \(0, 1\).*\n  fix: q="):
            analysis.quantiles(df, q=q)
    one = analysis.quantiles(df, by="heuristic", q=0.5)  # one level as a number
    assert one["q"].tolist() == [0.5] and one["value"].tolist() == [20.0]
    with pytest.raises(ValueError, match=r"metric 'heuristic' is not a cost\n  expected: a "
                       r"numeric column.*\n  found:    object"):
        analysis.survival(df, metric="heuristic")
    negative = _rows([("solved", 10), ("solved", -3)])
    with pytest.raises(ValueError, match="metric 'nodes' is negative in 1 trial"):
        analysis.survival(negative)
    missing = _rows(SAMPLE).astype({"nodes": "Int64"})
    missing.loc[0, "nodes"] = pd.NA
    with pytest.raises(ValueError, match=r"missing in 1 finished or censored trial\(s\)\n"
                       "  fix: leave them out"):
        analysis.survival(missing)
    two = pd.concat([_rows(SAMPLE, heuristic="a"), _rows(SAMPLE, heuristic="b")],
                    ignore_index=True)
    with pytest.raises(ValueError, match="6 trial\\(s\\) are on both sides"):
        analysis.logrank(two, {"heuristic": ["a", "b"]}, {"heuristic": "a"})
    censored = pd.concat([_rows([("node_limit", 9)] * 3, heuristic="a"),
                          _rows([("time_limit", 5)] * 2, heuristic="b")], ignore_index=True)
    with pytest.raises(ValueError, match=r"no trial finished on either side \(a "
                       r"\{'heuristic': 'a'\}: 3 censored, b \{'heuristic': 'b'\}: 2 censored\)"):
        analysis.logrank(censored, {"heuristic": "a"}, {"heuristic": "b"})


SWEEP = textwrap.dedent("""\
    name: survival-tiny
    problem: knights_tour
    fixed: {board: [5, 5], strategy: recursive, mode: first}
    matrix:
      heuristic: [none, warnsdorff]
      start: [[0, 0], [0, 1], [1, 1], [2, 2]]
    budget: {nodes: 2000}
    seed: 3
""")


def test_survival_of_a_real_results_folder(tmp_path):
    from btlab.cli.main import main

    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(SWEEP)
    out = tmp_path / "r"
    assert main(["run", str(cfg), "--backend", "serial", "--out", str(out), "--quiet"]) == 0
    df = analysis.load(out)
    assert len(df) == 8
    curves = analysis.survival(df, by="heuristic")
    assert set(curves["heuristic"]) <= {"none", "warnsdorff"}
    for heuristic, curve in curves.groupby("heuristic", observed=True):
        s = curve["survival"].to_numpy()
        assert ((s >= 0) & (s <= 1)).all()
        assert (np.diff(s) <= 1e-12).all(), heuristic
        rows = df[df["heuristic"] == heuristic]
        assert curve["censored"].sum() == (rows["status"] == "node_limit").sum()
        assert curve["events"].sum() == (rows["status"] == "solved").sum()
        left = curves.attrs["left_out"][(heuristic,)]
        assert left["exhausted"] == (rows["status"] == "exhausted").sum()
        assert curve["at_risk"].iloc[0] == len(rows) - left["exhausted"] - left["error"] \
            - left["censored_no_value"]
