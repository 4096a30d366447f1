"""McCarthy's Amb operator, by re-execution, and the counters of a tree it walks.

``amb`` ("ambiguous") was introduced by J. McCarthy, "A basis for a
mathematical theory of computation", in *Computer Programming and Formal
Systems*, North-Holland, 1963: ``amb(x, y)`` is either ``x`` or ``y``, chosen so
that the computation succeeds. :class:`Amb` makes it work for ordinary Python
functions. The function takes the :class:`Amb` as its argument, calls
:meth:`Amb.amb` wherever it must choose one value from a list (a *choice
point*) and :meth:`Amb.require` wherever a condition must hold; a failed
``require`` (or an empty choice list) fails the current branch.

Choice points work by **re-executing** the function from the start. The
operator keeps a stack with one entry per choice point on the current branch:
the index of the alternative chosen there and the number of alternatives.
On each execution the recorded choices are *replayed* (``amb`` returns the
recorded alternative), the first new choice point takes its first alternative
and is pushed. When a branch fails or a solution has been handed out, the
deepest choice point with alternatives left advances to its next one
(exhausted choice points are popped) and the function runs again -- a
*restart*. No continuation, thread or generator trick is involved, so any
deterministic function works, at the price of replaying the branch so far on
every restart.

Because a restart replays work that was already done, a search driven by
:class:`Amb` must count a placement or a check only when it happens for the
first time: :attr:`Amb.replaying` says whether the code now running is a
replay. :class:`TreeLedger` turns the fresh events of such a search into the
metrics-contract counters (``docs/metrics.md``), equal to those of the
recursive search that walks the same tree in the same order.
"""

from __future__ import annotations

from typing import Callable, Generator, Iterable, Sequence, TypeVar

from btlab.experiments.core import Budget, Status, StopSearch

T = TypeVar("T")
R = TypeVar("R")


class NoSolution(Exception):
    """:meth:`Amb.run_first` found no solution: every branch failed."""


class NondeterministicFunction(RuntimeError):
    """A re-execution did not retrace the recorded choices.

    Replay assumes that, given the same choices, the function makes the same
    choice points with the same number of alternatives and the same
    ``require`` outcomes; a function that depends on outside state breaks that.
    """


class _Fail(BaseException):
    """Unwinds a failed branch back to :meth:`Amb.run_all`.

    A ``BaseException`` so that an ``except Exception`` in the searched
    function cannot swallow it by accident.
    """


_FAIL = _Fail()
# Choice lists of these types are indexed in place; anything else is listed once.
_INDEXABLE = (list, tuple, range)


class Amb:
    """A choice point operator driving a function by re-execution.

    Usage::

        def pythagorean(amb):
            a = amb.amb(range(1, 20))
            b = amb.amb(range(a, 20))
            c = amb.amb(range(b, 30))
            amb.require(a * a + b * b == c * c)
            return a, b, c

        Amb().run_first(pythagorean)        # (3, 4, 5)
        list(Amb().run_all(pythagorean))    # every triple, in depth-first order

    Solutions come in depth-first order: alternatives are tried in the order
    the choice list gives them, the deepest choice point first.

    Attributes:
        restarts: executions of the function after the first one, in the last
            run (one per failed branch or handed-out solution that had an
            alternative left to try).
        choice_points: choice points created (``amb`` calls that were not
            replays and had at least one alternative).
        replayed: ``amb`` calls answered from the record (re-execution cost).
    """

    __slots__ = ("restarts", "choice_points", "replayed",
                 "_index", "_count", "_pos", "_fresh_from", "_running", "_in_fn")

    def __init__(self) -> None:
        self.restarts = 0
        self.choice_points = 0
        self.replayed = 0
        self._index: list[int] = []   # chosen alternative of each choice point on the branch
        self._count: list[int] = []   # number of alternatives of each choice point
        self._pos = 0                 # amb calls made so far in this execution
        self._fresh_from = 0          # code after this many amb calls runs for the first time
        self._running = False         # a run_all() is under way (possibly suspended)
        self._in_fn = False           # the searched function is executing

    @property
    def replaying(self) -> bool:
        """True while the code now running repeats work of an earlier execution.

        In the first execution nothing is a replay. In a restart with ``k``
        recorded choice points, the code before the ``k``-th ``amb`` call is a
        replay; that call returns an alternative never tried before, and
        everything after it is new.
        """
        return self._pos < self._fresh_from

    def amb(self, choices: Iterable[T]) -> T:
        """Choose one of ``choices``: a choice point.

        Args:
            choices: the alternatives, tried in order. Lists, tuples and
                ranges are indexed in place; other iterables are listed first.
                The same call must offer the same number of alternatives on
                every execution that reaches it with the same earlier choices.

        Returns:
            The alternative of the current branch.

        Raises:
            NondeterministicFunction: a replayed choice point offers a
                different number of alternatives than when it was recorded.
            RuntimeError: called outside :meth:`run_all` / :meth:`run_first`.

        An empty ``choices`` fails the current branch (nothing to choose).
        """
        if not self._in_fn:
            raise RuntimeError("amb() called outside Amb.run_all() / Amb.run_first()")
        options: Sequence[T]
        if type(choices) in _INDEXABLE:
            options = choices  # type: ignore[assignment]
        else:
            options = list(choices)
        pos = self._pos
        self._pos = pos + 1
        if pos < len(self._index):
            if len(options) != self._count[pos]:
                raise NondeterministicFunction(
                    f"choice point {pos} offers {len(options)} alternatives on "
                    f"re-execution, {self._count[pos]} when first reached")
            if pos + 1 < self._fresh_from:
                self.replayed += 1
            return options[self._index[pos]]
        count = len(options)
        if not count:
            self._pos = pos
            raise _FAIL
        self._index.append(0)
        self._count.append(count)
        self.choice_points += 1
        return options[0]

    def require(self, condition: object) -> None:
        """Fail the current branch unless ``condition`` is true.

        Raises:
            RuntimeError: called outside :meth:`run_all` / :meth:`run_first`.
        """
        if not condition:
            if not self._in_fn:
                raise RuntimeError("require() called outside Amb.run_all() / Amb.run_first()")
            raise _FAIL

    def fail(self) -> None:
        """Fail the current branch (``require(False)``)."""
        self.require(False)

    def run_all(self, fn: Callable[["Amb"], R]) -> Generator[R, None, None]:
        """Yield every value ``fn`` returns over all branches, depth-first.

        Args:
            fn: a deterministic function of this :class:`Amb` that returns a
                solution, or fails through :meth:`require` / an empty
                :meth:`amb`. It runs once per branch tried.

        Yields:
            ``fn``'s return value for each successful branch, in depth-first
            order. Counters are reset when iteration starts.

        Raises:
            NondeterministicFunction: a re-execution did not retrace the
                recorded choices.
            RuntimeError: the operator is already running (nested runs).
            Any exception ``fn`` raises other than a failure, unchanged.
        """
        if self._running:
            raise RuntimeError("this Amb is already running; use a fresh Amb for a nested search")
        index, count = self._index, self._count
        index.clear()
        count.clear()
        self.restarts = self.choice_points = self.replayed = 0
        self._running = True
        try:
            while True:
                self._pos = 0
                self._fresh_from = len(index)
                self._in_fn = True
                try:
                    result = fn(self)
                    succeeded = True
                except _Fail as failure:
                    # The one failure instance is raised again and again; drop
                    # its traceback, or each raise would add to it.
                    failure.__traceback__ = None
                    succeeded = False
                finally:
                    self._in_fn = False
                if self._pos < self._fresh_from:
                    raise NondeterministicFunction(
                        f"re-execution {'failed' if not succeeded else 'returned'} after "
                        f"{self._pos} choices, before reaching the {self._fresh_from} "
                        "recorded ones")
                if succeeded:
                    yield result
                # Backtrack: advance the deepest choice point with alternatives left.
                while index and index[-1] + 1 >= count[-1]:
                    index.pop()
                    count.pop()
                if not index:
                    return
                index[-1] += 1
                self.restarts += 1
        finally:
            self._running = self._in_fn = False

    def run_first(self, fn: Callable[["Amb"], R]) -> R:
        """Return the first value ``fn`` returns, depth-first.

        Raises:
            NoSolution: every branch failed.
            NondeterministicFunction, RuntimeError: as :meth:`run_all`.
        """
        runs = self.run_all(fn)
        try:
            for result in runs:
                return result
        finally:
            runs.close()
        raise NoSolution("every branch failed: no solution")


class TreeLedger:
    """Metrics-contract counters of a depth-first tree walked through :class:`Amb`.

    A recursive search undoes a placement as soon as its last child is done;
    under :class:`Amb` the tree is only visible through the *fresh* events of
    successive re-executions. The ledger keeps the current path's depth and,
    for each placement on it, whether it has had a child and whether its
    subtree holds a reported solution; a fresh choice for depth ``d + 1``
    first undoes (:meth:`retreat`) the placements deeper than ``d``, exactly
    those a recursive search has undone before trying that alternative. So the
    counters agree with the recursive search's at every placement attempt, at
    a solution and at the end, whatever the budget.

    Counters (as :class:`btlab.experiments.core.SearchResult`, defined in ``docs/metrics.md``):
        nodes, checks, solutions, max_depth: counted by the caller through
        :meth:`place`, :meth:`add_checks` and :meth:`solution`, on fresh
        events only.
        backtracks: placements undone whose subtree held no reported solution.
        dead_ends: undone placements that were not solutions and had no child
        (a placement at full depth that is not a solution has none either).

    Args:
        full_depth: the depth of a complete placement (n queens, or the
            number of squares of a knight's tour board).
        budget: the node and time budget, checked on every placement as the
            recursive search does.
        clock_mask: the clock is read before placement ``k + 1`` when ``k & clock_mask
            == 0`` (:meth:`btlab.experiments.core.Budget.clock_mask`): the mask of the
            recursive search of the same tree, so that both read it alike -- every
            :attr:`~btlab.experiments.core.Budget.CLOCK_EVERY` placements by default,
            every placement (0) when each placement calls a plug-in of unknown cost.
    """

    __slots__ = ("nodes", "backtracks", "dead_ends", "checks", "solutions", "max_depth",
                 "depth", "full_depth", "_found", "_has_child", "_budget", "_cap", "_mask")

    def __init__(self, full_depth: int, budget: Budget,
                 clock_mask: int = Budget.CLOCK_EVERY - 1):
        self.nodes = self.backtracks = self.dead_ends = self.checks = 0
        self.solutions = self.max_depth = 0
        self.depth = 0                 # placements on the current path
        self.full_depth = full_depth
        self._found = 0                # path placements 1.._found hold a reported solution
        self._has_child = [False] * (full_depth + 2)
        self._budget = budget
        self._cap = budget.node_cap
        self._mask = clock_mask

    def retreat(self, depth: int) -> None:
        """Undo the path's placements deeper than ``depth``, deepest first."""
        has_child = self._has_child
        full = self.full_depth
        for d in range(self.depth, depth, -1):
            if d > self._found:
                self.backtracks += 1
                if d == full or not has_child[d]:
                    self.dead_ends += 1
        self.depth = depth
        if self._found > depth:
            self._found = depth

    def place(self, depth: int) -> None:
        """Make placement ``depth`` (the path must be ``depth - 1`` long).

        Raises:
            StopSearch: the node or time budget is spent (checked first, as in
                the recursive search, so the placement is not made).
        """
        nodes = self.nodes
        if nodes >= self._cap:
            raise StopSearch(Status.NODE_LIMIT)
        if not (nodes & self._mask) and self._budget.out_of_time():
            raise StopSearch(Status.TIME_LIMIT)
        self.nodes = nodes + 1
        self.depth = depth
        self._has_child[depth] = False
        self._has_child[depth - 1] = True
        if depth > self.max_depth:
            self.max_depth = depth

    def add_checks(self, count: int) -> None:
        """Count ``count`` fresh checks, reading the clock every 64 of them.

        Under :class:`Amb` every failed check costs a restart that replays the
        whole path, so the clock cannot wait for :attr:`Budget.CLOCK_EVERY`
        placements as in a recursive search.

        Raises:
            StopSearch: the time budget is spent.
        """
        old = self.checks
        self.checks = new = old + count
        if (new >> 6) != (old >> 6) and self._budget.out_of_time():
            raise StopSearch(Status.TIME_LIMIT)

    def solution(self) -> None:
        """Report the current path as a solution."""
        self.solutions += 1
        self._found = self.depth

