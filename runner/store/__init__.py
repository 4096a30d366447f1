"""Store: the results folder -- write, read, check, repair, lock, schema, checkpoints,
superseded rows.

Modules:

- ``check``: What is wrong with a results folder, in words: a damaged part, rows of another
  config.
- ``checkpoints``: Checkpoints of split trials: finished subtree results saved as they arrive,
  for resume.
- ``folder``: The on-disk results: one Parquet dataset per sweep, written crash-safe.
- ``location``: Where results live: a folder or URI as a ``Location``, the work folder beside
  it, part names, ``PartInfo`` (what one part's footer says).
- ``lock``: One writer per results destination: a lock where the file system has locks, a lease
  elsewhere.
- ``provenance``: Which code ran: btlab's version, the git commit and whether the tree had
  uncommitted changes.
- ``read``: Reading btlab results: the part files of a results folder or filesystem URI, and
  their rows.
- ``repair``: Rewriting part files in place, atomically: missing columns added, retried error
  rows removed.
- ``schema``: The layout of a btlab results row: its columns and types, its schema version,
  provenance.
- ``superseded``: Rows of trials the config last run no longer asks for, kept beside the
  folder, never in it: moved there by a run, taken back, pruned.
- ``writes``: The file operations of :class:`btlab.store.folder.ResultStore`: atomic writes,
  what a failure says.
"""
