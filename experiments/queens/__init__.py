"""N-Queens: the search strategies, enumeration, bit masks and explicit constructions.

Modules:

- ``backtrack``: N-Queens by row-by-row backtracking: ``recursive``, ``iterative``, ``amb``.
- ``bitmask``: N-Queens by backtracking on bit masks (the ``bitmask`` strategy).
- ``construct``: N-Queens without search: the ``construction`` strategy and
  :func:`construct_queens`.
- ``enumerate``: N-Queens by enumeration: ``brute_force`` (every placement) and ``functional``
- ``solve``: N-Queens: place n queens on an n x n board so that no two attack each other.
- ``symmetry``: N-Queens helpers shared by the strategy modules: the symmetry test, unique
  counting.
"""
