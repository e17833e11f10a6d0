"""How each fault window is coloured and labelled. Only the nemesis event's own fields are
used (targets, nodes, links, offset, ...); unknown faults get a generic label.

A fault's colour, its noun and whether it acts on one client's row are its descriptor's
(faults/fault_descriptor.h), read from `locklab list --json` ("style") of the binary the
report judges with (runfiles.locklab_binary: $LOCKLAB_BINARY, else build/locklab). The table
below is a fallback only, for when no binary answers or its list has no styles (an older
binary); test_unit_faultstyle checks that it matches the binary's."""

import collections.abc
import functools
import json
import subprocess

DEFAULT_COLOR = "#7a7a9a"

# Fallback only (see above): id -> (colour, noun, client_row).
_FALLBACK_STYLES = {
    "none": (DEFAULT_COLOR, "no fault", False),
    "client-pause": ("#6b6b6b", "pause", True),
    "slow-cs": ("#a39b00", "slow critical section", True),
    "client-crash": ("#222222", "crash", True),
    "server-pause": ("#8e5fc2", "server pause", False),
    "memory-full": ("#b5405a", "memory full", False),
    "restart": ("#8c564b", "restart", False),
    "clock-jump": ("#e07b00", "clock jump", False),
    "clock-drift": ("#e07b00", "clock drift", False),
    "client-clock": ("#c75f00", "client clock step", True),
    "partition": ("#0f9fb0", "partition", False),
    "reply-loss": ("#3f8fd0", "reply loss", False),
    "failover": ("#d94fa8", "failover", False),
    "delay": ("#6a9a2a", "delayed write", True),
}


@functools.lru_cache(maxsize=4)
def _styles_of(binary):
    """id -> (colour, noun, client_row) from `binary list --json`; None when it does not answer
    with a style for every fault."""
    if binary is None:
        return None
    try:
        p = subprocess.run([binary, "list", "--json"], capture_output=True, text=True, timeout=60,
                           errors="replace")
        faults = json.loads(p.stdout).get("faults") if p.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError, AttributeError):
        return None
    if not isinstance(faults, list):
        return None
    out = {}
    for f in faults:
        st = f.get("style") if isinstance(f, dict) else None
        if not (isinstance(st, dict) and isinstance(f.get("id"), str) and isinstance(st.get("colour"), str)
                and isinstance(st.get("noun"), str)):
            return None
        out[f["id"]] = (st["colour"], st["noun"], bool(st.get("client_row", False)))
    return out


def styles():
    """Every fault's (colour, noun, client_row): the binary's, else the fallback table."""
    from .runfiles import locklab_binary   # here: runfiles is the heavier import
    return _styles_of(locklab_binary()) or _FALLBACK_STYLES


def style_source():
    """Where styles() came from: "locklab list --json" or "fallback"."""
    from .runfiles import locklab_binary
    return "locklab list --json" if _styles_of(locklab_binary()) else "fallback"


class _StyleField(collections.abc.Mapping):
    """A read-only id -> field view of styles(), read when first used."""

    def __init__(self, index):
        self._index = index

    def __getitem__(self, fault):
        return styles()[fault][self._index]

    def __iter__(self):
        return iter(styles())

    def __len__(self):
        return len(styles())


class _ClientFaults(collections.abc.Set):
    """The faults that act on one client process (style client_row): its row is hatched
    during the window."""

    def __contains__(self, fault):
        st = styles().get(fault)
        return bool(st and st[2])

    def __iter__(self):
        return (f for f, st in styles().items() if st[2])

    def __len__(self):
        return sum(1 for _ in self)


FAULT_COLORS = _StyleField(0)
FAULT_NOUNS = _StyleField(1)
CLIENT_FAULTS = _ClientFaults()


def color(fault):
    return FAULT_COLORS.get(fault, DEFAULT_COLOR)


def _ints(v):
    return [x for x in v if isinstance(x, int) and not isinstance(x, bool)] if isinstance(v, list) else []


def node_name(n):
    if isinstance(n, int) and not isinstance(n, bool):
        return "resource" if n == 0 else f"n{n}"
    return str(n)


def nodes_text(detail):
    nodes = detail.get("nodes")
    if isinstance(nodes, list) and nodes:
        return _compress([node_name(n) for n in nodes])
    return ""


def _compress(names):
    """n1,n2,n3,n4,n5 -> n1..n5 ; other lists joined by commas."""
    if len(names) >= 3 and all(isinstance(s, str) and s[:1] == "n" and s[1:].isdigit() for s in names):
        nums = [int(s[1:]) for s in names]
        if nums == list(range(nums[0], nums[0] + len(nums))):
            return f"n{nums[0]}..n{nums[-1]}"
    return ",".join(str(s) for s in names)


def links_text(detail, limit=3):
    links = detail.get("links")
    if not isinstance(links, list) or not links:
        return ""
    by_client = {}
    for link in links:
        if isinstance(link, list) and len(link) == 2:
            by_client.setdefault(str(link[0]), []).append(node_name(link[1]))
    parts = [f"c{c}\u2194{_compress(ns)}" for c, ns in by_client.items()]
    if len(parts) > limit:
        parts = parts[:limit] + [f"+{len(parts) - limit}"]
    return " ".join(parts)


def clients_text(detail):
    ts = _ints(detail.get("targets"))
    p = detail.get("process")
    if isinstance(p, int) and not isinstance(p, bool):
        ts.append(p)
    return ",".join(f"c{t}" for t in ts)


def seconds(ms):
    return f"{ms / 1000:.2f} s"


def label(fault, detail, duration_ns):
    """Short label for a fault window, e.g. 'pause c2 1.20 s', 'clock jump n1 +20s'."""
    d = detail if isinstance(detail, dict) else {}
    dur = seconds(duration_ns / 1e6)
    who = clients_text(d)
    nodes = nodes_text(d)
    if fault == "client-pause":
        return f"pause {who} {dur}".replace("  ", " ")
    if fault == "slow-cs":
        return f"slow CS {who} {dur}"
    if fault == "client-crash":
        return f"crash {who} (SIGKILL)"
    if fault == "server-pause":
        return f"server pause {nodes or 'n1'} {dur}"
    if fault == "restart":
        return f"restart {nodes} (down {dur})".replace("  ", " ")
    if fault == "memory-full":
        return f"memory full {nodes or 'n1'} {dur}"
    if fault == "clock-jump":
        return f"clock jump {nodes} {d.get('offset', '')}".strip()
    if fault == "client-clock":
        return f"clock step {who} {d.get('offset', '')}".strip()
    if fault == "clock-drift":
        rate = d.get("rate", d.get("factor", d.get("speed", "")))
        return f"clock drift {nodes} {rate}".strip()
    if fault == "partition":
        return f"partition {links_text(d) or nodes}".strip()
    if fault == "reply-loss":
        return f"reply loss {links_text(d) or nodes}".strip()
    if fault == "delay":
        dm = d.get("delay_ms")
        extra = f" +{seconds(dm)}" if isinstance(dm, (int, float)) else ""
        return f"delay {who} writes{extra}"
    if fault == "failover":
        bits = [f"{k} {node_name(v)}" for k, v in d.items()
                if k in ("from", "to", "old", "new", "promoted", "old_master", "new_master")]
        return ("failover " + " ".join(bits)).strip()
    bits = [f"{k}={v}" for k, v in d.items()
            if k not in ("duration_ms", "opened_ns") and isinstance(v, (str, int, float))][:2]
    return " ".join([fault] + bits + ([who] if who else []))


def describe(fault, detail, duration_ns):
    """Longer words for the narrative: 'the nemesis paused client 2 for 1.20 s'."""
    d = detail if isinstance(detail, dict) else {}
    dur = seconds(duration_ns / 1e6)
    ts = _ints(d.get("targets"))
    who = " and ".join(f"client {t}" for t in ts) or "a client"
    nodes = nodes_text(d) or "the lock node"
    point = d.get("point")
    at = f" (armed at pause point {point})" if isinstance(point, str) and point else ""
    if fault == "client-pause":
        return f"the nemesis froze {who} (SIGSTOP) for {dur}{at}"
    if fault == "slow-cs":
        return f"{who} ran a critical section {dur} longer than usual{at}"
    if fault == "client-crash":
        return f"the nemesis killed {who} (SIGKILL){at}"
    if fault == "server-pause":
        return f"the nemesis froze server {nodes} for {dur}"
    if fault == "memory-full":
        return f"server {nodes} refused writes with OOM errors for {dur}"
    if fault == "restart":
        return f"the nemesis killed server {nodes} and restarted it after {dur}"
    if fault == "clock-jump":
        return f"the wall clock of server {nodes} jumped {d.get('offset', '?')}"
    if fault == "client-clock":
        return f"the wall clock of {who} stepped {d.get('offset', '?')}"
    if fault == "clock-drift":
        return f"the wall clock of server {nodes} drifted ({label(fault, d, duration_ns)})"
    if fault == "partition":
        return f"the network cut the links {links_text(d, limit=10) or nodes} for {dur}"
    if fault == "reply-loss":
        return f"replies on the links {links_text(d, limit=10) or nodes} were dropped for {dur}"
    if fault == "delay":
        dm = d.get("delay_ms")
        late = f" by {seconds(dm)}" if isinstance(dm, (int, float)) else ""
        return f"writes of {who} to the resource were held back{late}"
    if fault == "failover":
        return f"a failover happened ({label(fault, d, duration_ns)})"
    return f"fault {label(fault, d, duration_ns)} was active"
