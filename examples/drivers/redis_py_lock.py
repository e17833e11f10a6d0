#!/usr/bin/python3
"""locklab lock driver: redis-py's Lock (Debian python3-redis) on the first lab node.

The protocol (docs/driver-protocol.md) is locklab_driver.py's; this file is the lock. It is
redis-py's own: SET NX PX with a random token, a Lua compare-and-delete release, a Lua
owner-checked extend(replace_ttl=True) for renew.

Outcomes: ok / fail as redis-py reports them; a TimeoutError or a connection lost after
sending is `unknown` (the command may have run); a refused connection is a certain failure,
retried until the deadline like a refused SET.

Sentinel: the hello says "sentinel": true (run(sentinel=True)), so under the failover fault
the lab gives it the sentinels, the master's name and the map from the addresses Sentinel
names to its own proxy links (ld.sentinel() reads them: LOCKLAB_SENTINELS,
LOCKLAB_SENTINEL_MASTER, LOCKLAB_NODE_MAP); it then finds the
master with redis-py's own Sentinel client (redis.sentinel.Sentinel.master_for), which asks
the sentinels again at every reconnect, as an application would. No master known (the old
one is down, none promoted yet) is a certain failure: nothing was sent.

Arguments (--driver-arg): --sleep-ms N  wait between acquire attempts (default
LOCKLAB_RETRY_DELAY_MS).
"""
import argparse
import time
import types

import redis
import redis.sentinel
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import LockNotOwnedError, RedisError, TimeoutError as RedisTimeoutError

import locklab_driver as ld

# redis-py's Lock sleeps through its module's `mod_time`: under the lab's clock faults
# (libfaketime) Python 3.11's time.sleep() fails with EINVAL (found by the client-clock cell:
# the driver crashed on every retry), so it gets the helper's select()-based sleep.
redis.lock.mod_time = types.SimpleNamespace(sleep=ld.sleep, monotonic=time.monotonic, time=time.time)


def refused(e):
    # redis-py says "Error 111 connecting to host:port. Connection refused." when the
    # connect itself failed, and raises MasterNotFoundError when no sentinel names a master
    # that is up: either way nothing was sent.
    if isinstance(e, redis.sentinel.MasterNotFoundError):
        return True
    return isinstance(e, RedisConnectionError) and not isinstance(e, RedisTimeoutError) \
        and "connecting to" in str(e)


class MappedSentinel(redis.sentinel.Sentinel):
    """redis-py's Sentinel, with the master's address mapped to this client's link to it.

    Sentinel names the servers by their real addresses; the lab's clients reach every server
    through their own fault-proxy link (LOCKLAB_NODE_MAP: REAL=LINK,...), the way a NAT map
    does in a deployment.
    """

    def __init__(self, setup, **kwargs):
        super().__init__(setup.sentinels, **kwargs)
        self.setup = setup

    def discover_master(self, service_name):
        return self.setup.link(*super().discover_master(service_name))


def connect():
    """A redis-py client for the lock's master: through Sentinel when the lab gives it
    sentinels (the failover fault), else the first node of LOCKLAB_NODES."""
    timeouts = dict(socket_timeout=ld.COMMAND_TIMEOUT_MS / 1000.0,
                    socket_connect_timeout=ld.CONNECT_TIMEOUT_MS / 1000.0)
    setup = ld.sentinel()
    if setup is None:
        host, port = ld.NODES[0]
        return redis.Redis(host=host, port=port, retry_on_timeout=False, **timeouts)
    ld.log("Sentinel: master %r from %d sentinels" % (setup.master, len(setup.sentinels)))
    sentinel = MappedSentinel(setup, sentinel_kwargs=dict(timeouts), **timeouts)
    return sentinel.master_for(setup.master, retry_on_timeout=False, **timeouts)


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
    r = connect()

    def acquire(req):
        give_up = req.give_up_at()  # one command timeout before the deadline
        answer = {"outcome": "fail", "detail": "key held until the deadline"}
        while True:
            # One attempt at a time (not redis-py's blocking loop), so that the validity
            # counts from when the SET that took the key was sent.
            lock = r.lock(req["key"], timeout=req.ttl_s, thread_local=False)
            sent = time.monotonic()
            try:
                if lock.acquire(blocking=False):
                    return {"outcome": "ok", "token": lock.local.token.decode(),
                            "validity_ms": ld.validity_ms(req.ttl_s * 1000, sent)}
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
        sent = time.monotonic()
        try:
            owned(req).extend(req.ttl_s, replace_ttl=True)
        except LockNotOwnedError as e:
            raise ld.Fail("not owned: %s" % e)
        return {"outcome": "ok", "validity_ms": ld.validity_ms(req.ttl_s * 1000, sent)}

    ld.run("redis-py %s Lock" % redis.__version__, acquire, release, renew, errors=errors,
           sentinel=True)


if __name__ == "__main__":
    main()
