"""Split trials beyond the serial reference: compiled subtree tasks, Ray, checkpoints, resume.

* The compiled subtree kernels count every subtree exactly as the pure-Python
  ``search_subtree`` functions do (every task of small searches, under
  budgets, every heuristic and tie-break that can be split).
* Split trials through the runner (serial and Ray, several trials side by
  side) give exactly the unsplit counters, status and solution.
* Finished subtrees are saved as they arrive and read back on resume: an
  interrupted split trial does not run them again.
"""

from __future__ import annotations

import json
import textwrap
import time

import pandas as pd
import pytest
from helpers.sync import fault_env, release, wait_for_pids

from btlab.cli.main import main
from btlab.config.model import load_config
from btlab.execution import split_state
from btlab.execution.split_run import Checkpoints, TrialCheckpoint, serial_solver
from btlab.experiments.compiled import (
    knights_subtree_compiled,
    queens_subtree_compiled,
    solve_knights_compiled,
    solve_queens_compiled,
)
from btlab.experiments.core import Budget, SearchResult, Status
from btlab.experiments.knights.solve import KnightBoard, make_orderer
from btlab.experiments.knights.solve import search_subtree as knights_subtree
from btlab.experiments.queens.solve import search_subtree as queens_subtree
from btlab.experiments.split.subtrees import plan_split, solve_split
from btlab.sweep.expand import iter_trials

COUNTERS = ["status", "nodes", "backtracks", "dead_ends", "checks", "solutions", "max_depth"]


def same(a: SearchResult, b: SearchResult) -> None:
    assert a.counters() == b.counters()
    assert a.solution == b.solution
    assert a.extra.get("all_solutions") == b.extra.get("all_solutions")


# --------------------------------------------------------------------------- compiled subtrees


@pytest.mark.parametrize("n", range(1, 9))
@pytest.mark.parametrize("mode, unique", [("count", False), ("count", True), ("first", False)])
def test_compiled_queens_subtrees_equal_python(n, mode, unique):
    first = mode == "first"
    same(queens_subtree_compiled(n, (), mode, unique), queens_subtree(n, (), first=first,
                                                                      unique=unique))
    for depth in range(1, n + 1):
        for path in plan_split("n_queens", {"n": n, "mode": mode, "unique": unique},
                               depth).tasks:
            for cap in (None, 1, 5):
                same(queens_subtree_compiled(n, path, mode, unique, max_nodes=cap),
                     queens_subtree(n, path, first=first, unique=unique,
                                    budget=Budget(cap, None)))


@pytest.mark.parametrize("heuristic, tie_break", [
    ("none", "move_order"), ("warnsdorff", "move_order"), ("warnsdorff", "pohl"),
    ("warnsdorff", "roth"), ("static_degree", "roth"), ("static_degree", "pohl")])
@pytest.mark.parametrize("mode, closed", [("count", False), ("count", True), ("first", False)])
@pytest.mark.parametrize("full", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_compiled_knights_subtrees_equal_python(heuristic, tie_break, mode, closed, full):
    """Every task of 5 x 5 and 3 x 4 searches, several depths and budgets (fewer by default)."""
    boards = ((5, 5, (0, 0)), (5, 5, (1, 2)), (3, 4, (0, 0))) if full else ((5, 5, (1, 2)),
                                                                         (3, 4, (0, 0)))
    for rows, cols, start in boards:
        board = KnightBoard(rows, cols)
        order = make_orderer(board, heuristic, tie_break, 0)
        for depth in (1, 3, 6) if full else (4,):
            params = {"rows": rows, "cols": cols, "start": start, "heuristic": heuristic,
                      "tie_break": tie_break, "mode": mode, "closed": closed}
            for path in plan_split("knights_tour", params, depth).tasks:
                for cap in (None, 1, 9, 400) if full else (None, 9):
                    same(knights_subtree_compiled(rows, cols, path, mode=mode,
                                                  heuristic=heuristic, tie_break=tie_break,
                                                  closed=closed, max_nodes=cap),
                         knights_subtree(board, order, path, mode == "first", closed,
                                         Budget(cap, None), "iterative"))


@pytest.mark.parametrize("heuristic", ["none", "warnsdorff"])
def test_compiled_subtrees_over_64_squares_equal_python(heuristic):
    """The byte-per-square loops with a prefix on the board: every depth-3 task of 9 x 9
    (count and first, open and closed) under a node budget."""
    board = KnightBoard(9, 9)
    order = make_orderer(board, heuristic, "move_order", 0)
    for mode, closed in (("count", False), ("count", True), ("first", False)):
        params = {"rows": 9, "cols": 9, "start": (0, 0), "heuristic": heuristic,
                  "mode": mode, "closed": closed}
        tasks = plan_split("knights_tour", params, 3).tasks
        assert len(tasks) >= 4
        for path in tasks:
            unbounded = heuristic == "warnsdorff" and mode == "first"  # a quick tour
            for cap in (None, 7) if unbounded else (7, 3_000):
                got = knights_subtree_compiled(9, 9, path, mode=mode, heuristic=heuristic,
                                               closed=closed, max_nodes=cap)
                same(got, knights_subtree(board, order, path, mode == "first", closed,
                                          Budget(cap, None), "iterative"))


def test_compiled_whole_tree_subtree_is_the_whole_search():
    same(knights_subtree_compiled(5, 5, (0,), mode="count"),
         solve_knights_compiled(5, 5, (0, 0), mode="count"))
    assert knights_subtree_compiled(5, 5, (0,), mode="count").solutions == 304  # OEIS A165134
    same(queens_subtree_compiled(10, (), "count"), solve_queens_compiled(10, "count"))


@pytest.mark.parametrize("call, message", [
    (lambda: knights_subtree_compiled(5, 5, ()), "at least one placement"),
    (lambda: knights_subtree_compiled(5, 5, (0, 1)), "not a knight's move"),
    (lambda: knights_subtree_compiled(5, 5, (0, 7, 0)), "twice"),
    (lambda: knights_subtree_compiled(5, 5, (0, 25)), "in 0..24"),
    (lambda: queens_subtree_compiled(8, (0, 1)), "not a safe placement"),
    (lambda: queens_subtree_compiled(8, (0, 8)), "columns in 0..7"),
    (lambda: queens_subtree_compiled(4, (0, 2, 4, 1, 3)), "at most 4"),
    (lambda: queens_subtree_compiled(8, (0,), "first", unique=True), "unique"),
])
def test_compiled_subtrees_refuse_bad_paths(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("col", [0, 3])
def test_compiled_split_8x8_first_row_budget_equals_unsplit(col):
    """Plain DFS 8 x 8 at a budget of 10^7: the split, capped compiled tasks, the unsplit kernel."""
    params = {"rows": 8, "cols": 8, "start": (0, col), "engine": "compiled",
              "strategy": "iterative"}
    seq = solve_knights_compiled(8, 8, (0, col), max_nodes=10**7)
    for depth in (0, 4, 7):
        same(solve_split("knights_tour", params, depth, max_nodes=10**7), seq)


def test_compiled_split_queens_count_and_first():
    for n, depth in ((12, 3), (13, 2)):
        same(solve_split("n_queens", {"n": n, "mode": "count", "engine": "compiled",
                                      "strategy": "bitmask"}, depth),
             solve_queens_compiled(n, "count"))
    for n in (16, 20):
        same(solve_split("n_queens", {"n": n, "mode": "first", "engine": "compiled"}, 4),
             solve_queens_compiled(n, "first"))


# --------------------------------------------------------------------------- task budgets


def test_task_budget_is_the_budget_less_what_comes_before():
    plan = plan_split("n_queens", {"n": 6, "mode": "count"}, 2)
    assert plan.top_before[0] == 1 and list(plan.top_before) == sorted(plan.top_before)
    assert plan.task_budget(0, None) is None
    assert plan.task_budget(0, 100) == 99
    assert plan.task_budget(len(plan.tasks) - 1, 100, done_before=95) == max(
        0, 100 - plan.top_before[-1] - 95)
    assert plan.task_budget(0, 1, done_before=5) == 0


# --------------------------------------------------------------------------- runner


def write_config(tmp_path, text):
    path = tmp_path / "split.yaml"
    path.write_text(textwrap.dedent(text))
    return path


KNIGHTS_SPLIT = """\
    name: knights-split
    problem: knights_tour
    fixed: {board: [8, 8], heuristic: none, mode: first, engine: compiled, strategy: iterative}
    matrix:
      start: [[0, 0], [0, 1], [0, 4], [2, 2], [5, 4], [7, 7]]
    split: {depth: 4}
    budget: {nodes: 3000000}
"""


def knight_paths(rows: int, cols: int, start: tuple[int, int], length: int) -> int:
    """Knight's paths of ``length`` distinct squares from ``start`` (a plain count)."""
    jumps = [(1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)]

    def walk(path: list[tuple[int, int]]) -> int:
        if len(path) == length:
            return 1
        r, c = path[-1]
        nexts = [(r + dr, c + dc) for dr, dc in jumps]
        return sum(walk(path + [q]) for q in nexts
                   if 0 <= q[0] < rows and 0 <= q[1] < cols and q not in path)

    return walk([start])


def unsplit_counters(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for r in df.itertuples():
        res = solve_knights_compiled(8, 8, (r.start_row, r.start_col), max_nodes=r.budget_nodes)
        rows.append({"trial_id": r.trial_id, **res.counters(),
                     "solution": list(res.solution) if res.solution else None})
    return pd.DataFrame(rows).set_index("trial_id")


def check_against_unsplit(df: pd.DataFrame) -> None:
    ref = unsplit_counters(df)
    got = df.set_index("trial_id")
    for col in COUNTERS:
        assert (got[col] == ref.loc[got.index, col]).all(), col
    for tid, sol in got["solution"].items():
        want = ref.loc[tid, "solution"]
        assert (sol is None and want is None) or list(sol) == list(want)


def test_split_sweep_on_ray_runs_trials_side_by_side_with_exact_counters(tmp_path,
                                                                          ray_session):
    """Six first-mode trials under a node budget of 3 x 10^6: exact rows, (5, 4) solved."""
    cfg = write_config(tmp_path, KNIGHTS_SPLIT)
    out = tmp_path / "r"
    assert main(["run", str(cfg), "--out", str(out), "--quiet"]) == 0
    df = pd.read_parquet(out)
    assert len(df) == 6
    solved = df[df["status"] == "solved"]
    # plain move order finds its first tour from (5, 4) at placement 2,252,173
    assert list(zip(solved["start_row"], solved["start_col"])) == [(5, 4)]
    assert solved["nodes"].iloc[0] == 2_252_173
    check_against_unsplit(df)
    # one task per path of 4 squares (3 knight's moves) from the start, as counted by
    # knight_paths (independent of the planner)
    tasks = {(r.start_row, r.start_col): r.split_tasks for r in df.itertuples()}
    assert tasks == {start: knight_paths(8, 8, start, 4) for start in tasks}
    assert tasks == {(0, 0): 50, (0, 1): 78, (0, 4): 108, (2, 2): 176, (5, 4): 190, (7, 7): 50}
    assert (df["split_depth"] == 4).all() and (df["split_resumed"] == 0).all()
    # wasted_nodes has no fixed value on Ray: a task after a trial's first missing one
    # runs only while a worker would otherwise be idle, which depends on timing; it is
    # recorded for every split row (the serial test below holds it to 0)
    assert df["wasted_nodes"].notna().all() and (df["wasted_nodes"] >= 0).all()
    assert not Checkpoints(out).folder.exists()   # checkpoints go once their rows are on disk


def test_split_count_trials_on_ray_equal_oeis(tmp_path, ray_session):
    cfg = write_config(tmp_path, """\
        name: queens-split
        problem: n_queens
        fixed: {mode: count, strategy: bitmask, engine: compiled}
        matrix: {n: [1, 4, 8, 11, 12]}
        include:
          - {n: 9, unique: true}
          - {n: 10, strategy: recursive, engine: python}
        split: auto
    """)
    out = tmp_path / "r"
    assert main(["run", str(cfg), "--out", str(out), "--quiet"]) == 0
    df = pd.read_parquet(out).set_index("n")
    a000170 = {1: 1, 4: 2, 8: 92, 11: 2680, 12: 14200}
    for n, count in a000170.items():
        assert df.loc[n, "solutions"] == count
        assert df.loc[n, "nodes"] == solve_queens_compiled(n, "count").nodes
    assert df.loc[9, "solutions"] == 46 and df.loc[9, "all_solutions"] == 352  # A002562
    assert df.loc[10, "solutions"] == 724 and df.loc[10, "engine"] == "python"
    # auto: the smallest depth with 16 tasks per worker (2 workers: 32). Depth 1 gives
    # n = 10 tasks; depth 2 one per pair of non-attacking queens in rows 0 and 1:
    # n^2 - n (same column) - 2(n - 1) (same diagonal) = (n - 1)(n - 2) = 72.
    assert df.loc[10, "nodes"] == 35_538
    assert df.loc[10, "split_depth"] == 2 and df.loc[10, "split_tasks"] == 72
    assert df.loc[12, "checks"] == 10_103_868 and df.loc[12, "wasted_nodes"] == 0


def test_serial_backend_split_with_compiled_tasks(tmp_path):
    cfg = write_config(tmp_path, KNIGHTS_SPLIT)
    out = tmp_path / "r"
    assert main(["run", str(cfg), "--out", str(out), "--backend", "serial", "--quiet"]) == 0
    df = pd.read_parquet(out)
    check_against_unsplit(df)
    assert (df["wasted_nodes"] == 0).all()  # the serial reference runs each task when needed


# --------------------------------------------------------------------------- checkpoints


def test_checkpoint_round_trip_torn_line_and_other_plan(tmp_path):
    plan = plan_split("n_queens", {"n": 6, "mode": "count"}, 2)
    path = tmp_path / "t.jsonl"
    cp = TrialCheckpoint(path, plan, None)
    r0 = SearchResult(Status.EXHAUSTED, 5, 4, 1, 30, 1, 6, (1, 3, 5, 0, 2, 4),
                      {"all_solutions": 1})
    r1 = SearchResult(Status.NODE_LIMIT, 7, 2, 0, 11, 0, 4)
    cp.save(0, r0)
    cp.save(3, r1)
    cp.save(4, SearchResult(Status.TIME_LIMIT, 9, 0, 0, 0, 0, 3))  # clock-dependent: not saved
    cp.close()
    again = TrialCheckpoint(path, plan, None)
    assert again.loaded == {0: r0, 3: r1}
    # a kill in the middle of a line: the torn line is dropped, and cut off before appending
    with open(path, "ab") as f:
        f.write(b'{"i": 5, "status": "exhau')
    torn = TrialCheckpoint(path, plan, None)
    assert torn.loaded == {0: r0, 3: r1}
    torn.save(6, r1)
    torn.close()
    assert TrialCheckpoint(path, plan, None).loaded == {0: r0, 3: r1, 6: r1}
    assert all(json.loads(line) for line in path.read_text().splitlines())
    assert Checkpoints(tmp_path / "nowhere").partial() == []
    folder = tmp_path / "results"
    Checkpoints(folder).folder.mkdir(parents=True)
    (Checkpoints(folder).folder / "abc.jsonl").write_bytes(path.read_bytes() + b'{"i": 9, "sta')
    assert Checkpoints(folder).partial() == [("abc", 3, len(plan.tasks))]
    # another budget (or depth, or parameters) is another plan: nothing is reused
    assert TrialCheckpoint(path, plan, 1000).loaded == {}
    assert TrialCheckpoint(path, plan_split("n_queens", {"n": 6, "mode": "count"}, 3),
                           None).loaded == {}


def test_interrupted_split_trial_resumes_without_rerunning_finished_subtrees(tmp_path,
                                                                             monkeypatch):
    cfg = write_config(tmp_path, """\
        name: queens-resume
        problem: n_queens
        fixed: {n: 10, mode: count, strategy: bitmask, engine: compiled}
        split: {depth: 3}
    """)
    trial = next(iter_trials(load_config(cfg)))
    checkpoints = Checkpoints(tmp_path / "r")
    calls = []
    real = split_state.run_subtree

    def counting(*args):
        calls.append(args[2])
        return real(*args)

    monkeypatch.setattr(split_state, "run_subtree", counting)

    def interrupt_after_40(done, total, placements, seconds):
        if done >= 40:
            raise KeyboardInterrupt

    solve = serial_solver(trial, checkpoints, interrupt_after_40)
    with pytest.raises(KeyboardInterrupt):
        solve(trial.columns, None, None, trial.solver_seed)
    assert len(calls) == 40
    saved = checkpoints.path(trial.trial_id)
    assert len(saved.read_text().splitlines()) == 1 + 40
    first_run = set(calls)
    calls.clear()
    result = serial_solver(trial, checkpoints)(trial.columns, None, None, trial.solver_seed)
    assert not first_run & set(calls)            # no finished subtree ran again
    assert result.extra["split_resumed"] == 40
    assert len(first_run) + len(calls) == result.extra["split_tasks"]
    same(SearchResult(result.status, result.nodes, result.backtracks, result.dead_ends,
                      result.checks, result.solutions, result.max_depth, result.solution),
         solve_queens_compiled(10, "count"))


def small_split_run(tmp_path):
    """6- and 7-Queens counts split at depth 2, run serially: (config, results folder)."""
    cfg = write_config(tmp_path, """\
        name: queens-small-split
        problem: n_queens
        fixed: {mode: count, strategy: bitmask, engine: compiled}
        matrix: {n: [6, 7]}
        split: {depth: 2}
    """)
    out = tmp_path / "r"
    assert main(["run", str(cfg), "--out", str(out), "--backend", "serial", "--quiet"]) == 0
    return cfg, out


def test_fresh_and_finished_trials_prune_checkpoints(tmp_path, capsys):
    cfg, out = small_split_run(tmp_path)
    stale = out / ".split" / "0123456789abcdef.jsonl"   # a trial no longer in the config
    stale.parent.mkdir()  # where an older btlab kept checkpoints: moved out, then pruned
    stale.write_text('{"plan": "x", "tasks": 1}\n')
    assert main(["run", str(cfg), "--out", str(out), "--backend", "serial", "--quiet"]) == 0
    assert not stale.exists()
    kept = Checkpoints(out).path(next(iter_trials(load_config(cfg))).trial_id)
    kept.parent.mkdir(parents=True)
    kept.write_text('{"plan": "x", "tasks": 1}\n')
    assert main(["run", str(cfg), "--out", str(out), "--backend", "serial", "--quiet",
                 "--fresh"]) == 0
    assert not kept.exists()


def test_split_trial_time_budget_stops_every_task(tmp_path, ray_session):
    """A time budget is one deadline for the split trial: a row with status time_limit,
    counting the work of the tasks that were running at the deadline (they stop
    themselves there and are waited for)."""
    cfg = write_config(tmp_path, """\
        name: split-time
        problem: knights_tour
        fixed: {board: [8, 8], start: [0, 1], heuristic: none, mode: first,
                strategy: iterative, engine: compiled}
        split: {depth: 3}
        budget: {seconds: 4}
    """)
    out = tmp_path / "r"
    t0 = time.monotonic()
    assert main(["run", str(cfg), "--out", str(out), "--quiet"]) == 0
    assert time.monotonic() - t0 < 60
    (row,) = pd.read_parquet(out).to_dict("records")
    assert row["status"] == "time_limit"
    # (a worker's first task loads the kernels before its clock starts; the deadline
    # is the trial's, so the work counted is what fits after that)
    # the first subtree holds all the work up to the deadline: millions of placements
    assert row["nodes"] > 1_000_000
    assert 4e9 <= row["wall_ns"] < 4e9 + 10e9


@pytest.mark.parametrize("split, fragments", [
    ("split: {depth: -1}", ["split", "integer D in 0..1000", "-1"]),
    ("split: {depth: x}", ["split", "integer D in 0..1000", '"x"']),
    ("split: yes", ["split", "split: auto"]),
    ("split: {deep: 3}", ["split.deep", "unknown key 'deep'", "did you mean 'depth'"]),
    ("split: {depth: 3, workers: 2}", ["split.workers", "unknown key 'workers'",
                                        "split takes depth only"]),
])
def test_bad_split_values_exit_2_and_write_nothing(split, fragments, tmp_path, capsys):
    cfg = write_config(tmp_path, f"""\
        name: bad-split
        problem: n_queens
        fixed: {{n: 8, mode: count}}
        {split}
    """)
    out = tmp_path / "r"
    assert main(["run", str(cfg), "--out", str(out), "--quiet"]) == 2
    text = capsys.readouterr()
    message = text.out + text.err
    assert f"{cfg}:4" in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    assert not out.exists()


def _subtree_remote(ray, folder, *faults):
    """split_run's subtree task as a Ray remote, with test hooks (:mod:`helpers.sync`), in
    workers of its own: the runtime env names ``folder``, so Ray starts fresh workers for it
    and gives them no other test's tasks."""
    env = fault_env(folder, *faults)
    return ray.remote(num_cpus=1, max_retries=0)(split_state.subtree_task).options(
        runtime_env={"env_vars": env})


def test_a_cancelled_compiled_subtree_task_stops_at_once(ray_session, tmp_path):
    """The kernels of subtree tasks run in chunks, so ray.cancel stops them (a
    KeyboardInterrupt reaches Python only between two kernel calls) and the
    worker is free again: a cancelled task does not hold a worker for hours."""
    ray = ray_session
    folder = tmp_path / "hooks"
    remote = _subtree_remote(ray, folder, "kernels:loaded")
    params = plan_split("n_queens", {"n": 19, "mode": "count", "engine": "compiled"}, 0).params
    small = plan_split("n_queens", {"n": 8, "mode": "count", "engine": "compiled"}, 0).params
    huge = [remote.remote("n_queens", params, (), None, None) for _ in range(2)]  # hours each
    # both have their kernels loaded and are in their search (each says so): cancelled there
    pids = wait_for_pids(folder, "kernels-", 2)
    for marker in folder.glob("kernels-*"):
        marker.unlink()
    t0 = time.monotonic()
    for ref in huge:
        ray.cancel(ref)
    for ref in huge:
        with pytest.raises((ray.exceptions.TaskCancelledError, ray.exceptions.RayTaskError)):
            ray.get(ref, timeout=60)
    done = ray.get([remote.remote("n_queens", small, (), None, None) for _ in range(2)],
                   timeout=60)
    assert [r.solutions for r in done] == [92, 92]
    assert time.monotonic() - t0 < 30
    assert wait_for_pids(folder, "kernels-", 2) == pids  # on the two workers cancelled


def test_a_task_cancelled_while_it_imports_the_kernels_leaves_its_worker_whole(ray_session,
                                                                               tmp_path):
    """ray.cancel(force=False) raises KeyboardInterrupt in the worker at whatever line it
    runs. In a fresh worker's first ``import numba`` it used to leave numba half imported,
    and every later compiled task of that worker failed (``AttributeError: module 'numba'
    has no attribute 'core'``). Now the task holds the interrupt until its kernels are
    loaded, then stops before its search; the worker's next task runs."""
    ray = ray_session
    folder = tmp_path / "hooks"
    remote = _subtree_remote(ray, folder, "kernels:block_import:numba.core.decorators",
                             "kernels:loaded")
    params = plan_split("n_queens", {"n": 19, "mode": "count", "engine": "compiled"}, 0).params
    small = plan_split("n_queens", {"n": 8, "mode": "count", "engine": "compiled"}, 0).params
    ref = remote.remote("n_queens", params, (), None, None)
    (pid,) = wait_for_pids(folder, "importing-")  # in the middle of its `import numba`
    ray.cancel(ref)
    assert wait_for_pids(folder, "interrupted-") == [pid]  # the interrupt has reached it there
    release(folder)
    with pytest.raises((ray.exceptions.TaskCancelledError, ray.exceptions.RayTaskError)):
        ray.get(ref, timeout=120)
    assert not (folder / f"kernels-{pid}").exists()  # it stopped before its search
    assert ray.get(remote.remote("n_queens", small, (), None, None), timeout=120).solutions == 92
    assert wait_for_pids(folder, "kernels-") == [pid]  # on the worker cancelled


def test_parts_without_a_newer_column_still_read_every_column(tmp_path):
    """A folder holding parts written before a column was added (split_resumed) and
    parts with it: btlab's readers keep the column, null for the older rows."""
    import pyarrow.parquet as pq

    from btlab.store.folder import load_rows

    _, out = small_split_run(tmp_path)
    part = sorted(out.glob("part-*.parquet"))[0]
    older = pq.read_table(part).drop_columns(["split_resumed"])
    pq.write_table(older, out / "part-00000000T000000-000000-00000.parquet")  # sorts first
    df = load_rows(out)
    assert "split_resumed" in df.columns and len(df) == 2
