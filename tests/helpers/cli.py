"""The btlab CLI in the test's own process, and config files written for it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from btlab.cli.main import main


def write(path: Path, text: str) -> Path:
    """Write ``text`` (dedented) to ``path``; returns the path."""
    path.write_text(textwrap.dedent(text))
    return path


def run_main(*args) -> int:
    """The CLI in this process; argparse errors (SystemExit) become their exit status."""
    try:
        return main([str(a) for a in args])
    except SystemExit as exc:
        return int(exc.code)
