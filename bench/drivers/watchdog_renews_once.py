#!/usr/bin/python3
"""Buggy on purpose (bench/drivers/README.md): the watchdog schedules each lock's renewal with
a one-shot timer, so a lock is extended once, TTL/3 after the acquire, and never again: a
critical section longer than 4/3 of the TTL outlives its key.

Why it is realistic: threading.Timer (like setTimeout, or Java's schedule() next to
scheduleAtFixedRate()) runs once; the author meant a periodic renewal, and every test with a
critical section shorter than the TTL, or just past it, passes.
Class: fails when a critical section outlasts the TTL (a slow critical section, no network
fault). Baseline: bench/drivers/watchdog_lock.py.

The timer is hand-rolled on ld.sleep (threading.Timer's wait misbehaves under the lab's
clock faults, libfaketime); it runs once just as threading.Timer does.
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


class Timer(threading.Thread):
    """threading.Timer on ld.sleep: calls fn once after delay_s unless cancelled."""

    def __init__(self, delay_s, fn):
        super().__init__(daemon=True)
        self.delay_s, self.fn, self.cancelled = delay_s, fn, False

    def cancel(self):
        self.cancelled = True

    def run(self):
        ld.sleep(self.delay_s)
        if not self.cancelled:
            self.fn()


def main():
    host, port = ld.NODES[0] if ld.NODES else ("127.0.0.1", 6379)
    r = redis.Redis(host=host, port=port, socket_timeout=ld.COMMAND_TIMEOUT_MS / 1000.0,
                    socket_connect_timeout=ld.CONNECT_TIMEOUT_MS / 1000.0, retry_on_timeout=False)
    release_script = r.register_script(RELEASE)
    extend_script = r.register_script(EXTEND)
    timers = {}  # (key, token) -> the renewal Timer of that lock
    sleep_s = ld.RETRY_DELAY_MS / 1000.0

    def start_renewal(key, token, ttl_ms):
        def renew():
            try:
                if extend_script(keys=[key], args=[token, ttl_ms]) != 1:
                    ld.log("renewal of %s: not ours any more" % key)
            except RedisError as e:
                ld.log("renewal of %s failed: %s" % (key, e))
            # The bug: the timer is not started again, so this was the only renewal.
        t = Timer(ttl_ms / 3000.0, renew)
        timers[(key, token)] = t
        t.start()

    def acquire(req):
        give_up = req.give_up_at()
        token = uuid.uuid4().hex
        ttl_ms = int(req["ttl_ms"])
        answer = {"outcome": "fail", "detail": "key held until the deadline"}
        while True:
            try:
                sent = time.monotonic()
                if r.set(req["key"], token, nx=True, px=ttl_ms):
                    start_renewal(req["key"], token, ttl_ms)
                    return {"outcome": "ok", "token": token, "validity_ms": ld.validity_ms(ttl_ms, sent)}
            except RedisError as e:
                if not refused(e):
                    raise
                answer = {"outcome": "fail", "detail": "connection refused: %s" % e}
            if time.monotonic() + sleep_s > give_up:
                return answer
            ld.sleep(sleep_s)

    def release(req):
        t = timers.pop((req["key"], req["token"]), None)
        if t is not None:
            t.cancel()
        if release_script(keys=[req["key"]], args=[req["token"]]) != 1:
            raise ld.Fail("not owned")
        return {"outcome": "ok"}

    ld.run("watchdog with a one-shot renewal timer", acquire, release, errors=errors)


if __name__ == "__main__":
    main()
