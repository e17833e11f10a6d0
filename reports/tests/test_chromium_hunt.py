"""The hunt page in headless chromium at 1400 x 900, from a file with no network (fixture
hunt-plain-del, test_unit_hunt.py): it renders without console errors, shows the minimal's
story, its runs in time, the shrink steps and the reproductions, and its link to the failing
run opens that run's report."""

import os
import re
import unittest

from . import chromium
from .helpers import TempDirMixin, copy_fixture, run_report


@unittest.skipUnless(chromium.available(), "no /usr/bin/chromium")
class HuntPageInChromiumTest(TempDirMixin, unittest.TestCase):

    def test_the_hunt_page_renders_and_opens_the_failing_runs_report(self):
        d = copy_fixture("hunt-plain-del", self.tmp)
        p = run_report("--hunt", d)
        self.assertEqual(p.returncode, 0, p.stderr)
        url = "file://" + os.path.join(d, "hunt.html")
        p, console = chromium.dump_dom(url)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertEqual(console, [])
        dom = p.stdout
        for heading in ("What it found", "The runs in time", "Failing scenarios found", "Shrinking found/t0004.toml",
                        "Reproducing (10 reruns each)", "minimal.toml"):
            self.assertIn(f">{heading}</h2>", dom)
        self.assertGreater(len(re.findall(r'<rect class="run"', dom)), 30)
        failing = re.search(r'<a href="([^"]+)">the failing run\'s report</a>', dom).group(1)
        p, console = chromium.dump_dom("file://" + os.path.join(d, failing))
        self.assertEqual(console, [])
        self.assertIn('<div id="tl" data-view=', p.stdout)
        self.assertIn("two holders", p.stdout)
        shot, console, _ = chromium.screenshot(url, "hunt.png")
        self.assertEqual(console, [])
        self.assertEqual(chromium.png_size(shot), (1400, 900))
        self.assertGreater(os.path.getsize(shot), 20_000)


if __name__ == "__main__":
    unittest.main()
