"""The library under the CLI: ``btlab.run`` and ``btlab.validate``, one code path with ``btlab
run``.

Modules:

- ``run``: ``btlab run``: check the whole config, stream its trials to a backend, write their
  rows.
"""
