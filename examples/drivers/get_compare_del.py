#!/usr/bin/python3
"""locklab lock driver: a DELIBERATELY BROKEN lock, SET NX PX with a GET-compare-DEL release.

Acquire is correct (SET key token NX PX ttl, retried until the deadline). Release is the
classic mistake: GET the key, compare the value with our token in the client, then DEL it,
in two round trips. A client that stalls between the GET and the DEL (a GC pause, a
preempted VM) while its key expires and another client acquires it deletes the other
client's lock: two holders. The pause point "between-get-and-del" (announced in the hello)
sits exactly there, so a client-pause fault with point = "between-get-and-del" lands in that
gap. It exists to show that faults may arm a driver's own points; do not copy it (the fix
is a Lua compare-and-delete, as redis_py_lock.py does).

Outcomes: a timeout or a lost connection after sending is `unknown`; a refused connection
is `fail`. Arguments (--driver-arg): --ttl-ms N  use N ms as the key's TTL instead of the
lab's, and announce it in the hello (ttl_ms); --extra-point NAME  also announce a point it
never reaches (the lab's tests: a fault armed there never bites, and the run says so).
"""
import argparse
import secrets
import time

import redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, TimeoutError as RedisTimeoutError

import locklab_driver as ld

POINT = "between-get-and-del"


def refused(e):
    return isinstance(e, RedisConnectionError) and not isinstance(e, RedisTimeoutError) \
        and "connecting to" in str(e)


def errors(e):
    if not isinstance(e, RedisError):
        return None
    if refused(e):
        return {"outcome": "fail", "detail": "connection refused: %s" % e}
    return {"outcome": "unknown", "detail": "%s: %s" % (type(e).__name__, e)}


def main():
    ap = argparse.ArgumentParser(prog="get_compare_del.py")
    ap.add_argument("--ttl-ms", type=int, default=None)
    ap.add_argument("--extra-point", action="append", default=[])
    args = ap.parse_args()
    host, port = ld.NODES[0] if ld.NODES else ("127.0.0.1", 6379)
    r = redis.Redis(host=host, port=port, socket_timeout=ld.COMMAND_TIMEOUT_MS / 1000.0,
                    socket_connect_timeout=ld.CONNECT_TIMEOUT_MS / 1000.0, retry_on_timeout=False)
    sleep_s = ld.RETRY_DELAY_MS / 1000.0

    def ttl_ms(req):
        return args.ttl_ms if args.ttl_ms is not None else int(req.get("ttl_ms", ld.TTL_MS))

    def acquire(req):
        give_up = req.give_up_at()
        token = secrets.token_hex(8)
        while True:
            try:
                sent = time.monotonic()
                if r.set(req["key"], token, nx=True, px=ttl_ms(req)):
                    return {"outcome": "ok", "token": token, "validity_ms": ld.validity_ms(ttl_ms(req), sent)}
                answer = {"outcome": "fail", "detail": "key held until the deadline"}
            except RedisError as e:
                if not refused(e):
                    raise
                answer = {"outcome": "fail", "detail": "connection refused: %s" % e}
            if time.monotonic() + sleep_s > give_up:
                return answer
            ld.sleep(sleep_s)

    def release(req):
        value = r.get(req["key"])
        if value is None or value.decode() != req["token"]:
            raise ld.Fail("not owned")
        ld.point(POINT)  # the gap: the key may expire and be taken by another client here
        r.delete(req["key"])  # deletes whoever holds it now: the bug
        return {"outcome": "ok"}

    ld.run("get-compare-del (broken on purpose)", acquire, release, errors=errors,
           ttl_ms=args.ttl_ms, points=[POINT] + args.extra_point)


if __name__ == "__main__":
    main()
