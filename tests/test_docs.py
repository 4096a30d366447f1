"""Docs that cannot drift: every fenced block of README.md and docs/*.md is run or validated.

Every fenced block (```bash, ```python, ```yaml, ```text and unlabelled ones) of
README.md and docs/*.md is found with its file and line and must be listed in
:data:`BLOCKS`, keyed by ``(file, the start of the block's first line)``. A block
added to the docs without an entry fails :func:`test_every_block_is_classified`
with the line to add. Each entry says what is done with the block:

* ``fast``: run by a test of the default suite (``btlab`` commands through
  :func:`btlab.cli.main.main`, the same as ``python -m btlab``, in a temporary working
  folder holding copies of ``configs/``; Python blocks executed in that folder, in
  file order, in one namespace, after the results they read were made there).
* ``slow``: run by a ``@pytest.mark.slow`` test, as written (full budgets).
* ``validated``: not run, because it needs an outside service (a machine of its own,
  a cloud account, S3) or hours of work; its commands are parsed
  (``btlab.cli.main._parser().parse_args``, Ray's own ``click`` parser for ``ray``
  commands, placeholders such as HEAD_IP replaced) and its configs checked
  (``btlab.config.model.load_config`` / ``parse_config``, or ``yaml.safe_load`` for a cluster
  YAML). The reason is in the entry. Python blocks that read a results folder too long to
  make in a test (the 10^9 plain-backtracking baseline) are compiled, and run with their
  output compared when environment variables name real folders (:data:`BASELINE_ENV`).
* ``output``: printed output shown in the docs, not a command: compared with what
  the command printed where it is deterministic, otherwise said to be measured once.
* ``contract``: docs/extending.md, whose blocks tests/test_contract.py runs;
  :func:`test_extending_md_stays_covered` checks that it still does.

Long configs are run in the default suite from a copy with a smaller node budget
(``small_copy``; ``btlab run CONFIG key=value`` overrides do not exist yet on this
branch, so the copy is written to the temporary folder). Budgets there are far
below the docs' own, so the default suite checks that the blocks run and the figures
that do not depend on the budget (192 rows, 27 compared columns); the slow tests
compare the counter outputs with the docs.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from btlab.cli.main import _parser, main
from btlab.config.model import load_config, parse_config

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]
PYTHON = sys.executable

FAST, SLOW, VALIDATED, OUTPUT, CONTRACT = "fast", "slow", "validated", "output", "contract"

#: Node budget of the default suite's copies of the configs.
SMALL_NODES = 3_000


# --------------------------------------------------------------------------- blocks


@dataclass(frozen=True)
class Block:
    file: str          # relative to the repository, e.g. "docs/analysis.md"
    line: int          # 1-based line of the opening fence
    lang: str          # "bash", "python", "yaml", "text" or ""
    text: str          # the lines between the fences, each ending with a newline

    @property
    def first(self) -> str:
        return next((ln.strip() for ln in self.text.splitlines() if ln.strip()), "")

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def extract(file: str) -> list[Block]:
    """The fenced blocks of one Markdown file, in order."""
    lines = (ROOT / file).read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = re.match(r"^```([A-Za-z0-9_+-]*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        assert j < len(lines), f"{file}:{i + 1}: fence never closed"
        out.append(Block(file, i + 1, m.group(1), "".join(ln + "\n" for ln in lines[i + 1:j])))
        i = j + 1
    return out


def all_blocks() -> list[Block]:
    return [b for f in DOC_FILES for b in extract(f)]


#: (file, start of the block's first line) -> (kind, what is done and why, the tests).
BLOCKS: dict[tuple[str, str], tuple[str, str, tuple[str, ...]]] = {
    # ---- docs/architecture.md
    ("docs/architecture.md", "errors"): (
        VALIDATED, "the layer order: every line a room of btlab, every room named once; "
        "tests/test_structure.py holds the imports to it", ("test_architecture_layers",)),
    ("docs/architecture.md", "pip install -q --no-deps --target build/typecheck"): (
        SLOW, "run in a copy of the repository with this interpreter's pip and mypy",
        ("test_architecture_typecheck_slow",)),
    # ---- docs/config.md
    ("docs/config.md", "name: estimators-5x5"): (
        FAST, "parsed and expanded: three trials, one per estimator, three ids, knuth's as "
        "without the key", ("test_estimator_key.py::test_the_docs_config_example_is_what_the_"
                            "tests_expand",)),
    # ---- docs/library.md
    ("docs/library.md", "import btlab"): (
        FAST, "the Python blocks run in order in one namespace, in a folder holding copies "
        "of configs/ with a node budget of 3,000 (192 rows asserted), Ray from the session "
        "fixture", ("test_library.py::test_library_md_blocks",)),
    ("docs/library.md", "config = {"): (
        FAST, "as the block above", ("test_library.py::test_library_md_blocks",)),
    ("docs/library.md", "import ray"): (
        FAST, "as the block above: Ray is already started, so ray.init is not called",
        ("test_library.py::test_library_md_blocks",)),
    ("docs/library.md", "page = btlab.report("): (
        FAST, "as the block above; report.html written", (
            "test_library.py::test_library_md_blocks",)),
    ("docs/library.md", "try:"): (
        FAST, "as the block above", ("test_library.py::test_library_md_blocks",)),
    # ---- README.md
    ("README.md", "python3.11 -m venv .venv && .venv/bin/pip install -q . &&"): (
        FAST, "install steps parsed (pyproject has the btlab script); the run: a copy with a "
        "small budget on Ray (fast), the config as written on Ray (slow); a real install into "
        "a fresh venv is slow", ("test_quick_start_fast", "test_quick_start_slow",
                                 "test_quick_start_real_install")),
    ("README.md", "python3.11 -m venv .venv && .venv/bin/pip install -q '.[test]'"): (
        SLOW, "install steps parsed (fast); ruff and mypy run (slow); the pytest step is this "
        "suite itself, so it is collected (--collect-only), not run from inside itself",
        ("test_quick_start_checks_parse", "test_quick_start_checks_slow")),
    ("README.md", "import pandas as pd"): (
        FAST, "run on the quick start's rows; '192 rows' and the censoring-aware lines asserted",
        ("test_readme_python_fast", "test_quick_start_slow")),
    ("README.md", "Knight's tour: trials by status, one row per heuristic"): (
        OUTPUT, "the quick start's headline tables: compared with `btlab show` of the full run "
        "(slow)", ("test_quick_start_slow",)),
    ("README.md", "Finding: Heuristic warnsdorff finds a tour from all 64 starts"): (
        OUTPUT, "the quick start's finding: compared, spaces folded, with the paragraph "
        "`btlab show` of the full run begins with (slow)", ("test_quick_start_slow",)),
    ("README.md", "name: warnsdorff-64-starts"): (
        FAST, "a config: parse_config; it expands to the trials of "
        "configs/warnsdorff_64_starts.yaml", ("test_readme_config_blocks",)),
    ("docs/queens.md", ".venv/bin/btlab run configs/queens_algorithms.yaml"): (
        FAST, "a copy with a small budget (fast); as written (slow: brute force and Amb up to "
        "n = 12, minutes)", ("test_queens_algorithms_fast", "test_queens_algorithms_slow")),
    ("README.md", "btlab run CONFIG [KEY=VALUE ...]"): (
        VALIDATED, "a synopsis, not a command: every option parsed by the CLI's parser",
        ("test_readme_synopsis",)),
    ("docs/compiled.md", "fixed: {board: [8, 8], strategy: iterative, engine: compiled"): (
        FAST, "a config fragment: put into the main config and checked with parse_config",
        ("test_readme_config_blocks",)),
    ("docs/benchmarks.md", "btlab bench: 2 cores, Python 3.11.7"): (
        OUTPUT, "output of `python -m bench`, measured once on a shared machine (timings; the "
        "bench needs a C compiler and minutes); not rerun", ()),
    ("docs/troubleshooting.md", "btlab: sweep.yaml:5:21: error at matrix.heuristic[1]"): (
        FAST, "the error message: reproduced with the config the text describes",
        ("test_readme_error_message",)),
    ("docs/benchmarks.md", "trial                      run                 seconds"): (
        OUTPUT, "output of `python -m bench.split`, measured once in the same run as the table "
        "above (timings); not rerun", ()),
    ("README.md", "# the main job, the 10^9 plain-backtracking baseline, one report"): (
        VALIDATED, "a billion placements per start, many minutes on 2 cores: each command "
        "parsed, the configs loaded (the main job runs in the quick start; the report of "
        "several folders in the report tests)", ("test_plain_baseline_commands",)),
    ("README.md", "btlab validate configs/warnsdorff_64_starts.yaml 'fixed.board=[6,6]'"): (
        FAST, "the two override examples: validated with their trial counts (72, 64); the run "
        "runs on a small copy of the config", ("test_readme_overrides",)),
    ("README.md", 'import btlab; df = btlab.run("configs/warnsdorff_64_starts.yaml"'): (
        FAST, "the library call: run on a 5 x 5 copy of the config (75 rows), skipped while "
        "btlab has no run()", ("test_readme_library_fast",)),
    # ---- docs/analysis.md
    ("docs/analysis.md", "import pandas as pd"): (
        FAST, "section 1 blocks run on the quick start's rows (fast: small budget, 192 rows "
        "asserted; slow: full budget, outputs compared)",
        ("test_analysis_fast", "test_analysis_slow")),
    ("docs/analysis.md", "(192, "): (
        OUTPUT, "compared (slow)", ("test_analysis_slow",)),
    ("docs/analysis.md", "import duckdb"): (
        FAST, "section 6: pandas, Polars and DuckDB (its glob) read the quick start's folder",
        ("test_analysis_fast", "test_analysis_slow")),
    ("docs/analysis.md", "192 192"): (
        OUTPUT, "compared (fast: the row counts do not depend on the budget)",
        ("test_analysis_fast",)),
    ("docs/analysis.md", 'cmp = analysis.compare(df, baseline={"heuristic": "none"},'): (
        FAST, "section 1", ("test_analysis_fast", "test_analysis_slow")),
    ("docs/analysis.md", "backtracks: treatment heuristic=warnsdorff against baseline "
                         "heuristic=none"): (
        OUTPUT, "compared (slow)", ("test_analysis_slow",)),
    ("docs/analysis.md", 'print(analysis.start_grid(cmp.trials, "reduction")'): (
        FAST, "section 1", ("test_analysis_fast", "test_analysis_slow")),
    ("docs/analysis.md", "col       0       1       2"): (
        OUTPUT, "compared (slow)", ("test_analysis_slow",)),
    ("docs/analysis.md", 'cmp = analysis.compare(df, baseline={"heuristic": "static_degree"},'): (
        FAST, "section 1; writes docs/img/warnsdorff-reduction.png in the working folder",
        ("test_analysis_fast", "test_analysis_slow")),
    ("docs/analysis.md", "backtracks: treatment heuristic=warnsdorff against baseline "
                         "heuristic=static_degree"): (
        OUTPUT, "compared (slow)", ("test_analysis_slow",)),
    ("docs/analysis.md", 'curves = analysis.survival(df, by="heuristic", metric="nodes")'): (
        FAST, "section 1; writes docs/img/survival-main.png in the working folder",
        ("test_analysis_fast", "test_analysis_slow")),
    ("docs/analysis.md", "heuristic         x  survival  ci_low  ci_high"): (
        OUTPUT, "compared (slow)", ("test_analysis_slow",)),
    ("docs/analysis.md", 'qs = analysis.quantiles(df, by="heuristic", metric="nodes"'): (
        FAST, "section 1", ("test_analysis_fast", "test_analysis_slow")),
    ("docs/analysis.md", "heuristic   q       value      ci_low     ci_high  reached"): (
        OUTPUT, "compared (slow)", ("test_analysis_slow",)),
    ("docs/analysis.md", "# the 10^9 plain-backtracking baseline beside the main job"): (
        VALIDATED, "a billion placements per start, many minutes on 2 cores: each command "
        "parsed, the config loaded", ("test_plain_baseline_commands",)),
    ("docs/analysis.md", "both = analysis.load([\"results/warnsdorff-64-starts\", "
                         "\"results/plain-backtracking-64-starts\"])"): (
        VALIDATED, "reads the 10^9 plain-backtracking folder (5 minutes to make): compiled "
        "always; run, output compared, when BTLAB_DOCS_MAIN and BTLAB_DOCS_PLAIN name the two "
        "results folders", ("test_analysis_baseline",)),
    ("docs/analysis.md", "trials  censored      budget"): (
        OUTPUT, "compared when the 10^9 folder is given", ("test_analysis_baseline",)),
    ("docs/analysis.md", "cmp = analysis.compare(both, baseline={\"heuristic\": \"none\"},"): (
        VALIDATED, "as the block above", ("test_analysis_baseline",)),
    ("docs/analysis.md", "nodes: treatment heuristic=warnsdorff against baseline "
                         "heuristic=none"): (
        OUTPUT, "compared when the 10^9 folder is given", ("test_analysis_baseline",)),
    ("docs/analysis.md", "btlab run configs/queens_amb_vs_recursion.yaml --backend serial"): (
        VALIDATED, "minutes of Amb at n = 11: the command parsed and its config loaded; the "
        "block below runs on a smaller sweep of the same shape",
        ("test_analysis_queens_amb_command",)),
    ("docs/analysis.md", "n baseline treatment ratio"): (
        OUTPUT, "CPU times, measured once on a shared machine (the text says how); not rerun",
        ()),
    ("docs/analysis.md", 'q = analysis.load("results/queens-amb-vs-recursion")'): (
        FAST, "no config in configs/ writes results/queens-amb-vs-recursion: the test writes the "
        "sweep the text describes (n = 4..6, 2 repeats fast; n = 4..10, 5 repeats slow: n = 11 "
        "and 12 under Amb are tens of minutes) and runs the block on it",
        ("test_analysis_fast", "test_analysis_slow")),
    ("docs/analysis.md", 'df = analysis.load("results/recursion-vs-iteration")'): (
        FAST, "sections 2-3 run on configs/recursion_vs_iteration_by_size.yaml (fast: small "
        "budget, 2 repeats; slow: as written, serial)",
        ("test_analysis_fast", "test_analysis_slow")),
    ("docs/analysis.md", "rows baseline_status  baseline  treatment  ratio ratio_bound"): (
        OUTPUT, "counters: compared (slow)", ("test_analysis_slow",)),
    ("docs/analysis.md", 'cost = analysis.compare(df, {"strategy": "recursive"}, '
                         '{"strategy": "iterative"},'): (
        FAST, "section 2", ("test_analysis_fast", "test_analysis_slow")),
    ("docs/analysis.md", "rows baseline treatment   ratio reduction"): (
        OUTPUT, "CPU times, measured once on a shared machine: the shape is compared (slow)",
        ("test_analysis_slow",)),
    ("docs/analysis.md", "per_node = (analysis.aggregate_repeats(df)"): (
        FAST, "section 2; writes docs/img/recursion-vs-iteration.png in the working folder",
        ("test_analysis_fast", "test_analysis_slow")),
    ("docs/analysis.md", "strategy  recursive  iterative  iterative / recursive"): (
        OUTPUT, "CPU times per placement, measured once: the shape is compared (slow)",
        ("test_analysis_slow",)),
    ("docs/analysis.md", 'spread = pd.concat({"wall": analysis.timing_spread(df, "wall_ns"),'): (
        FAST, "section 3", ("test_analysis_fast", "test_analysis_slow")),
    ("docs/analysis.md", "wall                                         cpu"): (
        OUTPUT, "timings, measured once: the shape is compared (slow)", ("test_analysis_slow",)),
    ("docs/analysis.md", 'per_repeat = df.pivot_table(index=["rows", "strategy"]'): (
        FAST, "section 3", ("test_analysis_fast", "test_analysis_slow")),
    ("docs/analysis.md", "repeat                0        1        2        3        4"): (
        OUTPUT, "timings, measured once: the shape is compared (slow)", ("test_analysis_slow",)),
    ("docs/analysis.md", "btlab run configs/heavy_tails_8x8.yaml"): (
        VALIDATED, "2,000 trials of up to 10^7 placements, about 10 minutes on 2 shared cores: "
        "parsed, the config loaded and counted (fast); run as written (slow)",
        ("test_studies_commands", "test_studies_slow")),
    ("docs/analysis.md", 'ht = analysis.load("results/heavy-tails-8x8")'): (
        FAST, "section 4: run on a small run of the config (a few seeds, 3 x 10^5 placements; "
        "fast), on the config's own results (slow), outputs compared there",
        ("test_studies_fast", "test_studies_slow")),
    ("docs/analysis.md", "restarts  trials  solved  share"): (
        OUTPUT, "counters: compared (slow)", ("test_studies_slow",)),
    ("docs/analysis.md", 'done = ht[ht["status"] == "solved"]'): (
        FAST, "section 4", ("test_studies_fast", "test_studies_slow")),
    ("docs/analysis.md", "mean (all, >=)  finished"): (
        OUTPUT, "counters: compared (slow)", ("test_studies_slow",)),
    ("docs/analysis.md", "from lifelines import WeibullFitter"): (
        FAST, "section 4; writes docs/img/heavy-tails-survival.png and "
        "heavy-tails-finished.png in the working folder",
        ("test_studies_fast", "test_studies_slow")),
    ("docs/analysis.md", "none: Weibull shape"): (
        OUTPUT, "fits of the counters: compared (slow)", ("test_studies_slow",)),
    ("docs/analysis.md", "btlab run configs/warnsdorff_random_ties.yaml"): (
        VALIDATED, "3,600 trials, a minute or two on 2 shared cores: parsed, the config loaded "
        "and counted (fast); run as written (slow)",
        ("test_studies_commands", "test_studies_slow")),
    ("docs/analysis.md", 'wr = analysis.load("results/warnsdorff-random-ties")'): (
        FAST, "section 5: run on a small run of the config (n = 8 and 12, 5 seeds; fast), on "
        "the config's own results (slow), outputs compared there",
        ("test_studies_fast", "test_studies_slow")),
    ("docs/analysis.md", "rows  trials  solved  share  ci_low  ci_high  errors  stuck_at"): (
        OUTPUT, "counters: compared (slow)", ("test_studies_slow",)),
    ("docs/analysis.md", 'restarted = wr[wr["restarts"] != "none"]'): (
        FAST, "section 5; writes docs/img/warnsdorff-random-ties-greedy.png and "
        "warnsdorff-random-ties-restarts.png", ("test_studies_fast", "test_studies_slow")),
    ("docs/analysis.md", "solved attempts attempts_max nodes_median"): (
        OUTPUT, "counters: compared (slow)", ("test_studies_slow",)),
    ("docs/analysis.md", "btlab run configs/warnsdorff_64_starts.yaml 'fixed.board=[5,5]' "
                         "budget.nodes=2000 repeats=2 --out results/w5 "): (
        FAST, "listing and formats: run as written (serial, seconds), ls and show of the root "
        "compared", ("test_listing_formats.py::test_analysis_md_listing_blocks",)),
    ("docs/analysis.md", "sweeps under results"): (
        OUTPUT, "compared cell by cell but the last run's time",
        ("test_listing_formats.py::test_analysis_md_listing_blocks",)),
    ("docs/analysis.md", "btlab show results/w5 --format json > w5.json"): (
        FAST, "run (the redirections write the files), the CSV parsed",
        ("test_listing_formats.py::test_analysis_md_listing_blocks",)),
    ("docs/analysis.md", "import json"): (
        FAST, "run on the files the block above wrote, output compared",
        ("test_listing_formats.py::test_analysis_md_listing_blocks",)),
    ("docs/analysis.md", "[\"Knight's tour: trials by status"): (
        OUTPUT, "compared exactly (counters: the same on every machine)",
        ("test_listing_formats.py::test_analysis_md_listing_blocks",)),
    ("docs/analysis.md", "btlab run configs/warnsdorff_64_starts.yaml 'fixed.board=[5,5]' "
                         "budget.nodes=2000 repeats=2 --out results/w5-again"): (
        FAST, "run as written; compare's exit status checked against its SLOWER marks",
        ("test_listing_formats.py::test_analysis_md_listing_blocks",)),
    ("docs/analysis.md", "timings: median cpu_ns ratio B/A"): (
        OUTPUT, "compared on a copy with cpu_ns x 1.5 but the milliseconds (one run's)",
        ("test_listing_formats.py::test_analysis_md_listing_blocks",)),
    # ---- docs/cluster.md
    ("docs/cluster.md", "python3.11 -m venv ~/btlab-venv && ~/btlab-venv/bin/pip install"): (
        VALIDATED, "installs on other machines: the lines checked (a venv, pip install of the "
        "clone, activate); the same install is run by test_quick_start_real_install (slow)",
        ("test_cluster_install_lines",)),
    ("docs/cluster.md", "ray start --head --port=6379 --num-cpus=1"): (
        SLOW, "each command parsed (Ray's parser, the CLI's parser), bash -n, its own "
        "--temp-dir, `ray status` by address, stopped by its PIDs and no `ray stop` (fast); "
        "run as a bash script by tests/test_cluster.py with a free port, a temporary "
        "--temp-dir and a small budget (slow)",
        ("test_cluster_one_machine_commands", "test_cluster_one_machine_recipe",
         "test_cluster.py::test_the_one_machine_recipe_runs_as_written")),
    ("docs/cluster.md", "# on the head machine: make a token"): (
        VALIDATED, "each command parsed; tests/test_cluster.py runs the token sequence "
        "(test_token_auth_cluster_as_documented, slow)", ("test_cluster_one_machine_commands",)),
    ("docs/cluster.md", "# on the head machine"): (
        VALIDATED, "needs several machines: each `ray start` / `ray status` parsed with Ray's "
        "own parser (HEAD_IP -> 127.0.0.1); tests/test_cluster.py runs a cluster on one machine",
        ("test_cluster_ray_start",)),
    ("docs/cluster.md", "cluster_name: btlab"): (
        VALIDATED, "needs an AWS account: yaml.safe_load and the cluster launcher's required keys",
        ("test_cluster_yaml",)),
    ("docs/cluster.md", "btlab run configs/warnsdorff_64_starts.yaml --address HEAD_IP:6379"): (
        VALIDATED, "needs a cluster: parsed (HEAD_IP -> 127.0.0.1), config loaded; the same run "
        "on the local Ray is the quick start", ("test_cluster_commands_parse",)),
    ("docs/cluster.md", "btlab run configs/warnsdorff_64_starts.yaml --address HEAD_IP:6379 "
                        "--out s3://"): (
        FAST, "s3:// and --address lines need S3 and a cluster: parsed; the file:// line run "
        "(small budget, URI under the temporary folder), and show / compare run on it with "
        "s3://my-bucket replaced by that file:// URI", ("test_cluster_out_uri",)),
    ("docs/cluster.md", "$ btlab show results/warnsdorff-64-starts --by node"): (
        FAST, "run on the quick start's Ray rows; hosts and ids are this machine's",
        ("test_cluster_show_by_node",)),
    ("docs/cluster.md", "$ btlab run configs/warnsdorff_64_starts.yaml --backend serial "
                        "--out results/local"): (
        FAST, "serial run and compare as written (small budget); the --address HEAD_IP run "
        "parsed, then run on the local Ray; the compare output (192 trials, 27 columns, "
        "IDENTICAL) asserted", ("test_cluster_compare",)),
    ("docs/cluster.md", "$ btlab run configs/plain_backtracking_exact.yaml --address HEAD_IP"): (
        VALIDATED, "10^11 placements per start, hours on a cluster: parsed, config loaded",
        ("test_cluster_commands_parse",)),
}

#: Lines of documented output that the slow comparison skips, and why.
KNOWN_DRIFT = {
}


def test_known_drift_is_still_there():
    """An entry of KNOWN_DRIFT whose text the docs no longer hold must go."""
    for (file, text), _ in KNOWN_DRIFT.items():
        assert text in (ROOT / file).read_text(encoding="utf-8"), (
            f"{file} no longer holds {text!r}: remove it from KNOWN_DRIFT in tests/test_docs.py")


def classify(block: Block) -> tuple[tuple[str, str], tuple[str, str, tuple[str, ...]]] | None:
    if block.file == "docs/extending.md":
        return (block.file, "*"), (CONTRACT, "run by tests/test_contract.py", (
            "test_extending_md_stays_covered",))
    # the longest snippet that starts the block's first line
    hits = sorted(((k, v) for k, v in BLOCKS.items()
                   if k[0] == block.file and block.first.startswith(k[1])),
                  key=lambda kv: -len(kv[0][1]))
    return hits[0] if hits else None


def block(file: str, snippet: str) -> Block:
    """The block of ``file`` that the entry ``(file, snippet)`` of BLOCKS classifies."""
    found = [b for b in extract(file) if (c := classify(b)) and c[0] == (file, snippet)]
    assert len(found) == 1, f"{file}: {len(found)} blocks start with {snippet!r}"
    return found[0]


def test_every_block_is_classified():
    missing = [b for b in all_blocks() if classify(b) is None]
    assert not missing, (
        "fenced blocks of the docs that tests/test_docs.py does not know:\n" + "\n".join(
            f"  {b.where} ({b.lang or 'no language'}): add to BLOCKS in tests/test_docs.py\n"
            f"    ({b.file!r}, {b.first[:60]!r}): (FAST | SLOW | VALIDATED | OUTPUT, 'what is "
            "done and why', ('the test that does it',)),\n  and run or validate it there"
            for b in missing))


def test_no_stale_entries():
    for (file, snippet) in BLOCKS:
        assert sum(bool((c := classify(b)) and c[0] == (file, snippet))
                   for b in extract(file)) == 1, (
            f"BLOCKS entry ({file!r}, {snippet!r}) matches no block (or several): the docs "
            "changed; update the entry")


def test_entries_name_real_tests():
    for key, (kind, reason, tests) in BLOCKS.items():
        assert kind in (FAST, SLOW, VALIDATED, OUTPUT), key
        assert reason, key
        for name in tests:
            file, _, test = name.rpartition("::")  # FILE::TEST: a test of another file
            found = (re.search(rf"^def {test}\(", (ROOT / "tests" / file).read_text(), re.M)
                     if file else callable(globals().get(name)))
            assert found, f"{key}: no test named {name}"
        if kind != OUTPUT:
            assert tests, f"{key}: a {kind} block needs the test that runs or validates it"


def test_extending_md_stays_covered():
    """docs/extending.md: every block is one tests/test_contract.py runs, by its marker, or a
    btlab command list over those files whose subcommands test_contract.py calls."""
    contract = (ROOT / "tests" / "test_contract.py").read_text(encoding="utf-8")
    text = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    for b in extract("docs/extending.md"):
        before = text.splitlines()[b.line - 2] if b.line >= 2 else ""
        m = re.match(r"<!-- (?:file|example): (\S+) -->", before)
        if m:
            assert f'["{m.group(1)}"]' in contract, f"{b.where}: {m.group(1)} not used"
            continue
        assert b.lang == "bash", f"{b.where}: an unmarked block test_contract.py does not run"
        for argv in commands(b):
            assert argv.argv[0] == "btlab", b.where
            sub, file = argv.argv[1], argv.argv[2]
            assert f'main(["{sub}"' in contract, f"{b.where}: test_contract never runs {sub}"
            stem = Path(file).name if file.endswith(".yaml") else None
            if stem:
                assert f'["{stem}"]' in contract, f"{b.where}: {stem} not read by the tests"


# --------------------------------------------------------------------------- commands


@dataclass(frozen=True)
class Command:
    env: dict[str, str]
    argv: list[str]


def commands(b: Block) -> list[Command]:
    """The commands of a shell block: one per line and per ``&&``; comments dropped; in a
    block without a language only the ``$ ``-prompted lines are commands."""
    out: list[Command] = []
    for line in b.text.splitlines():
        if not b.lang:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            part, words = words[:cut], words[cut + 1:]
            env = {}
            while part and re.match(r"^[A-Z_][A-Z0-9_]*=", part[0]):
                k, _, v = part.pop(0).partition("=")
                env[k] = v
            out.append(Command(env, part))
    return out


def placeholders(argv: list[str]) -> list[str]:
    return [a.replace("HEAD_IP", "127.0.0.1") for a in argv]


def btlab_argv(cmd: Command) -> list[str] | None:
    """The arguments after ``btlab`` (or ``.venv/bin/btlab``), or None for another program."""
    if cmd.argv and Path(cmd.argv[0]).name == "btlab":
        return cmd.argv[1:]
    return None


def check_install(cmd: Command) -> None:
    """The quick start's install steps, parsed: a venv, then pip install of this project."""
    argv = cmd.argv
    if argv[:3] == ["python3.11", "-m", "venv"]:
        assert argv[3:] == [".venv"]
        return
    assert argv[:2] == [".venv/bin/pip", "install"], argv
    target = [a for a in argv[2:] if not a.startswith("-")]
    assert len(target) == 1
    spec = target[0]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["btlab"] == "btlab.cli.main:main"
    m = re.fullmatch(r"\.(?:\[(\w+)\])?", spec)
    assert m, spec
    if m.group(1):
        assert m.group(1) in project["optional-dependencies"]


def parse_btlab(argv: list[str]) -> Any:
    """``btlab ARGS`` parsed by the CLI's parser (placeholders replaced); the config of a
    run or validate loaded."""
    args = _parser().parse_args(placeholders(argv))
    if args.command in ("run", "validate"):
        load_config(ROOT / args.config)
    return args


def run_btlab(argv: list[str], cwd: Path) -> int:
    """``btlab ARGS`` in ``cwd``: :func:`btlab.cli.main.main`, as ``python -m btlab`` runs it."""
    with contextlib.chdir(cwd):
        return main(list(argv))


def small_copy(config: str, folder: Path, nodes: int = SMALL_NODES,
               **changes: Any) -> Path:
    """A copy of ``configs/<config>`` at ``folder/configs/<config>`` with at most ``nodes``
    placements per trial (and the top-level ``changes``). Stands in for
    ``btlab run CONFIG budget.nodes=N`` until the CLI takes overrides."""
    data = yaml.safe_load((ROOT / "configs" / config).read_text(encoding="utf-8"))
    data.setdefault("budget", {})["nodes"] = min(nodes, data.get("budget", {}).get("nodes")
                                                 or nodes)
    data.update(changes)
    out = folder / "configs" / config
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    load_config(out)
    return out


def workdir(root: Path) -> Path:
    """A working folder as the docs assume one: configs/ and docs/img/."""
    (root / "docs" / "img").mkdir(parents=True, exist_ok=True)
    (root / "configs").mkdir(exist_ok=True)
    return root


def run_doc_command(cmd: Command, cwd: Path) -> int:
    argv = btlab_argv(cmd)
    assert argv is not None, cmd
    assert not cmd.env, cmd
    return run_btlab(argv, cwd)


# --------------------------------------------------------------------------- python blocks


def run_python(blocks: list[Block], cwd: Path) -> list[str]:
    """Run the blocks in ``cwd``, in order, in one namespace; what each printed."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns: dict[str, Any] = {"__name__": "__doc__"}
    outs = []
    with contextlib.chdir(cwd):
        for b in blocks:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                try:
                    exec(compile(b.text, b.where, "exec"), ns)
                except Exception as exc:
                    raise AssertionError(f"{b.where} failed: {exc!r}") from exc
            outs.append(buf.getvalue())
            plt.close("all")
    return outs


# --------------------------------------------------------------------------- the quick start


QUICK = ("README.md", "python3.11 -m venv .venv && .venv/bin/pip install -q . &&")
QUICK_CHECKS = ("README.md", "python3.11 -m venv .venv && .venv/bin/pip install -q '.[test]'")


@pytest.fixture(scope="module")
def quick_start(tmp_path_factory, ray_session) -> Path:
    """The quick start in a working folder, on Ray, from a small-budget copy of the config;
    then the recursion-vs-iteration and Amb sweeps analysis.md reads (small, serial)."""
    wd = workdir(tmp_path_factory.mktemp("quick"))
    small_copy("warnsdorff_64_starts.yaml", wd)
    for cmd in commands(block(*QUICK)):
        if btlab_argv(cmd) is None:
            check_install(cmd)
        else:
            assert run_doc_command(cmd, wd) == 0
    small_copy("recursion_vs_iteration_by_size.yaml", wd, nodes=20_000, repeats=2)
    assert run_btlab(["run", "configs/recursion_vs_iteration_by_size.yaml", "--backend",
                      "serial", "--quiet"], wd) == 0
    amb_sweep(wd, [4, 5, 6], repeats=2)
    return wd


def amb_sweep(wd: Path, ns: list[int], repeats: int) -> None:
    """The sweep analysis.md section 2 describes, into results/queens-amb-vs-recursion."""
    cfg = wd / "queens_amb_vs_recursion.yaml"
    cfg.write_text(yaml.safe_dump({
        "name": "queens-amb-vs-recursion", "problem": "n_queens", "fixed": {"mode": "count"},
        "matrix": {"n": ns, "strategy": ["recursive", "amb"]}, "repeats": repeats,
        "seed": 2026}, sort_keys=False))
    assert run_btlab(["run", cfg.name, "--backend", "serial", "--quiet"], wd) == 0


def test_quick_start_fast(quick_start):
    df = pd.read_parquet(quick_start / "results" / "warnsdorff-64-starts")
    assert len(df) == 192 and df["error"].isna().all()
    assert df["node_id"].notna().all()            # ran on Ray
    assert (df["budget_nodes"] == SMALL_NODES).all()


def expression_values(b: Block, cwd: Path) -> tuple[dict[str, Any], list[Any]]:
    """Run block ``b`` in ``cwd`` as the interpreter would, statement by statement; the
    namespace and the value of each expression statement (what a REPL would show)."""
    import ast

    ns: dict[str, Any] = {"__name__": "__doc__"}
    values = []
    with contextlib.chdir(cwd):
        for stmt in ast.parse(b.text).body:
            if isinstance(stmt, ast.Expr):
                values.append(eval(compile(ast.Expression(stmt.value), b.where, "eval"), ns))
            else:
                exec(compile(ast.Module([stmt], []), b.where, "exec"), ns)
    return ns, values


def test_readme_python_fast(quick_start):
    b = block("README.md", "import pandas as pd")
    run_python([b], quick_start)
    assert "192 rows" in b.text and 'dtype_backend="numpy_nullable"' in b.text
    assert 'df[~df["censored"]]' in b.text  # describe() of exact values only
    assert len(pd.read_parquet(quick_start / "results" / "warnsdorff-64-starts")) == 192
    # what each line shows: censored counts, exact values only, bounds marked
    ns, (counted, described, summary) = expression_values(b, quick_start)
    df = ns["df"]
    assert str(df["censored"].dtype) == "boolean" and str(df["backtracks"].dtype) == "Int64"
    stopped = df["status"].isin(["node_limit", "time_limit"])
    assert stopped.any() and not stopped.all()  # the small budget censors some trials only
    assert counted.to_dict() == stopped.groupby(df["heuristic"]).sum().to_dict()
    finished = df[~stopped].groupby("heuristic")["backtracks"]
    assert described["count"].to_dict() == finished.count().astype(float).to_dict()
    assert described["max"].to_dict() == finished.max().astype(float).to_dict()
    for heuristic, row in summary.iterrows():
        bound = bool(stopped[df["heuristic"] == heuristic].any())
        assert str(row[("backtracks", "max")]).startswith(">=") == bound, (heuristic, row)


def test_quick_start_checks_parse():
    cmds = commands(block(*QUICK_CHECKS))
    for cmd in cmds[:2]:
        check_install(cmd)
    assert [c.argv for c in cmds[2:]] == [[".venv/bin/ruff", "check", "."], [".venv/bin/mypy"],
                                          [".venv/bin/python", "-m", "pytest"]]


def venv_tool(argv: list[str]) -> list[str]:
    """``.venv/bin/X ARGS`` -> the same tool of the interpreter running the tests."""
    name = Path(argv[0]).name
    return ([PYTHON, *argv[1:]] if name == "python"
            else [str(Path(PYTHON).parent / name), *argv[1:]])


@pytest.mark.slow
def test_quick_start_checks_slow():
    for cmd in commands(block(*QUICK_CHECKS))[2:]:
        argv = venv_tool(cmd.argv)
        if argv[1:] == ["-m", "pytest"]:
            argv += ["--collect-only", "-q"]        # this suite: collected, not run again
        r = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, f"{cmd.argv}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


def normalise(text: str) -> list[str]:
    """Lines with table borders and repeated spaces dropped, for comparing tables."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"[│┃┏┓┗┛┡┩└┘┌┐├┤┬┴┼━─╇╈╍═╭╮╯╰]", " ", line)
        line = " ".join(line.split())
        if line:
            out.append(line)
    return out


@pytest.fixture(scope="module")
def full_runs(tmp_path_factory, ray_session) -> Path:
    """The docs' own runs at their own budgets (slow): the quick start as written, on Ray;
    recursion-vs-iteration, serial as analysis.md says; the Amb sweep for n = 4..10."""
    wd = workdir(tmp_path_factory.mktemp("full"))
    for name in ("warnsdorff_64_starts.yaml", "recursion_vs_iteration_by_size.yaml",
                 "plain_backtracking_64_starts.yaml"):  # the baseline the finding names
        shutil.copy(ROOT / "configs" / name, wd / "configs" / name)
    for cmd in commands(block(*QUICK)):
        if btlab_argv(cmd) is not None:
            assert run_doc_command(cmd, wd) == 0
    assert run_btlab(["run", "configs/recursion_vs_iteration_by_size.yaml", "--backend",
                      "serial", "--quiet"], wd) == 0
    amb_sweep(wd, list(range(4, 11)), repeats=5)
    return wd


@pytest.mark.slow
def test_quick_start_slow(full_runs, capsys):
    df = pd.read_parquet(full_runs / "results" / "warnsdorff-64-starts")
    assert len(df) == 192 and df["node_id"].notna().all()
    run_python([block("README.md", "import pandas as pd")], full_runs)
    capsys.readouterr()
    assert run_btlab(["show", "results/warnsdorff-64-starts"], full_runs) == 0
    shown = normalise(capsys.readouterr().out)
    table = block("README.md", "Knight's tour: trials by status, one row per heuristic")
    for line in normalise(table.text):
        assert line in shown, f"{table.where}: {line!r} not in `btlab show`:\n" + "\n".join(shown)
    # show begins with the finding, word for word the README's (run from the clone's root,
    # where configs/plain_backtracking_64_starts.yaml is the baseline's config)
    said = block("README.md", "Finding: Heuristic warnsdorff finds a tour from all 64 starts")
    assert " ".join(shown).startswith(" ".join(said.text.split())), said.where


@pytest.mark.slow
def test_quick_start_real_install(tmp_path):
    """The quick start as typed, on a copy of the repository: a new venv, pip install . (from
    the package index: needs the network), the main job."""
    if shutil.which("python3.11") is None:
        pytest.skip("no python3.11")
    repo = tmp_path / "clone"
    shutil.copytree(ROOT, repo, ignore=shutil.ignore_patterns(
        ".venv", "results", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"))
    line = block(*QUICK).first
    r = subprocess.run(["bash", "-c", line], cwd=repo, capture_output=True, text=True,
                       timeout=3600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert len(pd.read_parquet(repo / "results" / "warnsdorff-64-starts")) == 192


# --------------------------------------------------------------------------- README, the rest


def test_readme_config_blocks():
    b = block("README.md", "name: warnsdorff-64-starts")
    cfg = parse_config(b.text, b.where)
    main_cfg = load_config(ROOT / "configs" / "warnsdorff_64_starts.yaml")
    from btlab.sweep.expand import iter_trials
    assert ([t.trial_id for t in iter_trials(cfg)]
            == [t.trial_id for t in iter_trials(main_cfg)])
    frag = block("docs/compiled.md", "fixed: {board: [8, 8], strategy: iterative, engine: compiled")
    data = yaml.safe_load((ROOT / "configs" / "warnsdorff_64_starts.yaml").read_text())
    data["fixed"] = yaml.safe_load(frag.text)["fixed"]
    data["matrix"] = {"start": "all"}
    parse_config(yaml.safe_dump(data), frag.where)


def test_analysis_queens_amb_command():
    b = block("docs/analysis.md", "btlab run configs/queens_amb_vs_recursion.yaml --backend serial")
    words = b.text.split()
    assert words[:2] == ["btlab", "run"]
    args = _parser().parse_args(words[1:])
    assert args.backend == "serial"
    assert load_config(ROOT / args.config).name == "queens-amb-vs-recursion"


def test_plain_baseline_commands():
    """The baseline blocks: the 10^9 plain config as the docs describe it, run beside the
    main job, and one report of both folders."""
    plain = load_config(ROOT / "configs" / "plain_backtracking_64_starts.yaml")
    model = plain.model
    assert model.name == "plain-backtracking-64-starts"
    assert model.budget.nodes == 1_000_000_000
    assert model.fixed["heuristic"] == "none" and model.fixed["engine"] == "compiled"
    assert model.fixed["mode"] == "first" and model.matrix["start"] == "all"
    assert model.split is None          # measured: split does not help first-mode tours here
    main_name = load_config(ROOT / "configs" / "warnsdorff_64_starts.yaml").model.name
    folders = [f"results/{main_name}", f"results/{model.name}"]
    for snippet, runs in (
            (("README.md", "# the main job, the 10^9 plain-backtracking baseline, one report"),
             ["configs/warnsdorff_64_starts.yaml", "configs/plain_backtracking_64_starts.yaml"]),
            (("docs/analysis.md", "# the 10^9 plain-backtracking baseline beside the main job"),
             ["configs/plain_backtracking_64_starts.yaml"])):
        argvs = [btlab_argv(cmd) for cmd in commands(block(*snippet))]
        assert all(a is not None for a in argvs), snippet
        parsed = [parse_btlab(a) for a in argvs if a is not None]
        assert [a.config for a in parsed if a.command == "run"] == runs, snippet
        [report] = [a for a in parsed if a.command == "report"]
        assert report.results == folders and report.output == "report.html", snippet


def test_readme_synopsis():
    b = block("README.md", "btlab run CONFIG [KEY=VALUE ...]")
    text = re.sub(r"\n\s+\[", " [", b.text)          # continuation lines
    fill = {"CONFIG": "configs/warnsdorff_64_starts.yaml", "DIR": "out",
            "RESULTS_DIR": "results/x", "HOST:PORT": "127.0.0.1:6379", "N": "2",
            "ROOT": "results", "NAME": "1", "RATIO": "1.1"}
    for line in text.splitlines():
        words = line.split()
        assert words[0] == "btlab"
        argv: list[str] = []
        for w in words[1:]:
            w = w.strip("[]")
            if w in ("...", ""):
                continue
            if w == "ray|serial":
                w = "serial"
            if w == "table|csv|json":
                w = "json"
            argv.append(fill.get(w, w))
        if argv == ["--version"]:  # prints the version and exits 0
            with pytest.raises(SystemExit) as done:
                parse_btlab(argv)
            assert done.value.code == 0
            continue
        parse_btlab(argv)

    # every subcommand of `btlab --help` and every long option of each, in the synopsis
    import argparse

    parser = _parser()
    [subs] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    lines = {ln.split()[1]: ln for ln in text.splitlines()}
    assert set(lines) == set(subs.choices) | {"--version"}, sorted(lines)
    for name, sub in subs.choices.items():
        for action in sub._actions:
            opts = action.option_strings
            if opts and "--help" not in opts:
                assert any(f"[{o}" in lines[name] for o in opts), (
                    f"README synopsis: btlab {name} lacks {opts[-1]}")


def test_readme_overrides(tmp_path, capsys):
    """The README's two override examples: the trial counts they give, the run on a small copy
    of the config (one heuristic, the new folder name)."""
    cmds = commands(block("README.md", "btlab validate configs/warnsdorff_64_starts.yaml "
                                       "'fixed.board=[6,6]'"))
    assert [c.argv[:2] for c in cmds] == [["btlab", "validate"], ["btlab", "run"]]
    counts = []
    for cmd in cmds:
        argv = btlab_argv(cmd)
        assert argv is not None
        capsys.readouterr()
        assert run_btlab(["validate", *argv[1:]], ROOT) == 0, argv
        out = " ".join(capsys.readouterr().out.split())
        counts.append(out.split("OK -- problem knights_tour, ")[1].split(" trials")[0])
    assert counts == ["72", "64"]                   # 36 starts x 2 heuristics; 64 starts
    wd = workdir(tmp_path)
    small_copy("warnsdorff_64_starts.yaml", wd)
    argv = btlab_argv(cmds[1])
    assert argv is not None
    assert run_btlab([*argv, "--backend", "serial", "--quiet"], wd) == 0
    df = pd.read_parquet(wd / "results" / "warnsdorff-only")
    assert len(df) == 64 and set(df["heuristic"]) == {"warnsdorff"}
    assert (df["budget_nodes"] == 10_000).all() and (df["status"] == "solved").all()


def test_readme_library_fast(tmp_path):
    """The README's library line, on a 5 x 5 copy of the main config (25 starts x 3
    heuristics), in a working folder: the DataFrame holds the config's 75 trials."""
    import btlab

    if not hasattr(btlab, "run"):
        pytest.skip("btlab.run is not on this branch yet")
    b = block("README.md", 'import btlab; df = btlab.run("configs/warnsdorff_64_starts.yaml"')
    wd = workdir(tmp_path)
    cfg = small_copy("warnsdorff_64_starts.yaml", wd)
    data = yaml.safe_load(cfg.read_text(encoding="utf-8"))
    data["fixed"]["board"] = [5, 5]
    cfg.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    ns: dict[str, Any] = {"__name__": "__doc__"}
    with contextlib.chdir(wd):
        exec(compile(b.text, b.where, "exec"), ns)
    df = ns["df"]
    assert isinstance(df, pd.DataFrame) and len(df) == 75, df
    assert df["trial_id"].is_unique and set(df["heuristic"]) == {"none", "warnsdorff",
                                                                  "static_degree"}
    assert len(pd.read_parquet(wd / "results" / "warnsdorff-64-starts")) == 75


#: The README is a landing page: at most this many lines, and no prose line longer than
#: PROSE_WIDTH characters (fenced blocks, table rows and the generated strategy tables aside).
README_LINES, PROSE_WIDTH = 300, 100


def test_readme_is_a_landing_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_LINES, f"README.md: {len(lines)} lines, at most {README_LINES}"
    fenced, long = False, []
    for i, line in enumerate(lines, 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced and not line.startswith("|") and len(line) > PROSE_WIDTH:
            long.append(f"README.md:{i}: {len(line)} characters")
    assert not long, "\n".join(long)
    text = "\n".join(lines)
    for doc in ("config", "metrics", "analysis", "running", "cluster", "split", "compiled",
                "benchmarks", "troubleshooting", "extending", "architecture", "development"):
        assert f"(docs/{doc}.md" in text, f"README.md does not link docs/{doc}.md"
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / link).is_file(), f"README.md links {link}, which does not exist"


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces -> '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_doc_links_resolve():
    """Every relative link of README.md and docs/*.md names a file that exists, and its
    #anchor a heading of that file; every repository path they name in backticks exists."""
    broken = []
    for file in DOC_FILES:
        text = (ROOT / file).read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+://", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (ROOT / file).parent / path if path else ROOT / file
            if not dest.exists():
                broken.append(f"{file}: {target}: no such file")
                continue
            if anchor and dest.suffix == ".md":
                heads = re.findall(r"^#+ (.*)$", dest.read_text(encoding="utf-8"), re.M)
                if anchor not in {slug(h) for h in heads}:
                    broken.append(f"{file}: {target}: no such heading")
        for path in re.findall(r"`((?:experiments|runner|bench|tests|configs)/[\w./-]+)`", text):
            if not (ROOT / path).exists():
                broken.append(f"{file}: `{path}`: no such file in the repository")
    assert not broken, "\n".join(broken)


def test_readme_error_message(tmp_path, capsys):
    b = block("docs/troubleshooting.md", "btlab: sweep.yaml:5:21: error at matrix.heuristic[1]")
    (tmp_path / "sweep.yaml").write_text(
        "name: sweep\nproblem: knights_tour\nfixed: {board: [8, 8]}\nmatrix:\n"
        "  heuristic: [none, warnsdorf]\n")
    assert run_btlab(["validate", "sweep.yaml"], tmp_path) == 2
    err = capsys.readouterr().err
    assert normalise(err) == normalise(b.text), err


QUEENS = ("docs/queens.md", ".venv/bin/btlab run configs/queens_algorithms.yaml")


def test_queens_algorithms_fast(tmp_path):
    wd = workdir(tmp_path)
    small_copy("queens_algorithms.yaml", wd, nodes=SMALL_NODES, seed=2026)
    [cmd] = commands(block(*QUEENS))
    argv = btlab_argv(cmd)
    assert argv is not None
    # serial: this block is about the counters; the quick start already covers Ray
    assert run_btlab([*argv, "--backend", "serial", "--quiet"], wd) == 0
    df = pd.read_parquet(wd / "results" / "queens-algorithms")
    assert df["error"].isna().all()
    n8 = df[(df["n"] == 8) & (df["strategy"] == "recursive")]
    assert n8["nodes"].iloc[0] == 2_056 and n8["checks"].iloc[0] == 15_720   # the README's


@pytest.mark.slow
def test_queens_algorithms_slow(tmp_path, ray_session):
    wd = workdir(tmp_path)
    shutil.copy(ROOT / "configs" / "queens_algorithms.yaml", wd / "configs")
    [cmd] = commands(block(*QUEENS))
    assert run_doc_command(cmd, wd) == 0
    df = pd.read_parquet(wd / "results" / "queens-algorithms")
    assert df["error"].isna().all()
    solved = df[df["status"] == "exhausted"]
    a000170 = {4: 2, 5: 10, 6: 4, 7: 40, 8: 92, 9: 352, 10: 724, 11: 2680, 12: 14200,
               13: 73712, 14: 365596, 15: 2279184, 16: 14772512}
    assert all(a000170[n] == s for n, s in zip(solved["n"], solved["solutions"]))
    # the README: the same 35,538 placements for n = 10 under amb and recursive
    ten = df[(df["n"] == 10) & df["strategy"].isin(["recursive", "amb"])]
    assert set(ten["nodes"]) == {35_538}


# --------------------------------------------------------------------------- docs/analysis.md


def _analysis_python(test: str) -> list[Block]:
    """docs/analysis.md's Python blocks whose BLOCKS entry names ``test``, in file order."""
    out = []
    for b in extract("docs/analysis.md"):
        c = classify(b)
        if b.lang == "python" and c is not None and test in c[1][2]:
            out.append(b)
    return out


#: The Python blocks the default and slow suites run: those on folders a test can make.
ANALYSIS_PY = _analysis_python("test_analysis_fast")
#: The Python blocks that read the 10^9 plain-backtracking folder (5 minutes to make).
BASELINE_PY = _analysis_python("test_analysis_baseline")
#: Environment variables naming real results folders of configs/warnsdorff_64_starts.yaml
#: and configs/plain_backtracking_64_starts.yaml: with both set, test_analysis_baseline
#: runs BASELINE_PY on them and compares the printed output with the docs.
BASELINE_ENV = ("BTLAB_DOCS_MAIN", "BTLAB_DOCS_PLAIN")


def test_analysis_fast(quick_start):
    outs = run_python(ANALYSIS_PY, quick_start)
    assert not set(ANALYSIS_PY) & set(BASELINE_PY)
    assert outs[0].startswith("(192, ")                  # 192 rows, one per trial
    printed = dict(zip((b.first for b in ANALYSIS_PY), outs))
    curves = printed['curves = analysis.survival(df, by="heuristic", metric="nodes")']
    assert curves.split()[:3] == ["heuristic", "x", "survival"], curves
    tests = next(o for f, o in printed.items() if f.startswith("qs = analysis.quantiles("))
    assert "reached" in tests and "warnsdorff vs static_degree: chi2 = " in tests, tests
    for img in ("warnsdorff-reduction.png", "recursion-vs-iteration.png", "survival-main.png"):
        assert (quick_start / "docs" / "img" / img).stat().st_size > 0, img
    assert (quick_start / "amb-vs-recursion.png").stat().st_size > 0
    assert printed["import duckdb"] == block("docs/analysis.md", "192 192").text


#: Outputs whose numbers are timings measured once: only the layout is compared.
TIMED = ("rows baseline treatment   ratio reduction",
         "strategy  recursive  iterative  iterative / recursive",
         "wall                                         cpu",
         "repeat                0        1        2        3        4")


def compare_outputs(blocks: list[Block], outs: list[str], test: str) -> int:
    """Compare what each Python block printed with the text block after it, where that
    block's BLOCKS entry names ``test`` (an output measured once and not rerun, such as the
    Amb timings of n = 9..11, names none); the number of outputs compared."""
    doc = extract("docs/analysis.md")
    compared = 0
    for b, out in zip(blocks, outs):
        shown = doc[doc.index(b) + 1] if b in doc else None
        assert shown is not None, f"{b.where} changed while the test ran: run it again"
        c = classify(shown)
        if shown.lang != "text" or c is None or test not in c[1][2]:
            continue
        compared += 1
        want, got = shown.text.splitlines(), out.splitlines()
        if any(shown.first.startswith(t) for t in TIMED):
            assert len(got) == len(want), (shown.where, out)
            assert got[0].split()[:2] == want[0].split()[:2], (shown.where, out)
            continue
        drift = [k[1] for k in KNOWN_DRIFT if k[0] == shown.file]
        for w, g in zip(want, got):
            if any(w.startswith(d) for d in drift):
                assert g.startswith("(192, "), (shown.where, g)
                continue
            assert w.rstrip() == g.rstrip(), f"{shown.where}: documented {w!r}, printed {g!r}"
        assert len(got) == len(want), (shown.where, out)
    return compared


@pytest.mark.slow
def test_analysis_slow(full_runs):
    outs = run_python(ANALYSIS_PY, full_runs)
    shown = [b for b in all_blocks() if b.file == "docs/analysis.md"
             and (c := classify(b)) is not None and c[1][0] == OUTPUT
             and "test_analysis_slow" in c[1][2]]
    assert compare_outputs(ANALYSIS_PY, outs, "test_analysis_slow") == len(shown)
    for img in DRAWN_FROM_COUNTERS:
        assert same_image(full_runs / "docs" / "img" / img, ROOT / "docs" / "img" / img), (
            f"docs/img/{img} is not what docs/analysis.md's block draws from the main job: "
            "run the block on a full run of configs/warnsdorff_64_starts.yaml and commit the "
            "image it saves")


#: Figures of docs/analysis.md drawn from counters only (placements, backtracks), which any
#: full run of the main job reproduces; the others plot timings.
DRAWN_FROM_COUNTERS = ("survival-main.png", "warnsdorff-reduction.png")


def same_image(drawn: Path, committed: Path) -> bool:
    """The two PNG files show the same picture: equal size, pixels equal but for anti-aliasing
    (a mean difference under 0.1 %)."""
    import matplotlib.image as mpimg
    import numpy as np

    a, b = mpimg.imread(drawn), mpimg.imread(committed)
    return a.shape == b.shape and float(np.abs(a - b).mean()) < 1e-3


def test_analysis_baseline(tmp_path):
    """The blocks on the main job plus the 10^9 plain-backtracking folder. Compiled always;
    with BTLAB_DOCS_MAIN and BTLAB_DOCS_PLAIN naming the two results folders (read only:
    linked into a working folder), run after the section's first block and their printed
    output compared with the docs, the plots they save checked."""
    assert len(BASELINE_PY) == 2
    folders = {"warnsdorff-64-starts": "warnsdorff_64_starts.yaml",
               "plain-backtracking-64-starts": "plain_backtracking_64_starts.yaml"}
    for b in BASELINE_PY:
        compile(b.text, b.where, "exec")
    assert all(f"results/{name}" in BASELINE_PY[0].text for name in folders)
    assert all(load_config(ROOT / "configs" / cfg).model.name == name
               for name, cfg in folders.items())
    paths = [os.environ.get(v) for v in BASELINE_ENV]
    if not all(paths):
        return                     # parsed only: the 10^9 folder takes minutes to make
    wd = workdir(tmp_path)
    (wd / "results").mkdir()
    for name, path in zip(folders, paths):
        assert path is not None and Path(path).is_dir(), path
        (wd / "results" / name).symlink_to(Path(path).resolve())
    outs = run_python([ANALYSIS_PY[0], *BASELINE_PY], wd)
    assert outs[0].startswith("(192, ")
    assert compare_outputs(BASELINE_PY, outs[1:], "test_analysis_baseline") == 2
    for img in ("survival-with-plain-1e9.png", "cactus-with-plain-1e9.png"):
        assert (wd / "docs" / "img" / img).stat().st_size > 0, img


# --------------------------------------------------------------------------- studies

#: The study configs of docs/analysis.md sections 4 and 5: file -> (results folder, trials).
STUDIES = {"heavy_tails_8x8.yaml": ("heavy-tails-8x8", 2_000),
           "warnsdorff_random_ties.yaml": ("warnsdorff-random-ties", 3_600)}
#: The Python blocks of sections 4 and 5, in file order.
STUDY_PY = _analysis_python("test_studies_fast")
#: What section 1 imports, which sections 4 and 5 use.
STUDY_PRELUDE = Block("docs/analysis.md", 0, "python",
                      "import pandas as pd\nfrom btlab import analysis\n"
                      "from btlab.views import plots\n\n"
                      "pd.set_option(\"display.width\", 120)\n")
#: Environment variables naming real results folders of the two study configs: with both
#: set, test_studies_slow reads them instead of running the configs (10 minutes).
STUDY_ENV = ("BTLAB_DOCS_HEAVY_TAILS", "BTLAB_DOCS_WARNSDORFF_TIES")


def _study_runs(snippets: tuple[str, ...]) -> list[list[str]]:
    out = []
    for snippet in snippets:
        [cmd] = commands(block("docs/analysis.md", snippet))
        argv = btlab_argv(cmd)
        assert argv is not None
        out.append(argv)
    return out


STUDY_RUNS = ("btlab run configs/heavy_tails_8x8.yaml",
              "btlab run configs/warnsdorff_random_ties.yaml")


def test_studies_commands(capsys):
    """The two study commands: parsed, their configs loaded, as the docs describe them
    (trials counted by `btlab validate`)."""
    for argv, (config, (name, trials)) in zip(_study_runs(STUDY_RUNS), STUDIES.items()):
        args = parse_btlab(argv)
        assert args.command == "run" and args.config == f"configs/{config}"
        model = load_config(ROOT / args.config).model
        assert model.name == name and model.fixed["engine"] == "compiled"
        assert model.fixed["tie_break"] == "random" and model.fixed["start"] == [0, 0]
        capsys.readouterr()
        assert run_btlab(["validate", args.config], ROOT) == 0
        assert f"OK -- problem knights_tour, {trials:,} trials" in capsys.readouterr().out
    heavy = load_config(ROOT / "configs" / "heavy_tails_8x8.yaml").model
    assert heavy.budget.nodes == 10_000_000 and heavy.fixed["heuristic"] == "none"
    assert len(STUDY_PY) == 5


@pytest.mark.filterwarnings("ignore::lifelines.exceptions.ApproximationWarning")  # 8 trials
def test_studies_fast(tmp_path):
    """Sections 4 and 5 on small runs of their configs (serial; a few seeds, among them two
    that find a tour early, 37 and 281; two small boards): the blocks run and draw."""
    wd = workdir(tmp_path)
    for config in STUDIES:
        shutil.copy(ROOT / "configs" / config, wd / "configs" / config)
    small = (["matrix.seed=[37, 281, 1, 2]", "budget.nodes=300_000"],
             ["matrix.board=[8, 12]", "matrix.seed=1..5"])
    for argv, extra in zip(_study_runs(STUDY_RUNS), small):
        assert run_btlab([*argv, *extra, "--backend", "serial", "--quiet"], wd) == 0
    outs = run_python([STUDY_PRELUDE, *STUDY_PY], wd)
    assert outs[1].split()[:4] == ["restarts", "trials", "solved", "share"], outs[1]
    assert "none: Weibull shape " in outs[3], outs[3]
    assert outs[4].split()[:3] == ["rows", "trials", "solved"], outs[4]
    assert "the same attempts and successful seed in every trial: True" in outs[5], outs[5]
    for img in ("heavy-tails-survival.png", "heavy-tails-finished.png",
                "warnsdorff-random-ties-greedy.png", "warnsdorff-random-ties-restarts.png"):
        assert (wd / "docs" / "img" / img).stat().st_size > 0, img


@pytest.mark.slow
def test_studies_slow(tmp_path, ray_session):
    """Sections 4 and 5 on the configs as written (on Ray, about 10 minutes on 2 cores), or
    on the folders STUDY_ENV names; the printed outputs compared with the docs."""
    wd = workdir(tmp_path)
    (wd / "results").mkdir()
    paths = [os.environ.get(v) for v in STUDY_ENV]
    for argv, (config, (name, _)), path in zip(_study_runs(STUDY_RUNS), STUDIES.items(),
                                                paths):
        if path:
            (wd / "results" / name).symlink_to(Path(path).resolve())
            continue
        shutil.copy(ROOT / "configs" / config, wd / "configs" / config)
        assert run_btlab([*argv, "--quiet"], wd) == 0
    outs = run_python([STUDY_PRELUDE, *STUDY_PY], wd)
    assert compare_outputs(STUDY_PY, outs[1:], "test_studies_slow") == 5


# --------------------------------------------------------------------------- docs/cluster.md


def test_cluster_ray_start():
    from ray.scripts import scripts

    b = block("docs/cluster.md", "# on the head machine")
    cmds = commands(b)
    assert [c.argv[:2] for c in cmds] == [["ray", "start"], ["ray", "start"], ["ray", "status"]]
    for cmd in cmds:
        sub = getattr(scripts, cmd.argv[1])
        ctx = sub.make_context(cmd.argv[1], placeholders(cmd.argv[2:]))
        assert ctx.params is not None
    head = scripts.start.make_context("start", placeholders(cmds[0].argv[2:])).params
    worker = scripts.start.make_context("start", placeholders(cmds[1].argv[2:])).params
    assert head["head"] and not worker["head"]
    assert worker["address"] == f"127.0.0.1:{head['port']}"


def test_cluster_install_lines():
    cmds = commands(block("docs/cluster.md",
                          "python3.11 -m venv ~/btlab-venv && ~/btlab-venv/bin/pip install"))
    assert cmds[0].argv == ["python3.11", "-m", "venv", "~/btlab-venv"]
    assert cmds[1].argv == ["~/btlab-venv/bin/pip", "install", "-q", "/path/to/btlab"]
    assert cmds[2].argv[:2] == ["source", "~/btlab-venv/bin/activate"]


def test_cluster_one_machine_recipe():
    """The one-machine recipe keeps to its own cluster: a --temp-dir of its own, `ray status`
    through its address, stopped by the PIDs of the two `ray start --block` it started (never
    `ray stop`); valid bash."""
    b = block("docs/cluster.md", "ray start --head --port=6379 --num-cpus=1")
    checked = subprocess.run(["bash", "-n"], input=b.text, text=True, capture_output=True)
    assert checked.returncode == 0, checked.stderr
    lines = [line.split("#")[0].strip() for line in b.text.splitlines()]
    assert not any(re.search(r"\bray stop\b", line) for line in lines)
    starts = [line for line in lines if line.startswith("ray start")]
    assert len(starts) == 2 and all(line.endswith("&") and "--block" in line for line in starts)
    assert "--temp-dir=/tmp/btlab-ray" in starts[0]
    statuses = [line for line in lines if "ray status" in line]
    assert statuses and all("ray status --address=127.0.0.1:6379" in line for line in statuses)
    assert lines[lines.index(starts[0]) + 1] == "HEAD=$!"
    assert lines[lines.index(starts[1]) + 1] == "NODE=$!"
    assert lines[-1] == "kill $NODE $HEAD; wait"


def test_cluster_one_machine_commands():
    from ray.scripts import scripts

    for snippet in ("ray start --head --port=6379 --num-cpus=1",
                    "# on the head machine: make a token"):
        cmds = commands(block("docs/cluster.md", snippet))
        ports = set()
        for cmd in cmds:
            if not cmd.argv or cmd.argv[0] in ("until", "kill", "wait"):  # the shell's own
                continue
            if cmd.argv[0] == "btlab":
                args = _parser().parse_args(placeholders(cmd.argv[1:]))
                assert args.address == "127.0.0.1:6379"
                assert load_config(ROOT / args.config).name == "warnsdorff-64-starts"
                continue
            assert cmd.argv[0] == "ray", cmd.argv
            if cmd.argv[1] == "stop":  # never run here: it ends every Ray on the machine
                continue
            sub = getattr(scripts, cmd.argv[1].replace("-", "_"))
            argv = [a for a in cmd.argv[2:]  # a redirection, a background job
                    if a not in (">", "/dev/null", "2>&1", "&") and not a.endswith(".log")]
            params = sub.make_context(cmd.argv[1], placeholders(argv)).params
            if cmd.argv[1] == "start":
                ports.add(params["port"] if params["head"] else
                          int(params["address"].rpartition(":")[2]))
            elif cmd.argv[1] == "status" and snippet.startswith("ray start"):
                ports.add(int(params["address"].rpartition(":")[2]))
        assert ports == {6379}


def test_cluster_yaml():
    b = block("docs/cluster.md", "cluster_name: btlab")
    data = yaml.safe_load(b.text)
    for key in ("cluster_name", "provider", "available_node_types", "head_node_type",
                "setup_commands"):
        assert key in data, key
    assert data["head_node_type"] in data["available_node_types"]
    for spec in data["available_node_types"].values():
        assert "node_config" in spec and "resources" in spec
    assert all(isinstance(c, str) for c in data["setup_commands"])


def test_cluster_commands_parse():
    b = block("docs/cluster.md",
              "btlab run configs/warnsdorff_64_starts.yaml --address HEAD_IP:6379")
    cmds = commands(b)
    assert len(cmds) == 2
    assert parse_btlab(cmds[0].argv[1:]).address == "127.0.0.1:6379"
    assert cmds[1].env == {"RAY_ADDRESS": "HEAD_IP:6379"}
    assert parse_btlab(cmds[1].argv[1:]).address is None         # from RAY_ADDRESS
    b = block("docs/cluster.md", "$ btlab run configs/plain_backtracking_exact.yaml --address "
                                 "HEAD_IP")
    [cmd] = commands(b)
    args = parse_btlab(cmd.argv[1:])
    assert args.address == "127.0.0.1:6379"
    assert load_config(ROOT / args.config).model.split == "auto"


def test_cluster_out_uri(quick_start, tmp_path, capsys):
    b = block("docs/cluster.md", "btlab run configs/warnsdorff_64_starts.yaml --address "
                                 "HEAD_IP:6379 --out s3://")
    wd = workdir(tmp_path)
    small_copy("warnsdorff_64_starts.yaml", wd)
    uri = f"file://{tmp_path}/shared/btlab/w64"
    cmds = commands(b)
    assert len(cmds) == 4
    for cmd in cmds:
        argv = btlab_argv(cmd)
        assert argv is not None
        parse_btlab(argv)
        if any(a.startswith("s3://") for a in argv) and "--address" in argv:
            continue                      # S3 and a cluster: parsed only
        argv = [a.replace("s3://my-bucket/btlab/w64", uri)
                .replace("file:///mnt/shared/btlab/w64", uri) for a in argv]
        if argv[0] == "compare":
            # results/local: the quick start's folder stands in for a laptop run
            shutil.copytree(quick_start / "results" / "warnsdorff-64-starts",
                            wd / "results" / "local")
        assert run_btlab(argv, wd) == 0, argv
    out = capsys.readouterr().out
    assert "IDENTICAL" in out


def test_cluster_show_by_node(quick_start, capsys):
    b = block("docs/cluster.md", "$ btlab show results/warnsdorff-64-starts --by node")
    [cmd] = commands(b)
    argv = btlab_argv(cmd)
    assert argv is not None
    assert run_btlab(argv, quick_start) == 0
    out = capsys.readouterr().out
    assert "trials by Ray node" in out and b.text.splitlines()[1] in out


def test_cluster_compare(tmp_path, ray_session, capsys):
    b = block("docs/cluster.md", "$ btlab run configs/warnsdorff_64_starts.yaml --backend serial "
                                 "--out results/local")
    wd = workdir(tmp_path)
    small_copy("warnsdorff_64_starts.yaml", wd)
    cmds = commands(b)
    assert len(cmds) == 3
    for cmd in cmds:
        argv = btlab_argv(cmd)
        assert argv is not None
        args = parse_btlab(argv)
        if args.command == "run" and args.address:
            i = argv.index("--address")      # the local Ray stands in for the cluster
            argv = argv[:i] + argv[i + 2:]
        capsys.readouterr()
        assert run_btlab(argv, wd) == 0, argv
    out = capsys.readouterr().out
    shown = b.text.split("$ btlab compare results/local results/cluster\n", 1)[1]
    col_list = re.compile(r"on (\d+) deterministic columns \(([^)]*)\)")
    got, want = " ".join(out.split()), " ".join(shown.split())
    if ("docs/cluster.md", "columns (problem, rows, cols") in KNOWN_DRIFT:
        (n_got, cols_got), (_, cols_want) = (col_list.search(got).groups(),
                                                  col_list.search(want).groups())
        assert set(cols_want.split(", ")) <= set(cols_got.split(", ")), got
        assert int(n_got) == len(cols_got.split(", ")), got
        got, want = col_list.sub("", got), col_list.sub("", want)
    assert got == want, out


def test_architecture_layers():
    """docs/architecture.md's ``layers`` block names each room of btlab once, nothing else."""
    (layers,) = [b for b in extract("docs/architecture.md") if b.lang == "layers"]
    names = layers.text.split()
    rooms = {p.stem if p.suffix == ".py" else p.name for p in (ROOT / "runner").iterdir()
             if not p.name.startswith("__") and (p.suffix == ".py" or (p / "__init__.py").exists())}
    assert len(names) == len(set(names))
    assert set(names) == rooms | {"experiments"}


@pytest.mark.slow
def test_architecture_typecheck_slow(tmp_path):
    (b,) = [b for b in extract("docs/architecture.md")
            if b.first.startswith("pip install -q --no-deps --target build/typecheck")]
    repo = tmp_path / "repo"
    shutil.copytree(ROOT, repo, ignore=shutil.ignore_patterns(
        ".git", ".venv", "results", "__pycache__", "build", "*.egg-info", ".mypy_cache"))
    env = {**os.environ, "PATH": f"{Path(PYTHON).parent}{os.pathsep}{os.environ['PATH']}"}
    r = subprocess.run(["bash", "-c", b.text], cwd=repo, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "Success: no issues found" in r.stdout
