"""The matrix page in headless chromium at 1400 x 900, from a file with no network.

Fixture matrix-quick-layout: the cells of a real default quick matrix (19 locks, 4 of them
example drivers, x 13 fault columns; the trials left out), half of its quick-mode skips in the
newer shape (status "not_run" with its command), half in the older one (an n/a whose why_not
says quick mode). The page is measured from a harness page that holds it in a frame (file
pages share an origin with --allow-file-access-from-files): every column must end inside the
1400 px window, the lock column stay narrow, the header and lock column be sticky."""

import json
import os
import re
import unittest

from . import chromium
from .helpers import TempDirMixin, copy_fixture, run_report

HARNESS = """<!DOCTYPE html><html><body style="margin:0">
<iframe id="f" src="%s" style="border:0;width:1400px;height:900px"></iframe>
<script>
document.getElementById("f").addEventListener("load", function () {
  var d = this.contentDocument, out = {};
  var heads = d.querySelectorAll("table.matrix tr:first-child th");
  var last = heads[heads.length - 1].getBoundingClientRect();
  out.columns = heads.length;
  out.lastRight = last.right;
  out.viewport = this.contentWindow.innerWidth;
  out.lockWidth = d.querySelector("table.matrix th.lock").getBoundingClientRect().width;
  out.headSticky = getComputedStyle(heads[1]).position;
  out.lockSticky = getComputedStyle(d.querySelector("table.matrix th.lock")).position;
  out.notRun = d.querySelectorAll("td.cell.c-NR").length;
  out.na = d.querySelectorAll("td.cell.c-n-a").length;
  out.cellLinesMax = Math.max.apply(null, Array.prototype.map.call(d.querySelectorAll("td.cell"),
      function (td) { return Math.round(td.getBoundingClientRect().height); }));
  var pre = document.createElement("pre");
  pre.id = "measured";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script></body></html>"""


@unittest.skipUnless(chromium.available(), "no /usr/bin/chromium")
class MatrixPageInChromiumTest(TempDirMixin, unittest.TestCase):

    def test_every_column_of_the_quick_matrix_fits_1400_px(self):
        m = copy_fixture("matrix-quick-layout", self.tmp)
        p = run_report("--matrix", m, "--no-trials")
        self.assertEqual(p.returncode, 0, p.stderr)
        index = os.path.join(m, "report", "index.html")
        harness = os.path.join(self.tmp, "measure.html")
        with open(harness, "w") as fh:
            fh.write(HARNESS % ("file://" + index))
        p, console = chromium.dump_dom("file://" + harness, "--allow-file-access-from-files")
        self.assertEqual(console, [])
        got = json.loads(re.search(r'<pre id="measured">(.*?)</pre>', p.stdout, re.S).group(1)
                         .replace("&quot;", '"'))
        self.assertEqual(got["columns"], 14)   # lock + 13 faults
        self.assertLessEqual(got["lastRight"], got["viewport"], got)
        self.assertLessEqual(got["lockWidth"], 200, got)
        self.assertEqual((got["headSticky"], got["lockSticky"]), ("sticky", "sticky"))
        self.assertEqual(got["notRun"], 20)   # quick mode's skips, both shapes
        self.assertEqual(got["na"], 57 - 20)
        shot, console, _ = chromium.screenshot("file://" + index, "matrix-quick.png")
        self.assertEqual(console, [])
        self.assertEqual(chromium.png_size(shot), (1400, 900))

    def test_a_cell_opens_its_trials_timeline_and_every_link_is_a_page(self):
        m = copy_fixture("matrix-letters", self.tmp)
        self.assertEqual(run_report("--matrix", m, "--no-trials").returncode, 0)
        index = os.path.join(m, "report", "index.html")
        p, console = chromium.dump_dom("file://" + index)
        self.assertEqual(console, [])
        dom = p.stdout
        self.assertRegex(dom, r'class="cell c-stuck"[^>]*><a class="lead" href="[^"]+"><span class="letter">L</span></a> 0/1<')
        self.assertRegex(dom, r'<span class="letter">V</span> <span class="mk">rS</span></a> 1/1 '
                              r'<span class="at">@0.7s</span><')
        red = re.search(r'class="cell c-violated"[^>]*><a class="lead" href="([^"]+)">', dom)
        target = os.path.normpath(os.path.join(os.path.dirname(index), red.group(1)))
        p, console = chromium.dump_dom("file://" + target)
        self.assertEqual(console, [])
        self.assertIn('<div id="tl" data-view=', p.stdout)   # the run page's timeline, drawn
        # a safe cell opens its cell page, which names the command that makes the report
        safe = re.search(r'class="cell c-safe"[^>]*><a class="lead" href="([^"]+)">', dom).group(1)
        self.assertRegex(safe, r"^cells/[^#]+\.html#trial-1$")
        p, console = chromium.dump_dom("file://" + os.path.join(os.path.dirname(index), safe))
        self.assertEqual(console, [])
        self.assertIn('<span class="cmd">locklab report ', p.stdout)
        shot, console, _ = chromium.screenshot("file://" + os.path.join(os.path.dirname(index), safe),
                                               "matrix-cell-page.png")
        self.assertEqual(console, [])


if __name__ == "__main__":
    unittest.main()
