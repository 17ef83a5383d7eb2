"""``python -m sparsetab``: the same command as the ``sparsetab`` console script (see :mod:`sparsetab.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
