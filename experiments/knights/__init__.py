"""The knight's tour: board, move order, heuristics and tie-breaks, the search strategies.

Modules:

- ``amb``: Knight's tour written with McCarthy's Amb operator (the ``amb`` strategy).
- ``board``: The knight's-tour board: its size, the move order, and each square's neighbours.
- ``ordering``: The ordering of a knight's-tour placement's candidates: heuristics and tie-
  breaks.
- ``solve``: Knight's tour by backtracking: the search strategies and their entry point.
- ``user_rules``: Heuristic plug-ins of the knight's tour: a user rule orders a placement's
  candidates.
"""
