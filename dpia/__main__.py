"""`python -m dpia ...`: the command line (see `dpia/cli.py`)."""

import sys

from .cli import main

sys.exit(main())
