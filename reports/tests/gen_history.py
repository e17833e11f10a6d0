#!/usr/bin/python3
"""Writes a synthetic locklab run directory: many clients contending for one lock with a
counter workload, and periodic client pauses longer than the TTL that produce overlaps and lost
updates. Used to time the report on a long run (the 10-minute 16-client case) without running
Redis for ten minutes.

    /usr/bin/python3 reports/tests/gen_history.py OUT_DIR [--seconds 600] [--clients 16]
        [--hold-ms 100] [--pause-every 20] [--safe]

Writes OUT_DIR/history.jsonl, scenario.toml and a results.json carrying what the checker would
export: the holds as generated (acquire ok -> release invoke; no crashes here), the overlap
episodes of those holds and their counts (`locklab check --json` recomputes them)."""

import argparse
import heapq
import json
import os
import random


def generate(out, seconds=600, clients=16, hold_ms=100, pause_every=20.0, safe=False, seed=1):
    rnd = random.Random(seed)
    ms = 1_000_000
    t0 = 5_000_000_000_000
    end = t0 + int(seconds * 1e9)
    events = []

    holds = []  # (client, acquire ok event, release invoke time)

    def ev(t, p, ty, f, key, value=None):
        e = (t, p, ty, f, key, value)
        events.append(e)
        return e

    ttl = 500 * ms
    counter = 0
    acked = 0
    waiting = []  # (wait start, client)
    for c in range(1, clients + 1):
        st = t0 + rnd.randint(0, 5) * ms
        ev(st, c, "invoke", "acquire", "lock:0")
        waiting.append((st, c))
    now = t0 + 6 * ms
    next_pause = t0 + int(pause_every * 1e9)
    detached = []   # heap of (resume time, client, ops...) for paused holders
    token = 0
    while now < end:
        # failed acquires: waited longer than 2 s
        still = []
        for st, c in waiting:
            if now - st > 2000 * ms:
                ev(st + 2000 * ms, c, "fail", "acquire", "lock:0", {"error": "timeout waiting for lock"})
                ev(st + 2000 * ms + 20 * ms, c, "invoke", "acquire", "lock:0")
                still.append((st + 2020 * ms, c))
            else:
                still.append((st, c))
        waiting = still
        # paused clients that resume now rejoin
        while detached and detached[0][0] <= now:
            _, c, back = heapq.heappop(detached)
            waiting.append((back, c))
        if not waiting:
            now += 5 * ms
            continue
        i = rnd.randrange(len(waiting))
        st, c = waiting.pop(i)
        now = max(now, st + int(0.2 * ms))
        token += 1
        ok = ev(now, c, "ok", "acquire", "lock:0", {"token": f"{token:032x}", "validity_ms": 500})
        if not safe and now >= next_pause and pause_every > 0:
            next_pause += int(pause_every * 1e9)
            pause = 1200 * ms
            ev(now + 50_000, "nemesis", "info", "start", "client-pause",
               {"duration_ms": 1200, "mode": "targeted", "point": "after-acquire", "targets": [c]})
            ev(now + pause, "nemesis", "info", "stop", "client-pause", {"opened_ns": now + 50_000})
            r = now + pause + 100_000
            stale = counter   # it reads after resuming, but others keep writing meanwhile
            h = int(hold_ms * ms)
            ev(r, c, "invoke", "read", "counter:0")
            ev(r + 150_000, c, "ok", "read", "counter:0", stale + 3)
            ev(r + h, c, "invoke", "write", "counter:0", stale + 4)
            ev(r + h + 300_000, c, "ok", "write", "counter:0", stale + 4)
            ev(r + h + 320_000, c, "invoke", "release", "lock:0", {"token": f"{token:032x}"})
            holds.append((c, ok, r + h + 320_000))
            ev(r + h + 500_000, c, "fail", "release", "lock:0", {"error": "key was not ours or already gone"})
            acked += 1
            ev(r + h + 20 * ms, c, "invoke", "acquire", "lock:0")
            heapq.heappush(detached, (r + h + 20 * ms, c, r + h + 20 * ms))
            now += ttl
            continue
        h = int(hold_ms * ms * rnd.uniform(0.9, 1.1))
        ev(now + 30_000, c, "invoke", "read", "counter:0")
        ev(now + 200_000, c, "ok", "read", "counter:0", counter if counter else None)
        ev(now + h, c, "invoke", "write", "counter:0", counter + 1)
        counter += 1
        acked += 1
        ev(now + h + 300_000, c, "ok", "write", "counter:0", counter)
        ev(now + h + 320_000, c, "invoke", "release", "lock:0", {"token": f"{token:032x}"})
        holds.append((c, ok, now + h + 320_000))
        ev(now + h + 500_000, c, "ok", "release", "lock:0", None)
        nxt = now + h + 20 * ms
        ev(nxt, c, "invoke", "acquire", "lock:0")
        waiting.append((nxt, c))
        now = now + h + 600_000
    ev(end + 10 * ms, "harness", "invoke", "read", "counter:0")
    ev(end + 10 * ms + 200_000, "harness", "ok", "read", "counter:0", counter)
    events.sort(key=lambda e: e[0])
    index_of = {id(e): n for n, e in enumerate(events)}
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "history.jsonl"), "w") as fh:
        for n, (t, p, ty, f, key, v) in enumerate(events):
            fh.write(json.dumps({"index": n, "time_ns": t, "process": p, "type": ty, "f": f,
                                 "key": key, "value": v}, separators=(",", ":")) + "\n")
    with open(os.path.join(out, "scenario.toml"), "w") as fh:
        fh.write(f'# synthetic history from reports/tests/gen_history.py\nname = "synthetic"\nseed = {seed}\n'
                 f'duration_ms = {int(seconds * 1000)}\n\n[workload]\nclients = {clients}\nhold_ms = {hold_ms}\n')
    hold_json = sorted(({"process": c, "key": "lock:0", "start_ns": ok[0], "end_ns": e, "open_at_end": False,
                         "acquire_index": index_of[id(ok)]} for c, ok, e in holds),
                       key=lambda x: (x["start_ns"], x["process"]))
    episodes, pairs = overlap_episodes(hold_json)
    overlap_ms = sum(x["end_ns"] - x["start_ns"] for x in episodes) / 1e6
    results = {
        "scenario": "synthetic", "algorithm": "synthetic", "faults": [] if safe else ["client-pause"],
        "seed": seed, "verdict": "violated" if episodes else "safe", "ops": len(events) // 2,
        "mutual_exclusion": {"holds": len(hold_json), "overlapping_pairs": pairs,
                             "episodes": len(episodes), "overlap_ms": overlap_ms},
        "resource": {"acknowledged_writes": acked, "lost_updates": max(0, acked - counter),
                     "stale_writes_accepted": 0, "stale_writes_rejected": 0, "final_value_known": True},
        "liveness": {"stuck": False, "longest_wait_ms": 0},
        "config": {"clients": clients, "keys": 1, "hold_ms": hold_ms},
        "checks": [{"name": "mutual_exclusion", "ok": not episodes,
                    "message": f"{pairs} overlapping hold pairs in {len(episodes)} episodes"}],
        "holds": hold_json,
        "episodes": episodes,
        "run_dir": os.path.abspath(out),
    }
    with open(os.path.join(out, "results.json"), "w") as fh:
        json.dump(results, fh, indent=2)
    return len(events)


def overlap_episodes(holds):
    """Episodes (times with two holders of the one key) and overlapping pairs of the generated
    holds; one client never holds twice at once here, so holders = active holds."""
    pts = sorted([(x["start_ns"], 1, n) for n, x in enumerate(holds)] +
                 [(x["end_ns"], 0, n) for n, x in enumerate(holds)])   # ends first at a tie
    active, episodes, pairs, cur = set(), [], 0, None
    for t, kind, n in pts:
        if kind:
            pairs += len(active)
            active.add(n)
            if cur is None and len(active) >= 2:
                cur = {"key": "lock:0", "start_ns": t, "end_ns": t, "processes": set()}
            if cur is not None:
                cur["processes"].update(holds[a]["process"] for a in active)
        else:
            active.discard(n)
            if cur is not None and len(active) < 2:
                cur["end_ns"] = t
                cur["processes"] = sorted(cur["processes"])
                episodes.append(cur)
                cur = None
    return episodes, pairs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--hold-ms", type=float, default=100)
    ap.add_argument("--pause-every", type=float, default=20.0)
    ap.add_argument("--safe", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    n = generate(a.out, a.seconds, a.clients, a.hold_ms, a.pause_every, a.safe, a.seed)
    print(f"{a.out}: {n} events")


if __name__ == "__main__":
    main()
