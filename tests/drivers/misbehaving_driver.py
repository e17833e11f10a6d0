#!/usr/bin/python3
"""A lock driver that breaks the protocol on purpose (tests of locks/driver_lock.h).

When it behaves it is a real lock on the first lab node: SET key token NX PX ttl, release
and renew by Lua compare-and-delete / compare-and-pexpire (redis-py commands). It
misbehaves on a request whose key is "bad:MODE", and with --every N on every request whose
id is a multiple of N (modes taken in turn, or --mode MODE only). Modes:
  garbage     a line that is not JSON
  silent      no answer at all (keeps reading)
  crash       exits with status 3 without answering
  huge        1 MiB without a newline, then silence
  wrong-id    a well-formed answer for another id
  late        the right answer, timeout_ms + 100 ms late
  twice       the right answer, then a second copy of it
  bad-outcome outcome "maybe"
  no-token    acquire ok without a token
Modes only for a "bad:MODE" key or --mode (not in the --every round), and only on acquire
(release and renew of that key behave):
  late-renewing  as late, and an acquired key is then kept alive (owner-checked PEXPIRE every
                 ttl_ms/3) until a release of its token, like a library's auto-renewal
  expired        a real acquire answered ok with validity_ms 0 (an already expired grant)
Modes only for a "bad:MODE" key or --mode (bad bytes):
  not-utf8    the right answer with a raw 0xFF byte in its detail (not UTF-8)
  deep        the right answer with a field nested 30000 arrays deep (60 kB: under
              max_line_bytes)
--hello bad|none|ok|no-renew: a wrong first line, none at all, the real hello, or the real
hello saying "renew": false (the lock is then never renewed). --hello bad-name: a hello
whose "name" holds a raw 0xFF byte; bad-name-in-clients: that hello only when not probed
(LOCKLAB_PROBE unset), the real one to the harness's probe.
"""
import argparse
import json
import os
import sys
import threading
import time
import uuid

import redis

MODES = ["garbage", "silent", "crash", "huge", "wrong-id", "late", "twice", "bad-outcome",
         "no-token"]
ACQUIRE_ONLY = ["late-renewing", "expired"]
BAD_BYTES = ["not-utf8", "deep"]
RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"


def send(obj_or_text):
    text = obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


# token -> Event that stops its auto-renewal (late-renewing mode)
RENEWING = {}


def keep_alive(r, key, token, ttl_ms, stop):
    while not stop.wait(ttl_ms / 3000.0):
        try:
            if not r.eval(RENEW, 1, key, token, ttl_ms):
                return
        except redis.exceptions.RedisError:
            pass


def real(r, req):
    op, key = req["op"], req["key"]
    if op == "release" and req.get("token") in RENEWING:
        RENEWING.pop(req["token"]).set()
    try:
        if op == "acquire":
            token = uuid.uuid4().hex
            stop = time.monotonic() + req["timeout_ms"] / 1000.0 - 0.25
            while True:
                if r.set(key, token, nx=True, px=req["ttl_ms"]):
                    return {"outcome": "ok", "token": token}
                if time.monotonic() > stop:
                    return {"outcome": "fail", "detail": "held"}
                time.sleep(0.02)
        if op == "release":
            return {"outcome": "ok" if r.eval(RELEASE, 1, key, req["token"]) else "fail"}
        if op == "renew":
            return {"outcome": "ok" if r.eval(RENEW, 1, key, req["token"], req["ttl_ms"]) else "fail"}
    except redis.exceptions.RedisError as e:
        return {"outcome": "unknown", "detail": str(e)}
    return {"outcome": "fail", "detail": "unknown op"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--every", type=int, default=0)
    ap.add_argument("--mode", default="")
    ap.add_argument("--hello", default="ok")
    a = ap.parse_args()
    host, port = os.environ["LOCKLAB_NODES"].split(",")[0].rsplit(":", 1)
    r = redis.Redis(host=host, port=int(port), socket_timeout=0.5, socket_connect_timeout=0.5)
    if a.hello == "none":
        time.sleep(3600)
    bad_name = a.hello == "bad-name" or (a.hello == "bad-name-in-clients" and
                                         not os.environ.get("LOCKLAB_PROBE"))
    if bad_name:
        sys.stdout.flush()
        sys.stdout.buffer.write(b'{"hello":"locklab-driver","protocol":1,"name":"bad \xff name"}\n')
        sys.stdout.buffer.flush()
        time.sleep(3600)
    send("hello there" if a.hello == "bad" else
         {"hello": "locklab-driver", "protocol": 1, "renew": a.hello != "no-renew"})
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        rid = req["id"]
        mode = ""
        if req.get("key", "").startswith("bad:"):
            mode = req["key"][4:]
        elif a.every and rid % a.every == 0:
            mode = a.mode or MODES[(rid // a.every) % len(MODES)]
        if mode in ACQUIRE_ONLY and req["op"] != "acquire":
            mode = ""
        if mode:
            sys.stderr.write("misbehaving_driver: request %d %s: %s\n" % (rid, req["op"], mode))
            sys.stderr.flush()
        if mode == "garbage":
            send("this is not json {")
        elif mode == "silent":
            continue
        elif mode == "crash":
            os._exit(3)
        elif mode == "huge":
            sys.stdout.write("x" * (1 << 20))
            sys.stdout.flush()
            time.sleep(3600)
        elif mode == "wrong-id":
            send(dict(real(r, req), id=rid + 1000))
        elif mode in ("late", "late-renewing"):
            time.sleep(req["timeout_ms"] / 1000.0 + 0.1)
            answer = dict(real(r, req), id=rid)
            if mode == "late-renewing" and answer.get("token"):
                stop = RENEWING[answer["token"]] = threading.Event()
                threading.Thread(target=keep_alive, daemon=True,
                                 args=(r, req["key"], answer["token"], req["ttl_ms"], stop)).start()
            send(answer)
        elif mode == "expired":
            answer = dict(real(r, req), id=rid)
            if answer.get("outcome") == "ok":
                answer["validity_ms"] = 0
            send(answer)
        elif mode == "twice":
            answer = dict(real(r, req), id=rid)
            send(answer)
            send(answer)
        elif mode == "not-utf8":
            text = json.dumps(dict(real(r, req), id=rid, detail="@@"))
            sys.stdout.flush()
            sys.stdout.buffer.write(text.replace('"@@"', '"bad \xff byte"').encode("latin-1") + b"\n")
            sys.stdout.buffer.flush()
        elif mode == "deep":
            text = json.dumps(dict(real(r, req), id=rid, extra="@@"))
            send(text.replace('"@@"', "[" * 30000 + "]" * 30000))
        elif mode == "bad-outcome":
            send({"id": rid, "outcome": "maybe"})
        elif mode == "no-token":
            send({"id": rid, "outcome": "ok"})
        else:
            send(dict(real(r, req), id=rid))


if __name__ == "__main__":
    main()
