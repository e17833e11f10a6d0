"""locklab_driver: the protocol loop of a locklab lock driver (docs/driver-protocol.md), so
that a Python driver is only its acquire, release and renew.

    import locklab_driver as ld

    def acquire(req):          # req: the request (a dict) with .deadline, .give_up_at(), ...
        ...
        return {"outcome": "ok", "token": token, "validity_ms": ld.validity_ms(ttl_ms, sent)}

    def release(req):
        ...
        return {"outcome": "ok"}

    ld.run("my lock 1.0", acquire, release, renew=None, errors=None,
           ttl_ms=None, points=(), backend=None, nodes=None, read=None, work=None,
           sentinel=False)

Installed (pip install examples/drivers/python, offline: it is this one file) or not (next to
your driver, or on PYTHONPATH), it is `import locklab_driver`.

run() prints the hello (`"renew": true` when a renew callable is given; `"ttl_ms"` when the
lock sets a TTL of its own rather than the lab's LOCKLAB_TTL_MS; `"points"`, the pause points
the callables announce with point(); `"backend"` and `"nodes"`, the servers the lab should
start for it, e.g. backend="zookeeper", nodes=3; `"resource": true` when read and work
are given: the driver owns the guarded resource, docs/driver-protocol.md; `"sentinel": true`
with sentinel=True: the library finds its master through Sentinel), reads requests line
by line, calls the callable of each request's op, and prints its answer with the request's
id, one line each, flushed. The callables return an answer dict (outcome, and token /
fence / validity_ms / detail as the protocol says), or raise:
  * Fail(detail) / Unknown(detail): that answer;
  * any other exception: `errors(e)` decides (an answer dict, or None), else it is `unknown`
    with "Type: message" (the operation may have run: the honest default) and the
    traceback goes to stderr.
An unknown op is `fail`. A line that is not a JSON object with an id is logged and skipped.
On EOF it logs "stdin closed: exiting", calls on_close() if given, and returns.

Timeouts: every request carries timeout_ms; req.deadline is the monotonic time it ends
(counted from when the line was read), req.left() the seconds until then, and
req.give_up_at() the time to stop retrying so that the answer is in time (one command
timeout, LOCKLAB_COMMAND_TIMEOUT_MS, plus 20 ms before the deadline).

Pause points: point("NAME") (NAME one of run()'s points) between two steps of a callable
prints {"point":"NAME"} and waits for the client's {"point":"NAME","go":true}: there the
client may stop (a client-pause fault armed at NAME stops the client and this driver) or
sleep (slow-cs). The request's deadline keeps running meanwhile.

Also here: the lab's environment (NODES, TTL_MS, RETRY_DELAY_MS, CONNECT_TIMEOUT_MS,
COMMAND_TIMEOUT_MS, PROCESS; sentinel(): the sentinels, the master's name and the address map
of a run with Sentinel), log() to stderr (the client's log), and sleep(), which works
under libfaketime (the lab's clock faults): Python 3.11's time.sleep() fails there with
EINVAL, a select() timeout does not.
"""
import json
import os
import select
import sys
import time
import traceback

PROTOCOL = 1


def _env_int(name, default):
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


# The lock servers as (host, port), through the lab's fault proxy; most locks use the first.
NODES = [(hp.rsplit(":", 1)[0], int(hp.rsplit(":", 1)[1]))
         for hp in os.environ.get("LOCKLAB_NODES", "").split(",") if ":" in hp]
TTL_MS = _env_int("LOCKLAB_TTL_MS", 1000)
RETRY_DELAY_MS = _env_int("LOCKLAB_RETRY_DELAY_MS", 20)
CONNECT_TIMEOUT_MS = _env_int("LOCKLAB_CONNECT_TIMEOUT_MS", 200)
COMMAND_TIMEOUT_MS = _env_int("LOCKLAB_COMMAND_TIMEOUT_MS", 200)
PROCESS = os.environ.get("LOCKLAB_PROCESS", "?")



class SentinelSetup:
    """What the lab hands a driver whose hello says "sentinel": true in a run with Sentinel
    (the failover fault; docs/driver-protocol.md, Sentinel): `sentinels`, [(host, port)] of
    the three sentinels through the fault proxy; `master`, the name to ask them for; and
    `node_map`, {"host:port" Sentinel names: (host, port) of this client's link to it}: dial
    the link, never the address Sentinel names (it bypasses the proxy)."""

    def __init__(self, sentinels, master, node_map):
        self.sentinels = sentinels
        self.master = master
        self.node_map = node_map

    def link(self, host, port):
        """The (host, port) to dial for a server Sentinel names as host:port."""
        return self.node_map.get("%s:%s" % (host, port), (host, port))


def _host_port(text):
    host, _, port = text.rpartition(":")
    return host, int(port)


def sentinel():
    """The run's Sentinel setup (SentinelSetup) from LOCKLAB_SENTINELS,
    LOCKLAB_SENTINEL_MASTER and LOCKLAB_NODE_MAP, or None when the run has none (no failover
    fault, or a hello without "sentinel": true): then use NODES."""
    sentinels = [_host_port(hp) for hp in os.environ.get("LOCKLAB_SENTINELS", "").split(",") if ":" in hp]
    if not sentinels:
        return None
    node_map = {}
    for pair in os.environ.get("LOCKLAB_NODE_MAP", "").split(","):
        real, _, link = pair.partition("=")
        if ":" in link:
            node_map[real] = _host_port(link)
    return SentinelSetup(sentinels, os.environ.get("LOCKLAB_SENTINEL_MASTER", "mymaster"), node_map)


_log_name = os.path.basename(sys.argv[0]).rsplit(".", 1)[0] or "driver"


def log(msg):
    """One line on stderr, which is the client's log (clients/N.log)."""
    sys.stderr.write("%s[%s]: %s\n" % (_log_name, PROCESS, msg))
    sys.stderr.flush()


def validity_ms(ttl_ms, sent):
    """The validity to claim for a lease whose SET was sent at time.monotonic() `sent`.

    The key's TTL runs from when the server ran the SET, after `sent`, and the lab counts the
    claim from when it reads this answer, later still: a claim of the whole TTL outlives the
    key by that much, and a client that works to its validity's end overlaps the next holder.
    So: the TTL, less the time since `sent`, less Redlock's allowance (1% of the TTL + 2 ms)
    for the way back and the server's whole-millisecond expiry. CLOCK_MONOTONIC is not faked
    in the lab (its clock faults step the wall clock), so this holds under them too."""
    return max(0, int(ttl_ms - (time.monotonic() - sent) * 1000.0 - (ttl_ms * 0.01 + 2)))


def sleep(seconds):
    """time.sleep() that also works under libfaketime (the lab's clock faults)."""
    select.select([], [], [], max(0.0, seconds))


def send(obj):
    """One protocol line on stdout, flushed."""
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


class Fail(Exception):
    """Raise from a callable: the operation certainly did not happen."""


class Unknown(Exception):
    """Raise from a callable: the operation may have happened."""


class Request(dict):
    """A request as read (a dict: id, op, key, token, ttl_ms, timeout_ms, ...), and its times."""

    def __init__(self, fields, started):
        super().__init__(fields)
        self.started = started  # time.monotonic() when the line was read
        self.deadline = started + self.get("timeout_ms", 0) / 1000.0
        self.ttl_s = self.get("ttl_ms", 1000) / 1000.0

    def left(self):
        """Seconds until the deadline (0 when past it)."""
        return max(0.0, self.deadline - time.monotonic())

    def give_up_at(self, margin_s=None):
        """When to stop retrying so that the answer is in time: the deadline less one command
        timeout and 20 ms (or less margin_s), never before the request was read."""
        if margin_s is None:
            margin_s = COMMAND_TIMEOUT_MS / 1000.0 + 0.02
        return max(self.started, self.deadline - margin_s)


_points = set()


def point(name):
    """A pause point: announce it and wait until the client says go (see above)."""
    if name not in _points:
        raise ValueError("point %r was not declared in run(points=...)" % name)
    send({"point": name})
    while True:
        raw = sys.stdin.readline()
        if not raw:
            raise Unknown("stdin closed at point %s" % name)
        raw = raw.strip()
        if not raw:
            continue
        try:
            msg = json.loads(raw)
        except ValueError:
            msg = None
        if isinstance(msg, dict) and msg.get("point") == name and msg.get("go") is True:
            return
        log("at point %s: unexpected line %r, still waiting" % (name, raw[:100]))


def _answer(handler, req, errors):
    try:
        return handler(req)
    except Fail as e:
        return {"outcome": "fail", "detail": str(e)}
    except Unknown as e:
        return {"outcome": "unknown", "detail": str(e)}
    except Exception as e:  # noqa: BLE001 - every error becomes an answer
        mapped = errors(e) if errors is not None else None
        if mapped is not None:
            return mapped
        log("%s on %s: %s" % (type(e).__name__, req.get("op"),
                              traceback.format_exc().strip().replace("\n", " | ")))
        return {"outcome": "unknown", "detail": "%s: %s" % (type(e).__name__, e)}


def run(name, acquire, release, renew=None, errors=None, on_close=None, ttl_ms=None,
        points=(), backend=None, nodes=None, read=None, work=None, sentinel=False):
    """The driver's main loop: hello, then one answer per request until EOF. With read and
    work (both), the driver owns the guarded resource: read(req) answers {"outcome": "ok",
    "value": N or None}, work(req) writes req["value"] under req["token"] / req.get("fence")
    and answers {"outcome": "ok", "value": what the resource holds now}, or a fail with
    "stale": True when the resource refused an older fence."""
    if (read is None) != (work is None):
        raise ValueError("run(): give both read and work (a resource of your own), or neither")
    hello = {"hello": "locklab-driver", "protocol": PROTOCOL, "renew": renew is not None,
             "name": name}
    if read is not None:
        hello["resource"] = True
    if ttl_ms is not None:
        hello["ttl_ms"] = int(ttl_ms)
    if points:
        hello["points"] = list(points)
    if backend is not None:
        hello["backend"] = backend
    if nodes is not None:
        hello["nodes"] = int(nodes)
    if sentinel:
        hello["sentinel"] = True
    _points.update(points)
    send(hello)
    handlers = {"acquire": acquire, "release": release}
    if renew is not None:
        handlers["renew"] = renew
    if read is not None:
        handlers["read"] = read
        handlers["work"] = work
    while True:
        raw = sys.stdin.readline()  # readline, not iteration: point() reads stdin too
        if not raw:
            break
        raw = raw.strip()
        if not raw:
            continue
        started = time.monotonic()
        try:
            fields = json.loads(raw)
            rid = fields["id"]
        except (ValueError, KeyError, TypeError) as e:
            log("bad request %r: %s" % (raw[:100], e))
            continue
        req = Request(fields, started)
        handler = handlers.get(req.get("op"))
        if handler is None:
            answer = {"outcome": "fail", "detail": "unknown op %r" % req.get("op")}
        else:
            answer = _answer(handler, req, errors)
        answer = dict(answer)
        answer["id"] = rid
        send(answer)
    log("stdin closed: exiting")
    if on_close is not None:
        on_close()
