#!/usr/bin/python3
"""A lock driver on examples/drivers/locklab_driver.py with an in-memory lock (no server),
for tests/drivers/helpers_test.py. Keys "raise:KIND" make acquire raise: fail / unknown
(the helper's Fail / Unknown), mapped (a LookupError that errors() maps to fail), other (a
ValueError: unknown). "slow:MS" sleeps MS before answering ok, "times" answers the
request's timing fields."""
import os
import sys
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples", "drivers"))
import locklab_driver as ld  # noqa: E402

held = {}


def acquire(req):
    key = req["key"]
    kind = key[6:] if key.startswith("raise:") else ""
    if kind == "fail":
        raise ld.Fail("refused on purpose")
    if kind == "unknown":
        raise ld.Unknown("lost on purpose")
    if kind == "mapped":
        raise LookupError("mapped on purpose")
    if kind == "other":
        raise ValueError("broken on purpose")
    if key == "times":
        return {"outcome": "fail", "detail": "%.3f %.3f" % (req.deadline - req.started,
                                                            req.deadline - req.give_up_at())}
    if key.startswith("slow:"):
        ld.sleep(int(key[5:]) / 1000.0)
    if key in held:
        return {"outcome": "fail", "detail": "held"}
    held[key] = uuid.uuid4().hex
    return {"outcome": "ok", "token": held[key], "validity_ms": req["ttl_ms"]}


def release(req):
    if held.get(req["key"]) != req["token"]:
        raise ld.Fail("not owned")
    del held[req["key"]]
    return {"outcome": "ok"}


def errors(e):
    if isinstance(e, LookupError):
        return {"outcome": "fail", "detail": "mapped: %s" % e}
    return None


renew = None if "--no-renew" in sys.argv else (lambda req: {"outcome": "ok"})
ld.run("toy", acquire, release, renew, errors=errors,
       on_close=lambda: ld.log("on_close called"))
