"""The run page in headless chromium, from a file with no network: its timeline is drawn by its
script, zooms to a 100 ms window from a link, shows an operation's details, numbers overlaps
without labels over one another, and draws the operation linearizability could not place."""

import os
import re
import unittest

from . import chromium
from .helpers import TempDirMixin, copy_fixture, run_report


def attr(dom, element_id, name):
    m = re.search(r'<[^>]*\bid="%s"[^>]*>' % element_id, dom)
    a = re.search(r'\b%s="([^"]*)"' % name, m.group(0)) if m else None
    return a.group(1) if a else None


def boxes(dom, cls):
    """(x, y, w, h) of every SVG rect of class cls in the dumped DOM."""
    out = []
    for tag in re.findall(r'<rect [^>]*class="%s"[^>]*>' % cls, dom):
        g = {k: float(v) for k, v in re.findall(r'\b(x|y|width|height)="([-0-9.e]+)"', tag)}
        out.append((g["x"], g["y"], g["width"], g["height"]))
    return out


def blank_rows_at_top(png):
    """How many rows at the top of a screenshot are white from edge to edge."""
    import matplotlib.image as mpimg
    img = mpimg.imread(png)[:, :, :3]
    white = img.min(axis=(1, 2)) >= 0.98
    return len(white) if white.all() else int(white.argmin())


@unittest.skipUnless(chromium.available(), "no /usr/bin/chromium")
class RunPageInChromiumTest(TempDirMixin, unittest.TestCase):

    def test_the_console_check_sees_errors(self):
        bad = os.path.join(self.tmp, "bad.html")
        with open(bad, "w") as fh:
            fh.write('<!DOCTYPE html><html><body><script>console.error("boom")</script></body></html>')
        p, console = chromium.dump_dom("file://" + bad)
        self.assertTrue(any("boom" in ln for ln in console), p.stderr[-2000:])

    def test_the_timeline_zooms_to_100_ms_and_shows_an_operations_details(self):
        d = copy_fixture("violated-client-pause", self.tmp)
        self.assertEqual(run_report(d).returncode, 0)
        index = os.path.join(d, "report", "index.html")
        # op 55: client 3's read of counter:0 at 1.891 s (the first op of the overlap)
        url = "file://" + index + "#t=1.85,1.95&op=55"
        p, console = chromium.dump_dom(url)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertEqual(console, [])
        dom = p.stdout
        self.assertEqual(attr(dom, "tl", "data-ready"), "1")
        self.assertEqual(attr(dom, "tl", "data-view"), "1850.000,1950.000")
        self.assertRegex(dom, r'<span id="tl-range">showing 1\.850 s \u2013 1\.950 s \(100 ms\)</span>')
        tip = re.search(r'<div id="tl-tip"[^>]*>(.*?)</div>', dom, re.S)
        self.assertIsNotNone(tip)
        self.assertIn("display: block", re.search(r'<div id="tl-tip"[^>]*>', dom).group(0))
        text = re.sub(r"<[^>]+>", " ", tip.group(1))
        for word in ("client 3: read", "counter:0", "outcome:", "ok", "value:", "13", "invoked:", "1.891 s",
                     "completed:"):
            self.assertIn(word, text)
        # in view: the holds and operations around 1.9 s, each with what a hover shows
        self.assertGreater(len(re.findall(r'data-k="h"', dom)), 1)
        self.assertGreater(len(re.findall(r'class="op"', dom)), 3)
        self.assertGreaterEqual(int(attr(dom, "tl", "data-ops-drawn")), 3)
        shot, console, _ = chromium.screenshot(url, "run-report-100ms.png")
        self.assertEqual(console, [])
        self.assertEqual(chromium.png_size(shot), (1400, 900))
        self.assertGreater(os.path.getsize(shot), 20_000)
        # The page opened at a moment is not scrolled while its timeline is in view: headless
        # chromium shows a scrolled page with a blank band over its top (it was 355 px here).
        self.assertLess(blank_rows_at_top(shot), 60)

    def test_overlap_numbers_never_cover_each_other_and_the_png_stays(self):
        d = copy_fixture("violated-client-pause", self.tmp)
        self.assertEqual(run_report(d).returncode, 0)
        index = os.path.join(d, "report", "index.html")
        p, console = chromium.dump_dom("file://" + index)
        self.assertEqual(console, [])
        labels = boxes(p.stdout, "ep-label")
        self.assertGreaterEqual(len(labels), 10)   # 16 overlaps over the whole run
        for i, a in enumerate(labels):
            for b in labels[i + 1:]:
                apart = a[0] + a[2] <= b[0] or b[0] + b[2] <= a[0] or a[1] + a[3] <= b[1] or b[1] + b[3] <= a[1]
                self.assertTrue(apart, (a, b))
        self.assertEqual(len(re.findall(r'<img [^>]*src="data:image/png;base64,', p.stdout)), 2)
        shot, console, _ = chromium.screenshot("file://" + index, "run-report.png", "1400,1400")
        self.assertEqual(console, [])

    def test_the_unplaceable_operation_is_drawn_and_labelled(self):
        d = copy_fixture("linearizability-only", self.tmp)
        self.assertEqual(run_report(d).returncode, 0)
        url = "file://" + os.path.join(d, "report", "index.html")
        p, console = chromium.dump_dom(url)
        self.assertEqual(console, [])
        from reports import runfiles
        u = runfiles.Run(d).unplaceable
        self.assertEqual(len(boxes(p.stdout, "lin")), 1 + len(u.conflicts))
        self.assertIn(f"cannot be placed: client {u.op.process}'s {u.op.f}", p.stdout)
        for c in u.conflicts:
            self.assertIn(f"conflicts: client {c.process}'s {c.f}", p.stdout)
        shot, console, _ = chromium.screenshot(url, "run-report-linearizability.png")
        self.assertEqual(console, [])


if __name__ == "__main__":
    unittest.main()
