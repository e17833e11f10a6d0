"""How each fault window is coloured, labelled and told. The fault descriptor is the only
place that knows a fault (faults/fault_descriptor.h): its colour, noun and client row, its
label and story templates, its phrases and its traits are read from `locklab list --json` of
the binary the report judges with (runfiles.locklab_binary: $LOCKLAB_BINARY, else
build/locklab), and filled here from the window's own `start` event (targets, nodes, links,
offset, ...). Nothing here names a fault: a binary that cannot be asked is a ToolError (exit
69, one line), never invented text; a fault the binary does not list (a foreign history) gets
the generic label and story.

A template's placeholders (FaultStyle in faults/fault_descriptor.h): {duration}, {clients},
{client_words}, {nodes}, {links} / {links:N}, {noun}, {id}, {label}, {field:NAME},
{seconds:NAME}; `{a|b|'text'}` takes the first alternative that fills, and `[...]` is left
out unless every placeholder inside it filled."""

import collections
import collections.abc
import functools
import re

from .history import ToolError

DEFAULT_COLOR = "#7a7a9a"

# One fault as its descriptor describes it (`locklab list --json`).
Descriptor = collections.namedtuple(
    "Descriptor", "colour noun client_row label story during after over traits")


def _text(v):
    return v if isinstance(v, str) else ""


def _descriptor(f):
    """The Descriptor of one `faults` entry, or None when it lacks a style or the words."""
    st = f.get("style") if isinstance(f, dict) else None
    if not (isinstance(st, dict) and isinstance(f.get("id"), str) and isinstance(st.get("colour"), str)
            and isinstance(st.get("noun"), str) and isinstance(f.get("label"), str)
            and isinstance(f.get("story"), str) and isinstance(f.get("traits"), dict)):
        return None
    ph = f.get("phrases") if isinstance(f.get("phrases"), dict) else {}
    return Descriptor(st["colour"], st["noun"], bool(st.get("client_row", False)), f["label"], f["story"],
                      _text(ph.get("during")), _text(ph.get("after")), _text(ph.get("over")), dict(f["traits"]))


@functools.lru_cache(maxsize=4)
def _catalog_of(binary):
    """id -> Descriptor from `binary list --json` (runfiles.lab_list), in its order. ToolError
    (one line) when it does not answer, or answers without a descriptor's style, words and
    traits for a fault."""
    from .runfiles import lab_list
    faults = lab_list(binary).get("faults")
    if not isinstance(faults, list):
        raise ToolError(f"`{binary} list --json` gave no faults array")
    out = {}
    for f in faults:
        d = _descriptor(f)
        if d is None:
            name = f.get("id") if isinstance(f, dict) else f
            raise ToolError(f"`{binary} list --json`: fault {name!r} has no style, label, story and traits "
                            "(a binary older than this report?)")
        out[f["id"]] = d
    return out


def catalog():
    """Every fault's Descriptor, from the binary (ToolError when it cannot be asked)."""
    from .runfiles import locklab_binary   # here: runfiles is the heavier import
    return _catalog_of(locklab_binary())


def descriptor(fault):
    """The fault's Descriptor; None for a fault the binary does not list."""
    return catalog().get(fault)


def trait(fault, name):
    """The descriptor's trait `name` of the fault (FaultTraits: node_down, kills_client,
    promotes_replica, no_effect, ...); False for a fault the binary does not list."""
    d = descriptor(fault)
    return d.traits.get(name, False) if d else False


def styles():
    """Every fault's (colour, noun, client_row)."""
    return {k: (d.colour, d.noun, d.client_row) for k, d in catalog().items()}


class _StyleField(collections.abc.Mapping):
    """A read-only id -> field view of the descriptors, read when first used."""

    def __init__(self, name):
        self._name = name

    def __getitem__(self, fault):
        return getattr(catalog()[fault], self._name)

    def __iter__(self):
        return iter(catalog())

    def __len__(self):
        return len(catalog())


class _ClientFaults(collections.abc.Set):
    """The faults that act on one client process (style client_row): its row is hatched
    during the window."""

    def __contains__(self, fault):
        d = catalog().get(fault)
        return bool(d and d.client_row)

    def __iter__(self):
        return (f for f, d in catalog().items() if d.client_row)

    def __len__(self):
        return sum(1 for _ in self)


FAULT_COLORS = _StyleField("colour")
FAULT_NOUNS = _StyleField("noun")
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


def clients_hit(detail):
    """The clients a window acts on: the ones its event names (targets, process) and the
    clients of the links it cut."""
    d = detail if isinstance(detail, dict) else {}
    out = _ints(d.get("targets"))
    p = d.get("process")
    if isinstance(p, int) and not isinstance(p, bool):
        out.append(p)
    links = d.get("links")
    if isinstance(links, list):
        out.extend(lk[0] for lk in links if isinstance(lk, list) and lk and isinstance(lk[0], int)
                   and not isinstance(lk[0], bool) and lk[0] not in out)
    return out


def seconds(ms):
    return f"{ms / 1000:.2f} s"


_PIECE = re.compile(r"\[([^\[\]]*)\]|\{([^{}]*)\}")


def _placeholder(name, fault, d, duration_ns):
    """One alternative of a placeholder, filled from the window ('' when it has nothing)."""
    if len(name) >= 2 and name[0] == name[-1] == "'":
        return name[1:-1]
    key, _, arg = name.partition(":")
    if key == "duration":
        return seconds(duration_ns / 1e6)
    if key == "clients":
        return clients_text(d)
    if key == "client_words":
        return " and ".join(f"client {t}" for t in _ints(d.get("targets")))
    if key == "nodes":
        return nodes_text(d)
    if key == "links":
        return links_text(d, limit=int(arg) if arg.isdigit() else 3)
    if key == "noun":
        return FAULT_NOUNS.get(fault, fault)
    if key == "id":
        return fault
    if key == "label":
        return label(fault, d, duration_ns)
    if key == "field" and arg:
        v = d.get(arg)
        return "" if v is None else str(v)
    if key == "seconds" and arg:
        v = d.get(arg)
        return seconds(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else ""
    raise ToolError(f"fault {fault}: its descriptor's template names {{{name}}}, which the report does not know "
                    "(faults/fault_descriptor.h, FaultStyle)")


def render(template, fault, detail, duration_ns):
    """`template` (a descriptor's label, story or phrase) filled from one window."""
    d = detail if isinstance(detail, dict) else {}

    def fill(text):
        """(text filled, whether every placeholder in it filled)."""
        out, pos, full = [], 0, True
        for m in _PIECE.finditer(text):
            out.append(text[pos:m.start()])
            pos = m.end()
            if m.group(1) is not None:
                inner, inner_full = fill(m.group(1))
                out.append(inner if inner_full else "")
            else:
                v = next((x for x in (_placeholder(a.strip(), fault, d, duration_ns)
                                      for a in m.group(2).split("|")) if x), "")
                full = full and bool(v)
                out.append(v)
        out.append(text[pos:])
        return "".join(out), full

    return fill(template)[0]


def _generic_label(fault, d):
    bits = [f"{k}={v}" for k, v in d.items()
            if k not in ("duration_ms", "opened_ns") and isinstance(v, (str, int, float))][:2]
    who = clients_text(d)
    return " ".join([fault] + bits + ([who] if who else []))


def label(fault, detail, duration_ns):
    """Short label for a fault window, e.g. 'pause c2 1.20 s', 'clock jump n1 +20s': its
    descriptor's label template; else the id and two fields of the event."""
    d = detail if isinstance(detail, dict) else {}
    desc = descriptor(fault)
    if desc is not None and desc.label:
        return render(desc.label, fault, d, duration_ns)
    return _generic_label(fault, d)


def describe(fault, detail, duration_ns):
    """Longer words for the narrative: 'the nemesis froze client 2 (SIGSTOP) for 1.20 s'."""
    desc = descriptor(fault)
    return render(desc.story if desc is not None and desc.story else "fault {label} was active",
                  fault, detail, duration_ns)


def client_phrase(fault, detail, duration_ns, ended):
    """What a client the window hit went through, before what it did next: 'resumed from a
    1.20 s pause and ' (`ended`: the window closed before that), 'during clock jump n1 +20s, '."""
    desc = descriptor(fault)
    tpl = ""
    if desc is not None:
        tpl = (desc.after if ended and desc.after else "") or desc.during
    return render(tpl or "during {label}, ", fault, detail, duration_ns)


def over(fault, detail, duration_ns):
    """The window's end among the story's events: 'pause over (client 2 runs again)'."""
    desc = descriptor(fault)
    return render(desc.over if desc is not None and desc.over else "{noun} over", fault, detail, duration_ns)
