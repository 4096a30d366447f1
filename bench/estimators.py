"""The estimators at equal CPU time: the study of docs/analysis.md, "How many tours".

Run: ``python -m bench.estimators [--from FOLDER] [--out FOLDER] [--figure PNG]``

Runs ``configs/estimators_8x8_equal_time.yaml`` (``btlab.run``, 2 workers; or
reads the results folder ``--from`` names) and, for each estimator, CPU level
and seed, sums over the 64 starts of 8 x 8:

* the directed open tours (``solutions_estimate``), their standard error (the
  root of the summed squared standard errors) and the relative error against
  the known count, 19,591,828,170,979,904 (OEIS A165134);
* the plain-backtracking count-mode tree (``estimate``) and its relative
  standard error (no count is known: the table also gives each estimate over
  the mean of the 100-second ``perm`` runs, the tightest);
* the CPU time the trials took (the sum of ``cpu_ns``).

It prints a Markdown table of the medians over the seeds and draws the figure
(default ``docs/img/estimators-8x8.png``). Asserts nothing.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "estimators_8x8_equal_time.yaml"
FIGURE = ROOT / "docs" / "img" / "estimators-8x8.png"
TOURS_8X8 = 19_591_828_170_979_904  # directed open tours of 8 x 8 (OEIS A165134)


def totals(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (estimator, budget_seconds, seed): the sums over the starts."""
    df = df.assign(var=df["solutions_estimate_se"].astype(float) ** 2,
                   tvar=df["estimate_se"].astype(float) ** 2,
                   cpu=df["cpu_ns"].astype(float) / 1e9)
    g = df.groupby(["estimator", "budget_seconds", "seed"], observed=True)
    out = g.agg(trials=("start_row", "size"), tours=("solutions_estimate", "sum"),
                var=("var", "sum"), tree=("estimate", "sum"), tvar=("tvar", "sum"),
                cpu=("cpu", "sum"), placements=("nodes", "sum")).reset_index()
    out["se"] = out["var"] ** 0.5
    out["error"] = out["tours"] / TOURS_8X8 - 1
    out["rel_se"] = (out["se"] / out["tours"]).where(out["tours"] > 0)
    out["covers"] = (out["tours"] - TOURS_8X8).abs() <= 1.96 * out["se"]
    out["tree_rel_se"] = out["tvar"] ** 0.5 / out["tree"]
    best = out[out["estimator"].str.startswith("perm")
               & (out["budget_seconds"] == out["budget_seconds"].max())]["tree"].mean()
    out["tree_vs_best"] = out["tree"] / best
    return out


def table(t: pd.DataFrame) -> str:
    """The Markdown table of the medians over the seeds."""
    rows = ["| estimator | CPU s (total) | tours: median abs. relative error | reported "
            "relative SE | 95 % intervals covering | tree: reported relative SE | tree / "
            "best |", "|---|---|---|---|---|---|---|"]
    g = t.groupby(["estimator", "budget_seconds"], observed=True, sort=False)
    for (est, _), x in g:
        rows.append(f"| {est} | {x['cpu'].median():.1f} | {x['error'].abs().median():.1%} | "
                    f"{_pct(x['rel_se'].median())} | {int(x['covers'].sum())} of {len(x)} | "
                    f"{x['tree_rel_se'].median():.1%} | "
                    f"{', '.join(f'{v:.2f}' for v in x['tree_vs_best'])} |")
    return "\n".join(rows)


def _pct(x: float) -> str:
    """``x`` as a percentage, ``-`` when it is not a number (a sum of 0 tours has no
    relative standard error)."""
    return f"{x:.1%}" if math.isfinite(x) else "-"


def draw(t: pd.DataFrame, path: Path) -> None:
    """Two panels against CPU seconds (log-log): the tours' relative error (points, one
    per seed) with the reported relative standard error (line, median), and the tree's
    reported relative standard error."""
    import matplotlib  # heavy: only when drawing
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # heavy: only when drawing

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for est, x in t.groupby("estimator", observed=True, sort=False):
        med = x.groupby("budget_seconds").agg(cpu=("cpu", "median"), se=("rel_se", "median"),
                                              tse=("tree_rel_se", "median"))
        line, = left.plot(med["cpu"], med["se"], "-", label=f"{est}: reported SE")
        left.plot(x["cpu"], x["error"].abs().clip(lower=1e-4), "o", color=line.get_color(),
                  alpha=0.7, label=f"{est}: |error|, each seed")
        right.plot(med["cpu"], med["tse"], "o-", color=line.get_color(), label=est)
    for ax, title in ((left, "8 x 8 open tours (A165134): relative error"),
                      (right, "plain-backtracking tree: reported relative SE")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("CPU seconds over the 64 starts (sum of cpu_ns)")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    left.set_ylabel("relative to the count")
    left.legend(fontsize=6, framealpha=0.6, loc="lower left")
    right.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", help="a results folder of the config")
    parser.add_argument("--out", default="results/estimators-8x8-equal-time",
                        help="where to run the config")
    parser.add_argument("--figure", default=str(FIGURE))
    args = parser.parse_args(argv)
    import btlab  # heavy: Ray and numba load with it

    if args.source:
        df = btlab.load(args.source)
    else:
        df = btlab.run(str(CONFIG), out=args.out, workers=2, yes=True)
    t = totals(df[df["status"].astype(str) != "error"])
    print(table(t))
    draw(t, Path(args.figure))
    print(f"figure: {args.figure}")
    pooled = t.groupby("estimator", observed=True)["tours"].mean()
    for est, v in pooled.items():
        print(f"{est}: mean of the runs {v:.5g} tours ({v / TOURS_8X8 - 1:+.2%})"
              if math.isfinite(v) else f"{est}: no estimate")


if __name__ == "__main__":
    main()
