"""The report HTML opened in headless Chromium (Debian's chromium) renders without console errors.

The pages carry a Content-Security-Policy that allows only inline styles and data: images, so an
external or missing resource would show up as a console error too. Fails (does not skip) when
/usr/bin/chromium is missing: it is part of the setup's package list."""

import os
import re
import subprocess
import tempfile
import unittest

from .helpers import TempDirMixin, copy_fixture, run_report

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--enable-logging=stderr", "--v=0"]
CONSOLE = re.compile(r":CONSOLE[:(]\d+\)?\]|Uncaught|Refused to|Failed to load resource|Not allowed to load")


def chromium(url, *extra, timeout=120):
    if not os.access(CHROMIUM, os.X_OK):
        raise AssertionError(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)")
    with tempfile.TemporaryDirectory(prefix="locklab-chromium-") as profile:
        p = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra, url],
                           capture_output=True, text=True, timeout=timeout)
    console = [ln for ln in p.stderr.splitlines() if CONSOLE.search(ln)]
    return p, console


class ChromiumRenderTest(TempDirMixin, unittest.TestCase):

    def test_the_console_check_sees_errors(self):
        bad = os.path.join(self.tmp, "bad.html")
        with open(bad, "w") as fh:
            fh.write('<!DOCTYPE html><html><body><script>console.error("boom")</script></body></html>')
        p, console = chromium("file://" + bad, "--dump-dom")
        self.assertTrue(any("boom" in ln for ln in console), p.stderr[-2000:])

    def test_run_report_renders_without_console_errors(self):
        for fx in ("violated-client-pause", "safe-none"):
            with self.subTest(fx):
                d = copy_fixture(fx, self.tmp)
                self.assertEqual(run_report(d).returncode, 0)
                index = os.path.join(d, "report", "index.html")
                p, console = chromium("file://" + index, "--dump-dom")
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                self.assertEqual(console, [])
                self.assertIn("What happened", p.stdout)
                self.assertEqual(len(re.findall(r'<img [^>]*src="data:image/png;base64,', p.stdout)), 2)
                shot = os.path.join(self.tmp, fx + ".png")
                p, console = chromium("file://" + index, f"--screenshot={shot}", "--window-size=1400,1800",
                                      "--hide-scrollbars")
                self.assertEqual(console, [])
                self.assertTrue(os.path.getsize(shot) > 10_000)

    def test_matrix_report_renders_without_console_errors(self):
        import json
        m = os.path.join(self.tmp, "m")
        d = copy_fixture("violated-client-pause", os.path.join(m, "cell"))
        with open(os.path.join(d, "results.json")) as fh:
            r = json.load(fh)
        r["run_dir"] = d
        with open(os.path.join(m, "matrix.json"), "w") as fh:
            json.dump([r], fh)
        self.assertEqual(run_report("--matrix", m).returncode, 0)
        p, console = chromium("file://" + os.path.join(m, "report", "index.html"), "--dump-dom")
        self.assertEqual(console, [])
        self.assertIn("heatmap", p.stdout)

    def test_matrix_cells_show_their_letters_and_open_the_trials_timeline(self):
        """The issue's done-when: L, rS and ? cells show as such, and a red cell's link opens
        its trial's timeline (fixture: a harness-written 3 x 4 matrix)."""
        m = copy_fixture("matrix-letters", self.tmp)
        self.assertEqual(run_report("--matrix", m, "--no-trials").returncode, 0)
        index = os.path.join(m, "report", "index.html")
        p, console = chromium("file://" + index, "--dump-dom")
        self.assertEqual(console, [])
        dom = p.stdout
        self.assertRegex(dom, r'class="cell c-L"[^>]*><a class="lead" href="[^"]+"><span class="letter">L</span></a> 0/1<')
        self.assertRegex(dom, r'<span class="letter">V</span> <span class="mk">rS</span></a> 1/1 @0.7s<')
        self.assertRegex(dom, r'class="cell c-U"[^>]*><a class="lead" href="[^"]+"><span class="letter">\?</span></a> 0/1'
                              r'<span class="why">the client-pause window never reached')
        red = re.search(r'class="cell c-V"[^>]*><a class="lead" href="([^"]+)">', dom)
        target = os.path.normpath(os.path.join(os.path.dirname(index), red.group(1)))
        p, console = chromium("file://" + target, "--dump-dom")
        self.assertEqual(console, [])
        self.assertIn("<h2>Timeline</h2>", p.stdout)
        self.assertRegex(p.stdout, r'<img alt="timeline[^"]*" src="data:image/png;base64,')


if __name__ == "__main__":
    unittest.main()
