"""Integration: the real locklab binary makes a violating and a safe 4-second run, and the report
of each shows red overlaps exactly when the run has overlapping holds.

Needs LOCKLAB_BINARY (CTest sets it to $<TARGET_FILE:locklab>) and LOCKLAB_REDIS_SERVER."""

import glob
import json
import os
import subprocess
import unittest

from helpers import TempDirMixin, red_pixels, run_report


def binary():
    b = os.environ.get("LOCKLAB_BINARY")
    if not b:
        raise AssertionError("LOCKLAB_BINARY is not set (CTest sets it to the locklab target)")
    if not os.access(b, os.X_OK):
        raise AssertionError(f"LOCKLAB_BINARY={b} is not executable")
    return b


class RealRunReportTest(TempDirMixin, unittest.TestCase):

    def run_lab(self, fault_args):
        out = os.path.join(self.tmp, "runs")
        cmd = [binary(), "run", "--lock", "set-nx-px-lua", *fault_args, "--duration", "4", "--ttl", "500",
               "--hold", "100", "--seed", "7", "--out", out]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        self.assertIn(p.returncode, (0, 1), p.stdout + p.stderr)
        # One `report:` line per run (the harness once echoed the script's line).
        self.assertEqual(len([ln for ln in p.stdout.splitlines() if ln.startswith("report:")]), 1, p.stdout)
        dirs = [d for d in glob.glob(os.path.join(out, "*", "*")) if os.path.isfile(os.path.join(d, "results.json"))]
        self.assertEqual(len(dirs), 1, dirs)
        return dirs[0]

    def check(self, d, expect_overlap):
        p = run_report(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "results.json")) as fh:
            r = json.load(fh)
        pairs = r["mutual_exclusion"]["overlapping_pairs"]
        self.assertEqual(pairs > 0, expect_overlap, r["verdict"])
        red = red_pixels(os.path.join(d, "report", "timeline.png"))
        self.assertEqual(red > 0, pairs > 0, f"red pixels {red}, pairs {pairs}")
        with open(os.path.join(d, "report", "index.html")) as fh:
            html = fh.read()
        self.assertNotIn("history and the verdict disagree", html)
        if expect_overlap:
            self.assertIn("overlap #1 of", html)
        else:
            self.assertIn("No violation in this history", html)

    def test_violating_run(self):
        self.check(self.run_lab(["--fault", "client-pause", "--pause", "1200"]), True)

    def test_safe_run(self):
        self.check(self.run_lab(["--fault", "none"]), False)


if __name__ == "__main__":
    unittest.main()
