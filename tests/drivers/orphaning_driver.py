#!/usr/bin/python3
"""A lock driver that leaves processes behind on purpose (tests of process hygiene).

A real lock on the first lab node (SET NX PX, Lua compare-and-delete release), which before
its hello and at each of its first --per-driver acquires starts a child that starts a
grandchild; the grandchild ignores SIGTERM and sleeps for an hour. --grandchild:
  sigterm  the child stays (sleeping, SIGTERM ignored too): driver -> child -> grandchild,
           all in the driver's process group
  setsid   the child exits at once and the grandchild calls setsid first: an orphan in a
           session of its own, which no signal to the driver's group reaches
--hello ok|bad: the real hello, or a wrong first line (after the processes started).
--report FILE: appends "ROLE PID PPID PGID SID" for the driver and each process it starts,
so a test knows every pid to look for (a probe's stderr goes nowhere).
"""
import argparse
import json
import os
import signal
import sys
import time
import uuid

RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


def report(path, role):
    if not path:
        return
    pid = os.getpid()
    line = "%s %d %d %d %d\n" % (role, pid, os.getppid(), os.getpgid(0), os.getsid(0))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, line.encode())
    os.close(fd)


def sleep_forever():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # Off the driver's pipes: a leftover must not be found by its stdout staying open.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    deadline = time.monotonic() + 3600
    while time.monotonic() < deadline:
        time.sleep(60)
    os._exit(0)


def start_tree(mode, path):
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork() != 0:
        return
    # the child
    try:
        if os.fork() == 0:  # the grandchild
            if mode == "setsid":
                os.setsid()
            report(path, "grandchild")
            sys.stderr.write("orphaning_driver: grandchild %d (%s)\n" % (os.getpid(), mode))
            sys.stderr.flush()
            sleep_forever()
        report(path, "child")
        if mode == "setsid":
            os._exit(0)
        sleep_forever()
    finally:
        os._exit(0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--grandchild", choices=["sigterm", "setsid"], default="sigterm")
    ap.add_argument("--per-driver", type=int, default=2)
    ap.add_argument("--hello", choices=["ok", "bad"], default="ok")
    ap.add_argument("--report", default="")
    a = ap.parse_args()
    report(a.report, "driver")
    start_tree(a.grandchild, a.report)
    if a.hello == "bad":
        sys.stdout.write("not a hello\n")
        sys.stdout.flush()
        time.sleep(3600)
    import redis  # after the fork: nothing of it in the children
    host, port = os.environ["LOCKLAB_NODES"].split(",")[0].rsplit(":", 1)
    r = redis.Redis(host=host, port=int(port), socket_timeout=0.5, socket_connect_timeout=0.5)
    sys.stdout.write(json.dumps({"hello": "locklab-driver", "protocol": 1, "renew": False}) + "\n")
    sys.stdout.flush()
    trees = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        answer = {"id": req["id"], "outcome": "fail"}
        try:
            if req["op"] == "acquire":
                if trees < a.per_driver:
                    trees += 1
                    start_tree(a.grandchild, a.report)
                token = uuid.uuid4().hex
                stop = time.monotonic() + req["timeout_ms"] / 1000.0 - 0.25
                while True:
                    if r.set(req["key"], token, nx=True, px=req["ttl_ms"]):
                        answer = {"id": req["id"], "outcome": "ok", "token": token}
                        break
                    if time.monotonic() > stop:
                        break
                    time.sleep(0.02)
            elif req["op"] == "release":
                ok = r.eval(RELEASE, 1, req["key"], req["token"])
                answer = {"id": req["id"], "outcome": "ok" if ok else "fail"}
        except redis.exceptions.RedisError as e:
            answer = {"id": req["id"], "outcome": "unknown", "detail": str(e)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
