"""`python3 -m reports RUN_DIR | --matrix MATRIX_DIR [--no-trials]`: see cli.py."""

import sys

from .cli import main

sys.exit(main(sys.argv))
