#!/usr/bin/python3
"""A lock driver that owns its resource, through the Python helper's read= and work=: SET NX PX
with a fence from INCR, and a resource that is a Redis hash (value, version) on the same node,
written only when the request's fence is not older than its version. For driver-check's
resource cases (tests/drivers/driver_check_test.py); docs/driver-protocol.md, "Your own
resource"."""
import os
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "drivers"))

import redis  # noqa: E402

import locklab_driver as ld  # noqa: E402

RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
# KEYS[1] the hash; ARGV value, fence: {1, value, version} written, {0, value, version} refused.
WORK = ("local v = tonumber(redis.call('hget', KEYS[1], 'version') or '-1') "
        "if tonumber(ARGV[2]) < v then return {0, redis.call('hget', KEYS[1], 'value'), v} end "
        "redis.call('hset', KEYS[1], 'value', ARGV[1], 'version', ARGV[2]) "
        "return {1, tonumber(ARGV[1]), tonumber(ARGV[2])}")


def main():
    host, port = ld.NODES[0]
    r = redis.Redis(host=host, port=port, socket_timeout=ld.COMMAND_TIMEOUT_MS / 1000.0,
                    socket_connect_timeout=ld.CONNECT_TIMEOUT_MS / 1000.0)

    def errors(e):
        return {"outcome": "unknown", "detail": "%s: %s" % (type(e).__name__, e)}

    def acquire(req):
        token = uuid.uuid4().hex
        while True:
            if r.set(req["key"], token, nx=True, px=req["ttl_ms"]):
                return {"outcome": "ok", "token": token, "fence": r.incr("fence:" + req["key"])}
            if time.monotonic() + ld.RETRY_DELAY_MS / 1000 > req.give_up_at():
                return {"outcome": "fail", "detail": "key held until the deadline"}
            ld.sleep(ld.RETRY_DELAY_MS / 1000)

    def release(req):
        if r.eval(RELEASE, 1, req["key"], req["token"]):
            return {"outcome": "ok"}
        raise ld.Fail("not owned")

    def read(req):
        v = r.hget("res:" + req["key"], "value")
        return {"outcome": "ok", "value": None if v is None else int(v)}

    def work(req):
        done, value, version = r.eval(WORK, 1, "res:" + req["key"], req["value"], req.get("fence", 0))
        if done:
            return {"outcome": "ok", "value": int(value), "fence": int(version)}
        return {"outcome": "fail", "stale": True, "newest": int(version), "detail": "older fence"}

    ld.run("resource toy", acquire, release, errors=errors, read=read, work=work)


if __name__ == "__main__":
    main()
