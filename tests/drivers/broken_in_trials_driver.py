#!/usr/bin/python3
"""A lock driver for tests/chaos/hunt_test.cc that is broken only in some of a hunt's runs,
chosen by the name of the scenario file its `locklab run` was given (found by walking up the
process tree): in a run whose scenario's name starts with "t" (the search's trials,
trials/t0001.toml, and the runs hunt names after a later find, shrink/t0002-s1-1.toml) every
acquire answers ok without asking Redis, so two clients hold at once; in any other run (the
first find's shrink/s1-1.toml and reruns/r0-1.toml) it is a correct SET NX PX lock with a Lua
compare-and-delete release. So the first find never reproduces and a later one always does:
what hunt must do when a find's minimal scenario does not reproduce. Not a lock to copy.
"""
import os
import secrets
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples", "drivers"))
import redis  # noqa: E402
from redis.exceptions import ConnectionError as RedisConnectionError  # noqa: E402
from redis.exceptions import RedisError, TimeoutError as RedisTimeoutError  # noqa: E402

import locklab_driver as ld  # noqa: E402

RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) " \
          "else return 0 end"


def scenario_name():
    """The file name of the scenario the nearest `locklab run` ancestor runs, "" if none."""
    pid = os.getppid()
    for _ in range(8):
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
            with open("/proc/%d/stat" % pid) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return ""
        if "run" in argv:
            for a in argv[argv.index("run") + 1:]:
                if a.endswith(".toml"):
                    return os.path.basename(a)
        if ppid <= 1:
            return ""
        pid = ppid
    return ""


def errors(e):
    if not isinstance(e, RedisError):
        return None
    if isinstance(e, RedisConnectionError) and not isinstance(e, RedisTimeoutError) \
            and "connecting to" in str(e):
        return {"outcome": "fail", "detail": "connection refused: %s" % e}
    return {"outcome": "unknown", "detail": "%s: %s" % (type(e).__name__, e)}


def main():
    broken = scenario_name().startswith("t")
    host, port = ld.NODES[0] if ld.NODES else ("127.0.0.1", 6379)
    r = redis.Redis(host=host, port=port, socket_timeout=ld.COMMAND_TIMEOUT_MS / 1000.0,
                    socket_connect_timeout=ld.CONNECT_TIMEOUT_MS / 1000.0, retry_on_timeout=False)
    sleep_s = ld.RETRY_DELAY_MS / 1000.0

    def acquire(req):
        token = secrets.token_hex(8)
        ttl = int(req.get("ttl_ms", ld.TTL_MS))
        if broken:
            return {"outcome": "ok", "token": token, "validity_ms": ttl}
        give_up = req.give_up_at()
        while True:
            sent = time.monotonic()
            if r.set(req["key"], token, nx=True, px=ttl):
                # The key's TTL ran from before the reply; the lab counts validity from when
                # the answer reaches it, a pipe later, and a client that honours validity to
                # its end holds past its key by that much. On a loaded machine (a suite
                # beside sanitizer builds) this process and the pipe can run tens of
                # milliseconds late while the lab's own timing stays trusted, so a few
                # milliseconds' margin would let this "correct" side overlap for real. Half
                # the TTL is a margin no scheduling delay the lab trusts reaches (it trusts
                # lags up to a tenth of the TTL).
                spent_ms = (time.monotonic() - sent) * 1000.0
                return {"outcome": "ok", "token": token,
                        "validity_ms": max(0, int(ttl / 2 - spent_ms))}
            if time.monotonic() + sleep_s > give_up:
                return {"outcome": "fail", "detail": "key held until the deadline"}
            ld.sleep(sleep_s)

    def release(req):
        if broken:
            return {"outcome": "ok"}
        if not r.eval(RELEASE, 1, req["key"], req["token"]):
            raise ld.Fail("not owned")
        return {"outcome": "ok"}

    ld.run("broken in trials (a hunt test's driver)", acquire, release, errors=errors)


if __name__ == "__main__":
    main()
