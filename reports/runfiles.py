"""Reading a locklab run directory: history.jsonl (streamed), results.json, scenario.toml.

Everything the report shows is derived here from the run files, never from the live system
and never from the algorithm id. Hold intervals, overlap episodes and fault windows follow
DESIGN.md 3.3 and checker/mutual_exclusion.cc exactly:

* a hold of client p on key k runs from the `ok` of its acquire to the invoke of its release
  (or of its next acquire on k, or the start of a nemesis `client-crash` naming p, or the end of
  the history); an acquire that ended `fail`/`info` starts no hold;
* events are ordered by (time_ns, index);
* two holds of different clients on one key that intersect overlap (touching does not);
  an episode runs while at least two distinct clients hold the key;
* fault windows: nemesis `start`/`stop` pairs per fault id, healed first-in first-out,
  open windows end at the end of the history.

history.jsonl may be large (a 10-minute 16-client run has about a million events), so it is
streamed into compact typed columns instead of a list of dicts.
"""

import json
import os
from array import array

import numpy as np


class RunError(Exception):
    """A run file is missing or malformed. str() is one line naming the file."""


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
            except (ValueError, KeyError, TypeError, AttributeError) as ex:
                what = ("not JSON" if isinstance(ex, ValueError) else
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
    except OSError as e:
        raise RunError(f"{path}: {e.strerror}")


def load_text(path, limit=20000):
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return None


# --------------------------------------------------------------------------------------------
# Derived facts


class Hold:
    __slots__ = ("process", "key", "start", "end", "open_at_end", "acquire_index", "lease",
                 "order")

    def __init__(self, process, key, start, acquire_index, lease):
        self.process = process
        self.key = key
        self.start = start
        self.end = start
        self.open_at_end = False
        self.acquire_index = acquire_index
        self.lease = lease
        self.order = 0


class Window:
    __slots__ = ("fault", "start", "end", "detail", "open_at_end")

    def __init__(self, fault, start, detail):
        self.fault = fault
        self.start = start
        self.end = -1
        self.detail = detail if isinstance(detail, dict) else {}
        self.open_at_end = False


class Episode:
    __slots__ = ("number", "key", "start", "end", "holds", "pairs")

    def __init__(self, key, start):
        self.number = 0
        self.key = key
        self.start = start
        self.end = start
        self.holds = []
        self.pairs = []   # (hold_a, hold_b, start, end) intersections inside the episode


def targets_of(detail):
    """Client ids a nemesis value names: {"targets":[1,2]} or {"process":3} (like the checker)."""
    out = []
    if not isinstance(detail, dict):
        return out
    ts = detail.get("targets")
    if isinstance(ts, list):
        out.extend(x for x in ts if isinstance(x, int) and not isinstance(x, bool))
    p = detail.get("process")
    if isinstance(p, int) and not isinstance(p, bool):
        out.append(p)
    return out


def compute_holds_and_windows(h):
    """One pass over the sorted history: holds (sorted by key, start, process) and windows."""
    acq = h.f_code("acquire")
    rel = h.f_code("release")
    start_code = h.f_code("start")
    stop_code = h.f_code("stop")
    done = []
    open_ = {}
    windows = []
    open_w = {}
    end_of_history = int(h.t[-1])
    # Only events that matter for holds/windows are visited in Python.
    mask = (h.proc == NEMESIS)
    if acq >= 0:
        mask |= (h.proc >= 0) & (h.f == acq) & ((h.type == T_INVOKE) | (h.type == T_OK))
    if rel >= 0:
        mask |= (h.proc >= 0) & (h.f == rel) & (h.type == T_INVOKE)
    sel = np.nonzero(mask)[0]
    tl, pl, tyl, fl, kl = (h.t[sel].tolist(), h.proc[sel].tolist(), h.type[sel].tolist(),
                           h.f[sel].tolist(), h.key[sel].tolist())
    names = h.key_names
    for j, i in enumerate(sel.tolist()):
        p = pl[j]
        tm = tl[j]
        if p == NEMESIS:
            f = fl[j]
            fault = names[kl[j]]
            if f == start_code:
                detail = h.value(i)
                if fault == "client-crash":
                    for tp in targets_of(detail):
                        for pk in [pk for pk in open_ if pk[0] == tp]:
                            hd = open_.pop(pk)
                            hd.end = tm
                            done.append(hd)
                w = Window(fault, tm, detail)
                open_w.setdefault(fault, []).append(len(windows))
                windows.append(w)
            elif f == stop_code:
                stack = open_w.get(fault)
                if stack:
                    windows[stack.pop(0)].end = tm
            continue
        pk = (p, kl[j])
        hd = open_.pop(pk, None)
        if hd is not None:
            hd.end = tm
            done.append(hd)
        if tyl[j] == T_OK:   # acquire ok
            open_[pk] = Hold(p, names[kl[j]], tm, int(h.index[i]), h.value(i))
    for hd in open_.values():
        hd.end = end_of_history
        hd.open_at_end = True
        done.append(hd)
    for w in windows:
        if w.end < 0:
            w.end = end_of_history
            w.open_at_end = True
    done.sort(key=lambda x: (x.key, x.start, x.process))
    for n, hd in enumerate(done):
        hd.order = n
    return done, windows


def compute_episodes(holds):
    """Overlap pairs and episodes, the sweep of checker CheckMutualExclusion."""
    by_key = {}
    for hd in holds:
        by_key.setdefault(hd.key, []).append(hd)
    episodes = []
    pairs_total = 0
    for key in sorted(by_key):
        pts = []
        for hd in by_key[key]:
            if hd.end <= hd.start:
                continue
            pts.append((hd.start, 1, hd.order, hd))
            pts.append((hd.end, 0, hd.order, hd))
        pts.sort(key=lambda x: x[:3])
        active = {}
        per_proc = {}
        distinct = 0
        cur = None
        for tm, kind, _, hd in pts:
            if kind == 1:
                # Each active hold of another client forms one new overlapping pair.
                others = [a for a in active.values() if a.process != hd.process]
                pairs_total += len(others)
                active[hd.order] = hd
                per_proc[hd.process] = per_proc.get(hd.process, 0) + 1
                if per_proc[hd.process] == 1:
                    distinct += 1
                if cur is not None:
                    cur.holds.append(hd)
                elif distinct >= 2:
                    cur = Episode(key, tm)
                    cur.holds.extend(sorted(active.values(), key=lambda x: x.order))
                if cur is not None:
                    for a in others:
                        cur.pairs.append((a, hd, max(a.start, hd.start), min(a.end, hd.end)))
            else:
                del active[hd.order]
                per_proc[hd.process] -= 1
                if per_proc[hd.process] == 0:
                    distinct -= 1
                if cur is not None and distinct < 2:
                    cur.end = tm
                    episodes.append(cur)
                    cur = None
    episodes.sort(key=lambda e: e.start)
    for n, ep in enumerate(episodes, 1):
        ep.number = n
    return episodes, pairs_total


class Run:
    """Everything the report needs from one run directory."""

    def __init__(self, run_dir):
        self.dir = os.path.abspath(run_dir)
        if not os.path.isdir(self.dir):
            raise RunError(f"{run_dir}: no such run directory")
        self.history = load_history(os.path.join(self.dir, "history.jsonl"))
        self.results = load_json(os.path.join(self.dir, "results.json"), required=False)
        if self.results is not None and not isinstance(self.results, dict):
            raise RunError(f"{os.path.join(self.dir, 'results.json')}: expected a JSON object")
        self.scenario_text = load_text(os.path.join(self.dir, "scenario.toml"))
        h = self.history
        self.t0 = int(h.t[0])
        self.t_end = int(h.t[-1])
        self.holds, self.windows = compute_holds_and_windows(h)
        self.episodes, self.pairs_total = compute_episodes(self.holds)
        self.clients = sorted(set(int(p) for p in np.unique(h.proc) if p >= 0))
        self.lock_keys = sorted(set(hd.key for hd in self.holds)) or self._lock_keys_fallback()

    def _lock_keys_fallback(self):
        h = self.history
        codes = [h.f_code(f) for f in LOCK_FS if h.f_code(f) >= 0]
        if not codes:
            return []
        m = np.isin(h.f, codes)
        return sorted(set(h.key_names[k] for k in np.unique(h.key[m])))

    def sec(self, t_ns):
        """Seconds since the first event of the history."""
        return (t_ns - self.t0) / 1e9

    @property
    def duration_s(self):
        return self.sec(self.t_end)

    def result(self, *path, default=None):
        cur = self.results
        for p in path:
            if not isinstance(cur, dict) or p not in cur:
                return default
            cur = cur[p]
        return cur

    def crash_times(self):
        """(process, time_ns) of every client-crash start."""
        out = []
        for w in self.windows:
            if w.fault == "client-crash":
                for p in targets_of(w.detail):
                    out.append((p, w.start))
        return out

    def windows_at(self, t_ns):
        return [w for w in self.windows if w.start <= t_ns <= w.end]

    def ops(self, f_names, procs_only=True):
        """Indices (sorted order) of events whose f is in f_names (client processes only)."""
        h = self.history
        codes = [h.f_code(f) for f in f_names if h.f_code(f) >= 0]
        if not codes:
            return np.zeros(0, dtype=np.int64)
        m = np.isin(h.f, codes)
        if procs_only:
            m &= h.proc >= 0
        return np.nonzero(m)[0]

    def completed_ops(self, f_names):
        """Pairs (invoke_i, complete_i) per client and f, matching each completion with the
        open invoke of that process and f (Jepsen semantics: one outstanding op per process and
        f). Returns numpy arrays inv_t, done_t, type, proc, and the completion's event index."""
        h = self.history
        sel = self.ops(f_names)
        pending = {}
        inv_t, done_t, typ, proc, ci = [], [], [], [], []
        tl = h.t[sel].tolist()
        pl = h.proc[sel].tolist()
        yl = h.type[sel].tolist()
        fl = h.f[sel].tolist()
        kl = h.key[sel].tolist()
        for j, i in enumerate(sel.tolist()):
            k = (pl[j], fl[j], kl[j])
            if yl[j] == T_INVOKE:
                pending[k] = tl[j]
            else:
                st = pending.pop(k, None)
                if st is None:
                    continue
                inv_t.append(st)
                done_t.append(tl[j])
                typ.append(yl[j])
                proc.append(pl[j])
                ci.append(i)
        return (np.array(inv_t, dtype=np.int64), np.array(done_t, dtype=np.int64),
                np.array(typ, dtype=np.int8), np.array(proc, dtype=np.int64),
                np.array(ci, dtype=np.int64))
