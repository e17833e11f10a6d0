"""Matrix report: heatmap + index.html linking each trial's report by relative path; and the
long-run case stays binned and bounded."""

import json
import os
import re
import unittest

from helpers import (PYTHON, REPORTS, TempDirMixin, copy_fixture, red_pixels, run_report)
import subprocess


class MatrixReportTest(TempDirMixin, unittest.TestCase):

    def make_matrix(self, as_object=False, absolute=True):
        m = os.path.join(self.tmp, "matrix", "20260101T000000-0")
        trials = []
        for fx, cell in (("violated-client-pause", "set-nx-px-lua--client-pause"),
                         ("safe-none", "set-nx-px-lua--none"),
                         ("fenced-client-pause", "fenced--client-pause")):
            cell_dir = os.path.join(m, cell)
            os.makedirs(cell_dir)
            d = copy_fixture(fx, cell_dir)
            with open(os.path.join(d, "results.json")) as fh:
                r = json.load(fh)
            r["run_dir"] = d if absolute else os.path.relpath(d, m)
            trials.append(r)
        doc = {"trials": trials, "cells": [{"future": "field"}]} if as_object else trials
        with open(os.path.join(m, "matrix.json"), "w") as fh:
            json.dump(doc, fh)
        return m

    def check(self, m):
        p = run_report("--matrix", m)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = os.path.join(m, "report")
        self.assertTrue(os.path.isfile(os.path.join(out, "heatmap.png")))
        with open(os.path.join(out, "index.html")) as fh:
            html = fh.read()
        links = [h for h in re.findall(r'<a href="([^"]+)"', html)]
        self.assertEqual(len(links), 3, links)
        for h in links:
            self.assertFalse(os.path.isabs(h), h)
            self.assertTrue(os.path.isfile(os.path.normpath(os.path.join(out, h))), h)
        self.assertIn("violated</span> 1/1", html)
        self.assertIn("safe</span> 0/1", html)
        self.assertRegex(html, r'src="data:image/png;base64,')
        return html

    def test_matrix_array_with_absolute_run_dirs(self):
        self.check(self.make_matrix())

    def test_matrix_object_with_relative_run_dirs_and_extra_fields(self):
        self.check(self.make_matrix(as_object=True, absolute=False))

    def test_moved_matrix_dir_still_finds_its_trials(self):
        m = self.make_matrix()
        moved = os.path.join(self.tmp, "moved")
        os.rename(m, moved)
        self.check(moved)

    def test_bad_matrix_json(self):
        m = os.path.join(self.tmp, "m")
        os.makedirs(m)
        with open(os.path.join(m, "matrix.json"), "w") as fh:
            fh.write('"just a string"')
        p = run_report("--matrix", m)
        self.assertEqual(p.returncode, 65)
        self.assertIn("matrix.json", p.stderr)
        self.assertNotIn("Traceback", p.stderr)


class LongRunTest(TempDirMixin, unittest.TestCase):
    """A 16-client run of 2 minutes (synthetic): the overview is binned, the PNG stays small,
    the first violation gets a zoom panel. (Timing of the 10-minute case is in the notes, not
    asserted: DESIGN 5.)"""

    def test_long_run_is_binned_and_zoomed(self):
        d = os.path.join(self.tmp, "long")
        g = subprocess.run([PYTHON, os.path.join(REPORTS, "tests", "gen_history.py"), d, "--seconds", "120",
                            "--clients", "16", "--hold-ms", "20"], capture_output=True, text=True, timeout=120)
        self.assertEqual(g.returncode, 0, g.stderr)
        p = run_report(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        import matplotlib.image as mpimg
        img = mpimg.imread(os.path.join(d, "report", "timeline.png"))
        self.assertLess(img.shape[0], 2200)
        self.assertLess(img.shape[1], 1600)
        self.assertGreater(red_pixels(os.path.join(d, "report", "timeline.png")), 200)
        with open(os.path.join(d, "report", "index.html")) as fh:
            html = fh.read()
        self.assertLess(len(html), 3_000_000)
        import runfiles
        import plots
        run = runfiles.Run(d)
        self.assertFalse(plots.TimelineData(run).detailed)


if __name__ == "__main__":
    unittest.main()
