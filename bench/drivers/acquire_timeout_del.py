#!/usr/bin/python3
"""Buggy on purpose (bench/drivers/README.md): an acquire whose SET times out deletes the
key before it retries with a new token ("our SET may have landed: do not leave an orphan
lock behind"), and that DEL removes whoever holds the key.

Why it is realistic: it is the cleanup people add after their first stuck-lock incident,
and it looks careful; it does no harm until a reply is lost (or the node stalls) while
another client holds the key, which never happens in a test with a healthy local Redis.
Class: needs one fault on the path between a client and its node (reply-loss, a short
server-pause or partition). Baseline: examples/drivers/redis_py_lock.py.
"""
import os
import sys
import time
import uuid

import redis
from redis.exceptions import RedisError, TimeoutError as RedisTimeoutError

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
        answer = {"outcome": "fail", "detail": "key held until the deadline"}
        while True:
            token = uuid.uuid4().hex
            try:
                sent = time.monotonic()
                if r.set(req["key"], token, nx=True, px=int(req["ttl_ms"])):
                    return {"outcome": "ok", "token": token, "validity_ms": ld.validity_ms(int(req["ttl_ms"]), sent)}
            except RedisTimeoutError:
                # The bug: "our SET may have landed, so clear it before we try again". The
                # key may be another client's; this deletes it all the same.
                try:
                    r.delete(req["key"])
                except RedisError as e:
                    ld.log("cleanup after a timed-out SET failed: %s" % e)
                answer = {"outcome": "unknown", "detail": "SET timed out until the deadline"}
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

    ld.run("SET NX PX that deletes the key after a timed-out SET", acquire, release,
           errors=errors)


if __name__ == "__main__":
    main()
