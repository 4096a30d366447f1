"""Heuristic plug-ins: a callable ``rule(board, square, candidates)`` orders the candidates.

A plug-in that reimplements a built-in heuristic must give exactly its
counters (checks included) with every strategy; a rule that returns anything
but a reordering of its candidates fails with a :class:`HeuristicError`
naming it; ``board.rng`` is reproducible per seed and refused by ``split``.
"""

from __future__ import annotations

import functools
import random

import pytest

from btlab.experiments.checker import check_tour
from btlab.experiments.core import Status
from btlab.experiments.knights.solve import (
    DEFAULT_MOVE_ORDER,
    HeuristicError,
    KnightBoard,
    PluginOrderer,
    make_orderer,
    rule_uses_rng,
    solve_knights_tour,
)
from btlab.experiments.split.subtrees import SplitError, plan_split, run_task, solve_split

ALL_STRATEGIES = ["recursive", "iterative", "amb"]


def squares(rows, cols):
    return [(r, c) for r in range(rows) for c in range(cols)]


# ---------------------------------------------------------------- plug-ins under test


def warnsdorff_rule(board, square, candidates):
    """Warnsdorff's rule with a stable sort: ties keep the move order."""
    return sorted(candidates, key=lambda s: board.onward(*s))


def none_rule(board, square, candidates):
    return candidates


def reversed_rule(board, square, candidates):
    return candidates[::-1]


def random_rule(board, square, candidates):
    return board.rng.sample(candidates, len(candidates))


def _helper_draws(board, candidates):
    return board.rng.sample(candidates, len(candidates))


def hidden_random_rule(board, square, candidates):
    """Reads board.rng through a helper: its own bytecode does not name it."""
    return _helper_draws(board, candidates)


def name_of(rule):
    return f"{rule.__module__}:{rule.__qualname__}"


# ---------------------------------------------------------------- equal to the built-ins


@pytest.mark.parametrize("strategy", ["recursive", "iterative"])
def test_warnsdorff_plugin_equals_builtin_8x8_all_starts_first(strategy):
    for start in squares(8, 8):
        builtin = solve_knights_tour(8, 8, start, heuristic="warnsdorff", strategy=strategy,
                                     max_nodes=20_000)
        plugin = solve_knights_tour(8, 8, start, heuristic=warnsdorff_rule, strategy=strategy,
                                    max_nodes=20_000)
        assert plugin == builtin, start
        assert plugin.status is Status.SOLVED, start
        check_tour(8, 8, start, plugin.solution)


@pytest.mark.parametrize("mode, budget", [("count", 3_000), ("first", 2_000)])
def test_warnsdorff_plugin_equals_builtin_amb_5x5_all_starts(mode, budget):
    statuses = set()
    for start in squares(5, 5):
        kwargs = {"mode": mode, "max_nodes": budget}
        builtin = solve_knights_tour(5, 5, start, heuristic="warnsdorff", strategy="amb", **kwargs)
        plugin = solve_knights_tour(5, 5, start, heuristic=warnsdorff_rule, strategy="amb",
                                    **kwargs)
        assert plugin == builtin, start   # counters, solution and the amb extras
        recursive = solve_knights_tour(5, 5, start, heuristic=warnsdorff_rule, **kwargs)
        assert plugin.counters() == recursive.counters(), start
        assert plugin.solution == recursive.solution, start
        statuses.add(plugin.status)
    if mode == "count":
        assert statuses == {Status.NODE_LIMIT}
    else:   # a tour from every start of the corners' colour, none from the others
        assert statuses == {Status.SOLVED, Status.NODE_LIMIT}


@pytest.mark.parametrize("strategy", ["recursive", "iterative"])
def test_warnsdorff_plugin_equals_builtin_5x5_count_all_starts(strategy):
    for start in squares(5, 5):
        builtin = solve_knights_tour(5, 5, start, mode="count", heuristic="warnsdorff",
                                     strategy=strategy, max_nodes=20_000)
        plugin = solve_knights_tour(5, 5, start, mode="count", heuristic=warnsdorff_rule,
                                    strategy=strategy, max_nodes=20_000)
        assert plugin == builtin, start


def test_warnsdorff_plugin_orderer_equals_builtin_on_random_boards():
    # Every square, many visited patterns: same order and same checks, also
    # with zero or one candidate (warnsdorff charges a lone candidate's
    # neighbours, and so does a rule calling onward on it).
    board = KnightBoard(6, 7)
    builtin = make_orderer(board, "warnsdorff")
    plugin = make_orderer(board, warnsdorff_rule)
    rng = random.Random(1)
    seen_sizes = set()
    for _ in range(300):
        visited = bytearray(rng.random() < 0.5 for _ in range(board.size))
        for sq in range(board.size):
            visited[sq] = 1
            expected = builtin(sq, visited)
            assert plugin(sq, visited) == expected, (sq, bytes(visited))
            seen_sizes.add(len(expected[0]))
    assert {0, 1, 2} <= seen_sizes


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
def test_none_plugin_equals_builtin_none_5x5_count(strategy):
    budget = 2_000 if strategy == "amb" else 10_000
    for start in squares(5, 5):
        builtin = solve_knights_tour(5, 5, start, mode="count", heuristic="none",
                                     strategy=strategy, max_nodes=budget)
        plugin = solve_knights_tour(5, 5, start, mode="count", heuristic=none_rule,
                                    strategy=strategy, max_nodes=budget)
        assert plugin == builtin, start


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
def test_plugin_count_3x4_exhaustive_equals_builtin(strategy):
    total = 0
    for start in squares(3, 4):
        builtin = solve_knights_tour(3, 4, start, mode="count", heuristic="warnsdorff",
                                     strategy=strategy)
        plugin = solve_knights_tour(3, 4, start, mode="count", heuristic=warnsdorff_rule,
                                    strategy=strategy)
        assert plugin == builtin, start
        assert plugin.status is Status.EXHAUSTED
        total += plugin.solutions
    assert total == 16   # OEIS A165134


def test_plugin_order_is_used():
    # A rule that reverses the move order walks the same tree in another order.
    none = solve_knights_tour(5, 5, (0, 0), mode="first", heuristic="none")
    rev = solve_knights_tour(5, 5, (0, 0), mode="first", heuristic=reversed_rule)
    moves = solve_knights_tour(5, 5, (0, 0), mode="first", heuristic="none",
                               move_order=tuple(reversed(DEFAULT_MOVE_ORDER)))
    assert rev.counters() == moves.counters()
    assert rev.solution == moves.solution
    assert rev.solution != none.solution
    check_tour(5, 5, (0, 0), rev.solution)


@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
def test_plugin_node_budget_stops_exactly_like_warnsdorff(strategy):
    for budget in (1, 2, 777):
        builtin = solve_knights_tour(6, 6, (0, 0), mode="count", heuristic="warnsdorff",
                                     strategy=strategy, max_nodes=budget)
        plugin = solve_knights_tour(6, 6, (0, 0), mode="count", heuristic=warnsdorff_rule,
                                    strategy=strategy, max_nodes=budget)
        assert plugin == builtin
        assert plugin.status is Status.NODE_LIMIT
        assert plugin.nodes == budget


def test_rule_called_once_per_placement_with_candidates():
    calls = []

    def spy(board, square, candidates):
        calls.append((square, tuple(candidates)))
        return candidates

    for strategy in ALL_STRATEGIES:
        calls.clear()
        res = solve_knights_tour(3, 4, (0, 0), mode="count", heuristic=spy, strategy=strategy)
        assert res.status is Status.EXHAUSTED
        assert all(cands for _, cands in calls)
        # open tours: a placement orders its candidates unless it is a full
        # tour or a dead end
        assert len(calls) == res.nodes - res.dead_ends - res.solutions
        assert calls[0] == ((0, 0), ((1, 2), (2, 1)))


def test_lists_and_iterables_are_accepted():
    def as_lists(board, square, candidates):
        return [list(s) for s in candidates[::-1]]

    def as_generator(board, square, candidates):
        return (s for s in reversed(candidates))

    expected = solve_knights_tour(5, 5, (0, 0), mode="count", heuristic=reversed_rule,
                                  max_nodes=5_000)
    for rule in (as_lists, as_generator):
        assert solve_knights_tour(5, 5, (0, 0), mode="count", heuristic=rule,
                                  max_nodes=5_000) == expected


# ---------------------------------------------------------------- wrong return values


def drop_one(board, square, candidates):
    return candidates[:-1]


def add_one(board, square, candidates):
    return candidates + [(4, 4)]


def return_none(board, square, candidates):
    return None


def duplicate_first(board, square, candidates):
    return [candidates[0]] * len(candidates)


def floats(board, square, candidates):
    return [(float(r), float(c)) for r, c in candidates]


def long_garbage(board, square, candidates):
    return list(range(1000))


@pytest.mark.parametrize("rule, returned, why", [
    (drop_one, "[(1, 2)]", "misses (2, 1)"),
    (add_one, "[(1, 2), (2, 1), (4, 4)]", "(4, 4) is not one of the candidates"),
    (return_none, "None", "not an iterable of squares"),
    (duplicate_first, "[(1, 2), (1, 2)]", "(1, 2) repeats"),
    (floats, "[(1.0, 2.0), (2.0, 1.0)]", "item (1.0, 2.0) is not a (row, col) pair of ints"),
])
@pytest.mark.parametrize("strategy", ALL_STRATEGIES)
def test_wrong_return_value_raises_naming_rule_square_and_value(rule, returned, why, strategy):
    with pytest.raises(HeuristicError) as info:
        solve_knights_tour(5, 5, (0, 0), heuristic=rule, strategy=strategy)
    message = str(info.value)
    assert message.startswith(f"heuristic plug-in {name_of(rule)} at square (0, 0) "
                              f"returned {returned}: {why};")
    assert message.endswith("candidates [(1, 2), (2, 1)]")
    assert isinstance(info.value, ValueError)


def test_wrong_return_value_at_a_later_square_names_that_square():
    def wrong_on_second(board, square, candidates):
        return candidates[:-1] if square == (1, 2) else candidates

    # (0, 0) -> (1, 2), whose candidates are (0, 4), (2, 4), (3, 3), (3, 1), (2, 0)
    with pytest.raises(HeuristicError,
                       match=r"wrong_on_second at square \(1, 2\) returned \[\(0, 4\), "
                             r"\(2, 4\), \(3, 3\), \(3, 1\)\]: misses \(2, 0\);"):
        solve_knights_tour(5, 5, (0, 0), heuristic=wrong_on_second, mode="count")


def test_long_return_value_is_truncated():
    with pytest.raises(HeuristicError) as info:
        solve_knights_tour(5, 5, (0, 0), heuristic=long_garbage)
    message = str(info.value)
    shown = message.split(" returned ", 1)[1].split(": item 0", 1)[0]
    assert len(shown) == 200
    assert shown.startswith("[0, 1, 2, 3,") and shown.endswith("...")


def test_tie_break_is_refused_with_a_plugin():
    board = KnightBoard(5, 5)
    for tie_break in ("random", "pohl", "roth"):
        with pytest.raises(ValueError, match=f"tie-break '{tie_break}' is not used with a "
                                             "heuristic plug-in"):
            make_orderer(board, warnsdorff_rule, tie_break)
    assert isinstance(make_orderer(board, warnsdorff_rule, "move_order"), PluginOrderer)
    with pytest.raises(ValueError, match="unknown heuristic 42"):
        make_orderer(board, 42)   # neither a name nor a callable


# ---------------------------------------------------------------- the board view


def test_board_view_semantics_and_checks():
    board = KnightBoard(5, 5)
    seen = {}

    def look(view, square, candidates):
        seen.update(
            rows=view.rows, cols=view.cols, square=square, candidates=list(candidates),
            here=view.visited(1, 2), came_from=view.visited(0, 0), free=view.visited(2, 2),
            onward_corner=view.onward(0, 4),   # (1, 2) visited, (2, 3) free
            onward_centre=view.onward(2, 2),   # 8 free neighbours
            onward_start=view.onward(0, 0),    # (1, 2) visited, (2, 1) free
        )
        return candidates

    order = make_orderer(board, look)
    visited = bytearray(board.size)
    visited[board.square(0, 0)] = visited[board.square(1, 2)] = 1
    cands, checks = order(board.square(1, 2), visited)
    assert seen == {"rows": 5, "cols": 5, "square": (1, 2),
                    "candidates": [(0, 4), (2, 4), (3, 3), (3, 1), (2, 0)],
                    "here": True, "came_from": True, "free": False,
                    "onward_corner": 1, "onward_centre": 8, "onward_start": 1}
    assert cands == [board.square(*s) for s in seen["candidates"]]
    # listing: the 6 neighbours of (1, 2); onward: 2 + 8 + 2 neighbours tested
    assert checks == 6 + 2 + 8 + 2
    assert order.stateful is True
    assert order.uses_rng is False


def test_board_view_is_read_only_and_checks_squares():
    board = KnightBoard(4, 6)
    order = make_orderer(board, none_rule)
    view = order.board
    assert (view.rows, view.cols) == (4, 6)
    with pytest.raises(AttributeError):
        view.rows = 3
    with pytest.raises(ValueError, match=r"square \(4, 0\) is off the 4 x 6 board"):
        view.visited(4, 0)
    with pytest.raises(ValueError, match=r"square \(0, -1\) is off the 4 x 6 board"):
        view.onward(0, -1)


def test_board_rng_is_seeded_by_the_trial_seed():
    board = KnightBoard(5, 5)
    order = make_orderer(board, random_rule, seed=42)
    assert order.uses_rng is False
    assert isinstance(order.board.rng, random.Random)
    assert order.uses_rng is True
    assert order.board.rng is order.board.rng
    assert order.board.rng.random() == random.Random(42).random()


def test_builtin_orderers_expose_stateful():
    board = KnightBoard(5, 5)
    assert make_orderer(board, "none").stateful is False
    assert make_orderer(board, "warnsdorff").stateful is False
    assert make_orderer(board, "warnsdorff", "random").stateful is True


# ---------------------------------------------------------------- randomised rules


def test_random_rule_is_reproducible_and_equal_across_strategies():
    by_seed = {}
    for seed in range(5):
        runs = [solve_knights_tour(5, 5, (0, 0), mode="count", heuristic=random_rule,
                                   strategy=strategy, seed=seed, max_nodes=2_000)
                for strategy in ("recursive", "recursive", "iterative", "amb")]
        assert runs[0] == runs[1]                        # same seed, same run
        assert runs[2] == runs[0]
        assert runs[3].counters() == runs[0].counters()  # amb replays recorded orders
        assert runs[3].solution == runs[0].solution
        by_seed[seed] = (runs[0].counters()["checks"], runs[0].solutions, runs[0].solution)
    assert len(set(by_seed.values())) == 5              # each seed gives its own order


def test_rule_uses_rng():
    class Shuffler:
        def __call__(self, board, square, candidates):
            board.rng.shuffle(candidates)
            return candidates

    def by_getattr(board, square, candidates):
        return getattr(board, "rng").sample(candidates, len(candidates))  # noqa: B009

    def in_comprehension(board, square, candidates):
        keys = {s: board.rng.random() for s in candidates}
        return sorted(candidates, key=keys.get)

    def decorated(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            return fn(*args)
        return wrapper

    for rule in (random_rule, Shuffler(), by_getattr, in_comprehension,
                 functools.partial(random_rule), decorated(random_rule),
                 lambda board, square, candidates: board.rng.sample(candidates, 2)):
        assert rule_uses_rng(rule), rule
        assert PluginOrderer.rule_uses_rng(rule)
    for rule in (warnsdorff_rule, none_rule, reversed_rule, decorated(warnsdorff_rule)):
        assert not rule_uses_rng(rule), rule
    assert not rule_uses_rng(hidden_random_rule)   # static check: helpers not followed
    assert rule_uses_rng(len)                      # no bytecode: assumed to use it


# ---------------------------------------------------------------- split


def split_params(rule, **kw):
    return {"rows": 5, "cols": 5, "start": (0, 0), "mode": "count", "heuristic": rule, **kw}


def test_split_refuses_a_rule_using_rng():
    for depth in (0, 1, 4):
        with pytest.raises(SplitError, match=f"heuristic plug-in {name_of(random_rule)} "
                                             "uses board.rng"):
            plan_split("knights_tour", split_params(random_rule), depth)
        with pytest.raises(SplitError, match="uses board.rng"):
            solve_split("knights_tour", split_params(random_rule), depth, max_nodes=100)


def test_split_refuses_a_rule_found_reading_rng_while_running():
    params = split_params(hidden_random_rule)
    # the top walk above depth 3 orders the start square's candidates
    with pytest.raises(SplitError, match=f"{name_of(hidden_random_rule)} uses board.rng"):
        plan_split("knights_tour", params, 3)
    # at depth 1 the top walk orders nothing: the task finds out
    plan = plan_split("knights_tour", params, 1)
    assert plan.tasks == ((0,),)
    with pytest.raises(SplitError, match="uses board.rng"):
        run_task(plan, 0, max_nodes=10)


def test_split_refuses_a_rule_with_the_compiled_engine():
    with pytest.raises(SplitError, match="compiled engine runs the built-in heuristics only"):
        plan_split("knights_tour", split_params(warnsdorff_rule, engine="compiled"), 3)


@pytest.mark.parametrize("depth", [0, 4, 26])
@pytest.mark.parametrize("budget", [20_000, 777])
def test_split_plugin_equals_unsplit_5x5_count(depth, budget):
    seq = solve_knights_tour(5, 5, (0, 0), mode="count", heuristic=warnsdorff_rule,
                             max_nodes=budget)
    assert seq == solve_knights_tour(5, 5, (0, 0), mode="count", heuristic="warnsdorff",
                                     max_nodes=budget)
    sp = solve_split("knights_tour", split_params(warnsdorff_rule), depth, max_nodes=budget)
    assert sp.counters() == seq.counters()
    assert sp.solution == seq.solution
    assert sp.status is Status.NODE_LIMIT and sp.nodes == budget


@pytest.mark.parametrize("depth", [0, 3, 13])
def test_split_plugin_3x4_count_exhaustive(depth):
    params = {"rows": 3, "cols": 4, "start": (0, 0), "mode": "count",
              "heuristic": warnsdorff_rule}
    seq = solve_knights_tour(3, 4, (0, 0), mode="count", heuristic=warnsdorff_rule)
    sp = solve_split("knights_tour", params, depth)
    assert sp.counters() == seq.counters()
    assert sp.solution == seq.solution
    assert sp.status is Status.EXHAUSTED
    # 2 open tours from the corner of 3 x 4 (see tests/test_knights.py); a count does
    # not depend on the order the candidates are tried in
    assert sp.solutions == seq.solutions == 2
