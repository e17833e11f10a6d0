"""The run page's explorable timeline, the story's moments and words, and a violation only the
linearizability check found (linearizability.unplaceable).

Fixture linearizability-only: a hand-made history where client 1's lease expires, client 3
acquires, and client 1's late release (a plain DEL) takes client 3's key; no two holds
overlap (the clients honour validity), yet client 3's acquire fits no order of the lock
operations. Its results.json carries linearizability.unplaceable as the checker exports it."""

import json
import os
import re
import unittest
from html import escape as html_escape

from reports import explore, narrative, runfiles
from reports.figstyle import LIN_COLOR

from .helpers import TempDirMixin, copy_fixture, edit_results, run_report


def tl_data(html):
    m = re.search(r'<script type="application/json" id="tl-data">(.*?)</script>', html, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


def color_pixels(png, hex_color, tol=0.06):
    import matplotlib.image as mpimg
    import numpy as np
    img = mpimg.imread(png)[:, :, :3]
    target = np.array([int(hex_color[i:i + 2], 16) for i in (1, 3, 5)]) / 255.0
    return int((np.abs(img - target).max(axis=2) < tol).sum())


class LinearizabilityOnlyTest(TempDirMixin, unittest.TestCase):

    def report(self):
        d = copy_fixture("linearizability-only", self.tmp)
        p = run_report(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "report", "index.html"), encoding="utf-8") as fh:
            return d, fh.read()

    def test_the_unplaceable_operation_is_told_drawn_and_titled(self):
        d, html = self.report()
        run = runfiles.Run(d)
        u = run.unplaceable
        self.assertIsNotNone(u)
        story = re.sub(r"<[^>]+>", "", re.search(r'<div class="story">(.*?)</div>', html, re.S).group(1))
        self.assertIn("The lock history is not linearizable although no two holds overlapped", story)
        # the checker's sentence (the judge's when it exports one, else results.json's)
        self.assertIn(html_escape(u.sentence[0].upper() + u.sentence[1:]), story)
        data = tl_data(html)
        row = {c: i for i, c in enumerate(run.clients)}
        self.assertEqual([(x["row"], x["f"], x["main"]) for x in data["lin"]],
                         [(row[u.op.process], u.op.f, True)] + [(row[c.process], c.f, False) for c in u.conflicts])
        self.assertEqual(data["episodes"], [])
        if u.source == "results.json":   # the fixture's own export, word for word
            self.assertIn("can place client 3&#x27;s acquire of lock:0 (invoked at 200 ms, ok at 1.69 s)", story)
            self.assertIn("It conflicts with 2 operations", story)
            self.assertRegex(story, r"Client 1&#x27;s release at 2\.23 s")
            self.assertEqual([(x["row"], x["f"], x["main"]) for x in data["lin"]],
                             [(2, "acquire", True), (0, "acquire", False), (0, "release", False)])
        # the PNG: the operation in violet, its title says what is wrong
        self.assertGreater(color_pixels(os.path.join(d, "report", "timeline.png"), LIN_COLOR), 400)
        from reports.timeline import timeline_subtitle
        self.assertEqual(timeline_subtitle(run), f"not linearizable: client {u.op.process}'s {u.op.f} cannot be "
                                                 "placed (no overlapping holds)")

    def test_a_results_json_without_the_key_still_tells_the_counterexample(self):
        d = copy_fixture("linearizability-only", self.tmp)
        with edit_results(d) as r:
            del r["linearizability"]["unplaceable"]
        run = runfiles.Run(d)
        if run.unplaceable is not None and run.unplaceable.source == "judge":
            self.skipTest("the judge exports linearizability.unplaceable itself")
        self.assertIsNone(run.unplaceable)
        headline, sents, _ = narrative.counterexample(run)
        self.assertEqual(headline, "The lock history is not linearizable although no two holds overlapped.")
        self.assertIn("No order of the lock operations explains client 3's acquire on lock:0", sents[0])
        self.assertEqual(run_report(d).returncode, 0)

    def test_the_judges_export_wins_and_a_valid_history_takes_none_from_results_json(self):
        op = {"process": 3, "f": "acquire", "key": "k", "invoke_ns": 10, "complete_ns": 20, "outcome": "ok",
              "value": None}
        mine = {"linearizability": {"unplaceable": {"op": op, "prefix_ops": 4, "conflicts": [op, {"bad": 1}],
                                                    "sentence": "judge's"}}}
        theirs = {"linearizability": {"unplaceable": {"op": dict(op, process=1), "sentence": "file's"}}}
        u = runfiles.unplaceable_of(mine, theirs)
        self.assertEqual((u.source, u.sentence, u.prefix_ops, len(u.conflicts)), ("judge", "judge's", 4, 1))
        # the judge has none and finds the lock history valid: results.json explains nothing
        self.assertIsNone(runfiles.unplaceable_of({"linearizability": {"lock": {"verdict": "valid"}}}, theirs))
        u = runfiles.unplaceable_of({"linearizability": {"lock": {"verdict": "invalid"}}}, theirs)
        self.assertEqual((u.source, u.op.process, u.prefix_ops), ("results.json", 1, None))
        # malformed: no process, no invoke time
        self.assertIsNone(runfiles.unplaceable_of({"linearizability": {"unplaceable": {"op": {"f": "x"}}}}, {}))


class ExplorableTimelineTest(TempDirMixin, unittest.TestCase):

    def test_the_page_carries_the_data_script_and_moments(self):
        d = copy_fixture("violated-client-pause", self.tmp)
        self.assertEqual(run_report(d).returncode, 0)
        with open(os.path.join(d, "report", "index.html"), encoding="utf-8") as fh:
            html = fh.read()
        data = tl_data(html)
        run = runfiles.Run(d)
        self.assertEqual(data["clients"], [1, 2, 3])
        self.assertEqual(len(data["holds"]), len(run.holds))
        self.assertEqual([e[0] for e in data["episodes"]], list(range(1, 17)))
        # every completed client operation, with its outcome and value (tokens of acquires)
        acquires = [o for o in data["ops"] if data["fNames"][o[1]] == "acquire"]
        self.assertEqual(len(acquires), int(run.result("acquires", "invoked")))
        self.assertTrue(all(o[6].startswith("token ") for o in acquires if o[5] == "ok"))
        # the script is inline, the policy lets only it run
        self.assertIn("script-src 'unsafe-inline'", html)
        self.assertIn('<div id="tl">', html)
        # every sentence of the story links to its moment
        links = re.findall(r'<a class="moment" href="#t=([0-9.]+),([0-9.]+)"', html)
        self.assertGreaterEqual(len(links), 4)
        lo, hi = map(float, links[0])
        self.assertLess(lo, 1.89)   # the headline: client 3 acquired at 1.89 s
        self.assertGreater(hi, 1.89)
        # the PNG stays, for static viewers
        self.assertIn('<summary>The same timeline as a picture (timeline.png)</summary>', html)

    def test_sentences_keep_their_moment_and_compare_as_text(self):
        s = narrative.Sentence("At 1 s x.", 5, 9)
        self.assertEqual(s, "At 1 s x.")
        self.assertEqual(s.at, (5, 9))
        self.assertIsNone(narrative.Sentence("no moment").at)


class WordsTest(unittest.TestCase):

    class FakeRun:
        t0 = 1_000_000_000

        def sec(self, t):
            return (t - self.t0) / 1e9

    def test_moments_and_lengths_read_as_a_person_would_say_them(self):
        run = self.FakeRun()
        self.assertEqual(narrative.ts(run, run.t0), "the start of the run")
        self.assertEqual(narrative.ts(run, run.t0 + 3_400_000), "3 ms")
        self.assertEqual(narrative.ts(run, run.t0 + 740_000_000), "740 ms")
        self.assertEqual(narrative.ts(run, run.t0 + 2_234_000_000), "2.23 s")
        self.assertEqual(narrative.ms(22_068_994), "22 ms")
        self.assertEqual(narrative.ms(400_000), "0.4 ms")
        self.assertEqual(narrative.ms(1_250_000_000), "1.25 s")

    def test_another_programs_unrounded_milliseconds_are_rounded_on_the_page(self):
        from reports.htmlreport import rounded_ms
        self.assertEqual(rounded_ms("longest wait with no holder 22.068994 ms"), "longest wait with no holder 22 ms")
        self.assertEqual(rounded_ms("held 1515.8821509999998 ms, then 3.5 ms"), "held 1.52 s, then 3.5 ms")

    def test_clients_are_listed_sorted_with_both_only_for_two(self):
        self.assertEqual(narrative.clients_words([3, 2, 1]), "clients 1, 2 and 3")
        self.assertEqual(narrative.clients_words([3, 2, 3]), "clients 2 and 3")
        self.assertEqual(narrative.clients_words([4]), "client 4")
        self.assertEqual(narrative.both_or_all([3, 2]), "both")
        self.assertEqual(narrative.both_or_all([3, 2, 1]), "all")

    def test_a_moment_link_is_padded_and_never_before_the_start(self):
        run = self.FakeRun()
        self.assertEqual(explore.moment_href(run, (run.t0, run.t0 + 100_000_000)), "#t=0.0000,0.1500")


if __name__ == "__main__":
    unittest.main()
