"""The hunt page (python3 -m reports --hunt HUNT_DIR): hunt.html from hunt.json and the hunt
directory.

Fixture hunt-plain-del: a real hunt (`locklab hunt --lock mutant:plain-del --budget 90s --jobs 1
--seed 1`), its run directories slimmed to what the page reads (results.json's verdict fields,
history.jsonl's first and last lines), but for the find's trial and the minimal's failing
rerun, kept whole and without their reports: the page makes them."""

import os
import re
import shutil
import unittest
from html import unescape

from reports import huntpage

from .helpers import TempDirMixin, copy_fixture, run_report


class HuntPageTest(TempDirMixin, unittest.TestCase):

    def make(self, *extra):
        d = copy_fixture("hunt-plain-del", self.tmp)
        p = run_report("--hunt", d, *extra)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "hunt.html"), encoding="utf-8") as fh:
            return d, p, fh.read()

    def test_the_page_tells_the_hunt_and_makes_the_missing_report(self):
        d, p, html = self.make()
        self.assertIn("the failing run's report made", p.stdout)
        failing = os.path.join(d, "reruns", "minimal", "20261127T140627-102814372102557")
        self.assertTrue(os.path.isfile(os.path.join(failing, "report", "index.html")))
        self.assertIn(f'<a href="{os.path.relpath(failing, d)}/report/index.html">the failing run\'s report</a>',
                      html)
        # the minimal's story is hunt.json's narrative, word for word
        self.assertIn("clients 2 and 3 both held lock:0 for 210 ms, 765 ms into the run", html)
        # every run placed in time, one per scenario file of trials/, shrink/ and reruns/
        runs = re.findall(r'<rect class="run" [^>]*data-run="([^"]+)"', html)
        tomls = sum(len([f for f in os.listdir(os.path.join(d, s)) if f.endswith(".toml")])
                    for s in ("trials", "shrink", "reruns"))
        self.assertEqual(len(runs), tomls)
        self.assertIn("find t0004", html)
        # the find's trial got its report, and the finds table opens it
        self.assertRegex(html, r'<td><a href="trials/t0004/[^"]+/report/index.html">report</a></td></tr>')
        # shrink steps: kept, not kept, and the undone one; their runs linked
        rows = re.findall(r'<tr class="(kept|refused|undone)"><td class="num">(\d+)</td><td>([^<]*)</td>', html)
        self.assertEqual([(c, n) for c, n, _ in rows], [("refused", "1"), ("kept", "2"), ("kept", "3"),
                                                        ("undone", "4")])
        self.assertIn("clients ignore the lease&#x27;s validity", rows[1][2])
        # reproductions: the one told is marked, each with its ten runs
        self.assertIn("1 kept steps undone (the minimal told above)", html)
        # 20 reruns, each linked from the picture and the table (its report, else its scenario)
        self.assertEqual(len(re.findall(r'href="reruns/[^"]+"', html)), 20 + 20 + 1)   # + the story's
        # no link leads nowhere, none to a directory
        for href in re.findall(r'href="([^"]+)"', html):
            if href.startswith("data:"):
                continue
            self.assertTrue(os.path.isfile(os.path.join(d, href)), href)

    def test_the_header_gives_the_ttls_the_scenarios_ran_with_not_the_default(self):
        # hunt.json says 500 ms (the TTL a drawn scenario is scaled from); the trials drew 750
        # and 1250 ms, and minimal.toml has 750 ms
        d, _, html = self.make()
        sub = unescape(re.search(r'<p class="sub">(.*?)</p>', html).group(1))
        self.assertIn("TTL drawn per scenario: 750 ms (2 trials), 1250 ms (2 trials); minimal.toml's 750 ms", sub)
        self.assertNotIn("TTL 500 ms", sub)
        # a hunt whose trials all ran with one TTL (--ttl) says that one
        for name in os.listdir(os.path.join(d, "trials")):
            if name.endswith(".toml"):
                path = os.path.join(d, "trials", name)
                with open(path) as fh:
                    text = fh.read()
                with open(path, "w") as fh:
                    fh.write(re.sub(r"(?m)^ttl_ms = \d+$", "ttl_ms = 2000", text))
        p = run_report("--hunt", d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "hunt.html"), encoding="utf-8") as fh:
            sub = re.search(r'<p class="sub">(.*?)</p>', fh.read()).group(1)
        self.assertIn("seed 1; TTL 2000 ms;", sub)

    def test_a_hunt_dir_given_as_a_run_dir_and_its_corpus_entry(self):
        corpus = os.path.join(self.tmp, "corpus")
        os.makedirs(corpus)
        d = copy_fixture("hunt-plain-del", self.tmp)
        with open(os.path.join(d, "minimal.toml")) as fh:
            text = fh.read()
        with open(os.path.join(corpus, "mutant-plain-del--none--b813c63e.toml"), "w") as fh:
            fh.write(text.replace('name = "minimal"', 'name = "mutant-plain-del--none"'))
        with open(os.path.join(corpus, "other.toml"), "w") as fh:
            fh.write(text.replace("seed = ", "seed = 1"))
        p = run_report(d, "--corpus", corpus)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "hunt.html"), encoding="utf-8") as fh:
            html = fh.read()
        self.assertRegex(html, r'Corpus entry: <a href="[^"]*mutant-plain-del--none--b813c63e.toml">')
        self.assertNotIn("other.toml", html)

    def test_an_interrupted_hunt_without_a_minimal_still_gets_its_page(self):
        import json
        d = copy_fixture("hunt-plain-del", self.tmp)
        path = os.path.join(d, "hunt.json")
        with open(path) as fh:
            doc = json.load(fh)
        doc.update(minimal=None, interrupted=True, shrink_tried=[], reproductions=[], shrunk=[], narrative="")
        with open(path, "w") as fh:
            json.dump(doc, fh)
        shutil.rmtree(os.path.join(d, "reruns"))
        p = run_report("--hunt", d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "hunt.html"), encoding="utf-8") as fh:
            html = fh.read()
        self.assertIn("found, not reproduced", html)
        self.assertIn("<b>interrupted</b>", html)
        self.assertNotIn("What it found", html)

    def test_bad_input_is_one_line(self):
        d = os.path.join(self.tmp, "h")
        os.makedirs(d)
        with open(os.path.join(d, "hunt.json"), "w") as fh:
            fh.write("{not json")
        p = run_report("--hunt", d)
        self.assertEqual(p.returncode, 65)
        self.assertIn("hunt.json", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1)
        self.assertEqual(run_report("--hunt").returncode, 64)
        self.assertFalse(huntpage.is_hunt_dir(self.tmp))


if __name__ == "__main__":
    unittest.main()
