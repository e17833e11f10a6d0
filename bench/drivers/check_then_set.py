#!/usr/bin/python3
"""Buggy on purpose (bench/drivers/README.md): acquire looks before it leaps, GET then a SET
PX without NX, so two clients that both see the key free both take it.

Why it is realistic: "if r.get(key) is None: r.set(key, token, px=ttl)" is the lock most
people write first, it reads as correct, and it passes every test with one client or with
clients that take turns; the window between the GET's reply and the SET is one round trip.
Class: fails under plain contention, no fault needed. Baseline: examples/drivers/redis_py_lock.py.

Everything else is the baseline's: an owner token, a Lua compare-and-delete release,
retries until the deadline, timeouts answered `unknown`.
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


def main():
    host, port = ld.NODES[0] if ld.NODES else ("127.0.0.1", 6379)
    r = redis.Redis(host=host, port=port, socket_timeout=ld.COMMAND_TIMEOUT_MS / 1000.0,
                    socket_connect_timeout=ld.CONNECT_TIMEOUT_MS / 1000.0, retry_on_timeout=False)
    release_script = r.register_script(RELEASE)
    sleep_s = ld.RETRY_DELAY_MS / 1000.0

    def acquire(req):
        give_up = req.give_up_at()
        token = uuid.uuid4().hex
        answer = {"outcome": "fail", "detail": "key held until the deadline"}
        while True:
            try:
                if r.get(req["key"]) is None:
                    # The bug: no NX. Another client may have set the key since our GET.
                    sent = time.monotonic()
                    r.set(req["key"], token, px=int(req["ttl_ms"]))
                    return {"outcome": "ok", "token": token, "validity_ms": ld.validity_ms(int(req["ttl_ms"]), sent)}
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

    ld.run("check-then-set (GET, then SET PX without NX)", acquire, release, errors=errors)


if __name__ == "__main__":
    main()
