#!/usr/bin/python3
"""`locklab driver-check` against a lab redis-server it starts: it passes a correct driver in
a language the lab has no helper for (examples/drivers/c/hiredis_lock), the control of
tests/drivers/conformance_mistakes.py and a driver owning its resource through the Python
helper (resource_toy_driver.py: driver-check's read / work cases), and fails each of that driver's mistakes naming the
case the mistake breaks (exit 1, a line "FAIL CASE: ..."); bad flags exit 64.

Needs the binary (LOCKLAB_BINARY, set by ctest) and a lab redis-server (LOCKLAB_REDIS_SERVER
or .lab/redis). Timing: the correct drivers run with --answer-grace 1s, so a busy machine
that slows an answer by a few hundred ms does not fail them; each mistake is found whatever
the timing (an answer that never comes, a wrong outcome, a line out of protocol).
"""
import concurrent.futures
import os
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BINARY = os.environ.get("LOCKLAB_BINARY", os.path.join(REPO, "build", "locklab"))
MISTAKES_DRIVER = "driver:" + os.path.join(HERE, "conformance_mistakes.py")

# The mistake, and the cases (any one of them) whose failure names it.
MISTAKES = {
    "stdout-noise": {"stdout-protocol-only", "answer-well-formed"},  # depends on when it is read
    "fail-on-timeout": {"server-stopped-unknown"},
    "plain-del": {"release-wrong-token-fails"},
    "ignores-timeout": {"acquire-held-key-fails"},
    "no-exit-on-eof": {"exit-on-stdin-eof"},
    "constant-token": {"tokens-unique"},
    "stateful-release": {"release-from-fresh-driver"},
    "no-ttl": {"paused-holder-expires"},
    "wrong-id": {"answer-well-formed"},
    "point-no-wait": {"point-waits-for-go"},
    "probe-crash": {"hello-under-probe"},
    "silent-release": {"release-owned-ok"},
}

# How a mistake's failures are graded: a release that frees another's lock is unsafe, one
# whose library gives no outcome is not.
GRADES = {"plain-del": "unsafe", "silent-release": "no outcome", "constant-token": "unsafe"}


def driver_check(*args, tmpdir=None):
    env = dict(os.environ)
    if tmpdir:
        env["TMPDIR"] = tmpdir  # a failed check keeps its drivers' logs there
    env.setdefault("LOCKLAB_REDIS_SERVER", os.path.join(REPO, ".lab", "redis", "bin", "redis-server"))
    p = subprocess.run([BINARY, "driver-check", *args], capture_output=True, text=True, timeout=300,
                       env=env, cwd=REPO)
    return p.returncode, p.stdout, p.stderr


def failed_cases(stdout):
    return {line.split(":", 1)[0][len("FAIL "):] for line in stdout.splitlines() if line.startswith("FAIL ")}


class DriverCheckTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Every driver-check at once, a few at a time: each mostly waits (a paused holder's
        # TTL, a stopped server's timeout), so they overlap well on 2 cores.
        runs = {m: ("--lock", MISTAKES_DRIVER, "--driver-arg=--mistake", "--driver-arg=" + m)
                for m in MISTAKES}
        runs["control"] = ("--lock", MISTAKES_DRIVER, "--answer-grace", "1s")
        runs["c"] = ("--lock", "driver:examples/drivers/c/hiredis_lock", "--answer-grace", "1s")
        # The Python helper's read= / work=: a driver that owns its resource.
        runs["resource"] = ("--lock", "driver:" + os.path.join(HERE, "resource_toy_driver.py"),
                            "--answer-grace", "1s", "--verbose")
        with tempfile.TemporaryDirectory(prefix="locklab-driver-check-test-") as tmp:
            with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
                futures = {name: pool.submit(driver_check, *args, tmpdir=tmp) for name, args in runs.items()}
                cls.results = {name: f.result() for name, f in futures.items()}

    def test_correct_drivers_pass(self):
        for name in ("control", "c", "resource"):
            with self.subTest(driver=name):
                rc, out, err = self.results[name]
                self.assertEqual(rc, 0, out + err)
                self.assertIn(" 0 failed", out)
        self.assertIn("ok   resource-read-work", self.results["resource"][1])

    def test_each_mistake_fails_naming_its_case(self):
        for mistake, cases in MISTAKES.items():
            with self.subTest(mistake=mistake):
                rc, out, err = self.results[mistake]
                self.assertEqual(rc, 1, out + err)
                self.assertTrue(failed_cases(out) & cases,
                                "want a FAIL line for one of %s, got:\n%s%s" % (sorted(cases), out, err))

    def test_findings_are_graded_unsafe_apart_from_no_outcome(self):
        for mistake, grade in GRADES.items():
            with self.subTest(mistake=mistake):
                _, out, _ = self.results[mistake]
                grades = {line.split(": ")[1] for line in out.splitlines() if line.startswith("FAIL ")}
                self.assertIn(grade, grades, out)
                self.assertIn("\n%s: " % grade, out, "the grade's one-line meaning: " + out)
        _, silent, _ = self.results["silent-release"]
        self.assertNotIn(": unsafe: ", silent, "a release that reports no outcome is not unsafe: " + silent)

    def test_bad_flags_are_usage_errors(self):
        rc, _, err = driver_check("--lock", "setnx")
        self.assertEqual(rc, 64, err)
        self.assertIn("not a driver:PATH lock", err)
        rc, _, err = driver_check("--lock", "driver:/nonexistent/driver")
        self.assertEqual(rc, 64, err)
        rc, _, err = driver_check()
        self.assertEqual(rc, 64, err)
        rc, _, err = driver_check("--lock", MISTAKES_DRIVER, "--bogus")
        self.assertEqual(rc, 64, err)
        self.assertIn("--bogus", err)


if __name__ == "__main__":
    unittest.main()
