#!/usr/bin/python3
"""A lock driver with one deliberate protocol mistake each, for `locklab driver-check`
(tests/drivers/driver_check_test.py): --mistake NAME picks it. Without one it is a correct
redis-py SET NX PX lock (the control). Each mistake is one a team's first driver makes:

  stdout-noise        prints a debug line on stdout after an answer (stdout is protocol only)
  fail-on-timeout     answers a timeout `fail` (it may have taken effect: unknown)
  plain-del           releases with a plain DEL, whoever holds the key
  ignores-timeout     retries acquire until the key is free, past the request's timeout_ms
  no-exit-on-eof      keeps running after its stdin closed
  constant-token      writes the same token on every acquire
  stateful-release    releases only locks this process acquired (a restarted driver cannot)
  no-ttl              SET NX without PX: a stopped holder's lock never expires
  wrong-id            answers a release with another id
  point-no-wait       announces a pause point and goes on past it without waiting for the go
  probe-crash         exits before its hello when started only for the hello (LOCKLAB_PROBE)
  silent-release      releases, then answers `unknown`: its library reports no outcome
"""
import argparse
import os
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "drivers"))

import redis  # noqa: E402
from redis.exceptions import ConnectionError as RedisConnectionError  # noqa: E402
from redis.exceptions import RedisError, TimeoutError as RedisTimeoutError  # noqa: E402

import locklab_driver as ld  # noqa: E402

RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
RENEW = ("if redis.call('get', KEYS[1]) == ARGV[1] then "
         "return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end")

MISTAKES = ["stdout-noise", "fail-on-timeout", "plain-del", "ignores-timeout", "no-exit-on-eof",
            "constant-token", "stateful-release", "no-ttl", "wrong-id", "point-no-wait", "probe-crash",
            "silent-release"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mistake", choices=MISTAKES)
    mistake = ap.parse_args().mistake
    if mistake == "probe-crash" and os.environ.get("LOCKLAB_PROBE"):
        sys.exit(3)
    host, port = ld.NODES[0]
    r = redis.Redis(host=host, port=port, socket_timeout=ld.COMMAND_TIMEOUT_MS / 1000.0,
                    socket_connect_timeout=ld.CONNECT_TIMEOUT_MS / 1000.0, retry_on_timeout=False)
    mine = set()  # stateful-release: the tokens this process acquired

    def errors(e):
        if not isinstance(e, RedisError):
            return None
        refused = isinstance(e, RedisConnectionError) and not isinstance(e, RedisTimeoutError) \
            and "connecting to" in str(e)
        if refused or mistake == "fail-on-timeout":
            return {"outcome": "fail", "detail": "%s: %s" % (type(e).__name__, e)}
        return {"outcome": "unknown", "detail": "%s: %s" % (type(e).__name__, e)}

    def acquire(req):
        token = "locklab" if mistake == "constant-token" else uuid.uuid4().hex
        while True:
            if mistake == "no-ttl":
                got = r.set(req["key"], token, nx=True)
            else:
                got = r.set(req["key"], token, nx=True, px=req["ttl_ms"])
            if got:
                mine.add(token)
                return {"outcome": "ok", "token": token, "validity_ms": req["ttl_ms"]}
            if mistake != "ignores-timeout" and \
                    time.monotonic() + ld.RETRY_DELAY_MS / 1000 > req.give_up_at():
                return {"outcome": "fail", "detail": "key held until the deadline"}
            ld.sleep(ld.RETRY_DELAY_MS / 1000)

    def release(req):
        answer = release_step(req)
        if mistake == "point-no-wait":
            # The point, and the answer right after it, without reading the go (announced
            # last, so that the answer follows it at once however slow the machine is).
            ld.send({"point": "before-del"})
        return answer

    def release_step(req):
        if mistake == "silent-release":
            r.eval(RELEASE, 1, req["key"], req["token"])
            return {"outcome": "unknown", "detail": "the library returned nothing"}
        if mistake == "stateful-release" and req["token"] not in mine:
            raise ld.Fail("not acquired by this process")
        if mistake == "plain-del":
            return {"outcome": "ok"} if r.delete(req["key"]) else {"outcome": "fail", "detail": "no key"}
        if r.eval(RELEASE, 1, req["key"], req["token"]):
            return {"outcome": "ok"}
        raise ld.Fail("not owned")

    def renew(req):
        if r.eval(RENEW, 1, req["key"], req["token"], req["ttl_ms"]):
            return {"outcome": "ok", "validity_ms": req["ttl_ms"]}
        raise ld.Fail("not owned")

    if mistake in ("stdout-noise", "wrong-id"):
        send = ld.send

        def noisy_send(obj):
            if mistake == "wrong-id" and obj.get("outcome") and "token" not in obj:
                obj = dict(obj, id=obj.get("id", 0) + 1)
            send(obj)
            if mistake == "stdout-noise" and obj.get("token"):
                print("debug: acquired %s" % obj["token"], flush=True)
        ld.send = noisy_send

    def on_close():
        if mistake == "no-exit-on-eof":
            while True:
                ld.sleep(1)

    ld.run("conformance mistake %s" % (mistake or "none"), acquire, release, renew=renew,
           errors=errors, on_close=on_close,
           points=["before-del"] if mistake == "point-no-wait" else ())


if __name__ == "__main__":
    main()
