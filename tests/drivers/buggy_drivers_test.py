#!/usr/bin/python3
"""The benchmark drivers of bench/drivers/ (bench/drivers/README.md) speak the driver protocol
(docs/driver-protocol.md) and are the locks bench/driver_score says they are.

Each driver, against a redis-server this test starts: a hello that announces no pause points
and renew false (they are black boxes that renew on their own, if at all); an acquire ok with
a token; a second driver's acquire of the held key answered fail by its deadline; the
holder's release ok and a repeated release fail; exit 0 on EOF. Without a server (no
LOCKLAB_REDIS_SERVER, no .lab/redis, no redis-server on PATH) only the hello and an answer
to an acquire are checked. Also: every driver file is in bench/driver_score's tables, and
the renewal baseline keeps a lock past its TTL where the one-shot renewal loses it.
"""
import importlib.machinery
import importlib.util
import json
import os
import select
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DRIVERS_DIR = os.path.join(REPO, "bench", "drivers")
# Every program of the folder (the shared module redis_outcomes.py is not one: it is imported).
DRIVERS = sorted(f for f in os.listdir(DRIVERS_DIR) if f.endswith(".py") and f != "redis_outcomes.py")


def load_score():
    loader = importlib.machinery.SourceFileLoader("driver_score",
                                                  os.path.join(REPO, "bench", "driver_score"))
    spec = importlib.util.spec_from_loader("driver_score", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def redis_server_binary():
    for candidate in (os.environ.get("LOCKLAB_REDIS_SERVER"),
                      os.path.join(REPO, ".lab", "redis", "bin", "redis-server"),
                      shutil.which("redis-server")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Driver:
    """One driver process and its protocol lines."""

    def __init__(self, name, port):
        env = dict(os.environ, LOCKLAB_NODES="127.0.0.1:%d" % port, LOCKLAB_PROCESS="1",
                   LOCKLAB_TTL_MS="1000", LOCKLAB_COMMAND_TIMEOUT_MS="200",
                   LOCKLAB_RETRY_DELAY_MS="20", LOCKLAB_DRIVER_PROTOCOL="1")
        self.name = name
        self.p = subprocess.Popen([os.path.join(DRIVERS_DIR, name)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                  text=True, bufsize=1)
        self.next_id = 1

    def line(self, timeout_s=10):
        ready, _, _ = select.select([self.p.stdout], [], [], timeout_s)
        if not ready:
            raise AssertionError("%s: no line within %.0f s" % (self.name, timeout_s))
        raw = self.p.stdout.readline()
        if not raw:
            raise AssertionError("%s: stdout closed; stderr: %s" % (self.name, self.p.stderr.read()))
        return json.loads(raw)

    def ask(self, op, key, **fields):
        rid = self.next_id
        self.next_id += 1
        req = dict(id=rid, op=op, key=key, timeout_ms=fields.pop("timeout_ms", 2000), **fields)
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        answer = self.line()
        if answer.get("id") != rid:
            raise AssertionError("%s: answer %r to request %d" % (self.name, answer, rid))
        return answer

    def close(self):
        self.p.stdin.close()
        rc = self.p.wait(timeout=10)
        self.p.stdout.close()
        self.p.stderr.close()
        return rc


class BuggyDriversTest(unittest.TestCase):
    server = None

    @classmethod
    def setUpClass(cls):
        binary = redis_server_binary()
        cls.port = free_port()
        if binary is None:
            return
        cls.dir = tempfile.mkdtemp(prefix="buggy-drivers-test-")
        cls.server = subprocess.Popen([binary, "--port", str(cls.port), "--bind", "127.0.0.1",
                                       "--save", "", "--appendonly", "no", "--dir", cls.dir],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", cls.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("redis-server %s did not answer on port %d" % (binary, cls.port))

    @classmethod
    def tearDownClass(cls):
        if cls.server is not None:
            cls.server.kill()
            cls.server.wait()
            shutil.rmtree(cls.dir, ignore_errors=True)

    def test_every_driver_is_scored_and_states_its_bug(self):
        score = load_score()
        scored = {n + ".py" for n in score.BUGGY} | {os.path.basename(c) for c in score.CORRECT
                                                     if c.startswith("bench/drivers/")}
        self.assertEqual(scored, set(DRIVERS))
        for baseline in [b for _, b, _ in score.BUGGY.values()] + score.CORRECT:
            self.assertTrue(os.access(os.path.join(REPO, baseline), os.X_OK), baseline)
        self.assertGreaterEqual(len(score.BUGGY), 6)
        for name in DRIVERS:
            with open(os.path.join(DRIVERS_DIR, name)) as f:
                text = f.read()
            self.assertTrue(text.startswith("#!/usr/bin/python3\n"), name)
            # The protocol helper, imported directly or through the sibling it varies.
            siblings = [m for m in DRIVERS if "import %s " % m[:-3] in text + " "
                        or "import %s\n" % m[:-3] in text]
            self.assertTrue("import locklab_driver as ld" in text or any(
                "import locklab_driver as ld" in open(os.path.join(DRIVERS_DIR, m)).read()
                for m in siblings), name)
            self.assertIn("Baseline:" if name[:-3] in score.BUGGY else "CORRECT", text, name)

    def test_each_driver_says_hello_without_points_and_answers_by_id(self):
        for name in DRIVERS:
            with self.subTest(driver=name):
                port = self.port if self.server is not None else free_port()
                d = Driver(name, port)
                hello = d.line()
                self.assertEqual(hello["hello"], "locklab-driver")
                self.assertEqual(hello["protocol"], 1)
                self.assertIs(hello["renew"], False)
                self.assertNotIn("points", hello)
                self.assertTrue(hello.get("name"))
                a = d.ask("acquire", "hello:" + name, ttl_ms=1000, timeout_ms=600)
                self.assertIn(a["outcome"], ("ok", "fail", "unknown"))
                if a["outcome"] == "ok":
                    self.assertTrue(a["token"])
                    self.assertEqual(d.ask("release", "hello:" + name, token=a["token"])["outcome"], "ok")
                self.assertEqual(d.ask("frobnicate", "k")["outcome"], "fail")
                self.assertEqual(d.close(), 0)

    def test_each_driver_is_a_lock_when_nothing_goes_wrong(self):
        if self.server is None:
            self.skipTest("no redis-server (LOCKLAB_REDIS_SERVER, .lab/redis, PATH)")
        for name in DRIVERS:
            with self.subTest(driver=name):
                key = "lock:" + name
                holder, waiter = Driver(name, self.port), Driver(name, self.port)
                holder.line(), waiter.line()
                got = holder.ask("acquire", key, ttl_ms=5000)
                self.assertEqual(got["outcome"], "ok", got)
                self.assertGreater(got["validity_ms"], 0)
                started = time.monotonic()
                refused = waiter.ask("acquire", key, ttl_ms=5000, timeout_ms=500)
                self.assertEqual(refused["outcome"], "fail", refused)
                # In time: it stops retrying before the deadline (slack for a busy machine).
                self.assertLess(time.monotonic() - started, 3.0)
                self.assertEqual(holder.ask("release", key, token=got["token"])["outcome"], "ok")
                again = holder.ask("release", key, token=got["token"])
                self.assertEqual(again["outcome"], "fail", again)
                # A driver that did not acquire releases from the key and token alone.
                second = waiter.ask("acquire", key, ttl_ms=5000)
                self.assertEqual(second["outcome"], "ok", second)
                self.assertEqual(holder.ask("release", key, token=second["token"])["outcome"], "ok")
                self.assertEqual(holder.close(), 0)
                self.assertEqual(waiter.close(), 0)

    def test_the_renewal_baseline_keeps_a_lock_the_one_shot_renewal_loses(self):
        if self.server is None:
            self.skipTest("no redis-server (LOCKLAB_REDIS_SERVER, .lab/redis, PATH)")
        # TTL 300 ms, held 1.2 s (4 TTLs): renewed every 100 ms the key lives on; renewed
        # once, at 100 ms, it is gone by 400 ms. Wide margins for a busy machine.
        kept = {}
        for name in ("watchdog_lock.py", "watchdog_renews_once.py"):
            key = "renewal:" + name
            holder, waiter = Driver(name, self.port), Driver(name, self.port)
            holder.line(), waiter.line()
            got = holder.ask("acquire", key, ttl_ms=300)
            self.assertEqual(got["outcome"], "ok", got)
            time.sleep(1.2)
            kept[name] = waiter.ask("acquire", key, ttl_ms=300, timeout_ms=250)["outcome"] == "fail"
            holder.ask("release", key, token=got["token"])
            holder.close(), waiter.close()
        self.assertEqual(kept, {"watchdog_lock.py": True, "watchdog_renews_once.py": False})


if __name__ == "__main__":
    unittest.main()
