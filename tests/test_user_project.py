"""A user's project with packages of its own named ``experiments`` and ``runner``.

Before btlab had one import name its own top-level ``experiments`` package
shadowed a user's: ``heuristic: "experiments.my_rule:rule"`` exited 2 with "no
module named 'experiments.my_rule'" when run from the very folder that holds
it. Here a project holds ``experiments/__init__.py``, ``experiments/my_rule.py``
(Warnsdorff's rule with a stable sort, a plug-in heuristic) and
``runner/__init__.py``; ``btlab run`` from that folder, on the serial backend
and on Ray, gives the plug-in's trials exactly the counters of the built-in
``warnsdorff``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from btlab.problems import plugins

COUNTERS = ["status", "nodes", "backtracks", "dead_ends", "checks", "solutions", "max_depth"]
STARTS = [(0, 0), (0, 1), (1, 2), (2, 2), (3, 5)]
RULE = "experiments.my_rule:rule"


def btlab_command() -> list[str]:
    """The ``btlab`` script beside this Python (as an install makes it), else ``-m btlab``."""
    script = Path(sys.executable).parent / "btlab"
    return [str(script)] if script.exists() else [sys.executable, "-m", "btlab"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "my-project"
    (root / "experiments").mkdir(parents=True)
    (root / "runner").mkdir()
    (root / "experiments" / "__init__.py").write_text('"""My experiments."""\n')
    (root / "experiments" / "my_rule.py").write_text(textwrap.dedent('''\
        """Warnsdorff's rule as a plug-in: fewest onward squares first, ties in move order."""


        def rule(board, square, candidates):
            return sorted(candidates, key=lambda s: board.onward(*s))
    '''))
    (root / "runner" / "__init__.py").write_text('"""My runner: nothing of btlab."""\n')
    starts = ", ".join(f"[{r}, {c}]" for r, c in STARTS)
    (root / "my_rule.yaml").write_text(textwrap.dedent(f"""\
        name: my-rule
        problem: knights_tour
        fixed: {{board: [8, 8], strategy: recursive, mode: first}}
        matrix:
          heuristic: [warnsdorff, "{RULE}"]
          start: [{starts}]
        budget: {{nodes: 20_000}}
        seed: 2026
    """))
    return root


def run_in(project: Path, backend: str) -> pd.DataFrame:
    env = {**os.environ, "RAY_ADDRESS": ""}
    r = subprocess.run([*btlab_command(), "run", "my_rule.yaml", "--backend", backend,
                        "--out", f"results/{backend}", "--quiet"], cwd=project, env=env,
                       text=True, capture_output=True, timeout=300, check=False)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert f"10 trials, 0 already in results/{backend}, 10 to run ({backend} backend" in r.stdout
    return pd.read_parquet(project / "results" / backend)


def plugin_equals_builtin(df: pd.DataFrame) -> pd.DataFrame:
    assert len(df) == 10 and df["error"].isna().all()
    by = {h: g.set_index(["start_row", "start_col"]).sort_index()
          for h, g in df.groupby("heuristic")}
    builtin, plugin = by["warnsdorff"], by[RULE]
    assert list(plugin.index) == sorted(STARTS)
    pd.testing.assert_frame_equal(plugin[COUNTERS], builtin[COUNTERS])
    assert [list(s) for s in plugin["solution"]] == [list(s) for s in builtin["solution"]]
    assert (plugin["status"] == "solved").all()
    assert plugin.loc[(3, 5), "backtracks"] == 46 and plugin.loc[(0, 0), "backtracks"] == 0
    # the plug-in's provenance is the user's package, hashed whole
    hashes = {json.loads(p)[RULE] for p in plugin["plugins"]}
    assert len(hashes) == 1 and builtin["plugins"].isna().all()
    return plugin[COUNTERS]


def test_user_experiments_package_serial(project, monkeypatch):
    serial = plugin_equals_builtin(run_in(project, "serial"))
    assert serial["nodes"].tolist() == [64, 64, 64, 64, 110]
    # the hash is of the user's experiments package (both of its files)
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    for name in [n for n in sys.modules if n == "experiments" or n.startswith("experiments.")]:
        monkeypatch.delitem(sys.modules, name)
    digest = plugins.source_hash(RULE)
    df = pd.read_parquet(project / "results" / "serial")
    assert {json.loads(p)[RULE] for p in df["plugins"].dropna()} == {digest}
    assert Path(sys.modules["experiments"].__file__).parent == project / "experiments"


@pytest.mark.slow   # 20 s: a Ray of its own starts in the child
def test_user_experiments_package_on_ray(project):
    serial = plugin_equals_builtin(run_in(project, "serial"))
    ray = run_in(project, "ray")
    assert ray["node_id"].notna().all()
    pd.testing.assert_frame_equal(plugin_equals_builtin(ray), serial)
