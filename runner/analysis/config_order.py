"""Config order: the order of a sweep's trials as its config expands them, for every table.

A config expands into trials in *sweep order* (:func:`btlab.sweep.expand.iter_trials`:
the product of the ``matrix`` lists in the order the config lists its keys and
values, ``all`` expanded in place, e.g. start squares row by row, then the
``include`` entries that make trials of their own). Rows arrive in another
order (Ray finishes trials as it can; a resumed run adds the trials it
missed). :func:`in_config_order` puts rows back in sweep order; ``btlab show``
(:mod:`btlab.views.headline`), ``btlab run``'s closing tables, ``btlab report`` and
:func:`btlab.analysis.load` all use it, so their groups and rows come in the
order the config lists them (``rec 5, rec 6, ..., amb 5, amb 6``), not the
order trials finished in.

The config used is the one stored in the folder's newest part (the config last
run). Rows of trials no longer in it (an edited config) come after the others,
in the order they were read. Schema version 1 stored the config with its keys
sorted, so for a folder written by it the matrix keys count in alphabetical
order. A config this btlab cannot expand (a plug-in that no longer imports),
or one of more than :data:`EXPAND_LIMIT` trials, leaves the rows in the order
they were read.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import numpy as np
import pandas as pd

from btlab.config.model import SweepConfig, parse_config
from btlab.errors import ConfigError
from btlab.store.read import newest_meta
from btlab.sweep.expand import iter_trials, plan_size

#: Configs of more trials than this are not expanded to order rows (expanding takes
#: about 1 s per 7,000 trials on a busy 2-core machine): their rows stay in the order
#: they were read.
EXPAND_LIMIT = 50_000


@functools.lru_cache(maxsize=8)
def _positions_of(stored: str, where: str, plugins: str | None = None) -> dict[str, int] | None:
    """trial id -> its position in the sweep order of the stored config JSON, or None
    when the config cannot be expanded here or is larger than :data:`EXPAND_LIMIT`.
    ``plugins``: the plug-in source hashes stored with it (JSON), used instead of hashing
    the plug-in files as they are now."""
    try:
        config = parse_config(stored, where)
        # by arithmetic where it can (a seed range): walking 50,000 trials to count them
        # would take seconds and tens of megabytes
        if plan_size(config, EXPAND_LIMIT)[0] > EXPAND_LIMIT:
            return None
        hashes = json.loads(plugins) if plugins else None
        return {t.trial_id: i for i, t in enumerate(
            iter_trials(config, plugin_hashes=hashes if isinstance(hashes, dict) else None))}
    except (ConfigError, ValueError):
        return None


def config_positions(config: Any) -> dict[str, int] | None:
    """trial id -> position in the sweep order of ``config`` (a
    :class:`~btlab.config.model.SweepConfig`, or a folder / URI whose newest part's stored
    config is used); None when it cannot be expanded (see the module docstring)."""
    if isinstance(config, SweepConfig):
        return _positions_of(json.dumps(config.expanded()), config.source)
    meta = newest_meta(config)
    stored = meta.get("btlab.config")
    if not stored:
        return None
    return _positions_of(stored, f"{config} (config stored in its newest part)",
                         meta.get("btlab.plugins"))


def order_key(df: pd.DataFrame, positions: dict[str, int] | None) -> np.ndarray:
    """Sort key (int64, one per row): the row's trial's position in sweep order; rows of
    trials not in the config (or every row, with ``positions`` None) after all of them,
    in the order they come in ``df``."""
    n = len(df)
    after = np.arange(n, dtype=np.int64) + (len(positions) if positions else 0)
    if not positions or "trial_id" not in df.columns:
        return after
    found = df["trial_id"].map(positions)
    return np.where(found.notna(), found.fillna(-1).to_numpy(dtype=np.int64), after)


def in_config_order(df: pd.DataFrame, config: Any) -> pd.DataFrame:
    """The rows of ``df`` in config order (index 0..n-1).

    Args:
        df: rows of one results folder (``trial_id`` column).
        config: the folder (or URI) they came from, or the
            :class:`~btlab.config.model.SweepConfig` they were run with.

    Returns:
        ``df`` sorted by :func:`order_key` (a stable sort); ``df`` itself when its rows are
        in that order already and numbered 0..n-1 (no copy of a frame in order).
    """
    key = order_key(df, config_positions(config))
    if bool((key[1:] >= key[:-1]).all()) and df.index.equals(pd.RangeIndex(len(df))):
        return df
    return df.iloc[np.argsort(key, kind="stable")].reset_index(drop=True)

