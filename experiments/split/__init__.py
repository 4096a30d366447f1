"""Split searches: one search as ordered subtree tasks, combined into the sequential counters.

Modules:

- ``base``: What the split modules share: the event list, :class:`SplitError`, the
- ``knights``: The knight's tour :class:`~btlab.experiments.split.base.Splitter` (see
  :mod:`btlab.experiments.split.subtrees`).
- ``queens``: The N-Queens :class:`~btlab.experiments.split.base.Splitter` (see
  :mod:`btlab.experiments.split.subtrees`).
- ``subtrees``: One search split into ordered subtree tasks, combined into exactly the
  sequential counters.
"""
