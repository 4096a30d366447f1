"""Views: what a person reads -- terminal tables, progress, plots, the HTML report.

Modules:

- ``docs_tables``: The README's strategy tables, rendered from the strategy registries.
- ``estimate_table``: The table ``btlab run`` and ``btlab show`` print for ``mode: estimate``
  trials.
- ``failures``: Failing trials, told as they happen and listed again when the run ends.
- ``findings``: The finding: a short paragraph, generated from the rows, that answers the
  sweep's question.
- ``headline``: The headline tables ``btlab run`` prints at the end and ``btlab show`` prints
  again.
- ``headline_rows``: The rows the end-of-run headline needs, read part by part in constant
  memory.
- ``outfile``: Writing an output file whole, or not at all: the HTML report, saved figures,
  README tables.
- ``plots/``: Plots of btlab results: start-square heatmaps, scaling, time against nodes.
- ``progress``: Progress as plain lines, for output that is not a terminal (nohup, tmux logs,
  ``> file``).
- ``report/``: the self-contained HTML report of ``btlab report``.
- ``tables``: Building blocks of the headline tables, and the generic headline of any problem.
"""
