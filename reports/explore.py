"""The explorable timeline of a run page: an inline SVG drawn by a little plain JavaScript from
the run's data embedded in the page (no network, no library: it works from a CI artifact
opened as a file).

What it shows is the PNG timeline's (timeline.py): one row per client, holds as bars, waits in
acquire as thin lines, outcomes as marks, fault windows shaded, overlaps of two holders in red
and numbered, the operation linearizability could not place and its conflicts in violet. What
it adds: zoom and pan on time (wheel, drag, the toolbar's spans), the details of any operation
on hover (client, operation, key, outcome, token, value, times), and moments to jump to: a
narrative sentence links to `#t=LO,HI` (seconds) and the timeline zooms there; `#op=N` opens
operation N's details (a link to one operation).

data(run) is the JSON the script draws from (times in ms since the first event, rounded to
the microsecond); SCRIPT and CSS are the page's. Large runs stay small: the script draws only
what is in view, and above MAX_OPS operations only the lock operations are embedded.
"""

import json

from . import faultstyle
from .figstyle import HOLD_COLOR, KEY_COLORS, LIN_COLOR, OVERLAP_COLOR, UNKNOWN_COLOR
from .history import T_FAIL, T_INFO, T_INVOKE, T_OK
from .runfiles import targets_of

MAX_OPS = 40_000      # about 2.5 MB of page; a longer run embeds its lock operations near overlaps
MAX_HOLDS = 60_000
NEAR_NS = 1_000_000_000
OUTCOME = {T_OK: "ok", T_FAIL: "fail", T_INFO: "unknown"}


def _ms(run, t_ns):
    return round((t_ns - run.t0) / 1e6, 3)


def _value_text(v):
    """An operation's value in a few words: token, fence, value, error."""
    if v is None:
        return ""
    if isinstance(v, dict):
        parts = []
        for k in ("token", "fence", "value", "validity_ms", "error", "newest"):
            if k in v and v[k] is not None:
                parts.append(f"{k} {v[k]}")
        return ", ".join(parts) if parts else json.dumps(v)[:80]
    return json.dumps(v)[:80]


def _ops(run):
    """Every completed (or never completed) client operation: [row, f, key, invoke ms,
    complete ms or null, outcome, value text]."""
    h = run.history
    row = {c: i for i, c in enumerate(run.clients)}
    f_names = list(h.f_names)
    keep = range(len(f_names))
    client = h.proc >= 0
    if int(client.sum()) > 2 * MAX_OPS:   # a long run: the lock operations only
        keep = [i for i, f in enumerate(f_names) if f in ("acquire", "release", "renew")]
    keep = set(keep)
    pending, out = {}, []
    # ops beyond MAX_OPS: only those within NEAR_NS of an overlap or of the unplaceable op
    spans = [(ep.start - NEAR_NS, ep.end + NEAR_NS) for ep in run.episodes]
    unp = getattr(run, "unplaceable", None)
    if unp is not None:
        spans.append((unp.op.invoke - NEAR_NS, (unp.op.complete or unp.op.invoke) + NEAR_NS))
    spans.sort()
    near = None
    if int(client.sum()) > 2 * MAX_OPS:
        import bisect
        starts = [a for a, _ in spans]

        def near(t):
            i = bisect.bisect_right(starts, t) - 1
            return i >= 0 and any(spans[j][1] >= t for j in range(max(0, i - 8), i + 1))
    tl, pl, yl, fl, kl = h.t.tolist(), h.proc.tolist(), h.type.tolist(), h.f.tolist(), h.key.tolist()
    for i in range(len(tl)):
        p = pl[i]
        if p < 0 or fl[i] not in keep or p not in row:
            continue
        k = (p, fl[i], kl[i])
        if yl[i] == T_INVOKE:
            if near is not None and len(out) + len(pending) >= MAX_OPS // 4 and not near(tl[i]):
                continue   # a long run: past its first ones, only the operations near an overlap
            if k in pending:   # a new call while one was open: the old one never completed
                out.append(pending.pop(k))
            v = h.value(i)
            pending[k] = [row[p], fl[i], kl[i], _ms(run, tl[i]), None, "none", _value_text(v)]
            continue
        op = pending.pop(k, None)
        if op is None:
            continue
        op[4] = _ms(run, tl[i])
        op[5] = OUTCOME.get(yl[i], "unknown")
        v = _value_text(h.value(i))
        if v and v != op[6]:
            op[6] = (op[6] + " \u2192 " if op[6] else "") + v
        out.append(op)
        if len(out) >= MAX_OPS:
            break
    out.extend(pending.values())
    out.sort(key=lambda o: o[3])
    return out, f_names, near is None and len(out) < MAX_OPS


def data(run, sentences=()):
    """The JSON-able data the script draws (see the module's docstring)."""
    row = {c: i for i, c in enumerate(run.clients)}
    keys = list(run.lock_keys)
    key_idx = {k: i for i, k in enumerate(keys)}
    ops, f_names, complete = _ops(run)
    h = run.history
    # the op keys (resource keys too) are history key codes: ship the names used
    used = sorted({o[2] for o in ops})
    remap = {k: n for n, k in enumerate(used)}
    op_keys = [h.key_names[k] for k in used]
    for o in ops:
        o[2] = remap[o[2]]
    holds = []
    for hd in run.holds:
        if hd.process not in row or len(holds) >= MAX_HOLDS:
            continue
        holds.append([row[hd.process], key_idx.get(hd.key, 0), _ms(run, hd.start), _ms(run, hd.end),
                      1 if hd.open_at_end else 0])
    faults = sorted({w.fault for w in run.windows})
    windows = []
    for w in run.windows:
        targets = [row[p] for p in targets_of(w.detail) if p in row]
        windows.append([faults.index(w.fault), _ms(run, w.start), _ms(run, w.end),
                        faultstyle.label(w.fault, w.detail, w.end - w.start),
                        faultstyle.describe(w.fault, w.detail, w.end - w.start), targets])
    episodes = []
    for ep in run.episodes:
        pairs = [[row[a.process], row[b.process], _ms(run, s), _ms(run, e)]
                 for a, b, s, e in ep.pairs if a.process in row and b.process in row]
        episodes.append([ep.number, ep.key, _ms(run, ep.start), _ms(run, ep.end), pairs,
                         sorted({hd.process for hd in ep.holds})])
    lin = []
    unp = getattr(run, "unplaceable", None)
    if unp is not None:
        for n, op in enumerate([unp.op] + unp.conflicts):
            if op.process not in row:
                continue
            lin.append({"row": row[op.process], "main": n == 0, "f": op.f, "key": op.key,
                        "inv": _ms(run, op.invoke), "done": None if op.complete is None else _ms(run, op.complete),
                        "outcome": op.outcome, "value": _value_text(op.value)})
    return {
        "clients": run.clients, "keys": keys, "opKeys": op_keys, "fNames": f_names,
        "durationMs": _ms(run, run.t_end), "holds": holds, "ops": ops, "opsComplete": complete, "holdsComplete": len(holds) == len(run.holds),
        "faults": [[f, faultstyle.color(f)] for f in faults], "windows": windows, "episodes": episodes,
        "lin": lin,
        # a history without a clock (historypage.py) is drawn on its source lines: 1 line = 1 ms
        "unit": "line" if getattr(run, "time_unit", "s") == "line" else "s",
        "spans": _register_only(run),
        # where the page opens when no #moment is asked for (None: the whole history)
        "focus": run.focus_ms() if hasattr(run, "focus_ms") else None,
        "colors": {"hold": HOLD_COLOR, "keys": KEY_COLORS, "overlap": OVERLAP_COLOR, "lin": LIN_COLOR,
                   "unknown": UNKNOWN_COLOR},
    }


def _register_only(run):
    """True for a history with no lock operation (a Knossos or Porcupine register's): its
    operations are drawn from call to return, the spans linearizability orders."""
    return not run.holds and not any(f in ("acquire", "release", "renew") for f in run.history.f_names)


def embed(run):
    """The data as a <script type="application/json"> (its '</' escaped)."""
    text = json.dumps(data(run), separators=(",", ":")).replace("</", "<\\/")
    return f'<script type="application/json" id="tl-data">{text}</script>'


def moment_href(run, at):
    """'#t=LO,HI' (seconds since the first event, padded a little) for a Sentence's `at`."""
    lo, hi = (at[0] - run.t0) / 1e9, (at[1] - run.t0) / 1e9
    pad = max((hi - lo) * 0.25, 0.05)
    return f"#t={max(lo - pad, 0):.4f},{hi + pad:.4f}"


CSS = """
#tl{border:1px solid #d8d8de;border-radius:6px;padding:6px 8px 8px;position:relative;background:#fff}
#tl .bar{display:flex;flex-wrap:wrap;gap:6px;align-items:center;font-size:.86em;margin-bottom:4px}
#tl button{font:inherit;padding:2px 9px;border:1px solid #c8c8d0;border-radius:4px;background:#f6f6f8;cursor:pointer}
#tl button:hover{background:#e9e9ef} #tl-range{font-variant-numeric:tabular-nums;color:#333;margin-left:6px}
#tl .hint{color:#777;margin-left:auto}
#tl svg{display:block;width:100%;user-select:none;cursor:grab;touch-action:none}
#tl svg.drag{cursor:grabbing}
#tl svg text{font-family:system-ui,'DejaVu Sans',sans-serif}
#tl-tip{position:absolute;pointer-events:none;background:#1d1d1f;color:#fff;font-size:12.5px;line-height:1.4;
padding:6px 9px;border-radius:5px;max-width:440px;box-shadow:0 2px 8px rgba(0,0,0,.25);display:none;z-index:5}
#tl-tip b{color:#ffd479} #tl-tip .k{color:#bbb}
#tl .legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:.8em;color:#444;margin-top:4px}
#tl .legend i{display:inline-block;width:14px;height:9px;margin-right:5px;vertical-align:middle;border-radius:2px}
a.moment{color:inherit;text-decoration:underline dotted #8fb0dd;text-underline-offset:3px}
a.moment:hover{background:#eef4ff}
#tl.flash{box-shadow:0 0 0 3px #9ec5ff}
"""

# The script: reads #tl-data, draws the SVG for the view [lo, hi] (ms), redraws on zoom/pan.
SCRIPT = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("tl-data").textContent);
  var root = document.getElementById("tl"), svg = document.getElementById("tl-svg");
  var tip = document.getElementById("tl-tip"), rangeEl = document.getElementById("tl-range");
  var NS = "http://www.w3.org/2000/svg";
  var LEFT = 78, RIGHT = 12, TOP = 46, ROW = D.clients.length > 12 ? 26 : D.clients.length > 8 ? 34 : D.clients.length > 4 ? 42 : 54, AXIS = 22;
  var full = [-D.durationMs * 0.01, D.durationMs * 1.01 + 1];
  var view = full.slice(), W = 800, pinned = null;
  var MAX_OPS_DRAWN = 4000, MAX_HOLDS_DRAWN = 5000;
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function x(t) { return LEFT + (t - view[0]) / (view[1] - view[0]) * (W - LEFT - RIGHT); }
  function tAt(px) { return view[0] + (px - LEFT) / (W - LEFT - RIGHT) * (view[1] - view[0]); }
  function rowY(r) { return TOP + r * ROW; }
  var LINES = D.unit === "line";
  function fmt(ms) {
    if (LINES) return "line " + Math.round(ms);
    var a = Math.abs(ms);
    if (a < 0.0005) return "0 s";
    if (a >= 1000) return (ms / 1000).toFixed(a >= 10000 ? 2 : 3) + " s";
    if (a >= 10) return ms.toFixed(1) + " ms";
    return ms.toFixed(3) + " ms";
  }
  function span(ms) {
    if (LINES) return Math.round(ms) + " lines";
    if (ms >= 1000) return (ms / 1000).toFixed(ms >= 10000 ? 1 : 2) + " s";
    if (ms >= 10) return Math.round(ms) + " ms";
    return ms.toFixed(ms >= 1 ? 1 : 3) + " ms";
  }
  function niceStep(range, n) {
    var raw = range / n, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    return p * (m < 1.5 ? 1 : m < 3 ? 2 : m < 7 ? 5 : 10);
  }
  function visible(a, b) { return b >= view[0] && a <= view[1]; }
  function clampView(lo, hi) {
    var w = Math.max(hi - lo, 0.01), fw = full[1] - full[0];
    if (w > fw) { lo = full[0]; hi = full[1]; }
    else {
      if (lo < full[0]) { hi += full[0] - lo; lo = full[0]; }
      if (hi > full[1]) { lo -= hi - full[1]; hi = full[1]; }
    }
    return [lo, Math.max(hi, lo + 0.01)];
  }
  function draw() {
    W = Math.max(root.clientWidth - 16, 360);
    var H = TOP + D.clients.length * ROW + AXIS;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("height", H);
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var defs = el("defs", {}, svg), clip = el("clipPath", {id: "tl-clip"}, defs);
    el("rect", {x: LEFT, y: 0, width: W - LEFT - RIGHT, height: H}, clip);
    var g = el("g", {"clip-path": "url(#tl-clip)"}, svg);
    var bottom = rowY(D.clients.length);
    // rows and grid
    D.clients.forEach(function (c, r) {
      el("line", {x1: LEFT, x2: W - RIGHT, y1: rowY(r + 1), y2: rowY(r + 1), stroke: "#eee"}, svg);
      var lab = el("text", {x: LEFT - 8, y: rowY(r) + ROW / 2 + 4, "text-anchor": "end", "font-size": 12,
                            fill: "#333"}, svg);
      lab.textContent = "client " + c;
    });
    var step = niceStep(view[1] - view[0], Math.max(2, Math.floor((W - LEFT) / 110)));
    for (var t = Math.ceil(view[0] / step) * step; t <= view[1]; t += step) {
      var px = x(t);
      if (px > W - RIGHT - 18) break;
      el("line", {x1: px, x2: px, y1: TOP - 4, y2: bottom, stroke: "#e2e2e2"}, g);
      var tl = el("text", {x: px, y: bottom + 15, "text-anchor": "middle", "font-size": 11, fill: "#555"}, svg);
      tl.textContent = LINES ? "line " + Math.round(t) : step >= 1000 ? (t / 1000).toFixed(step >= 10000 ? 0 : Math.max(0, -Math.floor(Math.log10(step / 1000)))) + " s"
                                    : (t / 1000).toFixed(Math.min(6, 3 - Math.floor(Math.log10(step)))) + " s";
    }
    // fault windows: shaded bands, labels on two levels where they fit
    var labelEnds = [-1e9, -1e9];
    D.windows.forEach(function (w, i) {
      if (!visible(w[1], w[2])) return;
      var color = D.faults[w[0]][1], x0 = x(w[1]), x1 = Math.max(x(w[2]), x0 + 2);
      var r = el("rect", {x: x0, y: TOP - 4, width: x1 - x0, height: bottom - TOP + 4, fill: color,
                          "fill-opacity": 0.13, "data-k": "w", "data-i": i}, g);
      w[5].forEach(function (row) {
        el("rect", {x: x0, y: rowY(row) + 2, width: x1 - x0, height: ROW - 4, fill: color, "fill-opacity": 0.16,
                    "data-k": "w", "data-i": i}, g);
      });
      var lx = Math.max(x0, LEFT) + 2, len = w[3].length * 6.3 + 6;
      for (var lvl = 0; lvl < 2; lvl++) {
        if (lx > labelEnds[lvl]) {
          var txt = el("text", {x: lx, y: TOP - 10 - 14 * lvl, "font-size": 11, "font-weight": 600, fill: color,
                                "data-k": "w", "data-i": i}, svg);
          txt.textContent = w[3];
          labelEnds[lvl] = lx + len;
          break;
        }
      }
    });
    // holds: each as a bar, or, when too many are in view, binned: per row and 2 px of time,
    // the share of it the client held a lock, as the bar's opacity
    var nk = Math.max(1, D.keys.length), laneH = (ROW * 0.56) / nk, inViewHolds = 0;
    for (var i = 0; i < D.holds.length; i++) if (visible(D.holds[i][2], D.holds[i][3])) inViewHolds++;
    if (inViewHolds > MAX_HOLDS_DRAWN) {
      var BIN = 2, nb = Math.ceil((W - LEFT - RIGHT) / BIN), msPerBin = (view[1] - view[0]) / nb;
      var cover = D.clients.map(function () { return new Float32Array(nb); });
      D.holds.forEach(function (h) {
        if (!visible(h[2], h[3])) return;
        var a = Math.max(h[2], view[0]), b = Math.min(h[3], view[1]);
        var i0 = Math.floor((a - view[0]) / msPerBin), i1 = Math.min(nb - 1, Math.floor((b - view[0]) / msPerBin));
        for (var k = i0; k <= i1; k++) {
          var lo = view[0] + k * msPerBin, hi = lo + msPerBin;
          cover[h[0]][k] += (Math.min(b, hi) - Math.max(a, lo)) / msPerBin;
        }
      });
      cover.forEach(function (c, r) {
        for (var k = 0; k < nb; k++) {
          if (c[k] <= 0) continue;
          el("rect", {x: LEFT + k * BIN, y: rowY(r) + ROW * 0.22, width: BIN, height: ROW * 0.56,
                      fill: D.colors.hold, "fill-opacity": Math.min(1, 0.15 + c[k])}, g);
        }
      });
    }
    for (var i = 0; i < D.holds.length && inViewHolds <= MAX_HOLDS_DRAWN; i++) {
      var h = D.holds[i];
      if (!visible(h[2], h[3])) continue;
      var hx0 = x(h[2]), hx1 = Math.max(x(h[3]), hx0 + 1);
      el("rect", {x: hx0, y: rowY(h[0]) + ROW * 0.22 + h[1] * laneH, width: hx1 - hx0, height: laneH,
                  fill: nk > 1 ? D.colors.keys[h[1] % D.colors.keys.length] : D.colors.hold,
                  "data-k": "h", "data-i": i}, g);
    }
    // overlaps: a band and a red bar on each holder's row for each pair
    var labels = [];
    D.episodes.forEach(function (ep, i) {
      if (!visible(ep[2], ep[3])) return;
      var bx0 = x(ep[2]), bx1 = Math.max(x(ep[3]), bx0 + 2);
      el("rect", {x: bx0, y: TOP - 4, width: bx1 - bx0, height: bottom - TOP + 4, fill: D.colors.overlap,
                  "fill-opacity": 0.10, "data-k": "e", "data-i": i}, g);
      ep[4].forEach(function (p) {
        [p[0], p[1]].forEach(function (row) {
          var px0 = x(p[2]), px1 = Math.max(x(p[3]), px0 + 2);
          el("rect", {x: px0, y: rowY(row) + ROW * 0.18, width: px1 - px0, height: ROW * 0.64,
                      fill: D.colors.overlap, stroke: "#fff", "stroke-width": 0.6, "data-k": "e", "data-i": i}, g);
        });
      });
      var top = Math.min.apply(null, ep[4].length ? ep[4].map(function (p) { return Math.min(p[0], p[1]); }) : [0]);
      labels.push([i, Math.max(bx0, LEFT + 8), top]);
    });
    // numbered labels: each on the first of three levels where it collides with none placed
    var placed = [], MAX_LABELS = 120;
    var epHidden = labels.length > MAX_LABELS ? labels.length : 0;
    if (epHidden) labels = [];   // a wall of numbers: zoom in to read them
    labels.forEach(function (l) {
      var ep = D.episodes[l[0]], wlab = 8 + 6.5 * String(ep[0]).length;
      for (var lvl = 0; lvl < 3; lvl++) {
        var cy = rowY(l[2]) + 6 - 15 * lvl, box = [l[1] - wlab / 2, l[1] + wlab / 2, cy - 7, cy + 7];
        if (cy - 7 < TOP - 4) break;   // never over the fault labels: the overlap table lists it
        var hit = placed.some(function (b) { return box[0] < b[1] && b[0] < box[1] && box[2] < b[3] && b[2] < box[3]; });
        if (hit) continue;
        placed.push(box);
        el("rect", {x: box[0], y: box[2], width: wlab, height: 14, rx: 7, fill: D.colors.overlap, stroke: "#fff",
                    "data-k": "e", "data-i": l[0], "class": "ep-label"}, svg);
        var tx = el("text", {x: l[1], y: cy + 4, "text-anchor": "middle", "font-size": 10.5, "font-weight": 700,
                             fill: "#fff", "pointer-events": "none"}, svg);
        tx.textContent = ep[0];
        break;
      }
    });
    // operations: waits in acquire as lines, completions as marks (when few enough are in view)
    var inView = [];
    for (var j = 0; j < D.ops.length; j++) {
      var o = D.ops[j], end = o[4] === null ? D.durationMs : o[4];
      if (o[3] > view[1]) break;
      if (end >= view[0]) inView.push(j);
    }
    var opsShown = inView.length <= MAX_OPS_DRAWN;
    if (opsShown) {
      inView.forEach(function (j) {
        var o = D.ops[j], f = D.fNames[o[1]], y = rowY(o[0]), end = o[4] === null ? D.durationMs : o[4];
        var lock = f === "acquire" || f === "release" || f === "renew";
        var ox0 = x(o[3]), ox1 = Math.max(x(end), ox0 + 1.5);
        var yy = lock ? y + ROW * 0.5 : y + ROW * 0.12;
        var color = o[5] === "ok" ? (lock ? "#1a7a1a" : "#111") : o[5] === "fail" ? "#777" : D.colors.unknown;
        if (f === "acquire" || D.spans) el("line", {x1: ox0, x2: ox1, y1: yy, y2: yy, stroke: "#9a9a9a", "stroke-width": 1.2}, g);
        el("rect", {x: ox0 - 1, y: yy - 4, width: ox1 - ox0 + 2, height: 8, fill: "transparent", "data-k": "o",
                    "data-i": j, "class": "op"}, g);
        if (o[4] !== null) {
          var m = x(o[4]);
          if (o[5] === "ok" && f === "release") el("path", {d: "M" + (m - 3) + "," + (yy - 4) + "h3v8h-3", fill: "none", stroke: "#555", "stroke-width": 1.3, "data-k": "o", "data-i": j, "class": "op"}, g);
          else if (o[5] === "ok" && f === "renew") el("circle", {cx: m, cy: yy, r: 3, fill: "none", stroke: "#1a7a1a", "stroke-width": 1.3, "data-k": "o", "data-i": j, "class": "op"}, g);
          else if (o[5] === "ok" && lock) el("path", {d: "M" + m + "," + (yy - 4) + "l6,4l-6,4z", fill: color, "data-k": "o", "data-i": j, "class": "op"}, g);
          else if (o[5] === "ok") el("rect", {x: m - 0.75, y: yy - 3, width: 1.5, height: 7, fill: color, "data-k": "o", "data-i": j, "class": "op"}, g);
          else if (o[5] === "fail") el("path", {d: "M" + (m - 3.5) + "," + (yy - 3.5) + "l7,7m0,-7l-7,7", stroke: color, "stroke-width": 1.6, "data-k": "o", "data-i": j, "class": "op"}, g);
          else el("path", {d: "M" + m + "," + (yy - 4.5) + "l4.5,4.5l-4.5,4.5l-4.5,-4.5z", fill: color, "data-k": "o", "data-i": j, "class": "op"}, g);
        }
      });
    }
    // the operation linearizability could not place, and its conflicts
    D.lin.forEach(function (o, i) {
      var end = o.done === null ? D.durationMs : o.done;
      if (!visible(o.inv, end)) return;
      var lx0 = x(o.inv), lx1 = Math.max(x(end), lx0 + 3), y = rowY(o.row) + 2;
      el("rect", {x: lx0, y: y, width: lx1 - lx0, height: 6, fill: o.main ? D.colors.lin : "#fff",
                  stroke: D.colors.lin, "stroke-width": 1.6, "data-k": "l", "data-i": i, "class": "lin"}, g);
      var t = el("text", {x: Math.max(lx0, LEFT) + 2, y: y - 2, "font-size": 10.5, "font-weight": 700,
                          fill: D.colors.lin, "data-k": "l", "data-i": i}, svg);
      t.textContent = (o.main ? "cannot be placed: " : "conflicts: ") + "client " + D.clients[o.row] + "'s " + o.f;
    });
    rangeEl.textContent = "showing " + fmt(view[0] < 0 ? 0 : view[0]) + " \u2013 " + fmt(view[1]) +
      " (" + span(view[1] - view[0]) + ")" + (opsShown ? "" : "; zoom in to see each of the " + inView.length + " operations") +
      (inViewHolds > MAX_HOLDS_DRAWN ? " and " + inViewHolds + " holds (shaded by how much of the time each client held a lock)" : "") +
      (epHidden ? "; " + epHidden + " overlaps in view: zoom in to read their numbers" : "") +
      (D.opsComplete ? "" : "; a long run: past its start, only the operations within 1 s of an overlap are in this page") +
      (D.holdsComplete ? "" : "; only its first " + D.holds.length + " holds are in this page");
    root.setAttribute("data-view", view[0].toFixed(3) + "," + view[1].toFixed(3));
    root.setAttribute("data-ops-drawn", opsShown ? inView.length : 0);
    if (pinned) {
      if (pinned[0] === "o") {
        var po = D.ops[pinned[1]], pt = po[4] === null ? po[3] : po[4], pf = D.fNames[po[1]];
        var lockOp = pf === "acquire" || pf === "release" || pf === "renew";
        el("circle", {cx: x(pt), cy: rowY(po[0]) + (lockOp ? ROW * 0.5 : ROW * 0.12), r: 9, fill: "none",
                      stroke: "#1d5fb4", "stroke-width": 2, "class": "pinned"}, svg);
      }
      showTip(pinned[0], pinned[1], null);
    }
  }
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]; }); }
  function row(k, v) { return '<span class="k">' + k + ":</span> " + esc(v) + "<br>"; }
  function tipHtml(k, i) {
    if (k === "o") {
      var o = D.ops[i], end = o[4];
      return "<b>client " + D.clients[o[0]] + ": " + esc(D.fNames[o[1]]) + "</b> " + esc(D.opKeys[o[2]]) + "<br>" +
        row("outcome", o[5] === "none" ? "never completed" : o[5]) + (o[6] ? row("value", o[6]) : "") +
        row("invoked", fmt(o[3])) + (end === null ? "" : row("completed", fmt(end) + " (took " + span(end - o[3]) + ")"));
    }
    if (k === "h") {
      var h = D.holds[i];
      return "<b>client " + D.clients[h[0]] + " holds " + esc(D.keys[h[1]] || "") + "</b><br>" +
        row("from", fmt(h[2]) + " (acquire ok)") + row("to", fmt(h[3]) + (h[4] ? " (still held at the end)" : "")) +
        row("for", span(h[3] - h[2]));
    }
    if (k === "e") {
      var ep = D.episodes[i];
      return "<b>overlap #" + ep[0] + "</b> on " + esc(ep[1]) + "<br>" +
        row("holders", "clients " + ep[5].join(", ")) + row("from", fmt(ep[2])) + row("to", fmt(ep[3])) +
        row("for", span(ep[3] - ep[2]));
    }
    if (k === "w") {
      var w = D.windows[i];
      return "<b>" + esc(D.faults[w[0]][0]) + "</b><br>" + esc(w[4]) + "<br>" + row("from", fmt(w[1])) +
        row("to", fmt(w[2]));
    }
    if (k === "l") {
      var l = D.lin[i];
      return "<b>" + (l.main ? "no order can place this operation" : "conflicts with it") + "</b><br>" +
        row("client", D.clients[l.row]) + row("operation", l.f + " " + l.key) + row("outcome", l.outcome) +
        (l.value ? row("value", l.value) : "") + row("invoked", fmt(l.inv)) +
        (l.done === null ? "" : row("completed", fmt(l.done)));
    }
    return "";
  }
  function showTip(k, i, ev) {
    var html = tipHtml(k, i);
    if (!html) { tip.style.display = "none"; return; }
    tip.innerHTML = html;
    tip.style.display = "block";
    tip.setAttribute("data-k", k);
    tip.setAttribute("data-i", i);
    var r = root.getBoundingClientRect(), px, py;
    if (ev) { px = ev.clientX - r.left + 14; py = ev.clientY - r.top + 14; }
    else {
      var t = k === "o" ? D.ops[i][3] : k === "h" ? D.holds[i][2] : 0, rr = k === "o" ? D.ops[i][0] : k === "h" ? D.holds[i][0] : 0;
      px = x(t) + 16; py = svg.offsetTop + rowY(rr) + ROW;
    }
    px = Math.max(Math.min(px, r.width - 300), LEFT);
    tip.style.left = Math.max(4, px) + "px";
    tip.style.top = py + "px";
  }
  svg.addEventListener("mousemove", function (ev) {
    if (dragging) return;
    var t = ev.target, k = t.getAttribute && t.getAttribute("data-k");
    if (k) { pinned = null; showTip(k, +t.getAttribute("data-i"), ev); }
    else if (!pinned) tip.style.display = "none";
  });
  svg.addEventListener("mouseleave", function () { if (!pinned) tip.style.display = "none"; });
  function zoomTo(lo, hi) { view = clampView(lo, hi); draw(); }
  function zoomBy(f, at) {
    var c = at === undefined ? (view[0] + view[1]) / 2 : at;
    zoomTo(c - (c - view[0]) * f, c + (view[1] - c) * f);
  }
  svg.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var r = svg.getBoundingClientRect(), px = (ev.clientX - r.left) * W / r.width;
    if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
      var d = (ev.deltaX || ev.deltaY) / (W - LEFT - RIGHT) * (view[1] - view[0]);
      zoomTo(view[0] + d, view[1] + d);
    } else zoomBy(ev.deltaY > 0 ? 1.25 : 0.8, tAt(px));
  }, {passive: false});
  var dragging = null;
  svg.addEventListener("mousedown", function (ev) {
    dragging = {x: ev.clientX, view: view.slice()};
    svg.classList.add("drag");
    tip.style.display = "none";
  });
  window.addEventListener("mouseup", function () { dragging = null; svg.classList.remove("drag"); });
  window.addEventListener("mousemove", function (ev) {
    if (!dragging) return;
    var r = svg.getBoundingClientRect();
    var d = (ev.clientX - dragging.x) * W / r.width / (W - LEFT - RIGHT) * (dragging.view[1] - dragging.view[0]);
    zoomTo(dragging.view[0] - d, dragging.view[1] - d);
  });
  svg.addEventListener("dblclick", function (ev) {
    var r = svg.getBoundingClientRect();
    zoomBy(0.5, tAt((ev.clientX - r.left) * W / r.width));
  });
  root.querySelectorAll("button[data-z]").forEach(function (b) {
    b.addEventListener("click", function () {
      var z = b.getAttribute("data-z");
      if (z === "all") zoomTo(full[0], full[1]);
      else if (z === "in") zoomBy(0.5);
      else if (z === "out") zoomBy(2);
      else { var c = (view[0] + view[1]) / 2, w = +z; zoomTo(c - w / 2, c + w / 2); }
    });
  });
  // The timeline scrolled into view for a moment, only when it is not in view already. A page
  // opened at a #moment is not scrolled at all while the top of its drawing is on screen:
  // headless Chromium's --screenshot draws a scrolled page unscrolled, below a blank band as
  // tall as the scroll, so the screenshot of a moment whose timeline was in view anyway (a CI
  // artifact at 1400x900, whose viewport is some 760 px tall) had a blank band over its top.
  function reveal(onLoad) {
    var box = svg.getBoundingClientRect(), vh = window.innerHeight;
    var inView = box.top >= 0 && (onLoad ? box.top < vh - 40 : box.bottom <= vh);
    if (!inView) root.scrollIntoView({block: box.height + 60 > vh ? "start" : "center"});
  }
  // moments: #t=LO,HI (seconds) zooms there; #op=N opens operation N's details; `scroll`:
  // true (a click, a hash change) or "load" (the page was opened at it)
  function goHash(h, scroll) {
    var m = /t=([-0-9.]+),([-0-9.]+)/.exec(h), o = /op=(\d+)/.exec(h);
    if (o && D.ops[+o[1]]) {
      var op = D.ops[+o[1]], end = op[4] === null ? op[3] : op[4], pad = Math.max((end - op[3]) * 2, 20);
      if (!m) zoomTo(op[3] - pad, end + pad);
    }
    if (m) zoomTo(+m[1] * 1000, +m[2] * 1000);
    if (o && D.ops[+o[1]]) { pinned = ["o", +o[1]]; showTip("o", +o[1], null); }
    if ((m || o) && scroll) {
      reveal(scroll === "load");
      root.classList.add("flash");
      setTimeout(function () { root.classList.remove("flash"); }, 900);
    }
  }
  document.querySelectorAll("a.moment").forEach(function (a) {
    a.addEventListener("click", function (ev) {
      ev.preventDefault();
      goHash(a.getAttribute("href"), true);
      if (history.replaceState) history.replaceState(null, "", a.getAttribute("href"));
    });
  });
  window.addEventListener("resize", draw);
  window.addEventListener("hashchange", function () { goHash(location.hash, true); });
  window.locklabTimeline = {zoomTo: function (lo, hi) { zoomTo(lo, hi); }, view: function () { return view.slice(); }};
  draw();
  if (location.hash) goHash(location.hash, "load");
  else if (D.focus) zoomTo(D.focus[0], D.focus[1]);
  root.setAttribute("data-ready", "1");
})();
"""


def section(run):
    """The timeline's HTML: toolbar, SVG, tooltip, legend and data (the script comes once at
    the end of the page, htmlreport.run_page)."""
    legend = [f'<span><i style="background:{HOLD_COLOR}"></i>holds the lock</span>',
              '<span><i style="background:#9a9a9a;height:2px"></i>waiting in acquire</span>',
              '<span>\u25b6 acquire ok \u00a0 ] release ok \u00a0 \u25cb renew ok \u00a0 \u2715 failed \u00a0 '
              f'<span style="color:{UNKNOWN_COLOR}">\u25c6</span> outcome unknown \u00a0 | resource write</span>']
    if _register_only(run):   # another tool's register history: no lock, no holds
        legend = ['<span><i style="background:#9a9a9a;height:2px"></i>an operation, from its call to its '
                  'return</span>',
                  '<span>| read, write or cas ok \u00a0 \u2715 failed \u00a0 '
                  f'<span style="color:{UNKNOWN_COLOR}">\u25c6</span> outcome unknown</span>']
    if run.episodes:
        legend.append(f'<span><i style="background:{OVERLAP_COLOR}"></i>two clients hold it: overlap #n</span>')
    if getattr(run, "unplaceable", None) is not None:
        legend.append(f'<span><i style="background:{LIN_COLOR}"></i>operation no order can place '
                      f'<i style="border:1.6px solid {LIN_COLOR};background:#fff"></i>its conflicts</span>')
    for f in sorted({w.fault for w in run.windows}):
        legend.append(f'<span><i style="background:{faultstyle.color(f)};opacity:.45"></i>fault: {f}</span>')
    return ("<div id=\"tl\"><div class=\"bar\">"
            "<button data-z=\"all\" title=\"the whole run\">all</button>"
            "<button data-z=\"out\" title=\"zoom out (or wheel)\">\u2212</button>"
            "<button data-z=\"in\" title=\"zoom in (or wheel, double-click)\">+</button>"
            + ("<button data-z=\"1000\">1000 lines</button><button data-z=\"100\">100 lines</button>"
               "<button data-z=\"10\">10 lines</button>" if getattr(run, "time_unit", "s") == "line" else
               "<button data-z=\"1000\">1 s</button><button data-z=\"100\">100 ms</button>"
               "<button data-z=\"10\">10 ms</button>")
            + "<span id=\"tl-range\"></span>"
            "<span class=\"hint\">wheel: zoom \u00b7 drag: pan \u00b7 hover: details</span></div>"
            "<svg id=\"tl-svg\" role=\"img\" aria-label=\"timeline: one row per client, holds, overlaps, "
            "fault windows\"></svg><div id=\"tl-tip\"></div>"
            f"<div class=\"legend\">{''.join(legend)}</div></div>" + embed(run))
