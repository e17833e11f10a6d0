"""The page of one history file (`locklab report HISTORY_FILE`) in headless chromium, from a file
with no network at 1400x900: its timeline is drawn, opens on the operation no order can place
(filled) and the ones it conflicts with (outlined), labelled, under check's sentence; a
screenshot is kept. Needs the binary (CTest sets LOCKLAB_BINARY)."""

import html
import os
import re
import unittest

from . import chromium
from .helpers import TempDirMixin
from .test_chromium_run import attr, boxes
from .test_unit_history import KNOSSOS_BAD, LAB_LIN_ONLY, locklab, why_line


@unittest.skipUnless(chromium.available(), "no /usr/bin/chromium")
class HistoryPageInChromiumTest(TempDirMixin, unittest.TestCase):

    def page(self, history, name):
        out = os.path.join(self.tmp, name)
        p = locklab("report", "--out", out, history)
        self.assertEqual(p.returncode, 0, p.stderr)
        return out

    def assert_highlighted(self, history, name, main_label, conflict_label):
        out = self.page(history, name + ".html")
        p, console = chromium.dump_dom("file://" + out)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertEqual(console, [])
        dom = p.stdout
        self.assertEqual(attr(dom, "tl", "data-ready"), "1")
        lin = boxes(dom, "lin")
        self.assertGreaterEqual(len(lin), 2)              # the operation and at least one conflict
        self.assertTrue(all(w > 0 for _, _, w, _ in lin))   # in view: the page opens on them
        self.assertIn(main_label, dom)
        self.assertIn(conflict_label, dom)
        sentence = why_line(locklab("check", history).stdout)
        self.assertIn(html.escape(sentence, quote=False), dom.replace("&#x27;", "'").replace("&#39;", "'"))
        shot, console, _ = chromium.screenshot("file://" + out, name + ".png")
        self.assertEqual(console, [])
        self.assertEqual(chromium.png_size(shot), (1400, 900))
        self.assertGreater(os.path.getsize(shot), 20_000)
        return dom

    def test_a_knossos_history_opens_on_the_read_no_order_places(self):
        dom = self.assert_highlighted(KNOSSOS_BAD, "history-knossos", "cannot be placed: client 70's read",
                                      "conflicts: client 76's write")
        self.assertRegex(dom, r'<span id="tl-range">showing line \d+ \u2013 line \d+ \(\d+ lines\)</span>')

    def test_a_lab_history_only_linearizability_finds_violated(self):
        self.assert_highlighted(LAB_LIN_ONLY, "history-lab-linearizability", "cannot be placed: client 3's acquire",
                                "conflicts: client 1's acquire")


if __name__ == "__main__":
    unittest.main()
