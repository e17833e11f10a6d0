"""The counterexample told in words, derived only from history events and nemesis windows.

Nothing here looks at the algorithm id: every sentence names a client, a time (seconds since the
first event), the fault windows active then and the values read and written, as recorded.
"""

import numpy as np

from . import faultstyle
from .history import NEMESIS, T_FAIL, T_INFO, T_INVOKE, T_OK


class Sentence(str):
    """A sentence of the story with the moment it tells of: `at` = (lo_ns, hi_ns) on the
    history's clock, or None. It compares and prints as the plain string; the page links it to
    that moment of the timeline."""
    at = None

    def __new__(cls, text, lo=None, hi=None):
        s = super().__new__(cls, text)
        if lo is not None:
            s.at = (int(lo), int(hi if hi is not None else lo))
        return s


def ts(run, t_ns):
    """A moment in words: "the start of the run" (under half a millisecond), "740 ms" below a
    second, "2.23 s" above; read after "at", "since", "from"."""
    d = run.sec(t_ns)
    if d < 0.0005:
        return "the start of the run"
    return f"{d * 1000:.0f} ms" if d < 1 else f"{d:.2f} s"


def clock(run, t_ns):
    """A moment as a number for tables and ranges: "0.000 s"."""
    return f"{run.sec(t_ns):.3f} s"


def ms(d_ns):
    """A length of time rounded to what a reader compares: "0.4 ms", "22 ms", "1.25 s"."""
    v = d_ns / 1e6
    if v >= 1000:
        return f"{v / 1000:.2f} s"
    return f"{v:.0f} ms" if v >= 10 else f"{v:.1f} ms"


def clients_words(procs):
    """"client 3", "clients 1 and 2", "clients 1, 2 and 3" (sorted, each once)."""
    ps = sorted(set(procs))
    if len(ps) == 1:
        return f"client {ps[0]}"
    names = [str(p) for p in ps]
    return "clients " + (" and ".join(names) if len(names) == 2 else ", ".join(names[:-1]) + " and " + names[-1])


def both_or_all(procs):
    """"both" for two clients, "all" for more."""
    return "both" if len(set(procs)) == 2 else "all"


def _int_value(v):
    """The integer a write/read carries: 14 or {"value":14,"fence":3}."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, dict):
        x = v.get("value")
        if isinstance(x, int) and not isinstance(x, bool):
            return x
    return None


def _fence(v):
    if isinstance(v, dict):
        x = v.get("fence")
        if isinstance(x, int) and not isinstance(x, bool):
            return x
    return None


def _value_text(v):
    x = _int_value(v)
    f = _fence(v)
    s = str(x) if x is not None else ("nothing (unset)" if v is None else str(v))
    return s + (f" with fence {f}" if f is not None else "")


class Op:
    """One resource operation: invoke and completion."""
    __slots__ = ("process", "f", "key", "inv_t", "done_t", "type", "value", "inv_value")

    def __init__(self, process, f, key, inv_t, inv_value):
        self.process, self.f, self.key, self.inv_t, self.inv_value = process, f, key, inv_t, inv_value
        self.done_t, self.type, self.value = None, None, None


def resource_ops(run):
    """Reads and writes of client processes as operations, in completion order."""
    h = run.history
    sel = run.ops(["read", "write", "cas"])
    pending, out = {}, []
    for i in sel.tolist():
        p, f, k = int(h.proc[i]), h.f_names[int(h.f[i])], h.key_names[int(h.key[i])]
        if int(h.type[i]) == T_INVOKE:
            pending[(p, f, k)] = Op(p, f, k, int(h.t[i]), h.value(i))
            continue
        op = pending.pop((p, f, k), None)
        if op is None:
            continue
        op.done_t, op.type, op.value = int(h.t[i]), int(h.type[i]), h.value(i)
        out.append(op)
    return out


def hold_at(run, process, t_ns, key=None):
    for hd in run.holds:
        if hd.process == process and hd.start <= t_ns <= hd.end and (key is None or hd.key == key):
            return hd
    return None


def _write_phrase(op):
    """(what the client did, what the resource said afterwards or '')."""
    v = op.value if op.value is not None else op.inv_value
    if op.type == T_OK:
        return f"wrote {op.key} = {_value_text(v)}", ""
    err = v.get("error") if isinstance(v, dict) else None
    newest = v.get("newest") if isinstance(v, dict) else None
    if op.type == T_FAIL:
        why = f" (newest fence {newest})" if newest is not None else (f" ({err})" if err else "")
        return f"tried to write {op.key} = {_value_text(op.inv_value)}", f"; the resource rejected it{why}"
    return f"tried to write {op.key} = {_value_text(op.inv_value)}", " (outcome unknown)"


def _before_phrase(run, process, since_ns, at_ns):
    """What a client went through between since and at: 'resumed from a 1.20 s pause and '
    (the descriptor's phrase of the last window that hit it, faultstyle.client_phrase)."""
    best = None
    for w in run.windows:
        if process not in faultstyle.clients_hit(w.detail):
            continue
        if w.end < since_ns or w.start > at_ns:
            continue
        if best is None or w.start > best.start:
            best = w
    if best is None:
        return "", None
    return faultstyle.client_phrase(best.fault, best.detail, best.end - best.start, best.end <= at_ns), best


def faults_active_text(run, lo_ns, hi_ns):
    ws = [w for w in run.windows if w.start <= hi_ns and w.end >= lo_ns]
    if not ws:
        return "no fault window was active"
    return "; ".join(f"{faultstyle.label(w.fault, w.detail, w.end - w.start)} "
                     f"({run.sec(w.start):.2f}\u2013{run.sec(w.end):.2f} s)" for w in ws)


def _promotion_effect(run, window):
    """(time_ns, value) of the effect event of a window that promotes a replica (its
    descriptor's trait promotes_replica), as the lab recorded it (the promotion seen, with
    killed_ns and lost_lock_holders), or None."""
    h = run.history
    code = h.f_code("effect")
    if code < 0 or not len(h):
        return None
    for i in np.nonzero((h.proc == NEMESIS) & (h.f == code))[0].tolist():
        t = int(h.t[i])
        if h.key_names[int(h.key[i])] != window.fault or t < window.start:
            continue
        v = h.value(i)
        return (t, v) if isinstance(v, dict) else None
    return None


def promotion_sentences(run, window, old=None, newcomer=None, key=None):
    """The race of a window that promotes a replica in words, from its start and effect events: the cut, the lock
    write n1 acknowledged after it (lost: never replicated), n1's death, the promotion and, given
    the episode's holds, the second grant by the promoted replica. [] when no effect was recorded."""
    got = _promotion_effect(run, window)
    if got is None:
        return []
    seen_t, v = got
    d = window.detail
    rel = d.get("released_by")
    after = f" right after client {rel}'s release" if isinstance(rel, int) else ""
    killed = v.get("killed_ns")
    killed = killed if isinstance(killed, int) and killed >= window.start else None
    lost = [p for p in v.get("lost_lock_holders") or [] if isinstance(p, int)]
    evidence = v.get("evidence", "")
    noun = faultstyle.FAULT_NOUNS.get(window.fault, window.fault)
    sents = [Sentence(f"At {ts(run, window.start)} the {noun} cut n1's replication to its replica r1{after}: "
                      "from then on a lock write n1 acknowledged never reached r1.", window.start)]
    holder = old.process if old is not None and old.process in lost else (lost[0] if lost else None)
    if killed is not None:
        if holder is not None:
            since = f" (acquired at {ts(run, old.start)})" if old is not None and old.process == holder else ""
            what = f"{key}" if key else "the lock"
            sents.append(Sentence(f"At {ts(run, killed)} n1 was killed while client {holder} held {what}{since}: "
                                  "its lock write, acknowledged by n1 and never replicated, died with n1 (the lost write).",
                                  old.start if since else killed, killed))
        else:
            sents.append(Sentence(f"At {ts(run, killed)} n1 was killed; no client then held a lock n1 had granted "
                                  "after the cut, so no lost write was held.", killed))
    role = v.get("replica_role")
    if role == "master" or "reports role master" in evidence:
        lost_too = ": r1 never got the lost write" if holder is not None and killed is not None else ""
        sents.append(Sentence(f"By {ts(run, seen_t)} Sentinel had promoted r1 (it reports role master){lost_too}.",
                              killed if killed is not None else seen_t, seen_t))
    else:
        sents.append(Sentence(f"The promotion was not seen in the window ({evidence}).", seen_t))
    if newcomer is not None and holder is not None and killed is not None and newcomer.start > killed:
        sents.append(Sentence(f"At {ts(run, newcomer.start)} the promoted r1 granted {key or 'the lock'} to client "
                              f"{newcomer.process} while client {holder} still held it: two clients own one lock, "
                              "the race the Redis documentation describes.", newcomer.start))
    return sents


# --------------------------------------------------------------------------------------------


def first_resource_anomaly(run, ops=None):
    """The first lost update or stale write visible in the history, or None.

    A lost update shows as an accepted write whose value is not above a value another client
    had already written on that key; a stale write as an accepted write with a fence below one
    already accepted."""
    ops = ops if ops is not None else resource_ops(run)
    best_val, best_fence = {}, {}
    for op in ops:
        if op.f not in ("write", "cas") or op.type != T_OK:
            continue
        v = op.value if op.value is not None else op.inv_value
        x, f = _int_value(v), _fence(v)
        if f is None:
            f = _fence(op.inv_value)
        if f is not None:
            prev = best_fence.get(op.key)
            if prev is not None and f < prev[0]:
                return {"kind": "stale", "op": op, "prev": prev[1], "lo": min(op.inv_t, prev[1].done_t),
                        "hi": op.done_t, "short": f"stale write by client {op.process}"}
            if prev is None or f > prev[0]:
                best_fence[op.key] = (f, op)
        if x is not None:
            prev = best_val.get(op.key)
            if prev is not None and x <= prev[0]:
                return {"kind": "lost", "op": op, "prev": prev[1], "lo": min(op.inv_t, prev[1].done_t),
                        "hi": op.done_t, "short": f"lost update by client {op.process}"}
            if prev is None or x > prev[0]:
                best_val[op.key] = (x, op)
    return None


def _last_read_before(ops, process, key, t_ns):
    best = None
    for op in ops:
        if op.process == process and op.f == "read" and op.key == key and op.type == T_OK and op.done_t <= t_ns:
            best = op
    return best


def _damaging_write(run, ops):
    """The write invoked by a client inside an overlap it is part of: the first one by a client
    that had been hit by a fault during its hold (the stale holder), else the first one."""
    writes = [op for op in ops if op.f in ("write", "cas")]
    if not writes:
        return None
    writes.sort(key=lambda o: o.inv_t)
    inv = np.array([o.inv_t for o in writes], dtype=np.int64)
    first = None
    for ep in run.episodes:
        for a, b, ps, pe in sorted(ep.pairs, key=lambda x: x[2]):
            lo = np.searchsorted(inv, ps, side="left")
            hi = np.searchsorted(inv, pe, side="right")
            for op in writes[lo:hi]:
                if op.process in (a.process, b.process):
                    other = b if op.process == a.process else a
                    mine = a if other is b else b
                    cand = (ep, op, mine, other)
                    if _before_phrase(run, op.process, mine.start, op.inv_t)[0]:
                        return cand
                    if first is None:
                        first = cand
    return first


def counterexample(run):
    """(headline, [sentences], [timeline bullets]) for the report; headline may be None.
    The headline and each sentence are Sentences: their `at` is the moment they tell of."""
    ops = resource_ops(run)
    if run.episodes:
        story = _overlap_story(run, ops)
    else:
        an = first_resource_anomaly(run, ops)
        if an is not None:
            story = _resource_story(run, ops, an)
        else:
            story = _stuck_story(run)
            if story is None:
                if run.result("linearizability", "lock", "verdict") == "invalid":
                    return _linearizability_story(run)
                return None, [], []
    unp = getattr(run, "unplaceable", None)
    if unp is not None:   # a violation with overlaps and a linearizability failure: say both
        headline, sents, bullets = story
        return headline, sents + [_unplaceable_sentence(run, unp, also=True)], bullets
    return story


def op_words(run, op):
    """"client 3's acquire of lock:0 (invoked at 200 ms, ok at 1.69 s)"."""
    when = f"invoked at {ts(run, op.invoke)}"
    if op.complete is not None:
        when += f", {op.outcome} at {ts(run, op.complete)}"
    else:
        when += ", never completed"
    return f"client {op.process}'s {op.f}" + (f" of {op.key}" if op.key else "") + f" ({when})"


def _op_span(op):
    return op.invoke, (op.complete if op.complete is not None else op.invoke)


def _unplaceable_span(unp):
    spans = [_op_span(o) for o in [unp.op] + unp.conflicts]
    return min(a for a, _ in spans), max(b for _, b in spans)


def _unplaceable_sentence(run, unp, also=False):
    lo, hi = _unplaceable_span(unp)
    if unp.sentence:
        text = unp.sentence[0].upper() + unp.sentence[1:]
        text = text if text.endswith(".") else text + "."
    else:
        text = f"No order of the lock operations can place {op_words(run, unp.op)}."
    if also:
        text = "The lock history is not linearizable either: " + text[0].lower() + text[1:]
    return Sentence(text, lo, hi)


def _linearizability_story(run):
    """A violation the linearizability check alone found: no two holds overlapped, yet no
    order of the lock operations explains what the clients were told."""
    unp = getattr(run, "unplaceable", None)
    if unp is not None:
        op = unp.op
        lo, hi = _unplaceable_span(unp)
        headline = Sentence(f"The lock history is not linearizable although no two holds overlapped: no order "
                            f"of the lock operations can place {op_words(run, op)}.", *_op_span(op))
        sents = [_unplaceable_sentence(run, unp)]
        if unp.conflicts:
            sents.append(Sentence(f"It conflicts with {len(unp.conflicts)} operation"
                                  f"{'s' if len(unp.conflicts) != 1 else ''}, marked on the timeline: "
                                  + "; ".join(op_words(run, c) for c in unp.conflicts) + ".", lo, hi))
        if unp.prefix_ops is not None:
            sents.append(Sentence(f"The {unp.prefix_ops} lock operation{'s' if unp.prefix_ops != 1 else ''} "
                                  "before it have an order the lock model accepts; this one fits none.",
                                  *_op_span(op)))
        sents.append(Sentence(f"Faults active then: {faults_active_text(run, lo, hi)}.", lo, hi))
        procs = {op.process} | {c.process for c in unp.conflicts}
        return headline, sents, _bullets(run, resource_ops(run), procs, lo - 100_000_000, hi + 100_000_000)
    ce = run.result("linearizability", "lock", "counterexample", default={}) or {}
    failed = ce.get("failed") or {}
    line = failed.get("complete_line") or failed.get("invoke_line")
    idx = failed.get("complete_index", failed.get("invoke_index"))
    who = failed.get("process")
    pos = np.nonzero(run.history.index == idx)[0] if isinstance(idx, int) else []
    when = int(run.history.t[pos[0]]) if len(pos) else None
    sents = [Sentence(f"No order of the lock operations explains client {who}'s {failed.get('f', 'operation')} "
                      f"on {failed.get('key', '?')}" + (f" completed at {ts(run, when)}" if when is not None else "")
                      + f" (history line {line}).", when)]
    if when is not None:
        crashes = [(p, t) for p, t in run.crash_times() if t <= when]
        for p, t in crashes[-1:]:
            hd = next((x for x in run.holds if x.process == p and x.end == t), None)
            sents.append(Sentence(f"At {ts(run, t)} the nemesis killed client {p}"
                                  + (f" while it held {hd.key} (since {ts(run, hd.start)})" if hd else "")
                                  + "; its lock was never released, only expired.", t))
        sents.append(Sentence(f"Faults active then: {faults_active_text(run, when - 1, when)}.", when))
    return (Sentence("The lock history is not linearizable although no two holds overlapped.", when), sents, [])


def _overlap_story(run, ops):
    ep = run.episodes[0]
    holds = sorted(ep.holds, key=lambda hd: hd.start)
    newcomer = next((hd for hd in holds if hd.start == ep.start), holds[-1])
    older = [hd for hd in holds if hd.process != newcomer.process and hd.start <= ep.start]
    old = older[0] if older else holds[0]
    n = len(run.episodes)
    holders = [hd.process for hd in ep.holds]
    also = [p for p in sorted(set(holders)) if p not in (newcomer.process, old.process)]
    headline = Sentence(
        f"At {ts(run, ep.start)} client {newcomer.process} acquired {ep.key} while client "
        f"{old.process} had held it since {ts(run, old.start)}: "
        + (f"two holders for {ms(ep.end - ep.start)}" if not also else
           f"{clients_words(holders)} {both_or_all(holders)} held it within {ms(ep.end - ep.start)}")
        + (f" (overlap #1 of {n})." if n > 1 else " (the only overlap)."),
        ep.start, ep.end)
    sents = []
    lead = _before_phrase(run, old.process, old.start, ep.start)[1]
    if lead is None:
        started = [w for w in run.windows if old.start - 50_000_000 <= w.start <= ep.start]
        active = [w for w in run.windows if w.start <= ep.start <= w.end]
        lead = (started or active or [None])[-1]
    told = (promotion_sentences(run, lead, old, newcomer, ep.key)
            if lead is not None and faultstyle.trait(lead.fault, "promotes_replica") else [])
    sents.extend(told)
    if lead is not None and not told:
        sents.append(Sentence(
            f"At {ts(run, lead.start)} {faultstyle.describe(lead.fault, lead.detail, lead.end - lead.start)}"
            f"; client {old.process} had acquired {ep.key} at {ts(run, old.start)} and "
            f"had not released it when client {newcomer.process} got it at {ts(run, ep.start)}.",
            min(lead.start, old.start), max(lead.end, ep.start)))
    dmg = _damaging_write(run, ops)
    if dmg is not None:
        dep, op, mine, other = dmg
        before, _ = _before_phrase(run, op.process, mine.start, op.inv_t)
        did, after = _write_phrase(op)
        sents.append(Sentence(f"At {ts(run, op.inv_t)} client {op.process} {before}{did} while client "
                              f"{other.process} had held the lock since {ts(run, other.start)} "
                              f"(overlap #{dep.number}){after}.", op.inv_t, op.done_t or op.inv_t))
        rd = _last_read_before(ops, op.process, op.key, op.inv_t)
        if rd is not None and rd.done_t >= mine.start:
            sents.append(Sentence(f"Client {op.process} had read {op.key} = {_value_text(rd.value)} at "
                                  f"{ts(run, rd.done_t)}.", rd.inv_t, rd.done_t))
    an = first_resource_anomaly(run, ops)
    if an is not None:
        sents.append(_anomaly_sentence(run, ops, an))
    sents.append(Sentence(f"Faults active during overlap #1: {faults_active_text(run, ep.start, ep.end)}.",
                          ep.start, ep.end))
    if n > 1:
        sents.append(_bursts_sentence(run))
    lo = min(hd.start for hd in holds)
    hi = max(hd.end for hd in holds)
    if dmg is not None:
        hi = max(hi, dmg[1].done_t or dmg[1].inv_t)
    return headline, sents, _bullets(run, ops, {hd.process for hd in holds}, lo, hi)


BURST_GAP_NS = 1_000_000_000


def _bursts_sentence(run):
    """The overlaps counted as a reader sees them: in bursts (overlaps less than a second
    apart), each said with its time, its count and the fault windows open when it began."""
    bursts = []
    for ep in run.episodes:
        if bursts and ep.start - bursts[-1][1] < BURST_GAP_NS:
            b = bursts[-1]
            bursts[-1] = (b[0], max(b[1], ep.end), b[2] + 1)
        else:
            bursts.append((ep.start, ep.end, 1))
    if len(bursts) == 1:
        lo, hi, k = bursts[0]
        return Sentence(f"All {k} overlaps happened in one burst, from {ts(run, lo)} to {ts(run, hi)}.", lo, hi)

    def fault_then(t):
        ws = [w for w in run.windows if w.start <= t <= w.end + BURST_GAP_NS]
        return faultstyle.label(ws[-1].fault, ws[-1].detail, ws[-1].end - ws[-1].start) if ws else ""
    shown = bursts[:6]
    parts = []
    for lo, hi, k in shown:
        f = fault_then(lo)
        parts.append(f"{k} at {run.sec(lo):.2f}\u2013{run.sec(hi):.2f} s" + (f" ({f})" if f else ""))
    more = f", and {len(bursts) - 6} more" if len(bursts) > 6 else ""
    return Sentence(f"The {len(run.episodes)} overlaps came in {len(bursts)} bursts (overlaps less than a second "
                    f"apart): " + "; ".join(parts) + more + ".", bursts[0][0], bursts[-1][1])


def _anomaly_sentence(run, ops, an):
    op, prev = an["op"], an["prev"]
    if an["kind"] == "lost":
        by = "it" if prev.process == op.process else f"client {prev.process}"
        s = (f"At {ts(run, op.done_t)} client {op.process} wrote {op.key} = {_value_text(op.value or op.inv_value)}, "
             f"but {by} had already written {_value_text(prev.value or prev.inv_value)} at "
             f"{ts(run, prev.done_t)}: updates were lost.")
        rd = _last_read_before(ops, op.process, op.key, op.inv_t)
        x_rd = _int_value(rd.value) if rd else None
        if rd is not None and x_rd is not None and rd.done_t > prev.done_t and x_rd < (_int_value(prev.value or prev.inv_value) or 0):
            s += (f" The counter had gone back: client {op.process} read {x_rd} at {ts(run, rd.done_t)}, after "
                  f"{_int_value(prev.value or prev.inv_value)} had been written.")
            late = [o for o in ops if o.f in ("write", "cas") and o.inv_t < rd.done_t and o.type != T_OK
                    and _int_value(o.inv_value) == x_rd]
            if late:
                o = late[-1]
                err = o.value.get("error") if isinstance(o.value, dict) else None
                s += (f" Client {o.process}'s write of {x_rd}, sent at {ts(run, o.inv_t)} "
                      f"({'outcome unknown' if o.type == T_INFO else 'reported failed'}"
                      f"{': ' + err if err else ''}; faults then: {faults_active_text(run, o.inv_t, o.done_t)}), "
                      "was applied late.")
    else:
        s = (f"At {ts(run, op.done_t)} the resource accepted client {op.process}'s write with fence "
             f"{_fence(op.value) or _fence(op.inv_value)} after client {prev.process}'s write with fence "
             f"{_fence(prev.value) or _fence(prev.inv_value)} at {ts(run, prev.done_t)}: a stale write got through.")
    if op.done_t - op.inv_t > 50_000_000:
        s += f" Client {op.process} had sent that write at {ts(run, op.inv_t)} ({ms(op.done_t - op.inv_t)} earlier)."
    return Sentence(s, min(op.inv_t, prev.done_t), op.done_t)


def _resource_story(run, ops, an):
    op = an["op"]
    hd = hold_at(run, op.process, op.inv_t)
    headline = _anomaly_sentence(run, ops, an)
    sents = []
    before, _ = _before_phrase(run, op.process, hd.start if hd else op.inv_t - 1, op.done_t)
    if hd is not None:
        sents.append(Sentence(f"Client {op.process} held {hd.key} from {ts(run, hd.start)} to {ts(run, hd.end)}; "
                              f"its write was invoked at {ts(run, op.inv_t)} and completed at {ts(run, op.done_t)}"
                              + (f" ({before.strip().rstrip(',').replace(' and', '')})." if before else "."),
                              hd.start, max(hd.end, op.done_t)))
    else:
        sents.append(Sentence(f"Client {op.process} held no lock when it invoked that write at "
                              f"{ts(run, op.inv_t)}.", op.inv_t, op.done_t))
    rd = _last_read_before(ops, op.process, op.key, op.inv_t)
    if rd is not None:
        sents.append(Sentence(f"It had computed the value from its read of {op.key} = {_value_text(rd.value)} at "
                              f"{ts(run, rd.done_t)}.", rd.inv_t, rd.done_t))
    lo = rd.done_t if rd else op.inv_t
    sents.append(Sentence(f"Faults active between that read and the write: "
                          f"{faults_active_text(run, lo, op.done_t)}.", lo, op.done_t))
    procs = {op.process, an["prev"].process}
    return headline, sents, _bullets(run, ops, procs, an["lo"] - 200_000_000, an["hi"] + 50_000_000)


def _stuck_story(run):
    if not run.result("liveness", "stuck", default=False):
        return None
    h = run.history
    acq = h.f_code("acquire")
    best = None
    for key in run.lock_keys:
        iv = sorted((hd.start, hd.end) for hd in run.holds if hd.key == key)
        cover_end = run.t0
        gaps = []
        for s, e in iv:
            if s > cover_end:
                gaps.append((cover_end, s))
            cover_end = max(cover_end, e)
        if run.t_end > cover_end:
            gaps.append((cover_end, run.t_end))
        for g in gaps:
            if best is None or g[1] - g[0] > best[1] - best[0]:
                best = (g[0], g[1], key)
    if best is None:
        return None
    lo, hi, key = best
    m = (h.f == acq) & (h.type == T_INVOKE) & (h.t >= lo) & (h.t <= hi) & (h.proc >= 0)
    tries = int(m.sum())
    who = sorted(set(int(p) for p in h.proc[m]))
    headline = Sentence(f"Nobody held {key} from {ts(run, lo)} to {ts(run, hi)} ({ms(hi - lo)}) although "
                        f"{len(who)} client{'s' if len(who) != 1 else ''} made {tries} acquire "
                        f"attempt{'s' if tries != 1 else ''}.", lo, hi)
    return headline, [Sentence(f"Faults active then: {faults_active_text(run, lo, hi)}.", lo, hi)], []


def _bullets(run, ops, procs, lo, hi, limit=28):
    """Chronological events of the involved clients and the nemesis in [lo, hi]."""
    h = run.history
    out = []
    m = (h.t >= lo) & (h.t <= hi)
    names = h.f_names
    for i in np.nonzero(m)[0].tolist():
        p = int(h.proc[i])
        f = names[int(h.f[i])]
        ty = int(h.type[i])
        key = h.key_names[int(h.key[i])]
        v = h.value(i)
        t = clock(run, int(h.t[i]))
        if p == NEMESIS:
            w = next((w for w in run.windows if w.fault == key and (w.start == int(h.t[i]) or w.end == int(h.t[i]))), None)
            if f == "start" and w is not None:
                out.append((t, "nemesis", faultstyle.describe(key, w.detail, w.end - w.start)))
            elif f == "stop" and w is not None:
                out.append((t, "nemesis", faultstyle.over(key, w.detail, w.end - w.start)))
            continue
        if p not in procs:
            continue
        who = f"client {p}"
        if f == "acquire" and ty == T_OK:
            fence = _fence(v)
            out.append((t, who, f"acquired {key}" + (f" (fence {fence})" if fence is not None else "")))
        elif f == "acquire" and ty == T_INFO:
            out.append((t, who, f"acquire of {key}: outcome unknown"))
        elif f == "release" and ty == T_INVOKE:
            out.append((t, who, f"releases {key}"))
        elif f == "release" and ty in (T_FAIL, T_INFO):
            err = v.get("error") if isinstance(v, dict) else None
            out.append((t, who, f"release of {key} {'failed' if ty == T_FAIL else 'outcome unknown'}"
                        + (f": {err}" if err else "")))
        elif f == "read" and ty == T_OK:
            out.append((t, who, f"read {key} = {_value_text(v)}"))
        elif f in ("write", "cas") and ty == T_OK:
            out.append((t, who, f"wrote {key} = {_value_text(v)}"))
        elif f in ("write", "cas") and ty == T_FAIL:
            err = v.get("error") if isinstance(v, dict) else None
            newest = v.get("newest") if isinstance(v, dict) else None
            out.append((t, who, f"write to {key} rejected" + (f": {err}" if err else "")
                        + (f" (fence {_fence(v)} < newest {newest})" if newest is not None else "")))
        elif f in ("write", "cas") and ty == T_INFO:
            out.append((t, who, f"write to {key}: outcome unknown"))
        elif f == "renew" and ty in (T_FAIL, T_INFO):
            out.append((t, who, f"renewal of {key} {'failed' if ty == T_FAIL else 'outcome unknown'}"))
    if len(out) > limit:
        out = out[:limit] + [("", "", f"\u2026 {len(out) - limit} more events in history.jsonl")]
    return out
