#!/usr/bin/python3
"""locklab lock driver: redis-py's Lock (Debian python3-redis) on the first lab node.

Speaks the JSON Lines protocol of docs/driver-protocol.md on stdin/stdout; logs go to
stderr (the client's log). The lock is redis-py's own: SET NX PX with a random token,
a Lua compare-and-delete release, a Lua owner-checked extend(replace_ttl=True) for renew.

Outcomes: ok / fail as redis-py reports them; a TimeoutError or a connection lost after
sending is `unknown` (the command may have run); a refused connection is a certain failure,
retried until the deadline like a refused SET.

Arguments (--driver-arg): --sleep-ms N  wait between acquire attempts (default
LOCKLAB_RETRY_DELAY_MS).
"""
import argparse
import json
import os
import select
import sys
import time
import types

import redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import LockNotOwnedError, RedisError, TimeoutError as RedisTimeoutError


def sleep(seconds):
    # Under the lab's clock faults the client (and so this driver) runs under libfaketime,
    # whose clock_nanosleep() answers Python 3.11's time.sleep() with EINVAL (found by the
    # client-clock cell: the driver crashed on every retry). A select() timeout is relative
    # and unaffected. redis-py's Lock sleeps through its module's `mod_time`: same fix there.
    select.select([], [], [], max(0.0, seconds))


redis.lock.mod_time = types.SimpleNamespace(sleep=sleep, monotonic=time.monotonic, time=time.time)


def log(msg):
    sys.stderr.write("redis_py_lock[%s]: %s\n" % (os.environ.get("LOCKLAB_PROCESS", "?"), msg))
    sys.stderr.flush()


def send(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def refused(e):
    # redis-py says "Error 111 connecting to host:port. Connection refused." when the
    # connect itself failed: nothing was sent.
    return isinstance(e, RedisConnectionError) and not isinstance(e, RedisTimeoutError) \
        and "connecting to" in str(e)


def main():
    ap = argparse.ArgumentParser(prog="redis_py_lock.py")
    ap.add_argument("--sleep-ms", type=int, default=int(os.environ.get("LOCKLAB_RETRY_DELAY_MS", "20")))
    args = ap.parse_args()
    host, port = os.environ["LOCKLAB_NODES"].split(",")[0].rsplit(":", 1)
    cmd_s = int(os.environ.get("LOCKLAB_COMMAND_TIMEOUT_MS", "200")) / 1000.0
    conn_s = int(os.environ.get("LOCKLAB_CONNECT_TIMEOUT_MS", "200")) / 1000.0
    r = redis.Redis(host=host, port=int(port), socket_timeout=cmd_s,
                    socket_connect_timeout=conn_s, retry_on_timeout=False)
    send({"hello": "locklab-driver", "protocol": 1, "renew": True,
          "name": "redis-py %s Lock" % redis.__version__})

    for raw in sys.stdin:
        raw = raw.strip()
        if not raw:
            continue
        started = time.monotonic()
        try:
            req = json.loads(raw)
            rid = req["id"]
        except (ValueError, KeyError, TypeError) as e:
            log("bad request %r: %s" % (raw[:100], e))
            continue
        op = req.get("op")
        key = req.get("key", "")
        stop_at = started + req.get("timeout_ms", 0) / 1000.0
        ttl_s = req.get("ttl_ms", 1000) / 1000.0
        try:
            if op == "acquire":
                # Leave one command timeout before the deadline for the last attempt.
                give_up = max(started, stop_at - cmd_s - 0.02)
                answer = {"outcome": "fail", "detail": "key held until the deadline"}
                while True:
                    lock = r.lock(key, timeout=ttl_s, sleep=args.sleep_ms / 1000.0,
                                  blocking=True, blocking_timeout=max(0.0, give_up - time.monotonic()),
                                  thread_local=False)
                    try:
                        if lock.acquire():
                            answer = {"outcome": "ok", "token": lock.local.token.decode(),
                                      "validity_ms": int(ttl_s * 1000)}
                        break
                    except RedisError as e:
                        if not refused(e):
                            raise
                        answer = {"outcome": "fail", "detail": "connection refused: %s" % e}
                        if time.monotonic() + args.sleep_ms / 1000.0 > give_up:
                            break
                        sleep(args.sleep_ms / 1000.0)
            elif op in ("release", "renew"):
                lock = r.lock(key, timeout=ttl_s, thread_local=False)
                lock.local.token = req["token"].encode()
                try:
                    if op == "release":
                        lock.release()
                        answer = {"outcome": "ok"}
                    else:
                        lock.extend(ttl_s, replace_ttl=True)
                        answer = {"outcome": "ok", "validity_ms": int(ttl_s * 1000)}
                except LockNotOwnedError as e:
                    answer = {"outcome": "fail", "detail": "not owned: %s" % e}
            else:
                answer = {"outcome": "fail", "detail": "unknown op %r" % op}
        except RedisError as e:
            if refused(e):
                answer = {"outcome": "fail", "detail": "connection refused: %s" % e}
            else:
                answer = {"outcome": "unknown", "detail": "%s: %s" % (type(e).__name__, e)}
        answer["id"] = rid
        send(answer)
    log("stdin closed: exiting")


if __name__ == "__main__":
    main()
