#!/usr/bin/python3
"""locklab lock driver: redis-py's Lock (Debian python3-redis) on the first lab node.

The protocol (docs/driver-protocol.md) is locklab_driver.py's; this file is the lock. It is
redis-py's own: SET NX PX with a random token, a Lua compare-and-delete release, a Lua
owner-checked extend(replace_ttl=True) for renew.

Outcomes: ok / fail as redis-py reports them; a TimeoutError or a connection lost after
sending is `unknown` (the command may have run); a refused connection is a certain failure,
retried until the deadline like a refused SET.

Arguments (--driver-arg): --sleep-ms N  wait between acquire attempts (default
LOCKLAB_RETRY_DELAY_MS).
"""
import argparse
import time
import types

import redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import LockNotOwnedError, RedisError, TimeoutError as RedisTimeoutError

import locklab_driver as ld

# redis-py's Lock sleeps through its module's `mod_time`: under the lab's clock faults
# (libfaketime) Python 3.11's time.sleep() fails with EINVAL (found by the client-clock cell:
# the driver crashed on every retry), so it gets the helper's select()-based sleep.
redis.lock.mod_time = types.SimpleNamespace(sleep=ld.sleep, monotonic=time.monotonic, time=time.time)


def refused(e):
    # redis-py says "Error 111 connecting to host:port. Connection refused." when the
    # connect itself failed: nothing was sent.
    return isinstance(e, RedisConnectionError) and not isinstance(e, RedisTimeoutError) \
        and "connecting to" in str(e)


def errors(e):
    if not isinstance(e, RedisError):
        return None
    if refused(e):
        return {"outcome": "fail", "detail": "connection refused: %s" % e}
    return {"outcome": "unknown", "detail": "%s: %s" % (type(e).__name__, e)}


def main():
    ap = argparse.ArgumentParser(prog="redis_py_lock.py")
    ap.add_argument("--sleep-ms", type=int, default=ld.RETRY_DELAY_MS)
    args = ap.parse_args()
    sleep_s = args.sleep_ms / 1000.0
    host, port = ld.NODES[0]
    r = redis.Redis(host=host, port=port, socket_timeout=ld.COMMAND_TIMEOUT_MS / 1000.0,
                    socket_connect_timeout=ld.CONNECT_TIMEOUT_MS / 1000.0, retry_on_timeout=False)

    def acquire(req):
        give_up = req.give_up_at()  # one command timeout before the deadline
        answer = {"outcome": "fail", "detail": "key held until the deadline"}
        while True:
            lock = r.lock(req["key"], timeout=req.ttl_s, sleep=sleep_s, blocking=True,
                          blocking_timeout=max(0.0, give_up - time.monotonic()),
                          thread_local=False)
            try:
                if lock.acquire():
                    answer = {"outcome": "ok", "token": lock.local.token.decode(),
                              "validity_ms": int(req.ttl_s * 1000)}
                return answer
            except RedisError as e:
                if not refused(e):
                    raise
                answer = {"outcome": "fail", "detail": "connection refused: %s" % e}
                if time.monotonic() + sleep_s > give_up:
                    return answer
                ld.sleep(sleep_s)

    def owned(req):
        lock = r.lock(req["key"], timeout=req.ttl_s, thread_local=False)
        lock.local.token = req["token"].encode()
        return lock

    def release(req):
        try:
            owned(req).release()
        except LockNotOwnedError as e:
            raise ld.Fail("not owned: %s" % e)
        return {"outcome": "ok"}

    def renew(req):
        try:
            owned(req).extend(req.ttl_s, replace_ttl=True)
        except LockNotOwnedError as e:
            raise ld.Fail("not owned: %s" % e)
        return {"outcome": "ok", "validity_ms": int(req.ttl_s * 1000)}

    ld.run("redis-py %s Lock" % redis.__version__, acquire, release, renew, errors=errors)


if __name__ == "__main__":
    main()
