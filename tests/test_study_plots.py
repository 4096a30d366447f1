"""The plots and tables of the studies: the share of trials solved (btlab.analysis.rates) against
size (btlab.views.plots.rates), and the share finished within a cost (plots.finished_curves)."""

from __future__ import annotations

import matplotlib
import pandas as pd
import pytest

from btlab import analysis
from btlab.views import plots
from btlab.views.plots.survival import SLOPE_ONE

matplotlib.use("Agg")


def frame() -> pd.DataFrame:
    """Greedy trials on two board sizes: 8 x 8 solves 3 of 4 (an error left out),
    20 x 20 solves 1 of 4; a repeat of one trial that must not count twice."""
    rows = []
    for n, statuses in ((20, ["backtrack_limit", "solved", "backtrack_limit", "node_limit"]),
                        (8, ["solved", "solved", "backtrack_limit", "solved", "error"])):
        for seed, status in enumerate(statuses):
            rows.append({"rows": n, "cols": n, "seed": seed, "repeat": 0, "status": status,
                         "nodes": n * n, "wall_ns": 1, "cpu_ns": 1})
    rows.append({**rows[0], "repeat": 1})
    return pd.DataFrame(rows).assign(problem="knights_tour", heuristic="warnsdorff")


def test_solved_share_counts_and_wilson_interval():
    out = analysis.solved_share(frame(), by="rows")
    assert out["rows"].tolist() == [8, 20]                 # numeric keys sorted
    assert out["trials"].tolist() == [4, 4]                # the error and the repeat left out
    assert out["solved"].tolist() == [3, 1]
    assert out["errors"].tolist() == [1, 0]
    assert out["share"].tolist() == [0.75, 0.25]
    # Wilson score interval, 95 %, 3 of 4: (0.3006, 0.9544)
    assert out.loc[0, "ci_low"] == pytest.approx(0.30064, abs=1e-4)
    assert out.loc[0, "ci_high"] == pytest.approx(0.95440, abs=1e-4)
    assert out.loc[1, "ci_low"] == pytest.approx(1 - 0.95440, abs=1e-4)   # symmetric


def test_solved_share_one_group_and_bad_input():
    out = analysis.solved_share(frame())
    assert out[["trials", "solved"]].iloc[0].tolist() == [8, 4]
    assert analysis.solved_share(frame(), alpha=0.5)["ci_high"].iloc[0] < out["ci_high"].iloc[0]
    with pytest.raises(ValueError, match="alpha must be a number in"):
        analysis.solved_share(frame(), alpha=1.5)
    with pytest.raises(ValueError, match="no trials"):
        analysis.solved_share(frame().iloc[:0])
    only_errors = frame().assign(status="error")
    assert pd.isna(analysis.solved_share(only_errors)["share"].iloc[0])


def test_solved_share_vs_size_plot(tmp_path):
    df = pd.concat([frame().assign(tie_break="random"),
                    frame().assign(tie_break="move_order", status="solved")])
    fig = plots.solved_share_vs_size(df, by="tie_break", path=tmp_path / "share.svg")
    ax = fig.axes[0]
    assert ax.get_legend_handles_labels()[1] == ["tie_break = random",
                                                 "tie_break = move_order"]
    lines = [c.lines[0] for c in ax.containers]          # one errorbar line per group
    assert lines[0].get_xdata().tolist() == [8, 20]
    assert lines[0].get_ydata().tolist() == [75.0, 25.0]
    assert lines[1].get_ydata().tolist() == [100.0, 100.0]
    assert ax.get_xscale() == "log"
    assert (tmp_path / "share.svg").stat().st_size > 0
    one = plots.solved_share_vs_size(frame(), rows=8)
    assert one.axes[0].containers[0].lines[0].get_ydata().tolist() == [75.0]
    assert one.axes[0].get_legend() is None


def test_finished_curves_steps_bands_and_slope_one_line():
    # group a: finishes at 10 and 40 of 4 trials (2 censored at 100); b: none finished
    df = pd.DataFrame([{"restarts": r, "status": s, "nodes": n, "seed": i, "repeat": 0,
                        "mode": "first"}
                       for i, (r, s, n) in enumerate([
                           ("a", "solved", 10), ("a", "solved", 40), ("a", "node_limit", 100),
                           ("a", "node_limit", 100), ("b", "node_limit", 100),
                           ("b", "node_limit", 100)])])
    fig = plots.finished_curves(df, by="restarts")
    ax = fig.axes[0]
    assert ax.get_legend_handles_labels()[1] == ["a: 2 of 4 finished", "b: 0 of 2 finished"]
    step, empty = ax.lines[0], ax.lines[2]
    assert step.get_xdata().tolist() == [10, 40, 100]
    assert step.get_ydata().tolist() == pytest.approx([0.25, 0.5, 0.5])   # 1 - Kaplan-Meier
    assert len(empty.get_xdata()) == 0
    [ref] = [ln for ln in ax.lines if ln.get_gid() == SLOPE_ONE]
    x, y = ref.get_xdata(), ref.get_ydata()
    assert (x[0], x[-1]) == pytest.approx((10, 100)) and y[-1] == pytest.approx(0.5)
    assert y[0] == pytest.approx(0.05)                                      # slope 1: y / x fixed
    assert ax.get_xscale() == ax.get_yscale() == "log"
    bare = plots.finished_curves(df, by="restarts", reference=False)
    assert not [ln for ln in bare.axes[0].lines if ln.get_gid() == SLOPE_ONE]


def test_metric_vs_size_log_size_axis_keeps_a_tick_per_size():
    df = frame().assign(status="solved", strategy="iterative")
    ax = plots.metric_vs_size(df, "nodes", by=None, logx=True).axes[0]
    assert ax.get_xscale() == "log"
    assert ax.get_xticks().tolist() == [8, 20]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["8", "20"]
    assert plots.metric_vs_size(df, "nodes", by=None).axes[0].get_xscale() == "linear"
