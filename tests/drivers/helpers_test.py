#!/usr/bin/python3
"""The driver helpers (examples/drivers/locklab_driver.py and .js) through a toy driver of
each (tests/drivers/toy_helper_driver.*, an in-memory lock): hello, dispatch, answers in
order with their id, Fail / Unknown / other exceptions / the errors mapping, unknown ops,
unreadable lines, request timing, EOF. No server needed."""
import json
import os
import shutil
import subprocess
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVERS = {"python": os.path.join(HERE, "toy_helper_driver.py"),
           "node": os.path.join(HERE, "toy_helper_driver.js")}


def req(i, op, key, **kw):
    return json.dumps(dict(id=i, op=op, key=key, timeout_ms=kw.pop("timeout_ms", 2000), **kw))


class HelperTest(unittest.TestCase):
    def session(self, lang, lines, args=()):
        env = dict(os.environ, LOCKLAB_NODES="127.0.0.1:1", LOCKLAB_PROCESS="7",
                   LOCKLAB_COMMAND_TIMEOUT_MS="300")
        p = subprocess.run([DRIVERS[lang], *args], input="\n".join(lines) + "\n", env=env,
                           capture_output=True, text=True, timeout=30)
        return p.returncode, p.stdout.splitlines(), p.stderr

    def each(self):
        for lang in DRIVERS:
            if lang == "node" and shutil.which("node") is None:
                continue
            with self.subTest(lang=lang):
                yield lang

    def test_a_session_is_answered_in_order_with_each_outcome(self):
        for lang in self.each():
            lines = [
                req(1, "acquire", "slow:200", ttl_ms=1000),  # answered before the next one
                req(2, "acquire", "slow:200", ttl_ms=1000),
                "",
                "this is not json",
                req(3, "release", "slow:200", token="wrong"),
                req(4, "acquire", "raise:fail", ttl_ms=1000),
                req(5, "acquire", "raise:unknown", ttl_ms=1000),
                req(6, "acquire", "raise:mapped", ttl_ms=1000),
                req(7, "acquire", "raise:other", ttl_ms=1000),
                req(8, "frobnicate", "k"),
                req(9, "renew", "slow:200", token="x", ttl_ms=1000),
                req(10, "acquire", "times", ttl_ms=1000, timeout_ms=1000),
            ]
            rc, out, err = self.session(lang, lines)
            self.assertEqual(rc, 0, err)
            hello = json.loads(out[0])
            self.assertEqual(hello, {"hello": "locklab-driver", "protocol": 1, "renew": True,
                                     "name": "toy"})
            answers = [json.loads(x) for x in out[1:]]
            self.assertEqual([a["id"] for a in answers], list(range(1, 11)), out)
            a = {x["id"]: x for x in answers}
            self.assertEqual(a[1]["outcome"], "ok")
            self.assertTrue(a[1]["token"])
            self.assertEqual(a[1]["validity_ms"], 1000)
            self.assertEqual(a[2], {"id": 2, "outcome": "fail", "detail": "held"})
            self.assertEqual(a[3], {"id": 3, "outcome": "fail", "detail": "not owned"})
            self.assertEqual(a[4], {"id": 4, "outcome": "fail", "detail": "refused on purpose"})
            self.assertEqual(a[5], {"id": 5, "outcome": "unknown", "detail": "lost on purpose"})
            self.assertEqual(a[6]["outcome"], "fail")
            self.assertIn("mapped: ", a[6]["detail"])
            self.assertEqual(a[7]["outcome"], "unknown")
            self.assertIn("broken on purpose", a[7]["detail"])
            self.assertEqual(a[8]["outcome"], "fail")
            self.assertIn("unknown op", a[8]["detail"])
            self.assertEqual(a[9], {"id": 9, "outcome": "ok"})
            # timeout_ms 1000: the deadline is 1 s after the read, give-up 300 + 20 ms before.
            self.assertEqual(a[10]["detail"], "1.000 0.320")
            # The answer's id where each example driver always put it.
            if lang == "python":
                self.assertTrue(out[1].endswith(',"id":1}'), out[1])
            else:
                self.assertTrue(out[1].startswith('{"id":1,'), out[1])
            self.assertIn("bad request", err)
            self.assertIn("toy_helper_driver[7]: stdin closed: exiting", err)
            self.assertIn("on_close called", err)

    def test_hello_without_renew_and_renew_is_then_an_unknown_op(self):
        for lang in self.each():
            rc, out, err = self.session(lang, [req(1, "renew", "k", token="t", ttl_ms=1000)],
                                        ["--no-renew"])
            self.assertEqual(rc, 0, err)
            self.assertIs(json.loads(out[0])["renew"], False)
            self.assertEqual(json.loads(out[1])["outcome"], "fail")
            self.assertIn("unknown op", json.loads(out[1])["detail"])

    def test_eof_right_after_the_hello_exits_cleanly(self):
        for lang in self.each():
            env = dict(os.environ, LOCKLAB_NODES="127.0.0.1:1")
            p = subprocess.run([DRIVERS[lang]], input="", env=env, capture_output=True,
                               text=True, timeout=30)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(len(p.stdout.splitlines()), 1)


if __name__ == "__main__":
    unittest.main()


# Pause points: a driver of a few lines per language, with ttl_ms and points in
# its hello and a point between two steps of its acquire.
POINT_DRIVERS = {
    "python": ("#!/usr/bin/python3\n"
               "import sys\n"
               "sys.path.insert(0, %r)\n"
               "import locklab_driver as ld\n"
               "def acquire(req):\n"
               "    ld.point('mid')\n"
               "    return {'outcome': 'ok', 'token': 't'}\n"
               "ld.run('pt', acquire, lambda req: {'outcome': 'ok'}, ttl_ms=700, points=['mid'])\n"),
    "node": ("#!/usr/bin/env node\n"
             "const ld = require(%r + '/locklab_driver.js');\n"
             "ld.run({ name: 'pt', ttlMs: 700, points: ['mid'],\n"
             "  acquire: async () => { await ld.point('mid'); return { outcome: 'ok', token: 't' }; },\n"
             "  release: async () => ({ outcome: 'ok' }) });\n"),
}


class PointTest(unittest.TestCase):
    each = HelperTest.each

    def test_point_waits_for_go_and_the_hello_declares_ttl_and_points(self):
        import tempfile
        examples = os.path.join(HERE, "..", "..", "examples", "drivers")
        examples = os.path.abspath(examples)
        for lang in self.each():
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "pt")
                with open(path, "w") as f:
                    f.write(POINT_DRIVERS[lang] % examples)
                os.chmod(path, 0o755)
                p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
                try:
                    hello = json.loads(p.stdout.readline())
                    self.assertEqual(hello["ttl_ms"], 700)
                    self.assertEqual(hello["points"], ["mid"])
                    p.stdin.write(req(1, "acquire", "k", ttl_ms=500) + "\n")
                    p.stdin.flush()
                    self.assertEqual(json.loads(p.stdout.readline()), {"point": "mid"})
                    p.stdin.write(json.dumps({"point": "mid", "go": True}) + "\n")
                    p.stdin.flush()
                    answer = json.loads(p.stdout.readline())
                    self.assertEqual((answer["id"], answer["outcome"]), (1, "ok"))
                    # EOF while waiting at a point: the operation is unknown, the driver exits.
                    p.stdin.write(req(2, "acquire", "k", ttl_ms=500) + "\n")
                    p.stdin.flush()
                    self.assertEqual(json.loads(p.stdout.readline()), {"point": "mid"})
                    p.stdin.close()
                    answer = json.loads(p.stdout.readline())
                    self.assertEqual((answer["id"], answer["outcome"]), (2, "unknown"))
                    self.assertIn("stdin closed at point mid", answer["detail"])
                    self.assertEqual(p.wait(timeout=10), 0)
                finally:
                    if p.poll() is None:
                        p.kill()
                        p.wait()
                    p.stdout.close()
                    p.stderr.close()
