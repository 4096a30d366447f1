"""Where btlab's modules went when ``runner`` and ``experiments`` became ``btlab``.

btlab 0.1 installed two top-level packages, ``runner`` and ``experiments``; from
0.2 on there is one import name, ``btlab`` (``runner/`` installs as ``btlab``,
``experiments/`` as ``btlab.experiments``). A plug-in written against an old path
gets an error naming the new one:

* wherever btlab runs, :func:`new_name` turns an old module name into the new one
  (the plug-in loader, :mod:`btlab.problems.plugins`, says it in its error);
* in a checkout's root, where the folders ``runner/`` and ``experiments/`` are on
  ``sys.path`` under their own names, their ``__init__.py`` calls :func:`refuse_old_name`:
  no module of the folder is ever imported a second time under the old name, and
  ``import runner.spec`` raises :class:`ImportError` naming ``btlab.problems.spec``.

The map of the new rooms is ``docs/architecture.md``.
"""

from __future__ import annotations

import importlib.abc
import sys
from typing import Any

#: Old module name -> new module name, for every module that moved.
OLD_NAMES: dict[str, str] = {
    "experiments.amb": "btlab.experiments.amb",
    "experiments.checker": "btlab.experiments.checker",
    "experiments.checker_fast": "btlab.experiments.checker_fast",
    "experiments.compiled": "btlab.experiments.compiled",
    "experiments.compiled._cache": "btlab.experiments.compiled._cache",
    "experiments.compiled._driver": "btlab.experiments.compiled._driver",
    "experiments.compiled.estimate_kernel": "btlab.experiments.compiled.estimate_kernel",
    "experiments.compiled.knights_fast": "btlab.experiments.compiled.knights.fast",
    "experiments.compiled.knights_kernel": "btlab.experiments.compiled.knights.kernel",
    "experiments.compiled.knights_random64": "btlab.experiments.compiled.knights.random64",
    "experiments.compiled.knights_shuffle64": "btlab.experiments.compiled.knights.shuffle64",
    "experiments.compiled.knights_tables": "btlab.experiments.compiled.knights.tables",
    "experiments.compiled.knights_ties64": "btlab.experiments.compiled.knights.ties64",
    "experiments.compiled.knights_wide": "btlab.experiments.compiled.knights.wide",
    "experiments.compiled.knights_widekeyed": "btlab.experiments.compiled.knights.widekeyed",
    "experiments.compiled.queens_kernel": "btlab.experiments.compiled.queens_kernel",
    "experiments.core": "btlab.experiments.core",
    "experiments.estimate": "btlab.experiments.estimate",
    "experiments.knights": "btlab.experiments.knights.solve",
    "experiments.knights_amb": "btlab.experiments.knights.amb",
    "experiments.knights_board": "btlab.experiments.knights.ordering",
    "experiments.knights_geometry": "btlab.experiments.knights.board",
    "experiments.knights_plugin": "btlab.experiments.knights.user_rules",
    "experiments.queens": "btlab.experiments.queens.solve",
    "experiments.queens_base": "btlab.experiments.queens.symmetry",
    "experiments.queens_bitmask": "btlab.experiments.queens.bitmask",
    "experiments.queens_construct": "btlab.experiments.queens.construct",
    "experiments.queens_enumerate": "btlab.experiments.queens.enumerate",
    "experiments.queens_search": "btlab.experiments.queens.backtrack",
    "experiments.registry": "btlab.experiments.registry",
    "experiments.split": "btlab.experiments.split.subtrees",
    "experiments.split_base": "btlab.experiments.split.base",
    "experiments.split_knights": "btlab.experiments.split.knights",
    "experiments.split_queens": "btlab.experiments.split.queens",
    "runner.__main__": "btlab.__main__",
    "runner.analysis": "btlab.analysis",
    "runner.backends": "btlab.execution.backends",
    "runner.batching": "btlab.execution.batching",
    "runner.board_plots": "btlab.views.plots.boards",
    "runner.budgets": "btlab.config.budgets",
    "runner.censoring": "btlab.problems.censoring",
    "runner.checkpoints": "btlab.store.checkpoints",
    "runner.cli": "btlab.cli.main",
    "runner.compare": "btlab.analysis.folder_diff",
    "runner.config": "btlab.config.model",
    "runner.config_order": "btlab.analysis.config_order",
    "runner.docs_tables": "btlab.views.docs_tables",
    "runner.errors": "btlab.errors",
    "runner.estimate_table": "btlab.views.estimate_table",
    "runner.exclude_values": "btlab.sweep.exclude",
    "runner.execute": "btlab.execution.execute",
    "runner.failures": "btlab.views.failures",
    "runner.figures": "btlab.views.plots.figure_files",
    "runner.frames": "btlab.analysis.columns",
    "runner.headline_rows": "btlab.views.headline_rows",
    "runner.html": "btlab.views.report.html",
    "runner.interrupts": "btlab.execution.interrupts",
    "runner.matrix": "btlab.sweep.matrix",
    "runner.outfile": "btlab.views.outfile",
    "runner.overrides": "btlab.config.overrides",
    "runner.pair_keys": "btlab.analysis.search_keys",
    "runner.pairing": "btlab.analysis.pairing",
    "runner.plots": "btlab.views.plots",
    "runner.plugins": "btlab.problems.plugins",
    "runner.problems": "btlab.problems",
    "runner.problems.knights_tour": "btlab.problems.knights_tour",
    "runner.problems.knights_tour.views": "btlab.problems.knights_tour.views",
    "runner.problems.n_queens": "btlab.problems.n_queens",
    "runner.problems.n_queens.views": "btlab.problems.n_queens.views",
    "runner.progress": "btlab.views.progress",
    "runner.provenance": "btlab.store.provenance",
    "runner.rate_plots": "btlab.views.plots.rates",
    "runner.rates": "btlab.analysis.rates",
    "runner.ray_auth": "btlab.execution.ray_auth",
    "runner.ray_backend": "btlab.execution.ray_backend",
    "runner.report": "btlab.views.report.page",
    "runner.report_cases": "btlab.views.report.cases",
    "runner.report_folders": "btlab.views.report.folders",
    "runner.report_pairs": "btlab.views.report.pairs",
    "runner.report_survival": "btlab.views.report.survival",
    "runner.restarts": "btlab.config.restarts",
    "runner.run_command": "btlab.api.run",
    "runner.schema": "btlab.store.schema",
    "runner.seeds": "btlab.config.seeds",
    "runner.selection": "btlab.analysis.counted_rows",
    "runner.spec": "btlab.problems.spec",
    "runner.split_runner": "btlab.execution.split_run",
    "runner.split_state": "btlab.execution.split_state",
    "runner.store": "btlab.store.folder",
    "runner.store_check": "btlab.store.check",
    "runner.store_fix": "btlab.store.repair",
    "runner.store_io": "btlab.store.writes",
    "runner.store_lock": "btlab.store.lock",
    "runner.store_read": "btlab.store.read",
    "runner.summary": "btlab.views.headline",
    "runner.survival": "btlab.analysis.kaplan_meier",
    "runner.survival_plots": "btlab.views.plots.survival",
    "runner.sweep": "btlab.sweep.expand",
    "runner.tables": "btlab.views.tables",
    "runner.trend_plots": "btlab.views.plots.trends",
    "runner.trial": "btlab.sweep.trial",
    "runner.trial_ids": "btlab.sweep.trial_ids",
    "runner.trial_keys": "btlab.config.trial_keys",
    "runner.value_messages": "btlab.config.messages",
    "runner.yaml_source": "btlab.config.yaml_positions",
}


_TOPS = {"runner": "btlab", "experiments": "btlab.experiments"}


def new_name(old: str) -> str | None:
    """The new name of module ``old`` (``runner.spec`` -> ``btlab.problems.spec``), or None.

    A name below a moved module keeps its tail (``runner.spec.ProblemSpec`` ->
    ``btlab.problems.spec.ProblemSpec``); ``runner`` and ``experiments`` themselves
    map to ``btlab`` and ``btlab.experiments``.
    """
    parts = old.split(".")
    for i in range(len(parts), 0, -1):
        head = ".".join(parts[:i])
        new = OLD_NAMES.get(head) or _TOPS.get(head)
        if new is not None:
            return ".".join([new, *parts[i:]])
    return None


def message(old: str) -> str:
    """The error text for an import of the old module ``old``."""
    new = new_name(old) or ("btlab" if old.split(".")[0] == "runner" else "btlab.experiments")
    return (f"{old} is btlab's old module name: since btlab 0.2 it is {new}\n"
            f"  fix: import {new} (the map of btlab's modules: docs/architecture.md)")


class _OldNames(importlib.abc.MetaPathFinder):
    """Refuses every ``runner.*`` / ``experiments.*`` import with the new name."""

    def __init__(self, top: str) -> None:
        self.top = top

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname.startswith(self.top + "."):
            # ImportError, not ModuleNotFoundError: ``from runner import x`` would turn
            # the latter into a bare "cannot import name 'x'"
            raise ImportError(message(fullname), name=fullname)
        return None


def refuse_old_name(module: Any) -> None:
    """Make ``module`` (a checkout folder imported as ``runner`` or ``experiments``) a stub.

    Its ``__path__`` empties, so none of the folder's modules load under the old
    name; importing a submodule raises :class:`ImportError` naming its new
    name, and an attribute of the stub raises :class:`AttributeError` likewise.
    """
    top = module.__name__
    module.__path__ = []
    if not any(isinstance(f, _OldNames) and f.top == top for f in sys.meta_path):
        sys.meta_path.insert(0, _OldNames(top))

    def __getattr__(name: str) -> Any:
        raise AttributeError(message(f"{top}.{name}"))

    module.__getattr__ = __getattr__
