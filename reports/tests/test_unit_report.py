"""Report generation on recorded run directories (fixtures) and hand-written histories.

The fixtures are real runs of build/locklab (logs dropped; brought to the current run-file
format by refresh_fixtures.py):
  violated-client-pause  set-nx-px-lua, client-pause 1200 ms > TTL 500 ms: 16 overlaps, lost updates
  safe-none              set-nx-px-lua, no fault: safe
  fenced-client-pause    fenced lock, client-pause: overlaps, stale writes rejected by the resource

Every report judges the run's history with the one judge, `locklab check --json` (CTest sets
LOCKLAB_BINARY to the built binary): results.json never decides the verdict, a count or a hold
drawn, and a results.json that disagrees is named on the page and on stderr.
"""

import base64
import json
import os
import re
import struct
import types
import unittest

from .helpers import (TempDirMixin, copy_fixture, edit_results, red_pixels, run_report, write_history)

from reports import narrative, runfiles

MS = 1_000_000


def png_size(path):
    with open(path, "rb") as fh:
        head = fh.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", head[16:24])


class RunReportTest(TempDirMixin, unittest.TestCase):

    def report(self, fixture):
        d = copy_fixture(fixture, self.tmp)
        p = run_report(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")   # no disagreement, no library warning
        out = os.path.join(d, "report")
        for f in ("timeline.png", "latency.png", "index.html"):
            self.assertTrue(os.path.isfile(os.path.join(out, f)), f)
        with open(os.path.join(out, "index.html"), encoding="utf-8") as fh:
            html = fh.read()
        return d, out, html

    def assert_self_contained(self, html):
        srcs = re.findall(r'src="([^"]*)"', html)
        self.assertGreaterEqual(len(srcs), 2)
        for s in srcs:
            self.assertTrue(s.startswith("data:image/png;base64,"), s[:60])
            raw = base64.b64decode(s.split(",", 1)[1])
            self.assertEqual(raw[:8], b"\x89PNG\r\n\x1a\n")
        # Scripts are inline only (the explorable timeline): none has a src, and the only URL
        # in the page is the SVG namespace, a name, never fetched.
        self.assertEqual(re.findall(r"<script[^>]*\bsrc=", html), [])
        self.assertNotIn("http://", html.replace("http-equiv", "").replace("http://www.w3.org/2000/svg", ""))
        self.assertNotIn("https://", html)

    def test_violating_run_has_red_overlaps_numbered_and_a_story(self):
        d, out, html = self.report("violated-client-pause")
        self.assert_self_contained(html)
        self.assertGreater(red_pixels(os.path.join(out, "timeline.png")), 500)
        self.assertIn("violated", html)
        self.assertIn("<td>16 / 16</td>", html)   # overlap episodes: report / results.json
        story = self._story(html)
        # derived from the history: who, when, which fault window, what was written
        self.assertIn("At 1.89 s client 3 acquired lock:0 while client 2 had held it since 1.38 s", story)
        self.assertIn("froze client 2 (SIGSTOP) for 1.20 s", story)
        self.assertRegex(story, r"At \d+\.\d\d s client 2 resumed from a 1\.20 s pause and wrote counter:0 = \d+ "
                                r"while client \d had held the lock since \d+\.\d\d s")
        self.assertIn("updates were lost", story)
        # every overlap numbered in the table, in time order
        nums = [int(x) for x in re.findall(r'<tr><td class="num">(\d+)</td><td>lock:0</td>', html)]
        self.assertEqual(nums, list(range(1, 17)))

    def test_safe_run_has_no_red(self):
        d, out, html = self.report("safe-none")
        self.assert_self_contained(html)
        self.assertEqual(red_pixels(os.path.join(out, "timeline.png")), 0)
        self.assertEqual(red_pixels(os.path.join(out, "latency.png")), 0)
        self.assertIn("No violation in this history", html)
        self.assertNotIn("Overlaps (numbered", html)

    def test_fenced_run_tells_the_rejected_write(self):
        d, out, html = self.report("fenced-client-pause")
        story = self._story(html)
        self.assertRegex(story, r"client 2 resumed from a 1\.20 s pause and tried to write counter:0 = \d+ "
                                r"with fence 11 while client \d had held the lock since [\d.]+ s \(overlap #\d+\); "
                                r"the resource rejected it \(newest fence 18\)")
        self.assertGreater(red_pixels(os.path.join(out, "timeline.png")), 500)

    def test_red_present_exactly_when_the_run_has_overlaps(self):
        for fx in ("violated-client-pause", "safe-none", "fenced-client-pause"):
            with self.subTest(fx):
                d, out, _ = self.report(fx)
                with open(os.path.join(d, "results.json")) as fh:
                    pairs = json.load(fh)["mutual_exclusion"]["overlapping_pairs"]
                self.assertEqual(red_pixels(os.path.join(out, "timeline.png")) > 0, pairs > 0)

    def test_counts_match_the_checker(self):
        for fx in ("violated-client-pause", "safe-none", "fenced-client-pause"):
            with self.subTest(fx):
                d = copy_fixture(fx, self.tmp)
                run = runfiles.Run(d)
                me = run.results["mutual_exclusion"]
                self.assertEqual(run.pairs_total, me["overlapping_pairs"])
                self.assertEqual(len(run.episodes), me["episodes"])
                self.assertEqual(len(run.holds), me["holds"])
                self.assertAlmostEqual(sum(e.end - e.start for e in run.episodes) / 1e6, me["overlap_ms"], places=3)
                fv = run.results.get("first_violation")
                if fv:
                    self.assertEqual(run.episodes[0].start, fv["start_ns"])
                    self.assertEqual(run.episodes[0].end, fv["end_ns"])

    def test_story_never_depends_on_the_algorithm_id(self):
        d = copy_fixture("violated-client-pause", self.tmp)
        before = narrative.counterexample(runfiles.Run(d))
        with open(os.path.join(d, "results.json")) as fh:
            r = json.load(fh)
        r["algorithm"] = "something-else"
        r["scenario"] = "renamed"
        with open(os.path.join(d, "results.json"), "w") as fh:
            json.dump(r, fh)
        self.assertEqual(narrative.counterexample(runfiles.Run(d)), before)

    def test_the_verdict_reason_and_the_fault_coverage_are_shown(self):
        d, out, html = self.report("violated-client-pause")
        self.assertIn('<p class="reason"><b>Why violated:</b> 16 overlapping hold pairs in 16 episodes '
                      '(first on lock:0) <span class="muted">(an episode is a stretch of time', html)
        self.assertIn("<h2>Fault coverage</h2>", html)
        row = re.search(r'<tr class="" title="client-pause: opened 2 \(2 while the workload did lock work\)">'
                        r'(.*?)</tr>', html)
        self.assertIsNotNone(row, html[html.find("Fault coverage"):][:1500])
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))
        # fault, planned, armed, opened, met, closed, cut, clients hit, nodes hit, bit
        self.assertEqual(cells, ["client-pause", "no", "0", "2", "2", "2", "0", "2", "\u2013", "yes"])
        self.assertIn("<th>acquires: invoked / ok / refused / unknown</th><td>52 / 52 / 0 / 0</td>", html)
        self.assertNotIn('class="warn"', html)   # no expired grants

    def test_the_coverage_table_says_which_evidence_each_fault_produced(self):
        """A run that records effect evidence ("effects":true in its start event, one nemesis
        "effect" event per window): the coverage table has the evidence, seen or not, and a
        window whose effect was not seen does not count as a bite."""
        d = copy_fixture("violated-client-pause", self.tmp)
        path = os.path.join(d, "history.jsonl")
        with open(path) as fh:
            lines = fh.readlines()
        lines[0] = lines[0].replace('"value":{"faults"', '"value":{"effects":true,"faults"')
        stop = next(n for n, ln in enumerate(lines) if '"f":"start","key":"client-pause"' in ln)
        t = json.loads(lines[stop])["time_ns"] + 1000
        seen = {"index": 100000, "time_ns": t, "process": "nemesis", "type": "info", "f": "effect",
                "key": "client-pause", "value": {"seen": True, "window": 1,
                                                 "evidence": "client 2 (pid 4242) stopped: state T in /proc/4242/stat"}}
        lines.insert(stop + 1, json.dumps(seen, separators=(",", ":")) + "\n")
        with open(path, "w") as fh:
            fh.writelines(lines)
        p = run_report(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "report", "index.html"), encoding="utf-8") as fh:
            html = fh.read()
        self.assertIn("<th>effect evidence</th>", html)
        self.assertIn('<td class="">seen: client 2 (pid 4242) stopped: state T in /proc/4242/stat</td>', html)
        self.assertRegex(html, r'title="client-pause: opened 2 \(2 while the workload did lock work\), '
                               r'effect seen 1: client 2 \(pid 4242\)[^"]*">')
        # Without the effect event the same run's fault shows no evidence and did not bite.
        with open(path, "w") as fh:
            fh.writelines(ln for ln in lines if '"f":"effect"' not in ln)
        p = run_report(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "report", "index.html"), encoding="utf-8") as fh:
            html = fh.read()
        self.assertIn('<td class="bad">not seen: none recorded</td><td class="bad">no</td></tr>', html)

    def test_a_fault_that_did_not_bite_is_marked(self):
        """Coverage is the judge's: a history whose client-pause windows never opened (its
        nemesis start/stop events taken out) shows the fault's row marked, whatever
        results.json's coverage says."""
        d = copy_fixture("violated-client-pause", self.tmp)
        path = os.path.join(d, "history.jsonl")
        with open(path) as fh:
            lines = [ln for ln in fh if '"process":"nemesis"' not in ln or '"f":"plan"' in ln]
        with open(path, "w") as fh:
            fh.writelines(lines)
        p = run_report(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "report", "index.html"), encoding="utf-8") as fh:
            html = fh.read()
        self.assertRegex(html, r'<tr class="bad" title="[^"]*"><td>client-pause</td>.*<td class="bad">no</td></tr>')
        # results.json (bit: true, 2 opened) disagrees on nothing the headline compares; the
        # coverage shown is the history's all the same
        self.assertNotRegex(html, r'<tr class="" title="client-pause: opened 2')

    def test_expired_grants_are_a_visible_warning(self):
        """An acquire ok with validity_ms <= 0 in the history is counted by the judge and warned
        about; results.json's own count is not what is shown."""
        d = copy_fixture("safe-none", self.tmp)
        path = os.path.join(d, "history.jsonl")
        with open(path) as fh:
            lines = fh.readlines()
        changed = 0
        for n, ln in enumerate(lines):
            if changed < 3 and '"type":"ok","f":"acquire"' in ln and '"validity_ms":500' in ln:
                lines[n] = ln.replace('"validity_ms":500', '"validity_ms":0')
                changed += 1
        self.assertEqual(changed, 3)
        with open(path, "w") as fh:
            fh.writelines(lines)
        p = run_report(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "report", "index.html"), encoding="utf-8") as fh:
            html = fh.read()
        self.assertIn('<p class="warn">\u26a0 3 acquires were answered ok with validity_ms \u2264 0', html)
        self.assertNotIn("<h2>Fault coverage</h2>", html)   # no fault, empty coverage

    def test_a_doctored_results_json_cannot_change_the_headline(self):
        """results.json is never trusted for what the judge owns: a violated run's results.json
        replaced by {"verdict":"safe"}, or one whose counts, holds and episodes say no overlap,
        still gives the history's verdict, its 16 overlaps drawn in red, and one line naming the
        field that disagreed (on the page and on stderr); the report is made (exit 0)."""
        d = copy_fixture("violated-client-pause", self.tmp)
        with open(os.path.join(d, "results.json"), "w") as fh:
            json.dump({"verdict": "safe"}, fh)
        p = run_report(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr.strip().splitlines(), [
            f"report: {os.path.join(d, 'results.json')}: field 'verdict': says safe, the history judges violated; "
            "the report shows the history's judgement"])
        with open(os.path.join(d, "report", "index.html"), encoding="utf-8") as fh:
            html = fh.read()
        self.assertRegex(html, r'<h1>[^<]*<span class="badge violated">violated</span>')
        self.assertNotIn('badge safe', html)
        self.assertIn("overlap #1 of 16", html)
        self.assertIn("&#x27;verdict&#x27; says safe, the history judges violated", html)

        d = copy_fixture("violated-client-pause", os.path.join(self.tmp, "counts"))
        with edit_results(d) as r:
            r["verdict"], r["verdict_reason"] = "safe", "all good"
            r["mutual_exclusion"].update(overlapping_pairs=0, episodes=0, overlap_ms=0.0)
            r["resource"]["lost_updates"] = 0
            r["episodes"] = []
            r["holds"] = [{"process": "x"}]                 # malformed, and ignored
        p = run_report(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertRegex(p.stderr, r"field 'verdict': says safe, the history judges violated \(and \d+ more fields\)")
        with open(os.path.join(d, "report", "index.html"), encoding="utf-8") as fh:
            html = fh.read()
        self.assertIn('<span class="badge violated">violated</span>', html)
        self.assertNotIn("all good", html)
        self.assertIn("<b>Why violated:</b> 16 overlapping hold pairs", html)
        self.assertIn("<th>overlap episodes (drawn / judged)</th><td>16 / 16 (an episode is", html)
        self.assertIn("&#x27;mutual_exclusion.overlapping_pairs&#x27; says 0, the history judges 16", html)
        self.assertGreater(red_pixels(os.path.join(d, "report", "timeline.png")), 500)

        # and the other way: a safe run's results.json claiming an overlap draws no red
        d = copy_fixture("safe-none", os.path.join(self.tmp, "safe"))
        with edit_results(d) as r:
            a, b = r["holds"][3], r["holds"][4]
            a["end_ns"] = b["start_ns"] + 40 * MS
            r["episodes"] = [{"key": a["key"], "start_ns": b["start_ns"], "end_ns": a["end_ns"],
                              "processes": sorted([a["process"], b["process"]])}]
            r["mutual_exclusion"].update(overlapping_pairs=1, episodes=1, overlap_ms=40.0)
            r["verdict"] = "violated"
        p = run_report(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(red_pixels(os.path.join(d, "report", "timeline.png")), 0)
        with open(os.path.join(d, "report", "index.html"), encoding="utf-8") as fh:
            html = fh.read()
        self.assertIn('<span class="badge safe">safe</span>', html)
        self.assertNotIn("Overlaps (numbered", html)

    def test_an_untouched_run_names_no_disagreement(self):
        d, out, html = self.report("violated-client-pause")
        self.assertNotIn("disagrees with the judgement", html)
        self.assertIn("<th>holds (history.jsonl)</th><td>52</td>", html)

    @staticmethod
    def _story(html):
        m = re.search(r'<div class="story[^"]*">(.*?)</div>', html, re.S)
        import html as h
        return h.unescape(re.sub(r"<[^>]+>", " ", m.group(1))) if m else ""


class BadInputTest(TempDirMixin, unittest.TestCase):

    def assert_one_line_65(self, p, must_name):
        self.assertEqual(p.returncode, 65, p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn(must_name, p.stderr)

    def test_missing_dir(self):
        p = run_report(os.path.join(self.tmp, "nope"))
        self.assert_one_line_65(p, "nope")

    def test_dir_without_history(self):
        p = run_report(self.tmp)
        self.assert_one_line_65(p, "history.jsonl")

    def test_malformed_line_names_file_and_line(self):
        d = copy_fixture("safe-none", self.tmp)
        with open(os.path.join(d, "history.jsonl")) as fh:
            lines = fh.readlines()
        lines[4] = "{not json\n"
        with open(os.path.join(d, "history.jsonl"), "w") as fh:
            fh.writelines(lines)
        self.assert_one_line_65(run_report(d), "history.jsonl: line 5")

    def test_missing_field(self):
        d = write_history(os.path.join(self.tmp, "r"), [(1, 1, "invoke", "acquire", "k", None)])
        with open(os.path.join(d, "history.jsonl"), "a") as fh:
            fh.write('{"index":1,"process":1,"type":"ok","f":"acquire","key":"k"}\n')
        self.assert_one_line_65(run_report(d), "line 2: missing field 'time_ns'")

    def test_no_binary_to_judge_the_history_is_69(self):
        d = copy_fixture("safe-none", self.tmp)
        p = run_report(d, env={"LOCKLAB_BINARY": os.path.join(self.tmp, "no-locklab")})
        self.assertEqual(p.returncode, 69, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("no locklab binary to judge the history", p.stderr)

    def test_a_history_nested_too_deep_is_65(self):
        d = copy_fixture("safe-none", self.tmp)
        with open(os.path.join(d, "history.jsonl"), "a") as fh:
            fh.write('{"index":9999,"time_ns":1,"process":1,"type":"info","f":"x","key":"k","value":'
                     + "[" * 100000 + "]" * 100000 + "}\n")
        self.assert_one_line_65(run_report(d), "history.jsonl")

    def test_a_report_directory_that_is_a_file_stays_65(self):
        d = copy_fixture("safe-none", self.tmp)
        open(os.path.join(d, "report"), "w").close()
        self.assert_one_line_65(run_report(d), "report: cannot create")

    def test_bad_results_json(self):
        d = copy_fixture("safe-none", self.tmp)
        with open(os.path.join(d, "results.json"), "w") as fh:
            fh.write("{oops")
        self.assert_one_line_65(run_report(d), "results.json")

    def test_empty_history(self):
        d = os.path.join(self.tmp, "e")
        os.makedirs(d)
        open(os.path.join(d, "history.jsonl"), "w").close()
        self.assert_one_line_65(run_report(d), "empty history")

    def test_half_written_last_line_of_a_killed_run_is_tolerated(self):
        d = copy_fixture("violated-client-pause", self.tmp)
        with open(os.path.join(d, "history.jsonl"), "a") as fh:
            fh.write('{"index":999,"time_ns":20')
        p = run_report(d)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_usage(self):
        self.assertEqual(run_report().returncode, 64)
        self.assertEqual(run_report("--matrix").returncode, 64)


def ev(t_ms, p, ty, f, key="lock:0", v=None):
    return (int(t_ms * MS), p, ty, f, key, v)


class ExportedEpisodesTest(TempDirMixin, unittest.TestCase):
    """What the report derives from an exported episode: the holds in it and their pairs."""

    # `locklab check --json` of the history below (holds sorted by key, start, process).
    HOLDS = [(5, "a", 2, 6), (6, "a", 4, 7), (3, "a", 5, 8), (4, "a", 8, 9), (1, "b", 0, 20), (2, "b", 10, 25)]
    EPISODES = [("a", 4, 7, [3, 5, 6]), ("b", 10, 20, [1, 2])]

    def test_overlaps_numbered_in_time_order_across_keys_with_their_pairs(self):
        events = [
            ev(0, 1, "ok", "acquire", "b"), ev(10, 2, "ok", "acquire", "b"),   # overlap on b at 10..20
            ev(20, 1, "invoke", "release", "b"), ev(25, 2, "invoke", "release", "b"),
            ev(5, 3, "ok", "acquire", "a"), ev(8, 3, "invoke", "release", "a"),
            ev(8, 4, "ok", "acquire", "a"), ev(9, 4, "invoke", "release", "a"),  # touches: no overlap
            ev(2, 5, "ok", "acquire", "a"), ev(4, 6, "ok", "acquire", "a"),     # overlap on a at 4..6
            ev(6, 5, "invoke", "release", "a"), ev(7, 6, "invoke", "release", "a"),
        ]
        results = {
            "holds": [{"process": p, "key": k, "start_ns": s * MS, "end_ns": e * MS, "open_at_end": False,
                       "acquire_index": -1} for p, k, s, e in self.HOLDS],
            "episodes": [{"key": k, "start_ns": s * MS, "end_ns": e * MS, "processes": ps}
                         for k, s, e, ps in reversed(self.EPISODES)],   # any order: numbered by time
        }
        # The derivation alone, on a judgement as `locklab check --json` gives it.
        holds = runfiles.holds_from_judgement(results, "test")
        episodes, pairs_total = runfiles.episodes_from_judgement(results, holds, "test")
        r = types.SimpleNamespace(episodes=episodes, pairs_total=pairs_total)
        eps = [(e.number, e.key, e.start // MS, e.end // MS) for e in r.episodes]
        self.assertEqual(eps, [(1, "a", 4, 7), (2, "b", 10, 20)])
        # on a: 5 holds 2..6, 6 holds 4..7, 3 holds 5..8 (pairs 6-5, 3-5, 3-6); 4 starts as 3 ends
        self.assertEqual(r.pairs_total, 4)
        a = r.episodes[0]
        self.assertEqual([hd.process for hd in a.holds], [5, 6, 3])
        self.assertEqual(sorted((x.process, y.process, s // MS, e // MS) for x, y, s, e in a.pairs),
                         [(5, 3, 5, 6), (5, 6, 4, 6), (6, 3, 5, 7)])
        for ep in r.episodes:
            self.assertEqual(sorted({hd.process for hd in ep.holds}), ep.processes)
