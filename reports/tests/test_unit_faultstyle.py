"""A fault's colour, noun and client row come from its descriptor, through `locklab list --json`
(faults/fault_descriptor.h): the report keeps no table of its own but a fallback for when no
binary answers, and that fallback must say what the binary says."""

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

    def test_styles_are_the_binarys_and_the_fallback_matches_them(self):
        binary = runfiles.locklab_binary()
        self.assertIsNotNone(binary, "no locklab binary (CTest sets LOCKLAB_BINARY)")
        self.assertEqual(faultstyle.style_source(), "locklab list --json")
        from_binary = faultstyle.styles()
        self.assertEqual(from_binary, faultstyle._FALLBACK_STYLES,
                         "reports/faultstyle.py's fallback table differs from the descriptors' styles")
        self.assertEqual(faultstyle.color("client-pause"), from_binary["client-pause"][0])
        self.assertEqual(faultstyle.FAULT_NOUNS["slow-cs"], "slow critical section")
        self.assertIn("delay", faultstyle.CLIENT_FAULTS)
        self.assertNotIn("partition", faultstyle.CLIENT_FAULTS)
        self.assertEqual(faultstyle.color("no-such-fault"), faultstyle.DEFAULT_COLOR)

    def test_a_fault_only_the_binary_knows_gets_its_style(self):
        binary = self.fake_binary([{"id": "test-dry-run", "description": "x", "client_side": True, "params": [],
                                    "node_control": False,
                                    "style": {"colour": "#123456", "noun": "dry run", "client_row": True}}])
        with mock.patch.dict(os.environ, {"LOCKLAB_BINARY": binary}):
            self.assertEqual(faultstyle.style_source(), "locklab list --json")
            self.assertEqual(faultstyle.color("test-dry-run"), "#123456")
            self.assertEqual(faultstyle.FAULT_NOUNS.get("test-dry-run"), "dry run")
            self.assertIn("test-dry-run", faultstyle.CLIENT_FAULTS)

    def test_without_a_binary_or_its_styles_the_fallback_answers(self):
        older = self.fake_binary([{"id": "client-pause", "description": "x", "client_side": True, "params": []}])
        for binary in (os.path.join(self.tmp, "no-locklab"), older):
            with mock.patch.dict(os.environ, {"LOCKLAB_BINARY": binary}):
                self.assertEqual(faultstyle.style_source(), "fallback", binary)
                self.assertEqual(faultstyle.color("client-pause"), "#6b6b6b")
                self.assertEqual(faultstyle.FAULT_NOUNS["partition"], "partition")
                self.assertIn("client-crash", faultstyle.CLIENT_FAULTS)


if __name__ == "__main__":
    unittest.main()
