"""Headless Debian chromium for the page tests: load a file:// page with no network, dump its
DOM after its scripts ran, or take a screenshot.

`python3 reports/tests/chromium.py PATTERN` runs the unittest files matching PATTERN and exits
77 (CTest's SKIP_RETURN_CODE, reports/CMakeLists.txt) when /usr/bin/chromium is missing:
set-up installs it with the test packages (the `locklab` script's [test] list). Console
errors, refused resources (the pages' Content-Security-Policy allows nothing from the network)
and uncaught exceptions are returned as lines, for the tests to assert there are none.
Screenshots are kept under $LOCKLAB_TEST_OUTPUT (CTest: build/reports/chromium-screenshots),
else a temporary directory."""

import os
import re
import subprocess
import sys
import tempfile

CHROMIUM = os.environ.get("LOCKLAB_CHROMIUM", "/usr/bin/chromium")   # (the override: to see the skip)
SKIP = 77
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-extensions",
         "--enable-logging=stderr", "--v=0", "--hide-scrollbars",
         # no network at all: every host resolves nowhere
         "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9"]
CONSOLE = re.compile(r":CONSOLE[:(]\d+\)?\]|Uncaught|Refused to|Failed to load resource|Not allowed to load")
# Virtual time: the page's load and scripts run to the end before the dump, however slow the
# machine (no wall-clock wait is asserted).
BUDGET_MS = "8000"


def available():
    return os.access(CHROMIUM, os.X_OK)


def output_dir():
    d = os.environ.get("LOCKLAB_TEST_OUTPUT") or os.path.join(tempfile.gettempdir(), "locklab-chromium-screenshots")
    os.makedirs(d, exist_ok=True)
    return d


def run(url, *extra, timeout=120):
    """(completed process, [console error lines])."""
    with tempfile.TemporaryDirectory(prefix="locklab-chromium-") as profile:
        p = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--virtual-time-budget={BUDGET_MS}",
                            *extra, url], capture_output=True, text=True, timeout=timeout)
    return p, [ln for ln in p.stderr.splitlines() if CONSOLE.search(ln)]


def dump_dom(url, *extra, size="1400,900"):
    return run(url, "--dump-dom", f"--window-size={size}", *extra)


def screenshot(url, name, size="1400,900", *extra):
    """Takes a screenshot into output_dir()/name; returns (path, console lines)."""
    path = os.path.join(output_dir(), name)
    if os.path.exists(path):
        os.unlink(path)
    p, console = run(url, f"--screenshot={path}", f"--window-size={size}", *extra)
    return path, console, p


def png_size(path):
    import struct
    with open(path, "rb") as fh:
        head = fh.read(24)
    return struct.unpack(">II", head[16:24])


if __name__ == "__main__":
    if not available():
        print(f"{CHROMIUM} is missing: skipped (set-up installs Debian's chromium with the test packages)")
        sys.exit(SKIP)
    import unittest
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(os.path.dirname(here))
    sys.path.insert(0, top)
    suite = unittest.defaultTestLoader.discover(here, pattern=sys.argv[1], top_level_dir=top)
    ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful()
    sys.exit(0 if ok else 1)
