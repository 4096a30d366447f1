"""``python -m runner`` is the ``btlab`` command."""

import sys

from .cli import main

sys.exit(main())
