#!/usr/bin/python3
"""Buggy on purpose (bench/drivers/README.md): the SETNX/GETSET lock whose value is its
expiry time on the client's wall clock: a waiter whose clock is ahead (a clock step, NTP
slewing after a suspend) sees a live lock as expired and takes it over with GETSET.

Why it is realistic: it is the "handling deadlocks" recipe the Redis SETNX page long
documented, and ports of it still ship; with clients whose clocks agree it is safe, and
nothing in a test on one machine makes them disagree.
Class: clock-related (needs a client clock step). Baseline: examples/drivers/redis_py_lock.py
(whose correctness rests on the node's TTL, not on any client's clock).

The value is "EXPIRY_MS:RANDOM" (the random part keeps tokens unique when two clients
compute the same expiry); the key has no TTL of its own, as in the recipe: expiry is decided
by the clients' clocks alone. validity_ms is what the recipe believes: expiry minus now.
Release is a Lua compare-and-delete.
"""
import os
import sys
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


def now_ms():
    return int(time.time() * 1000)  # the client's wall clock: the recipe's only clock


def expiry_of(value):
    try:
        return int(value.split(b":", 1)[0])
    except (ValueError, AttributeError):
        return 0


def main():
    host, port = ld.NODES[0] if ld.NODES else ("127.0.0.1", 6379)
    r = redis.Redis(host=host, port=port, socket_timeout=ld.COMMAND_TIMEOUT_MS / 1000.0,
                    socket_connect_timeout=ld.CONNECT_TIMEOUT_MS / 1000.0, retry_on_timeout=False)
    release_script = r.register_script(RELEASE)
    sleep_s = ld.RETRY_DELAY_MS / 1000.0

    def acquire(req):
        give_up = req.give_up_at()
        ttl_ms = int(req["ttl_ms"])
        answer = {"outcome": "fail", "detail": "key held until the deadline"}
        while True:
            expiry = now_ms() + ttl_ms + 1
            value = "%d:%s" % (expiry, uuid.uuid4().hex)
            granted = {"outcome": "ok", "token": value}
            try:
                if r.setnx(req["key"], value):
                    granted["validity_ms"] = max(0, expiry - now_ms())
                    return granted
                current = r.get(req["key"])
                # The bug: "expired" is judged on this client's wall clock.
                if current is not None and expiry_of(current) < now_ms():
                    old = r.getset(req["key"], value)
                    if old is None or expiry_of(old) < now_ms():
                        granted["validity_ms"] = max(0, expiry - now_ms())
                        return granted
            except RedisError as e:
                if not refused(e):
                    raise
                answer = {"outcome": "fail", "detail": "connection refused: %s" % e}
            if time.monotonic() + sleep_s > give_up:
                return answer
            ld.sleep(sleep_s)

    def release(req):
        if release_script(keys=[req["key"]], args=[req["token"]]) != 1:
            raise ld.Fail("not owned")
        return {"outcome": "ok"}

    ld.run("SETNX/GETSET lock with wall-clock expiry in the value", acquire, release,
           errors=errors)


if __name__ == "__main__":
    main()
