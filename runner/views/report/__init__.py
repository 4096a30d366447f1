"""The self-contained HTML report of ``btlab report``.

Modules:

- ``cases``: The report's cases: the hardest finished and the censored cases of each group,
  drawn and listed.
- ``folders``: The results folders of one ``btlab report``: their rows, what was run, config and
  provenance.
- ``html``: Pieces of the self-contained HTML report: escaped text, tables, embedded figures.
- ``page``: ``btlab report``: one self-contained HTML file about one or several results folders.
- ``pairs``: The report's pairwise comparisons: every pair of groups that differ in one
  treatment.
- ``survival``: The report's survival view of search cost: curves, cactus plot, quantiles, log-
  rank tests.
"""
