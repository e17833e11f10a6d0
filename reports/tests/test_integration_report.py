"""Integration: the real locklab binary makes a violating and a safe 4-second run, and the report
of each shows red overlaps exactly when the run has overlapping holds, drawn from the holds of
the history's judgement (`locklab check --json`, the crash rule included), never results.json's.
A run directory older than the holds' export (no holds in results.json, or no results.json)
is reported the same way.

Needs LOCKLAB_BINARY (CTest sets it to $<TARGET_FILE:locklab>) and LOCKLAB_REDIS_SERVER."""

import glob
import json
import os
import subprocess
import unittest

from .helpers import TempDirMixin, copy_fixture, edit_results, red_pixels, run_report, write_history

from reports import runfiles

MS = 1_000_000


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
        cmd = [binary(), "run", "--lock", "set-nx-px-lua", *fault_args, "--duration", "4s", "--ttl", "500",
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
        self.assertNotIn("disagrees with the judgement", html)   # the run's own results.json agrees
        self.assertEqual(p.stderr, "")
        self.assertIn(f"<th>holds (history.jsonl)</th><td>{len(r['holds'])}</td>", html)
        if expect_overlap:
            self.assertIn("overlap #1 of", html)
            self.assertIn('<p class="reason"><b>Why violated:</b> ', html)
            self.assertIn("<h2>Fault coverage</h2>", html)
        else:
            self.assertIn("No violation in this history", html)

    def test_violating_run(self):
        self.check(self.run_lab(["--fault", "client-pause", "--pause", "1200"]), True)

    def test_safe_run(self):
        self.check(self.run_lab(["--fault", "none"]), False)


def ev(t_ms, p, ty, f, key="lock:0", v=None):
    return (int(t_ms * MS), p, ty, f, key, v)


class OlderRunDirectoryTest(TempDirMixin, unittest.TestCase):
    """Without exported holds (or results.json) the report is the same: the judge's, through
    `locklab check --json` (LOCKLAB_BINARY)."""

    def setUp(self):
        super().setUp()
        os.environ["LOCKLAB_BINARY"] = binary()   # runfiles reads it in this process too

    def test_results_json_without_holds_gets_the_checkers(self):
        d = copy_fixture("violated-client-pause", self.tmp)
        with open(os.path.join(d, "results.json")) as fh:
            exported = json.load(fh)
        with edit_results(d) as r:
            del r["holds"], r["episodes"]
        run = runfiles.Run(d)
        self.assertEqual(run.ignored, [])   # a field left out disagrees with nothing
        self.assertEqual([(h.process, h.key, h.start, h.end, h.open_at_end) for h in run.holds],
                         [(h["process"], h["key"], h["start_ns"], h["end_ns"], h["open_at_end"])
                          for h in exported["holds"]])
        self.assertEqual([(e.start, e.end, e.processes) for e in run.episodes],
                         [(e["start_ns"], e["end_ns"], e["processes"]) for e in exported["episodes"]])
        p = run_report(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "report", "index.html")) as fh:
            html = fh.read()
        self.assertNotIn("disagrees with the judgement", html)
        self.assertIn("<td>16 / 16</td>", html)
        self.assertGreater(red_pixels(os.path.join(d, "report", "timeline.png")), 500)

    def test_report_without_results_json_still_works(self):
        d = copy_fixture("violated-client-pause", self.tmp)
        os.remove(os.path.join(d, "results.json"))
        with open(os.path.join(d, "history.jsonl"), "a") as fh:
            fh.write('{"index":999,"time_ns":20')     # a killed run's half-written line
        p = run_report(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "report", "index.html")) as fh:
            html = fh.read()
        self.assertIn("results.json is missing", html)
        self.assertIn("overlap #1 of 16", html)

    def test_locklab_report_runs_the_package_from_any_working_directory(self):
        """`locklab report RUN_DIR` (harness/cli/report_command.cc) runs `python3 -m reports` from
        the source directory: a RUN_DIR relative to the caller's working directory works, and a
        `reports` package in that directory is not the one run."""
        d = copy_fixture("violated-client-pause", self.tmp)
        decoy = os.path.join(self.tmp, "reports")
        os.makedirs(decoy)
        with open(os.path.join(decoy, "__init__.py"), "w") as fh:
            fh.write("raise SystemExit('the decoy reports package in the working directory ran')\n")
        with open(os.path.join(decoy, "__main__.py"), "w") as fh:
            fh.write("raise SystemExit('the decoy reports package in the working directory ran')\n")
        p = subprocess.run([binary(), "report", "violated-client-pause"], cwd=self.tmp, capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertNotIn("decoy", p.stdout + p.stderr)
        self.assertIn(f"report: {os.path.join(d, 'report', 'index.html')}", p.stdout)
        self.assertGreater(red_pixels(os.path.join(d, "report", "timeline.png")), 500)

    def test_hold_ends_at_release_invoke_next_acquire_crash_or_end(self):
        """The hold rules, crash rule included, are the checker's (DESIGN 3.3)."""
        d = write_history(os.path.join(self.tmp, "h"), [
            ev(0, 1, "invoke", "acquire"), ev(1, 1, "ok", "acquire", v={"token": "a"}),
            ev(10, 1, "invoke", "release"), ev(12, 1, "ok", "release"),
            ev(20, 2, "invoke", "acquire"), ev(21, 2, "ok", "acquire"),
            ev(30, 2, "invoke", "acquire"), ev(31, 2, "info", "acquire"),      # info starts no hold
            ev(40, 3, "invoke", "acquire"), ev(41, 3, "ok", "acquire"),
            ev(50, "nemesis", "info", "start", "client-crash", {"targets": [3]}),
            ev(60, 4, "invoke", "acquire"), ev(61, 4, "ok", "acquire"),
            ev(69, "harness", "invoke", "read", "counter:0"), ev(70, "harness", "ok", "read", "counter:0", 1),
        ])
        r = runfiles.Run(d)
        got = [(h.process, h.start // MS, h.end // MS, h.open_at_end) for h in r.holds]
        self.assertEqual(got, [(1, 1, 10, False), (2, 21, 30, False), (3, 41, 50, False), (4, 61, 70, True)])
        self.assertEqual(r.episodes, [])
        self.assertEqual(r.crash_times(), [(3, 50 * MS)])


if __name__ == "__main__":
    unittest.main()
