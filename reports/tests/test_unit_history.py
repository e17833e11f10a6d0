"""`locklab report HISTORY_FILE`: a Knossos history, a Porcupine etcd log and a lab history whose
violation only linearizability finds each get one page whose verdict line and sentence are
`locklab check`'s own, and whose timeline data draws the operation no order can place (and
its conflicts); bad input is one line and exit 65. Needs the binary (CTest sets
LOCKLAB_BINARY); no Redis."""

import html
import json
import os
import re
import shutil
import subprocess
import unittest

from reports import runfiles

from .helpers import FIXTURES, ROOT, TempDirMixin

KNOSSOS_BAD = os.path.join(ROOT, "checker", "tests", "data", "knossos", "cas-register", "bad", "cas-failure.edn")
PORCUPINE_BAD = os.path.join(ROOT, "checker", "tests", "data", "porcupine-etcd", "etcd_000.log")
LAB_LIN_ONLY = os.path.join(FIXTURES, "linearizability-only", "history.jsonl")


def binary():
    b = runfiles.locklab_binary()
    if b is None:
        raise AssertionError("no locklab binary (CTest sets LOCKLAB_BINARY)")
    return b


def locklab(*args):
    return subprocess.run([binary(), *args], capture_output=True, text=True, timeout=300)


def timeline_data(page):
    m = re.search(r'<script type="application/json" id="tl-data">(.*?)</script>', page, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


def without_time(line):
    """A verdict line without the search's own time ("0.16 ms)"), which no two runs share."""
    return re.sub(r"[0-9.]+ ms\)", "T ms)", line)


def why_line(check_text):
    """check's sentence about the unplaceable operation: its "  why: ..." line."""
    m = re.search(r"^  why: (.*)$", check_text, re.M)
    return m.group(1) if m else None


class HistoryReportTest(TempDirMixin, unittest.TestCase):

    def report(self, history, *flags):
        out = os.path.join(self.tmp, os.path.basename(history) + ".page.html")
        p = locklab("report", *flags, "--out", out, history)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, encoding="utf-8") as fh:
            return fh.read()

    def assert_judged_as_check(self, history, page, *flags):
        """The page carries check's verdict line and its sentence, the sentence in the story."""
        check = locklab("check", *flags, history)
        self.assertIn(check.returncode, (0, 1, 2), check.stderr)
        # check's verdict line, but for the search's time, which differs between two runs
        line = html.escape(check.stdout.splitlines()[1].strip(), quote=True)
        shown = re.search(r'<p class="reason" id="verdict-line"><b>locklab check:</b> <code>(.*?)</code></p>', page)
        self.assertIsNotNone(shown)
        self.assertEqual(without_time(shown.group(1)), without_time(line))
        sentence = why_line(check.stdout)
        self.assertIsNotNone(sentence, check.stdout)
        story = re.search(r'<p class="headline" id="unplaceable-sentence">(.*?)</p>', page, re.S)
        self.assertIsNotNone(story)
        self.assertEqual(html.unescape(re.sub(r"<[^>]+>", "", story.group(1))), sentence)
        return check

    def test_a_knossos_invalid_history_names_and_draws_the_read_no_order_places(self):
        page = self.report(KNOSSOS_BAD)
        self.assert_judged_as_check(KNOSSOS_BAD, page)
        self.assertTrue('<span class="badge violated">invalid</span>' in page)
        d = timeline_data(page)
        self.assertEqual(d["unit"], "line")
        main = [x for x in d["lin"] if x["main"]]
        self.assertEqual(len(main), 1)
        # client 70's read at lines 499-503 returned 0; client 76's write at line 481 wrote 2
        self.assertEqual((d["clients"][main[0]["row"]], main[0]["f"]), (70, "read"))
        self.assertEqual((main[0]["inv"], main[0]["done"]), (499, 503))
        conflicts = [(d["clients"][x["row"]], x["f"], x["done"]) for x in d["lin"] if not x["main"]]
        self.assertIn((76, "write", 481), conflicts)
        # the page opens on them
        self.assertLessEqual(d["focus"][0], 481)
        self.assertGreaterEqual(d["focus"][1], 503)

    def test_a_porcupine_invalid_log_gets_its_unplaceable_operation(self):
        page = self.report(PORCUPINE_BAD)
        self.assert_judged_as_check(PORCUPINE_BAD, page)
        self.assertTrue(any(x["main"] for x in timeline_data(page)["lin"]))

    def test_a_lab_history_only_linearizability_finds_violated_is_drawn_with_its_sentence(self):
        page = self.report(LAB_LIN_ONLY)
        check = self.assert_judged_as_check(LAB_LIN_ONLY, page)
        self.assertIn("verdict: violated (owner-mutex history is not linearizable)", check.stdout)
        self.assertIn("0 overlapping pairs", check.stdout)   # no overlap: linearizability alone
        self.assertTrue('<span class="badge violated">violated</span>' in page)
        d = timeline_data(page)
        self.assertEqual(d["unit"], "s")
        self.assertEqual(d["episodes"], [])
        main = [x for x in d["lin"] if x["main"]]
        self.assertEqual([(d["clients"][x["row"]], x["f"]) for x in main], [(3, "acquire")])
        self.assertGreaterEqual(len(d["lin"]), 2)
        self.assertGreater(len(d["holds"]), 0)   # the judge's holds are drawn too

    def test_format_and_model_are_checks_own(self):
        page = self.report(LAB_LIN_ONLY, "--model", "owner-mutex")
        self.assert_judged_as_check(LAB_LIN_ONLY, page, "--model", "owner-mutex")
        self.assertTrue("<code>owner-mutex: invalid (" in page)
        p = locklab("report", "--format", "edn", "--out", os.path.join(self.tmp, "x.html"), LAB_LIN_ONLY)
        self.assertEqual(p.returncode, 65)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn(LAB_LIN_ONLY + ":1:", p.stderr)

    def test_the_page_goes_beside_the_history_by_default(self):
        copy = os.path.join(self.tmp, "cas-failure.edn")
        shutil.copy(KNOSSOS_BAD, copy)
        p = locklab("report", copy)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.isfile(copy + ".html"))
        self.assertIn(copy + ".html", p.stdout)

    def test_bad_input_is_one_line_naming_file_and_line(self):
        bad = os.path.join(self.tmp, "bad.edn")
        with open(bad, "w") as fh:
            fh.write("[{:process 0 :type :invoke :f :read :value nil}\n{:process 0 :type :ok :f :read :value [1 2}]\n")
        for args, code, words in ((["report", bad], 65, bad + ":2:"),
                                  (["report", os.path.join(self.tmp, "none.edn")], 65, "no such run directory or history file"),
                                  (["report", "--model", "nope", bad], 64, "--model"),
                                  (["report", "--out", "x.html", FIXTURES + "/linearizability-only"], 64, "HISTORY_FILE")):
            p = locklab(*args)
            self.assertEqual(p.returncode, code, (args, p.stderr))
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn(words, p.stderr)
            self.assertNotIn("Traceback", p.stderr)
        self.assertFalse(os.path.exists(bad + ".html"))


if __name__ == "__main__":
    unittest.main()
