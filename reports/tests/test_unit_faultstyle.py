"""A fault's colour, noun, client row, label, story, phrases and traits come from its
descriptor, through `locklab list --json` (faults/fault_descriptor.h): the report keeps no
table of its own, and without a binary to ask it fails in one line instead of inventing words."""

import json
import os
import stat
import unittest
from unittest import mock

from reports import faultstyle, runfiles

from .helpers import TempDirMixin


class FaultStyleTest(TempDirMixin, unittest.TestCase):

    def fake_binary(self, faults):
        """An executable that answers `list --json` with `faults` as its faults array."""
        listing = os.path.join(self.tmp, "list.json")
        with open(listing, "w") as fh:
            json.dump({"locks": [], "faults": faults}, fh)
        path = os.path.join(self.tmp, "locklab")
        with open(path, "w") as fh:
            fh.write(f"#!/bin/sh\ncat '{listing}'\n")
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return path

    def test_styles_words_and_traits_are_the_binarys(self):
        binary = runfiles.locklab_binary()
        self.assertIsNotNone(binary, "no locklab binary (CTest sets LOCKLAB_BINARY)")
        from_binary = faultstyle.styles()
        self.assertEqual(faultstyle.color("client-pause"), from_binary["client-pause"][0])
        self.assertEqual(faultstyle.FAULT_NOUNS["slow-cs"], "slow critical section")
        self.assertIn("delay", faultstyle.CLIENT_FAULTS)
        self.assertNotIn("partition", faultstyle.CLIENT_FAULTS)
        self.assertEqual(faultstyle.color("no-such-fault"), faultstyle.DEFAULT_COLOR)
        self.assertTrue(faultstyle.trait("client-crash", "kills_client"))
        self.assertTrue(faultstyle.trait("failover", "promotes_replica"))
        self.assertTrue(faultstyle.trait("server-pause", "node_down"))
        self.assertFalse(faultstyle.trait("client-pause", "node_down"))
        self.assertFalse(faultstyle.trait("no-such-fault", "node_down"))

    def test_every_descriptors_templates_fill(self):
        """Each listed fault's label, story and phrases name only placeholders the report knows."""
        detail = {"targets": [2], "nodes": [1, 2, 3], "links": [[2, "n1"]], "offset": "+20s", "rate": 2.0,
                  "delay_ms": 1500, "point": "after-acquire"}
        for fault in faultstyle.catalog():
            for text in (faultstyle.label(fault, detail, 1_200_000_000),
                         faultstyle.describe(fault, detail, 1_200_000_000),
                         faultstyle.client_phrase(fault, detail, 1_200_000_000, True),
                         faultstyle.client_phrase(fault, detail, 1_200_000_000, False),
                         faultstyle.over(fault, detail, 1_200_000_000)):
                self.assertNotIn("{", text, fault)
                self.assertNotIn("[", text, fault)

    def test_labels_and_stories_are_the_descriptors(self):
        dur = 1_200_000_000
        self.assertEqual(faultstyle.label("client-pause", {"targets": [2]}, dur), "pause c2 1.20 s")
        self.assertEqual(faultstyle.label("client-pause", {}, dur), "pause 1.20 s")
        self.assertEqual(faultstyle.label("server-pause", {}, dur), "server pause n1 1.20 s")
        self.assertEqual(faultstyle.label("clock-jump", {"nodes": [1], "offset": "+20s"}, dur), "clock jump n1 +20s")
        self.assertEqual(faultstyle.label("partition", {"links": [[3, "n1"], [3, "n2"], [3, "n3"]]}, dur),
                         "partition c3\u2194n1..n3")
        self.assertEqual(faultstyle.label("delay", {"targets": [3], "delay_ms": 1500}, dur), "delay c3 writes +1.50 s")
        self.assertEqual(faultstyle.describe("client-pause", {"targets": [2], "point": "before-write"}, dur),
                         "the nemesis froze client 2 (SIGSTOP) for 1.20 s (armed at pause point before-write)")
        self.assertEqual(faultstyle.describe("clock-drift", {"nodes": [1], "rate": 2.0}, dur),
                         "the wall clock of server n1 drifted (clock drift n1 2.0)")
        self.assertEqual(faultstyle.describe("clock-jump", {}, dur), "the wall clock of server the lock node jumped ?")
        self.assertEqual(faultstyle.client_phrase("client-pause", {"targets": [2]}, dur, True),
                         "resumed from a 1.20 s pause and ")
        self.assertEqual(faultstyle.client_phrase("client-pause", {"targets": [2]}, dur, False),
                         "during pause c2 1.20 s, ")
        self.assertEqual(faultstyle.over("client-pause", {"targets": [2]}, dur), "pause over (client 2 runs again)")
        self.assertEqual(faultstyle.over("server-pause", {"nodes": [1]}, dur), "server pause over")
        # a fault the binary does not list (a foreign history): the generic words
        self.assertEqual(faultstyle.label("mystery", {"x": 1, "targets": [4]}, dur), "mystery x=1 c4")
        self.assertEqual(faultstyle.describe("mystery", {}, dur), "fault mystery was active")
        self.assertEqual(faultstyle.over("mystery", {}, dur), "mystery over")

    def test_a_fault_only_the_binary_knows_gets_its_style_and_words(self):
        binary = self.fake_binary([{"id": "test-dry-run", "description": "x", "client_side": True, "params": [],
                                    "node_control": False,
                                    "style": {"colour": "#123456", "noun": "dry run", "client_row": True},
                                    "label": "dry[ {clients}] {field:level}", "story": "{client_words} rested",
                                    "phrases": {"during": "", "after": "", "over": ""},
                                    "traits": {"kills_client": True}}])
        with mock.patch.dict(os.environ, {"LOCKLAB_BINARY": binary}):
            self.assertEqual(faultstyle.color("test-dry-run"), "#123456")
            self.assertEqual(faultstyle.FAULT_NOUNS.get("test-dry-run"), "dry run")
            self.assertIn("test-dry-run", faultstyle.CLIENT_FAULTS)
            self.assertTrue(faultstyle.trait("test-dry-run", "kills_client"))
            self.assertEqual(faultstyle.label("test-dry-run", {"targets": [1], "level": "low"}, 10**9), "dry c1 low")
            self.assertEqual(faultstyle.describe("test-dry-run", {"targets": [1]}, 10**9), "client 1 rested")

    def test_without_a_binary_or_its_descriptors_the_report_says_so(self):
        older = self.fake_binary([{"id": "client-pause", "description": "x", "client_side": True, "params": [],
                                   "style": {"colour": "#6b6b6b", "noun": "pause", "client_row": True}}])
        for binary, words in ((os.path.join(self.tmp, "no-locklab"), "no locklab binary"),
                              (older, "fault 'client-pause' has no style, label, story and traits")):
            with mock.patch.dict(os.environ, {"LOCKLAB_BINARY": binary}):
                with self.assertRaises(faultstyle.ToolError) as e:
                    faultstyle.label("client-pause", {}, 10**9)
                self.assertIn(words, str(e.exception))
                self.assertNotIn("\n", str(e.exception))


if __name__ == "__main__":
    unittest.main()
