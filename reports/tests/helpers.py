"""Shared helpers for the report tests (no Redis needed)."""

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPORTS = os.path.dirname(HERE)
FIXTURES = os.path.join(HERE, "fixtures")
PYTHON = "/usr/bin/python3"   # Debian's interpreter, the one with python3-matplotlib
REPORT = os.path.join(REPORTS, "report.py")

sys.path.insert(0, REPORTS)

OVERLAP_RGB = (0xE0, 0x10, 0x2A)


def copy_fixture(name, into):
    dst = os.path.join(into, name)
    shutil.copytree(os.path.join(FIXTURES, name), dst)
    return dst


def run_report(*args, timeout=120, env=None):
    e = None if env is None else {**os.environ, **env}
    return subprocess.run([PYTHON, REPORT, *args], capture_output=True, text=True, timeout=timeout, env=e)


@contextlib.contextmanager
def edit_results(run_dir):
    """with edit_results(d) as r: ... changes RUN_DIR/results.json."""
    path = os.path.join(run_dir, "results.json")
    with open(path) as fh:
        r = json.load(fh)
    yield r
    with open(path, "w") as fh:
        json.dump(r, fh)


def red_pixels(png):
    """Number of pixels in the overlap red (the only place that colour is used)."""
    import matplotlib.image as mpimg
    import numpy as np
    img = mpimg.imread(png)[:, :, :3]
    target = np.array(OVERLAP_RGB) / 255.0
    return int((np.abs(img - target).max(axis=2) < 0.04).sum())


def write_history(dir_, events, results=None):
    os.makedirs(dir_, exist_ok=True)
    with open(os.path.join(dir_, "history.jsonl"), "w") as fh:
        for n, e in enumerate(events):
            t, p, ty, f, key, v = e
            fh.write(json.dumps({"index": n, "time_ns": t, "process": p, "type": ty, "f": f,
                                 "key": key, "value": v}) + "\n")
    if results is not None:
        with open(os.path.join(dir_, "results.json"), "w") as fh:
            json.dump(results, fh)
    return dir_


class TempDirMixin:
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="locklab-report-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
