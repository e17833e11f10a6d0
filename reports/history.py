"""history.jsonl of a run, streamed into compact typed columns, and the run's small files.

history.jsonl may be large (a 10-minute 16-client run has about a million events), so it is
read line by line into numpy columns (time, process, type, f, key, an index into the few
values the report keeps) instead of a list of dicts. Events are ordered by (time_ns, index).
A missing or malformed file raises RunError, whose str() is one line naming the file.
"""

import json
import os
from array import array

import numpy as np


class RunError(Exception):
    """A run file is missing or malformed (exit 65). str() is one line naming the file."""


class WriteError(RunError):
    """A report file could not be written: permission, read-only or full file system, I/O
    (exit 70, as for every file the lab writes). str() is one line naming the file."""


class ToolError(RunError):
    """A program the report needs did not answer: the locklab binary that judges the history
    (exit 69, a child process failed). str() is one line."""


NEMESIS = -1
HARNESS = -2
OTHER = -3

T_INVOKE, T_OK, T_FAIL, T_INFO = 0, 1, 2, 3
TYPE_CODES = {"invoke": T_INVOKE, "ok": T_OK, "fail": T_FAIL, "info": T_INFO}
TYPE_NAMES = {v: k for k, v in TYPE_CODES.items()}

LOCK_FS = ("acquire", "release", "renew")


class History:
    """Columns of a history sorted by (time_ns, index), plus the few values the report needs."""

    def __init__(self):
        self.t = None        # numpy int64, ns
        self.index = None    # numpy int64
        self.proc = None     # numpy int64: client id, NEMESIS, HARNESS, OTHER
        self.type = None     # numpy int8
        self.f = None        # numpy int16, code into self.f_names
        self.key = None      # numpy int32, code into self.key_names
        self.val = None      # numpy int32, index into self.values or -1
        self.f_names = []
        self.key_names = []
        self.values = []     # kept values (writes, reads, nemesis, errors, fences)
        self.truncated_tail = False
        self.path = ""

    def __len__(self):
        return 0 if self.t is None else len(self.t)

    def f_code(self, name):
        try:
            return self.f_names.index(name)
        except ValueError:
            return -1

    def value(self, i):
        v = int(self.val[i])
        return None if v < 0 else self.values[v]

    def event(self, i):
        """Event i (in sorted order) as a dict shaped like a history line."""
        p = int(self.proc[i])
        return {
            "index": int(self.index[i]),
            "time_ns": int(self.t[i]),
            "process": "nemesis" if p == NEMESIS else "harness" if p == HARNESS else p,
            "type": TYPE_NAMES.get(int(self.type[i]), "?"),
            "f": self.f_names[int(self.f[i])],
            "key": self.key_names[int(self.key[i])],
            "value": self.value(i),
        }


def _keep_value(proc, f, typ, value):
    """Which values to keep in memory: not the lock tokens of every acquire attempt."""
    if value is None:
        return None
    if proc == NEMESIS or proc == HARNESS:
        return value
    if f in ("write", "cas", "read"):
        return value
    if isinstance(value, dict):
        if f == "acquire" and typ == T_OK:
            kept = {k: value[k] for k in ("fence", "validity_ms") if k in value}
            tok = value.get("token")
            if isinstance(tok, str) and tok:
                kept["token"] = tok[:16]   # enough to tell holders apart on the page
            return kept or None
        if "error" in value and typ != T_INFO:
            return {"error": value["error"]}
        if "fence" in value:
            return {"fence": value["fence"]}
    return None


def load_history(path):
    if not os.path.isfile(path):
        raise RunError(f"{path}: no such file (not a locklab run directory?)")
    t, idx, proc, typ, fcol, kcol, vcol = (array("q"), array("q"), array("q"), array("b"),
                                           array("h"), array("i"), array("i"))
    h = History()
    h.path = path
    f_codes, k_codes = {}, {}
    values = h.values
    loads = json.loads
    try:
        fh = open(path, "rb")
    except OSError as e:
        raise RunError(f"{path}: {e.strerror}")
    with fh:
        lineno = 0
        pending_error = None
        for raw in fh:
            lineno += 1
            if pending_error:
                raise RunError(pending_error)
            if not raw.strip():
                continue
            try:
                e = loads(raw)
                tn = e["time_ns"]
                p = e["process"]
                ty = TYPE_CODES[e["type"]]
                f = e["f"]
                key = e.get("key")
                if not isinstance(tn, int) or not isinstance(f, str):
                    raise TypeError
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as ex:
                what = ("nested too deep" if isinstance(ex, RecursionError) else
                        "not JSON" if isinstance(ex, ValueError) else
                        f"missing field {ex}" if isinstance(ex, KeyError) else "malformed event")
                msg = f"{path}: line {lineno}: {what}"
                if not raw.endswith(b"\n"):
                    # A killed run may leave a half-written last line: tolerate it.
                    h.truncated_tail = True
                    break
                pending_error = msg
                continue
            if isinstance(p, bool):
                p = OTHER
            elif isinstance(p, int):
                pass
            elif p == "nemesis":
                p = NEMESIS
            elif p == "harness":
                p = HARNESS
            else:
                p = OTHER
            if not isinstance(key, str):
                key = "" if key is None else str(key)
            fc = f_codes.get(f)
            if fc is None:
                fc = f_codes[f] = len(h.f_names)
                h.f_names.append(f)
            kc = k_codes.get(key)
            if kc is None:
                kc = k_codes[key] = len(h.key_names)
                h.key_names.append(key)
            kept = _keep_value(p, f, ty, e.get("value"))
            if kept is None:
                vcol.append(-1)
            else:
                vcol.append(len(values))
                values.append(kept)
            t.append(tn)
            ix = e.get("index")
            idx.append(ix if isinstance(ix, int) and not isinstance(ix, bool) else lineno - 1)
            proc.append(p)
            typ.append(ty)
            fcol.append(fc)
            kcol.append(kc)
        if pending_error:
            raise RunError(pending_error)
    tt = np.frombuffer(t, dtype=np.int64)
    ii = np.frombuffer(idx, dtype=np.int64)
    order = np.lexsort((ii, tt)) if len(tt) else np.zeros(0, dtype=np.int64)
    h.t = tt[order]
    h.index = ii[order]
    h.proc = np.frombuffer(proc, dtype=np.int64)[order]
    h.type = np.frombuffer(typ, dtype=np.int8)[order]
    h.f = np.frombuffer(fcol, dtype=np.int16)[order]
    h.key = np.frombuffer(kcol, dtype=np.int32)[order]
    h.val = np.frombuffer(vcol, dtype=np.int32)[order]
    if len(h) == 0:
        raise RunError(f"{path}: empty history (no events)")
    return h


def load_json(path, required=True):
    if not os.path.isfile(path):
        if required:
            raise RunError(f"{path}: no such file")
        return None
    try:
        with open(path, "rb") as fh:
            return json.loads(fh.read())
    except ValueError as e:
        raise RunError(f"{path}: not valid JSON ({str(e).splitlines()[0]})")
    except RecursionError:
        raise RunError(f"{path}: not valid JSON (nested too deep)")
    except OSError as e:
        raise RunError(f"{path}: {e.strerror}")


def load_text(path, limit=20000):
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return None
