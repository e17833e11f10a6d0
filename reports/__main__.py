"""`python3 -m reports RUN_DIR | --matrix MATRIX_DIR [--no-trials]`: see cli.py.

An interpreter that cannot run the package (no numpy or matplotlib, too old a Python) exits 69
with one line naming it, never a traceback. This file keeps to syntax every Python 3 reads
(no f-strings), so the line is printed even there.
"""

import os
import sys

try:
    import matplotlib  # noqa: F401  (python3-matplotlib, which brings numpy)
    import numpy  # noqa: F401
    from .cli import main
except Exception as e:  # noqa: BLE001  ImportError, SyntaxError of an old Python
    why = ("%s: %s" % (type(e).__name__, e)).splitlines()[0]
    who = os.environ.get("LOCKLAB_PYTHON")
    who = "LOCKLAB_PYTHON=" + who if who else sys.executable
    sys.stderr.write("report: %s: not a Python with matplotlib (%s)\n" % (who, why))
    sys.exit(69)

sys.exit(main(sys.argv))
