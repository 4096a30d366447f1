"""``python -m btlab`` is the ``btlab`` command."""

import sys

from btlab.cli.main import main

sys.exit(main())
