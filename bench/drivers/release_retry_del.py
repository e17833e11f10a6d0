#!/usr/bin/python3
"""Buggy on purpose (bench/drivers/README.md): a release whose compare-and-delete times out
falls back to a plain DEL ("the script may not have run: make sure the key is gone"), which
deletes the next holder's key when the script had run and its reply was lost.

Why it is realistic: the fallback reads as defensive (retrying the compare-and-delete
would answer "not owned" after a lost reply, which looks like an error), and a release's
reply is lost only in a rare network blip, exactly between the script and the next acquire.
Class: a release-path bug that needs a lost reply at the right moment (reply-loss over a
release while another client waits for the key). Baseline: examples/drivers/redis_py_lock.py.
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
        token = uuid.uuid4().hex
        answer = {"outcome": "fail", "detail": "key held until the deadline"}
        while True:
            try:
                sent = time.monotonic()
                if r.set(req["key"], token, nx=True, px=int(req["ttl_ms"])):
                    return {"outcome": "ok", "token": token, "validity_ms": ld.validity_ms(int(req["ttl_ms"]), sent)}
            except RedisError as e:
                if not refused(e):
                    raise
                answer = {"outcome": "fail", "detail": "connection refused: %s" % e}
            if time.monotonic() + sleep_s > give_up:
                return answer
            ld.sleep(sleep_s)

    def release(req):
        try:
            if release_script(keys=[req["key"]], args=[req["token"]]) != 1:
                raise ld.Fail("not owned")
        except RedisTimeoutError:
            # The bug: after an unknown outcome, delete the key whoever holds it now.
            ld.log("release of %s timed out; deleting the key to be sure" % req["key"])
            r.delete(req["key"])
        return {"outcome": "ok"}

    ld.run("SET NX PX whose timed-out release falls back to DEL", acquire, release,
           errors=errors)


if __name__ == "__main__":
    main()
