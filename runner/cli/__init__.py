"""The ``btlab`` command line: each subcommand parses its arguments, calls one library function,
prints.

Modules:

- ``main``: The ``btlab`` command line.
"""
