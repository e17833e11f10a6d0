#!/usr/bin/python3
"""A CORRECT Redlock-style lock over five Redis nodes (the baseline of the quorum drivers in
bench/drivers/): SET NX PX with one owner token on every node of LOCKLAB_NODES in turn, held
when a majority (3 of 5) said OK and time is left (validity = TTL - elapsed - drift); else it
releases on every node and retries until the deadline. Release is an owner-checked Lua
compare-and-delete on every node. The hello asks the lab for five nodes ("nodes": 5) and
announces no pause points.

A SET whose reply never came (a timeout, a connection lost after sending) may or may not have
landed: it is not counted towards the majority, and the release that follows a failed attempt
covers it. `main(count_unanswered=True)` is the bug of redlock_counts_timeouts.py.
"""
import os
import sys
import time
import uuid

import redis
from redis.exceptions import RedisError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples", "drivers"))
import locklab_driver as ld  # noqa: E402
from redis_outcomes import errors, refused  # noqa: E402

NODES = 5
RELEASE = """if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1])
else return 0 end"""


def main(count_unanswered=False, name="redlock over 5 nodes, majority of answered SETs"):
    clients = [redis.Redis(host=h, port=p, socket_timeout=ld.COMMAND_TIMEOUT_MS / 1000.0,
                           socket_connect_timeout=ld.CONNECT_TIMEOUT_MS / 1000.0,
                           retry_on_timeout=False) for h, p in ld.NODES]
    scripts = [r.register_script(RELEASE) for r in clients]
    majority = len(clients) // 2 + 1
    sleep_s = ld.RETRY_DELAY_MS / 1000.0

    def release_everywhere(key, token):
        """How many nodes deleted the key, and whether any node's answer was lost."""
        deleted, lost = 0, False
        for script in scripts:
            try:
                deleted += int(script(keys=[key], args=[token]) == 1)
            except RedisError as e:
                lost = lost or not refused(e)
        return deleted, lost

    def acquire(req):
        give_up = req.give_up_at()
        ttl_ms = int(req["ttl_ms"])
        while True:
            token = uuid.uuid4().hex
            start = time.monotonic()
            votes = 0
            for r in clients:
                try:
                    votes += int(bool(r.set(req["key"], token, nx=True, px=ttl_ms)))
                except RedisError as e:
                    # The reply is lost; the SET may or may not have landed.
                    if count_unanswered and not refused(e):
                        votes += 1
            elapsed_ms = (time.monotonic() - start) * 1000.0
            validity_ms = int(ttl_ms - elapsed_ms - (ttl_ms * 0.01 + 2))
            if votes >= majority and validity_ms > 0:
                return {"outcome": "ok", "token": token, "validity_ms": validity_ms}
            release_everywhere(req["key"], token)
            if time.monotonic() + sleep_s > give_up:
                return {"outcome": "fail", "detail": "no majority until the deadline (%d of %d)"
                        % (votes, len(clients))}
            ld.sleep(sleep_s)

    def release(req):
        deleted, lost = release_everywhere(req["key"], req["token"])
        if deleted > 0:
            return {"outcome": "ok"}
        if lost:
            return {"outcome": "unknown", "detail": "no node confirmed the delete"}
        raise ld.Fail("not owned on any node")

    ld.run(name, acquire, release, errors=errors, nodes=NODES)


if __name__ == "__main__":
    main()
