#!/usr/bin/python3
"""locklab lock driver: kazoo's Lock recipe (Debian python3-kazoo) on the lab's ZooKeeper.

The protocol (docs/driver-protocol.md) is locklab_driver.py's; this file is the lock. Its
hello asks for ZooKeeper servers ("backend": "zookeeper", "nodes": 3): the lab starts an
ensemble of 3 and LOCKLAB_NODES lists its members (through the fault proxy); kazoo gets all
of them and picks one.

The lock is kazoo's own: an ephemeral sequential node under /locklab-locks/KEY, the lowest
sequence holds it, the others watch their predecessor. The lease is the ZooKeeper session,
whose timeout is the lab's TTL (LOCKLAB_TTL_MS; the ensemble may round it to its own
min/max session timeout, and validity_ms says what it granted). kazoo pings the ensemble on
its own thread, which is a watchdog: the hello says renew: false. A paused driver (SIGSTOP of
the client's group) pings nothing, so its session and its lock node expire while it still
believes it holds the lock: the lab should see that, not be told.

Token: the lock node's path. Release deletes that node, so it works in a driver that did not
do the acquire (a restarted one): gone already is `fail` (not owned: its session expired).

Outcomes: a kazoo request timeout, a connection loss or a lost session is `unknown` (the
create or delete may have happened), never `fail`. An acquire that did not get the lock by
its deadline is `fail` only once its own node is seen gone from the server (kazoo removes
it; we check); if that cannot be seen, `unknown`.

Arguments (--driver-arg): --fence  also answer the lock node's czxid as a fencing token
(ZooKeeper's transaction id of the create: later holders' nodes were created later).
"""
import argparse
import os
import threading
import time

import locklab_driver as ld

# kazoo sleeps with time.sleep (bound as default arguments when its modules load): under the
# lab's clock faults (libfaketime) Python 3.11's time.sleep() fails with EINVAL, so every
# sleep is the helper's select()-based one, installed before kazoo is imported.
time.sleep = ld.sleep

import kazoo.version  # noqa: E402
from kazoo.client import KazooClient  # noqa: E402
from kazoo.exceptions import (CancelledError, KazooException, LockTimeout,  # noqa: E402
                              NoNodeError)
from kazoo.handlers.threading import KazooTimeoutError  # noqa: E402

ROOT = "/locklab-locks"


class Zk:
    """One KazooClient for the driver's life, started on first use (session timeout = TTL)."""

    def __init__(self, ttl_ms):
        self.asked_ms = ttl_ms
        self.client = None  # built by start(), or on first use when that failed

    def _build(self):
        if self.client is None:
            if not ld.NODES:
                raise ld.Fail("LOCKLAB_NODES is empty")
            hosts = ",".join("%s:%d" % hp for hp in ld.NODES)
            self.client = KazooClient(hosts=hosts, timeout=self.asked_ms / 1000.0)
            self.client.add_listener(lambda state: ld.log("session state %s" % state))
            self.client.start_async()

    def _connected_within(self, seconds):
        """Waits up to `seconds` for the client (connecting in the background) to connect."""
        deadline = time.monotonic() + max(0.0, seconds)
        while not self.client.connected and time.monotonic() < deadline:
            ld.sleep(0.01)
        return self.client.connected

    def start(self):
        """Before the hello, when the lab named the servers (not when locklab starts the driver
        only to read its hello): connect, and create the lock root, so that the session's
        creation is spent in the driver's start time (the hello may take start_timeout_ms and
        the run's clock starts after it), not in the first acquire's timeout: on a loaded
        2-core machine it took longer. Trouble is logged; the first request tries again."""
        if not ld.NODES or os.environ.get("LOCKLAB_PROBE"):
            return
        try:
            self._build()
            if self._connected_within(15.0):
                self.client.ensure_path_async(ROOT).get(timeout=5.0)
                ld.log("started: connected, session timeout %d ms" % self.client._session_timeout)
            else:
                ld.log("start: not connected within 15 s (the first request tries again)")
        except Exception as e:  # noqa: BLE001 - the first request tries again
            ld.log("start: %s (the first request tries again)" % e)

    def ensure(self, req):
        """Connected, or Fail: nothing was sent for this request yet."""
        if self.client is not None and self.client.connected:
            return
        try:
            self._build()
            # start_async keeps connecting in the background; wait for it until the deadline.
            self._connected_within(req.left() - ld.COMMAND_TIMEOUT_MS / 1000.0)
        except KazooException as e:
            raise ld.Fail("cannot connect to ZooKeeper: %s" % e)
        if not self.client.connected:
            raise ld.Fail("not connected to ZooKeeper (%s) before the deadline" %
                          ",".join("%s:%d" % hp for hp in ld.NODES))
        ld.log("connected: session timeout %d ms (asked %d)" %
               (self.client._session_timeout, self.asked_ms))

    def call(self, req, what, async_result):
        """Waits for an async kazoo call until the request's deadline: a timeout is unknown."""
        try:
            # 50 ms before the deadline, so that the answer (unknown) is still in time.
            return async_result.get(timeout=max(0.001, req.left() - 0.05))
        except KazooTimeoutError:
            raise ld.Unknown("%s: no answer from ZooKeeper before the deadline" % what)


def main():
    ap = argparse.ArgumentParser(prog="kazoo_lock.py")
    ap.add_argument("--fence", action="store_true", help="answer the lock node's czxid as fence")
    args = ap.parse_args()
    zk = Zk(ld.TTL_MS)

    def gone(req, path):
        """Whether the node `path` is certainly not on the server (after a failed acquire)."""
        try:
            if zk.call(req, "exists", zk.client.exists_async(path)) is None:
                return True
            zk.call(req, "delete", zk.client.delete_async(path))
            return True
        except NoNodeError:
            return True
        except (KazooException, ld.Unknown) as e:
            ld.log("cannot tell whether %s is gone: %s" % (path, e))
            return False

    def in_time(req, lock, call):
        """call() (a kazoo Lock.acquire) on a thread of its own, awaited until shortly before
        the request's deadline: kazoo's synchronous requests wait without a timeout while it
        reconnects (every member stopped or cut off), and the answer must be in time. Not
        done by then: `unknown`, and if it gets the lock later it releases it at once."""
        mtx = threading.Lock()
        state = {"done": False, "abandoned": False}
        finished = threading.Event()

        def work():
            try:
                state["result"] = call()
            except Exception as e:  # noqa: BLE001 - handed to the waiting thread
                state["error"] = e
            with mtx:
                state["done"] = True
                late = state["abandoned"] and state.get("result")
            if late:
                ld.log("late acquire of %s/%s: releasing it" % (lock.path, lock.node))
                try:
                    lock.release()
                except Exception as e:  # noqa: BLE001 - its session ends it at worst
                    ld.log("releasing the late lock: %s" % e)
            finished.set()

        threading.Thread(target=work, daemon=True).start()
        finished.wait(max(0.0, req.left() - 0.05))
        with mtx:
            if not state["done"]:
                state["abandoned"] = True
                lock.cancel()
                raise ld.Unknown("no answer from ZooKeeper by the deadline (kazoo is "
                                 "reconnecting; its create may have been sent)")
        if "error" in state:
            raise state["error"]
        return state["result"]

    def acquire(req):
        zk.ensure(req)
        path = ROOT + "/" + req["key"]
        lock = zk.client.Lock(path, "locklab-%s" % ld.PROCESS)
        give_up = req.give_up_at()
        # kazoo's acquire(timeout) waits up to `timeout` per predecessor it watches, so it
        # can run past the deadline: a timer cancels it there (CancelledError, and kazoo
        # removes its node).
        timer = threading.Timer(max(0.0, give_up - time.monotonic()), lock.cancel)
        timer.daemon = True
        timer.start()
        contended = False
        try:
            got = in_time(req, lock, lambda: lock.acquire(
                timeout=max(0.01, give_up - time.monotonic())))
            # False: kazoo's retries ran out (connection loss, session trouble); it swallows
            # the error, and its create may have reached the server.
            why = "kazoo gave up retrying (connection trouble) by the deadline"
        except (LockTimeout, CancelledError) as e:
            got, contended = False, True
            why = "lock held until the deadline (%s)" % type(e).__name__
        except KazooException as e:
            got, why = False, "%s: %s" % (type(e).__name__, e)
        finally:
            timer.cancel()
        if got:
            token = path + "/" + lock.node
            answer = {"outcome": "ok", "token": token,
                      "validity_ms": int(zk.client._session_timeout)}
            if args.fence:
                try:
                    stat = zk.call(req, "exists", zk.client.exists_async(token))
                except (ld.Unknown, KazooException) as e:
                    # We hold the lock but cannot read its token, and the harness releases
                    # only what it was told it holds: give the node up (queued, sent once the
                    # client reconnects; the session, kept alive by kazoo's pings, would
                    # otherwise hold the key until this driver exits), then answer unknown.
                    zk.client.delete_async(token)
                    raise ld.Unknown("acquired %s but its fence could not be read (%s: %s); "
                                     "its node was given up" % (token, type(e).__name__, e))
                if stat is None:
                    raise ld.Unknown("lock node %s vanished right after the acquire" % token)
                answer["fence"] = stat.czxid
            return answer
        if not contended:
            raise ld.Unknown(why)
        # Waited in line and timed out: a certain `fail` only once our node is seen gone from
        # the server (kazoo's clean-up is best effort and swallows its errors).
        mine = path + "/" + lock.node if lock.node else None
        if mine is None:
            try:
                kids = zk.call(req, "get_children", zk.client.get_children_async(path))
            except NoNodeError:
                kids = []
            except KazooException as e:
                raise ld.Unknown("%s; and cannot list %s: %s" % (why, path, e))
            found = [k for k in kids if k.startswith(lock.prefix)]
            mine = path + "/" + found[0] if found else None
        if mine is not None and not gone(req, mine):
            raise ld.Unknown("%s; our node %s may still be there" % (why, mine))
        raise ld.Fail(why)

    def release(req):
        zk.ensure(req)
        try:
            zk.call(req, "delete", zk.client.delete_async(req["token"]))
        except NoNodeError:
            raise ld.Fail("not owned: lock node %s is gone (session expired?)" % req["token"])
        return {"outcome": "ok"}

    def errors(e):
        if isinstance(e, KazooException):
            return {"outcome": "unknown", "detail": "%s: %s" % (type(e).__name__, e)}
        return None

    def close():
        if zk.client is None:
            return
        try:
            zk.client.stop()
            zk.client.close()
        except Exception as e:  # noqa: BLE001 - exiting anyway
            ld.log("close: %s" % e)

    zk.start()
    ld.run("kazoo %s Lock" % kazoo.version.__version__, acquire, release,
           renew=None, errors=errors, on_close=close, backend="zookeeper", nodes=3)


if __name__ == "__main__":
    main()
