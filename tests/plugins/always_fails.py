"""A heuristic plug-in that raises in every trial: a sweep whose every trial fails
(the failure summary, ``--max-failures``; tests/test_max_failures.py)."""


def broken(board, square, candidates):
    """Raise at the first choice, with the same message in every trial."""
    raise RuntimeError("this heuristic is broken: " + "it raises at the first choice of every "
                       "trial, whatever the board, the square or the candidates " * 4)
