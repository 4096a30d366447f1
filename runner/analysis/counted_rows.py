"""Which rows of a results folder the tables count: one rule for show, report and compare.

The tables count the rows at the folder's top level: after a run, exactly the
trials of the config last run into it (the config stored in its newest part
file, with the plug-in source hashes stored beside it), since a run moves the
rows of trials its config no longer asks for (an edited budget, a dropped matrix
value, an edited plug-in) beside the folder (:mod:`btlab.store.superseded`).
``--all`` adds those superseded rows (the caller reads them:
``load_rows(..., superseded=True)``). The trial ids of the config last run come
from what is stored, never from the plug-in files as they are now, so editing a
plug-in after a run changes nothing ``btlab show``, ``btlab report`` or ``btlab
compare`` count; they say, in the same words, how many trials are missing and
how many rows are kept aside. Rows at the top level that are not trials of the
stored config (written by a btlab from before superseded rows were moved) are
left out unless ``--all``, and the next run moves them. :func:`select_rows` is
that rule; none of it writes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from btlab.config.model import parse_config
from btlab.errors import ConfigError
from btlab.store.location import locate, superseded_location
from btlab.store.read import newest_meta, part_metas
from btlab.store.superseded import superseded_rows
from btlab.sweep.expand import count_trials, iter_trials


@dataclass
class RowSelection:
    """The rows the tables count, and what was left out.

    Attributes:
        rows: the rows counted (a subset of the rows given, same columns).
        older: rows of trials not in the config last run (left out unless ``all_rows``).
        all_rows: True when the older rows are kept in ``rows`` (``--all``).
        missing: trials of the config last run that have no row yet (to resume).
        unexpanded: why the stored config could not be expanded (every row is
            then counted), or "".
    """

    rows: pd.DataFrame
    older: int = 0
    all_rows: bool = False
    missing: int = 0
    unexpanded: str = ""
    notes: list[str] = field(default_factory=list)


def older_rows_sentence(older: int, included: bool) -> str:
    """The sentence show, report and compare print about rows of an earlier config."""
    return (f"{older:,} older row(s) in this folder are from trials no longer in the config "
            "last run: " + ("included (--all)" if included else
                            "left out of the tables (--all includes them; the next `btlab "
                            "run` moves them beside the folder)"))


def superseded_sentence(count: int, where: str, included: bool) -> str:
    """The sentence show, report and compare print about the superseded rows kept aside."""
    return (f"{count:,} superseded row(s) (trials no longer in the config last run) are kept "
            f"beside the folder in {where}: "
            + ("included (--all)" if included else
               "not counted (--all includes them, `btlab prune` deletes them)"))


def stored_plugins(meta: dict[str, str]) -> dict[str, str] | None:
    """The plug-in source hashes a part stores with its config (None: written before
    btlab stored them)."""
    text = meta.get("btlab.plugins")
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else None


def current_trial_ids(folder: str | Path, df: pd.DataFrame | None = None) -> set[str] | str:
    """The trial ids of the config last run into ``folder`` (its newest part's config and
    plug-in source hashes), or, when that config cannot be expanded by this btlab, the
    reason (a one-line string).

    Given the folder's rows ``df``, a folder that holds every trial of one config
    and nothing else (every part written by the same config and plug-in sources, as
    many rows as the config has trials) returns the ids of ``df`` without expanding
    the config: a sweep of a million trials takes about a minute to expand.
    """
    newest = newest_meta(folder)
    stored = newest.get("btlab.config")
    if not stored:
        return "no config in the part files' metadata"
    hashes = stored_plugins(newest)
    try:
        config = parse_config(stored, f"{folder} (config stored in its newest part)")
        if df is not None and _one_whole_sweep(part_metas(folder), df, newest) and count_trials(
                config, limit=len(df)) == len(df):
            return set(df["trial_id"])
        return {t.trial_id for t in iter_trials(config, plugin_hashes=hashes)}
    except ConfigError as exc:
        return str(exc).splitlines()[0]


def _one_whole_sweep(metas: list[dict[str, str]], df: pd.DataFrame,
                     newest: dict[str, str]) -> bool:
    """Every part carries the config of ``newest`` and, when a row ran a plug-in, the same
    plug-in source hashes (part of the trial id), so every row is a trial of it."""
    keys = ("btlab.config", "btlab.plugins")
    if any(m.get("btlab.config") != newest.get("btlab.config") for m in metas) or \
            "trial_id" not in df.columns:
        return False
    if "plugins" in df.columns:
        used = df["plugins"].dropna().astype(str)
        if (~used.isin(["", "{}", "null"])).any() and (
                newest.get("btlab.plugins") is None
                or any(m.get(k) != newest.get(k) for m in metas for k in keys)):
            return False
    return bool(df["trial_id"].is_unique)


def select_rows(folder: str | Path, df: pd.DataFrame, all_rows: bool = False) -> RowSelection:
    """The rows of ``df`` (read from ``folder``) that show, report and compare count.

    Args:
        folder: the results folder or URI ``df`` was read from.
        df: its rows, one per trial id (``trial_id`` column).
        all_rows: keep the rows of trials no longer in the config last run (``df``
            then holds the superseded rows too: ``load_rows(..., superseded=True)``).

    Returns:
        A :class:`RowSelection`: ``rows`` are the trials of the config last run
        (every row with ``all_rows``, when the stored config cannot be
        expanded, or when no row is one of its trials: ids not written by
        btlab), ``notes`` the sentences to print about what was left out or
        is missing.
    """
    ids = current_trial_ids(folder, df)
    if isinstance(ids, str):
        return RowSelection(rows=df, unexpanded=ids, all_rows=True,
                            notes=[f"(cannot expand the stored config, so every row is "
                                   f"counted: {ids})"])
    present = df["trial_id"].isin(ids)
    if len(df) and not present.any():
        # not one row is a trial of the stored config: ids written by another tool (or by
        # hand), not an edited config (whose last run wrote rows of its own trials)
        return RowSelection(rows=df, unexpanded="no row is a trial of the stored config",
                            all_rows=True,
                            notes=[f"(none of the {len(df):,} rows has the trial id of a trial "
                                   "of the config stored in the folder, so every row is "
                                   "counted)"])
    older = int((~present).sum())
    rows = df if all_rows or not older else df[present]
    missing = len(ids) - int(present.sum())
    notes = []
    loc = locate(folder)
    aside = superseded_rows(loc)
    if older and not (all_rows and aside):
        notes.append(older_rows_sentence(older, all_rows))
    if aside:
        notes.append(superseded_sentence(aside, superseded_location(loc).text, all_rows))
    if missing:
        notes.append(f"{missing:,} trial(s) of the config last run are not in the folder "
                     "yet: run it again to resume")
    return RowSelection(rows=rows, older=older, all_rows=all_rows, missing=missing,
                        notes=notes)
