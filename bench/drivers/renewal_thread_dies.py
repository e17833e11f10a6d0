#!/usr/bin/python3
"""Buggy on purpose (bench/drivers/README.md): the driver's one renewal thread has no error
handling, so the first renewal that times out (a lost reply, a short partition) kills the
thread for good, and from then on no lock of this client is renewed: a later critical
section longer than the TTL outlives its key.

Why it is realistic: an exception in a Python thread ends only that thread (a traceback on
stderr, nothing else); the lock keeps granting and releasing, and the loss shows only on a
later long hold, possibly hours after the blip that caused it.
Class: needs two events in one run (a renewal error, then a hold past the TTL).
Baseline: bench/drivers/watchdog_lock.py (the same code, with the try/except).
"""
import os
import sys
import threading
import time
import uuid

import redis
from redis.exceptions import RedisError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples", "drivers"))
import locklab_driver as ld  # noqa: E402
from redis_outcomes import errors, refused  # noqa: E402

RELEASE = """if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1])
else return 0 end"""
EXTEND = """if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2])
else return 0 end"""
TICK_S = 0.01


class Watchdog:
    """The locks this driver holds, (key, token) -> [ttl_ms, next renewal (monotonic)], and
    the one thread that renews them."""

    def __init__(self, r):
        self.r = r
        self.extend = r.register_script(EXTEND)
        self.held = {}
        self.mutex = threading.Lock()
        self.thread = None

    def watch(self, key, token, ttl_ms):
        with self.mutex:
            self.held[(key, token)] = [ttl_ms, time.monotonic() + ttl_ms / 3000.0]
            if self.thread is None:  # started once; nobody looks whether it is still alive
                self.thread = threading.Thread(target=self.loop, name="renewal", daemon=True)
                self.thread.start()

    def forget(self, key, token):
        with self.mutex:
            self.held.pop((key, token), None)

    def due(self):
        now = time.monotonic()
        with self.mutex:
            return [(k, v[0]) for k, v in self.held.items() if v[1] <= now]

    def loop(self):
        while True:
            ld.sleep(TICK_S)
            for (key, token), ttl_ms in self.due():
                # The bug: a RedisError here (a timeout) propagates and ends the thread.
                still_ours = self.extend(keys=[key], args=[token, ttl_ms]) == 1
                with self.mutex:
                    if (key, token) not in self.held:
                        continue
                    if still_ours:
                        self.held[(key, token)][1] = time.monotonic() + ttl_ms / 3000.0
                    else:
                        ld.log("renewal of %s: not ours any more, stopped" % key)
                        del self.held[(key, token)]


def main():
    host, port = ld.NODES[0] if ld.NODES else ("127.0.0.1", 6379)
    r = redis.Redis(host=host, port=port, socket_timeout=ld.COMMAND_TIMEOUT_MS / 1000.0,
                    socket_connect_timeout=ld.CONNECT_TIMEOUT_MS / 1000.0, retry_on_timeout=False)
    release_script = r.register_script(RELEASE)
    watchdog = Watchdog(r)
    sleep_s = ld.RETRY_DELAY_MS / 1000.0

    def acquire(req):
        give_up = req.give_up_at()
        token = uuid.uuid4().hex
        ttl_ms = int(req["ttl_ms"])
        answer = {"outcome": "fail", "detail": "key held until the deadline"}
        while True:
            try:
                sent = time.monotonic()
                if r.set(req["key"], token, nx=True, px=ttl_ms):
                    watchdog.watch(req["key"], token, ttl_ms)
                    return {"outcome": "ok", "token": token, "validity_ms": ld.validity_ms(ttl_ms, sent)}
            except RedisError as e:
                if not refused(e):
                    raise
                answer = {"outcome": "fail", "detail": "connection refused: %s" % e}
            if time.monotonic() + sleep_s > give_up:
                return answer
            ld.sleep(sleep_s)

    def release(req):
        watchdog.forget(req["key"], req["token"])
        if release_script(keys=[req["key"]], args=[req["token"]]) != 1:
            raise ld.Fail("not owned")
        return {"outcome": "ok"}

    ld.run("watchdog whose renewal thread dies on its first error", acquire, release,
           errors=errors)


if __name__ == "__main__":
    main()
