"""Sweep: a validated config to its trials, each with a stable id.

Modules:

- ``exclude``: How ``exclude`` values compare with the values of a combination, for
- ``expand``: Sweep expansion: a validated config -> its trials, GitHub-Actions-style matrix
  semantics.
- ``matrix``: GitHub Actions matrix semantics over a config's ``fixed``, ``matrix``,
  ``exclude``, ``include``.
- ``trial``: One trial: a problem, its canonical parameters, budget, seed and repeat, and its
  id.
- ``trial_ids``: A set of trial ids in 8 bytes each: what ``btlab run`` holds for every trial of
  its config.
"""
