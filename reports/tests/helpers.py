"""Shared helpers for the report tests (no Redis needed)."""

import contextlib
import json
import os
import shutil
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPORTS = os.path.dirname(HERE)
ROOT = os.path.dirname(REPORTS)     # the source directory: `reports` is a package in it
FIXTURES = os.path.join(HERE, "fixtures")
PYTHON = "/usr/bin/python3"   # Debian's interpreter, the one with python3-matplotlib

OVERLAP_RGB = (0xE0, 0x10, 0x2A)


def copy_fixture(name, into):
    dst = os.path.join(into, name)
    shutil.copytree(os.path.join(FIXTURES, name), dst)
    return dst


def report_env(env=None):
    """The environment harness/cli/report_command.cc gives `python3 -m reports`: the source
    directory first on PYTHONPATH, and PYTHONSAFEPATH so that the working directory (a `reports`
    there) is not searched."""
    old = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": ROOT + (os.pathsep + old if old else ""), "PYTHONSAFEPATH": "1",
            **(env or {})}


def run_report(*args, timeout=120, env=None, cwd=None):
    return subprocess.run([PYTHON, "-m", "reports", *args], capture_output=True, text=True, timeout=timeout,
                          env=report_env(env), cwd=cwd)


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
