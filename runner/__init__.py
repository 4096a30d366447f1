"""btlab: batch experiments on backtracking search (knight's tour, N-Queens), on Ray, into Parquet.

The library under the ``btlab`` command; every name loads on first use (PEP 562),
so ``import btlab`` -- and ``import btlab.experiments`` in a Ray worker or a
kernel -- pulls in nothing of the runner until it is asked for::

    import btlab
    df = btlab.run("configs/warnsdorff_64_starts.yaml", backend="serial")
    btlab.analysis.summary(df, by=["heuristic"], metrics=["nodes", "backtracks"])

Public names (``__all__``): :func:`run`, :func:`validate`, :func:`load`,
:mod:`analysis`, :func:`report`, :func:`compare`, :class:`ProblemSpec`,
:class:`Strategy`, :class:`Trial`, and the errors :class:`BtlabError`,
:class:`ConfigError`, :class:`ResultsError`, :class:`BackendError`,
:class:`TrialError`. ``docs/library.md`` shows each at work (a notebook on Ray,
mapping configs, the errors); the map of the packages below is ``docs/architecture.md``.

Modules:

- ``__main__``: ``python -m btlab``, the ``btlab`` command.
- ``analysis/``: pandas over result rows: load, summaries, pairing, survival, rates, folder diff.
- ``api/``: the library under the CLI: ``btlab.run`` and ``btlab.validate``.
- ``cli/``: the ``btlab`` command line.
- ``config/``: YAML text to a validated config.
- ``errors``: every error btlab raises on purpose (old module names included).
- ``execution/``: a trial to its row, here or on Ray.
- ``experiments/``: the searches (installed from the repository's ``experiments/``).
- ``problems/``: what a problem is to the runner: the spec, the registry, plug-ins.
- ``store/``: the results folder.
- ``sweep/``: a config to its trials.
- ``testing``: the contract suite for a problem's author (needs pytest; never loaded by default).
- ``views/``: terminal tables, progress, plots, the HTML report.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

if __name__ != "btlab":  # the checkout's runner/ folder, imported under its old name
    from btlab.errors import refuse_old_name

    refuse_old_name(sys.modules[__name__])
else:
    #: public name -> (module, attribute or None for the module itself)
    _LAZY: dict[str, tuple[str, str | None]] = {
        "run": ("btlab.api.run", "run"),
        "validate": ("btlab.api.run", "validate"),
        "load": ("btlab.analysis", "load"),
        "analysis": ("btlab.analysis", None),
        "report": ("btlab.views.report.page", "report"),
        "compare": ("btlab.analysis.folder_diff", "compare"),
        "ProblemSpec": ("btlab.problems.spec", "ProblemSpec"),
        "Strategy": ("btlab.experiments.registry", "Strategy"),
        "Trial": ("btlab.sweep.trial", "Trial"),
        "BtlabError": ("btlab.errors", "BtlabError"),
        "ConfigError": ("btlab.errors", "ConfigError"),
        "ResultsError": ("btlab.errors", "ResultsError"),
        "BackendError": ("btlab.errors", "BackendError"),
        "TrialError": ("btlab.errors", "TrialError"),
    }

    __all__ = sorted(_LAZY)

    def __getattr__(name: str) -> Any:
        """Load a public name on first use (PEP 562)."""
        try:
            module, attribute = _LAZY[name]
        except KeyError:
            raise AttributeError(f"module 'btlab' has no attribute {name!r}") from None
        value = importlib.import_module(module)
        if attribute is not None:
            value = getattr(value, attribute)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*globals(), *_LAZY])
