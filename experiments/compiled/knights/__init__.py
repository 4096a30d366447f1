"""The compiled knight's-tour loops (numba), one per board size class and candidate order.

Modules:

- ``fast``: The knight's-tour search on boards of at most 64 squares: the visited set in one
  64-bit mask.
- ``first``: Plain move order to the first tour: the loops of ``mode: first`` without a
  heuristic.
- ``general``: The general loop of the knight's-tour kernel: every heuristic, tie-break and
  board.
- ``kernel``: Compiled knight's-tour kernel: the reference search of
  :mod:`btlab.experiments.knights.solve` in numba.
- ``loops``: Which loop runs a knight's-tour search: the registry, chosen in Python before
  numba compiles.
- ``random64``: The knight's-tour search with random ties on boards of at most 64 squares.
- ``shuffle64``: The knight's-tour search with heuristic ``none`` and tie-break ``random``, at
  most 64 squares.
- ``tables``: The knight's-tour kernels' board tables: neighbours in move order, degrees,
  distances.
- ``ties64``: The knight's-tour search by degree keys with deterministic ties, on at most 64
  squares.
- ``wide``: The knight's-tour search on boards of more than 64 squares, ties by move order.
- ``widekeyed``: The knight's-tour search on boards of more than 64 squares, by degree keys with
"""
