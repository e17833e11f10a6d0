#!/usr/bin/python3
"""Buggy on purpose (bench/drivers/README.md): the watchdog's renewal passes the TTL in
seconds to PEXPIRE, which takes milliseconds, so the first renewal (TTL/3 into a hold)
leaves the key 0 or 1 ms to live instead of a TTL: a critical section longer than a third
of the TTL loses its lock.

Why it is realistic: lease times are configured in seconds in one place and milliseconds in
another (EXPIRE next to PEXPIRE, Redisson's lockWatchdogTimeout in ms), and every test whose
critical section is shorter than the renewal period passes; the default 50 ms hold never
renews at all.
Class: fails when a critical section outlasts the TTL (here a third of it; no network
fault). Baseline: bench/drivers/watchdog_lock.py (the same code, in milliseconds).
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
TICK_S = 0.01  # how often the renewal thread looks for a renewal that is due


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
            if self.thread is None or not self.thread.is_alive():
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
                try:
                    # The bug: the TTL in seconds, where PEXPIRE wants milliseconds.
                    still_ours = self.extend(keys=[key], args=[token, ttl_ms // 1000]) == 1
                except RedisError as e:
                    # Unknown or refused: the key may still be ours; try again at the next tick
                    # rather than give up on a lock that has most of its TTL left.
                    ld.log("renewal of %s failed (%s: %s); retrying" % (key, type(e).__name__, e))
                    with self.mutex:
                        if (key, token) in self.held:
                            self.held[(key, token)][1] = time.monotonic() + ttl_ms / 6000.0
                    continue
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

    ld.run("watchdog whose renewal gives PEXPIRE seconds", acquire, release, errors=errors)


if __name__ == "__main__":
    main()
