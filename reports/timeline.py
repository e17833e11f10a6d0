"""The timeline of a run: one row per client, its holds as bars, overlaps of two holders in
red, fault windows shaded, writes to the resource marked.

Long runs are binned, never drawn bar by bar: above DETAIL_HOLDS holds (or DETAIL_EVENTS
events) the overview shows, per client, the fraction of each time bin it held the lock, and a
zoomed panel draws the exact bars around the first violation. Drawing is batched (one
collection per colour, not one artist per bar), so long runs stay fast.
"""

import matplotlib.colors
import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from . import faultstyle
from .figstyle import (DPI, HOLD_COLOR, KEY_COLORS, LIN_COLOR, OVERLAP_COLOR, UNKNOWN_COLOR, WAIT_COLOR,
                       WRITE_OK_COLOR, WRITE_REJECT_COLOR, below_axes, new_figure, styled,
                       vertical_bands)
from .narrative import first_resource_anomaly
from .history import T_FAIL, T_INFO, T_OK
from .runfiles import targets_of

DETAIL_HOLDS = 1500
DETAIL_EVENTS = 40000
MAX_LABELLED_WINDOWS = 14
MAX_NUMBERED_EPISODES = 40
ROW_PTS = 30    # a client's row in points (row_h inches in timeline(), about 0.42 x 72)


# --------------------------------------------------------------------------------------------
# data prepared once per run


class TimelineData:
    def __init__(self, run):
        self.run = run
        h = run.history
        self.clients = run.clients
        self.row = {c: i for i, c in enumerate(self.clients)}
        self.keys = run.lock_keys
        self.key_lane = {k: i for i, k in enumerate(self.keys)}
        # acquire attempts: invoke -> completion
        inv, done, typ, proc, _ = run.completed_ops(["acquire"])
        self.acq = (run.sec(inv), run.sec(done), typ, proc)
        # writes: completion marks
        wsel = run.ops(["write", "cas"])
        wsel = wsel[h.type[wsel] != 0]
        self.writes = []
        for i in wsel.tolist():
            v = h.value(i)
            ty = int(h.type[i])
            err = str(v.get("error", "")) if isinstance(v, dict) else ""
            kind = ("ok" if ty == T_OK else "unknown" if ty == T_INFO else
                    "rejected" if ("fence" in err or "stale" in err) else "failed")
            self.writes.append((run.sec(int(h.t[i])), int(h.proc[i]), kind))
        self.detailed = len(run.holds) <= DETAIL_HOLDS and len(h) <= DETAIL_EVENTS
        self.focus = focus_window(run)


def focus_window(run):
    """(lo_ns, hi_ns, label) around the first violation, or None."""
    if run.episodes:
        ep = run.episodes[0]
        lo = min(hd.start for hd in ep.holds)
        hi = max(hd.end for hd in ep.holds)
        lo = max(lo, ep.start - 2_000_000_000)
        hi = min(hi, ep.end + 2_000_000_000)
        what = f"overlap #1 on {ep.key}"
    else:
        a = first_resource_anomaly(run)
        unp = getattr(run, "unplaceable", None)
        if a is not None:
            lo, hi = a["lo"], a["hi"]
            what = a["short"]
        elif unp is not None:
            lo, hi = unplaceable_span(unp)
            what = f"client {unp.op.process}'s {unp.op.f} cannot be placed"
        else:
            return None
    span = max(hi - lo, 200_000_000)
    pad = max(span * 0.12, 50_000_000)
    return int(lo - pad), int(hi + pad), what


def unplaceable_span(unp):
    """(lo_ns, hi_ns) covering the unplaceable operation and its conflicts."""
    ends = [(o.invoke, o.complete if o.complete is not None else o.invoke) for o in [unp.op] + unp.conflicts]
    return min(a for a, _ in ends), max(b for _, b in ends)


def _draw_unplaceable(ax, td, lo, hi):
    """The operation linearizability could not place (a thick violet bar from its invoke to
    its completion on its client's row, labelled) and the operations it conflicts with
    (outlined in violet, labelled): what the checker's sentence is about."""
    run = td.run
    unp = getattr(run, "unplaceable", None)
    if unp is None:
        return
    min_w = (hi - lo) * 0.004
    for n, op in enumerate([unp.op] + unp.conflicts):
        y = td.row.get(op.process)
        if y is None:
            continue
        a = run.sec(op.invoke)
        b = run.sec(op.complete) if op.complete is not None else hi
        if b < lo or a > hi:
            continue
        main = n == 0
        verts = [[(a, y - 0.40), (a, y - 0.26), (max(b, a + min_w), y - 0.26), (max(b, a + min_w), y - 0.40)]]
        ax.add_collection(PolyCollection(verts, facecolors=LIN_COLOR if main else "none", edgecolors=LIN_COLOR,
                                         linewidths=1.6, zorder=7), autolim=False)
        text = (f"cannot be placed: {op.f}" if main else f"conflicts: {op.f}")
        ax.annotate(text, xy=(max(a, lo), y - 0.40), xytext=(2, 2), textcoords="offset points",
                    fontsize=8, color=LIN_COLOR, fontweight="bold", va="bottom", zorder=9,
                    bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.85))


def _bars(ax, rects, facecolor, edgecolor="white", lw=0.4, zorder=3):
    """Rectangles [(x, width, y, height), ...] in data coordinates."""
    if not rects:
        return
    verts = [[(x, y), (x, y + hh), (x + w, y + hh), (x + w, y)] for x, w, y, hh in rects]
    ax.add_collection(PolyCollection(verts, facecolors=facecolor, edgecolors=edgecolor, linewidths=lw,
                                     zorder=zorder), autolim=False)


# --------------------------------------------------------------------------------------------
# timeline


def _row_y(td, client):
    return td.row[client]


def _lane(td, key):
    """Vertical extent (offset, height) of key's lane within a row."""
    n = max(1, len(td.keys))
    lane_h = 0.56 / n
    i = td.key_lane.get(key, 0)
    return -0.28 + i * lane_h, lane_h


def _shade_faults(ax, td, lo, hi, labelled):
    run = td.run
    wins = [w for w in run.windows if w.end >= run.t0 + (lo * 1e9) and w.start <= run.t0 + hi * 1e9]
    label_all = labelled and len(wins) <= MAX_LABELLED_WINDOWS
    levels = []
    spans = {}
    hatches = {}
    for n, w in enumerate(wins):
        c = faultstyle.color(w.fault)
        s, e = run.sec(w.start), run.sec(w.end)
        if faultstyle.trait(w.fault, "kills_client"):
            # a crash is instantaneous: the window only says when the nemesis was busy with it
            ax.axvline(s, color=c, lw=1.4, ls="--", zorder=1)
        else:
            spans.setdefault(c, []).append((s, max(e, s + (hi - lo) * 0.0015)))
        if w.fault in faultstyle.CLIENT_FAULTS:
            for p in _targets(w):
                if p in td.row:
                    y = td.row[p]
                    if faultstyle.trait(w.fault, "kills_client"):
                        ax.plot([s], [y], marker="X", ms=13, color=c, zorder=6, mec="white", mew=1)
                        ax.annotate("crashed", (s, y), xytext=(6, 9), textcoords="offset points",
                                    fontsize=8, color=c, zorder=6)
                    else:
                        hatches.setdefault(c, []).append((s, e - s, y - 0.45, 0.9))
        if label_all:
            # stagger labels on up to three levels so neighbours do not collide
            lvl = 0
            while lvl < len(levels) and levels[lvl] > s:
                lvl += 1
            if lvl == len(levels):
                levels.append(0)
            text = faultstyle.label(w.fault, w.detail, w.end - w.start)
            levels[lvl] = s + (hi - lo) * (0.0085 * len(text) + 0.01)
            ax.annotate(text, xy=(max(s, lo), 1.0), xycoords=("data", "axes fraction"),
                        xytext=(2, 3 + 12 * (lvl % 3)), textcoords="offset points",
                        fontsize=8.5, color=c, fontweight="bold", va="bottom", clip_on=False,
                        annotation_clip=False)
    for c, iv in spans.items():
        vertical_bands(ax, iv, c, 0.13)
        if len(iv) <= 200:
            xs = [x for a, b in iv for x in (a, b)]
            ax.vlines(xs, 0, 1, transform=ax.get_xaxis_transform(), colors=c, lw=0.8, alpha=0.55, zorder=0)
    for c, rects in hatches.items():
        verts = [[(x, y), (x, y + hh), (x + w, y + hh), (x + w, y)] for x, w, y, hh in rects]
        ax.add_collection(PolyCollection(verts, facecolors="none", edgecolors=c, hatch="////", linewidths=0,
                                         alpha=0.55, zorder=1), autolim=False)
    return {w.fault for w in wins}


def _targets(w):
    return targets_of(w.detail)


def _draw_exact(ax, td, lo, hi, number_limit):
    run = td.run
    lo_ns, hi_ns = run.t0 + lo * 1e9, run.t0 + hi * 1e9
    # waiting for the lock: acquire invoke -> completion, a thin line on the row
    inv, done, typ, proc = td.acq
    m = (done >= lo) & (inv <= hi)
    segs_x, segs_y = [], []
    for a, b, p in zip(inv[m], done[m], proc[m]):
        y = td.row.get(int(p))
        if y is None:
            continue
        segs_x += [a, b, np.nan]
        segs_y += [y, y, np.nan]
    if segs_x:
        ax.plot(segs_x, segs_y, color=WAIT_COLOR, lw=1.1, zorder=2, solid_capstyle="butt")
    # acquire outcomes
    for t_code, marker, color, size in ((T_FAIL, "x", "#606060", 5), (T_INFO, "D", UNKNOWN_COLOR, 5),
                                        (T_OK, ">", "#1a7a1a", 5)):
        mm = m & (typ == t_code)
        ys = [td.row.get(int(p), np.nan) for p in proc[mm]]
        if len(ys):
            ax.plot(done[mm], ys, ls="none", marker=marker, ms=size, color=color, zorder=5,
                    mew=1.2 if marker == "x" else 0.5, mec=color if marker == "x" else "white")
    # hold bars
    per_row = {}
    for hd in run.holds:
        if hd.end < lo_ns or hd.start > hi_ns or hd.process not in td.row:
            continue
        off, lh = _lane(td, hd.key)
        per_row.setdefault((hd.process, hd.key), []).append((run.sec(hd.start), run.sec(hd.end) - run.sec(hd.start)))
    rects_by_color = {}
    for (p, key), bars in per_row.items():
        off, lh = _lane(td, key)
        color = HOLD_COLOR if len(td.keys) <= 1 else KEY_COLORS[td.key_lane[key] % len(KEY_COLORS)]
        rects_by_color.setdefault(color, []).extend((x, w, td.row[p] + off, lh) for x, w in bars)
    for color, rects in rects_by_color.items():
        _bars(ax, rects, color, "white", 0.4, zorder=3)
    # open-at-end holds: an arrow says "still held when the history ended"
    for hd in run.holds:
        if hd.open_at_end and hd.process in td.row and lo_ns <= hd.end <= hi_ns:
            ax.annotate("", xy=(run.sec(hd.end), td.row[hd.process]),
                        xytext=(run.sec(hd.end) - (hi - lo) * 0.015, td.row[hd.process]),
                        arrowprops=dict(arrowstyle="->", color=HOLD_COLOR, lw=1.5), zorder=4)
    # writes: ticks just above the bar
    for kind, color, marker, ms in (("ok", WRITE_OK_COLOR, "|", 9), ("rejected", WRITE_REJECT_COLOR, "x", 7),
                                    ("unknown", UNKNOWN_COLOR, "|", 9), ("failed", "#808080", "|", 9)):
        pts = [(t, td.row[p] - 0.38) for t, p, k in td.writes if k == kind and lo <= t <= hi and p in td.row]
        if pts:
            xs, ys = zip(*pts)
            ax.plot(xs, ys, ls="none", marker=marker, ms=ms, mew=1.6, color=color, zorder=6)
    _draw_overlaps(ax, td, lo, hi, number_limit)
    _draw_unplaceable(ax, td, lo, hi)


def _draw_overlaps(ax, td, lo, hi, number_limit):
    run = td.run
    lo_ns, hi_ns = run.t0 + lo * 1e9, run.t0 + hi * 1e9
    eps = [ep for ep in run.episodes if ep.end >= lo_ns and ep.start <= hi_ns]
    min_w = (hi - lo) * 0.002   # keep a short overlap visible at this zoom
    bands, rects = [], []
    for ep in eps:
        s, e = run.sec(ep.start), run.sec(ep.end)
        bands.append((s, max(e, s + min_w)))
        for a, b, ps, pe in ep.pairs:
            for hd in (a, b):
                if hd.process not in td.row:
                    continue
                off, lh = _lane(td, hd.key)
                x0, x1 = run.sec(ps), run.sec(pe)
                rects.append((x0, max(x1 - x0, min_w), td.row[hd.process] + off - 0.06, lh + 0.12))
    vertical_bands(ax, bands, OVERLAP_COLOR, 0.10)
    _bars(ax, rects, OVERLAP_COLOR, "white", 0.6, zorder=4)
    shown = eps if len(eps) <= number_limit else eps[:1]
    # Labels are placed in points (x: the axes' width in points over the time shown; y: rows
    # of ROW_PTS), each on the lowest of three levels where it collides with no label placed
    # before it, in any row; one that fits nowhere is left out (the overlap table lists it).
    width_pts = max(ax.get_position().width * ax.figure.get_figwidth() * 72, 100)
    pts_per_s = width_pts / max(hi - lo, 1e-9)
    placed = []   # (x0, x1, y0, y1) in points
    for ep in shown:
        s = run.sec(ep.start)
        rows = [td.row[hd.process] for hd in ep.holds if hd.process in td.row]
        top = min(rows) if rows else 0
        label_w = 7 + 5.5 * len(str(ep.number))
        x = s * pts_per_s
        for lvl in range(3):
            if 5 + 14 * lvl + 13 > (top + 0.30) * ROW_PTS + 12:
                break    # above the axes, where the fault labels are
            y = -top * ROW_PTS + 5 + 14 * lvl
            box = (x - label_w / 2 - 1, x + label_w / 2 + 1, y, y + 13)
            if not any(box[0] < b[1] and b[0] < box[1] and box[2] < b[3] and b[2] < box[3] for b in placed):
                break
        else:
            continue    # too crowded here: the overlap table lists it
        if 5 + 14 * lvl + 13 > (top + 0.30) * ROW_PTS + 12:
            continue
        placed.append(box)
        # a pill, not a circle: a circle grows with the digits and covers the level above
        ax.annotate(str(ep.number), xy=(s, top - 0.32), xytext=(0, 5 + 14 * lvl), textcoords="offset points",
                    ha="center", va="bottom", fontsize=8.5, fontweight="bold", color="white",
                    bbox=dict(boxstyle="round,pad=0.18,rounding_size=0.45", fc=OVERLAP_COLOR, ec="white", lw=0.8),
                    arrowprops=dict(arrowstyle="-", color=OVERLAP_COLOR, lw=0.8) if lvl else None,
                    zorder=8)
    return len(eps)


def _draw_binned(ax, td, lo, hi):
    """Per client, the fraction of each bin it held a lock, as a coloured strip."""
    run = td.run
    nb = 600
    edges = np.linspace(lo, hi, nb + 1)
    width = edges[1] - edges[0]
    img = np.zeros((len(td.clients), nb))
    starts = {}
    for hd in run.holds:
        starts.setdefault(hd.process, []).append((run.sec(hd.start), run.sec(hd.end)))
    for p, iv in starts.items():
        if p not in td.row:
            continue
        a = np.array(iv)
        s = np.sort(a[:, 0])
        e = np.sort(a[:, 1])
        cs, ce = np.concatenate([[0], np.cumsum(s)]), np.concatenate([[0], np.cumsum(e)])

        def cover(x):
            ks = np.searchsorted(s, x, side="right")
            ke = np.searchsorted(e, x, side="right")
            return (ks * x - cs[ks]) - (ke * x - ce[ke])
        c = cover(edges)
        img[td.row[p]] = np.clip(np.diff(c) / width, 0, 1)
    # transparent where nobody held, so fault shading stays visible; scaled to the busiest bins
    rgb = matplotlib.colors.to_rgb(HOLD_COLOR)
    cmap = matplotlib.colors.LinearSegmentedColormap.from_list("hold", [(*rgb, 0.0), (*rgb, 1.0)])
    nz = img[img > 0]
    vmax = max(0.05, float(np.percentile(nz, 98))) if len(nz) else 1.0
    ax.imshow(img, aspect="auto", cmap=cmap, vmin=0, vmax=vmax, interpolation="nearest",
              extent=(lo, hi, len(td.clients) - 0.5, -0.5), zorder=2)
    # acquire outcomes that were not ok, binned: a small mark per bin with any
    inv, done, typ, proc = td.acq
    for t_code, color, marker in ((T_INFO, UNKNOWN_COLOR, "D"),):
        m = typ == t_code
        if not m.any():
            continue
        pts = set()
        for t, p in zip(done[m], proc[m]):
            if int(p) in td.row:
                pts.add((int((t - lo) / width), td.row[int(p)]))
        if pts:
            xs, ys = zip(*pts)
            ax.plot(lo + (np.array(xs) + 0.5) * width, np.array(ys) + 0.33, ls="none", marker=marker,
                    ms=3.5, color=color, zorder=5)
    rej = set()
    for t, p, k in td.writes:
        if k == "rejected" and p in td.row:
            rej.add((int((t - lo) / width), td.row[p]))
    if rej:
        xs, ys = zip(*rej)
        ax.plot(lo + (np.array(xs) + 0.5) * width, np.array(ys) - 0.38, ls="none", marker="x",
                ms=5, mew=1.4, color=WRITE_REJECT_COLOR, zorder=6)
    _draw_overlaps(ax, td, lo, hi, MAX_NUMBERED_EPISODES)
    _draw_unplaceable(ax, td, lo, hi)


def _setup_rows(ax, td, lo, hi):
    ax.set_ylim(len(td.clients) - 0.5, -0.62)
    ax.set_yticks(range(len(td.clients)))
    ax.set_yticklabels([f"client {c}" for c in td.clients])
    ax.set_xlim(lo, hi)
    ax.set_xlabel("seconds since the first event")
    ax.grid(axis="x", color="#dddddd", lw=0.6, zorder=-1)
    for y in range(len(td.clients) + 1):
        ax.axhline(y - 0.5, color="#eeeeee", lw=0.6, zorder=-1)
    ax.tick_params(axis="y", length=0)


def _legend(fig, td, faults_seen, binned):
    items = [Patch(fc=HOLD_COLOR, label="holds the lock (ok acquire \u2192 release invoke)")]
    if binned:
        items[0] = Patch(fc=HOLD_COLOR, label="share of each time bin the client held the lock")
    if td.run.episodes:   # red appears only when there is an overlap (tests rely on it)
        items.append(Patch(fc=OVERLAP_COLOR, label="two clients hold it: overlap #n"))
    if not binned:
        items += [Line2D([], [], color=WAIT_COLOR, lw=1.2, label="waiting in acquire"),
                  Line2D([], [], ls="none", marker=">", color="#1a7a1a", ms=6, label="acquire ok"),
                  Line2D([], [], ls="none", marker="x", color="#606060", ms=6, mew=1.2, label="acquire failed"),
                  Line2D([], [], ls="none", marker="D", color=UNKNOWN_COLOR, ms=5, label="outcome unknown"),
                  Line2D([], [], ls="none", marker="|", color=WRITE_OK_COLOR, ms=9, mew=1.6,
                         label="resource write accepted")]
    if any(k == "rejected" for _, _, k in td.writes):
        items.append(Line2D([], [], ls="none", marker="x", color=WRITE_REJECT_COLOR, ms=7, mew=1.6,
                            label="write rejected (stale fence)"))
    if getattr(td.run, "unplaceable", None) is not None:
        items.append(Patch(fc=LIN_COLOR, ec=LIN_COLOR, label="operation no order can place (outlined: its conflicts)"))
    for f in sorted(faults_seen):
        items.append(Patch(fc=faultstyle.color(f), alpha=0.35, label=f"fault: {f}"))
    ncol = min(4, len(items))
    return fig.legend(handles=items, loc="lower center", ncol=ncol, fontsize=8.5, frameon=False,
                      bbox_to_anchor=(0.5, 0.0))


def timeline_subtitle(run):
    """What the timeline shows, for its title: the overlaps, or the operation linearizability
    could not place, or that nothing overlapped."""
    n_eps = len(run.episodes)
    unp = getattr(run, "unplaceable", None)
    parts = []
    if n_eps:
        parts.append(f"{n_eps} overlap{'s' if n_eps != 1 else ''} of two holders")
    if unp is not None:
        parts.append(f"not linearizable: client {unp.op.process}'s {unp.op.f} cannot be placed"
                     + (" (no overlapping holds)" if not n_eps else ""))
    elif not n_eps and run.result("linearizability", "lock", "verdict") == "invalid":
        parts.append("not linearizable, no overlapping holds")
    return "; ".join(parts) or "no overlapping holds"


@styled
def timeline(run, path, title):
    td = TimelineData(run)
    n = max(1, len(td.clients))
    lo, hi = 0.0, max(run.duration_s, 1e-3)
    pad = (hi - lo) * 0.01
    lo, hi = lo - pad, hi + pad
    focus = td.focus
    zoom = None
    if focus is not None:
        zlo, zhi = run.sec(focus[0]), run.sec(focus[1])
        if not td.detailed or (hi - lo) / max(zhi - zlo, 1e-9) > 2.5:
            zoom = (max(zlo, lo), min(zhi, hi), focus[2])
    row_h = 0.42 if n <= 8 else 0.3
    main_h = 1.2 + n * row_h
    zoom_h = (1.3 + n * row_h) if zoom else 0
    legend_rows = 3     # room kept below the axes for up to three rows of legend
    fig_h = main_h + zoom_h + 0.9 + 0.22 * legend_rows
    fig = new_figure((13, fig_h))
    ratios = [main_h] + ([zoom_h] if zoom else [])
    gs = fig.add_gridspec(len(ratios), 1, height_ratios=ratios)
    ax = fig.add_subplot(gs[0])
    faults_seen = _shade_faults(ax, td, lo, hi, labelled=True)
    if td.detailed:
        _draw_exact(ax, td, lo, hi, MAX_NUMBERED_EPISODES)
    else:
        _draw_binned(ax, td, lo, hi)
    _setup_rows(ax, td, lo, hi)
    n_eps = len(run.episodes)
    sub = timeline_subtitle(run)
    mode = "" if td.detailed else f"  (binned: {len(run.holds)} holds, {len(run.history)} events)"
    ax.set_title(f"{title}: {sub}{mode}", loc="left", pad=36 if len(run.windows) <= MAX_LABELLED_WINDOWS
                 and run.windows else 8)
    if zoom:
        zlo, zhi, what = zoom
        ax.axvspan(zlo, zhi, ymin=0, ymax=1, fc="none", ec="#333333", lw=1.0, ls="--", zorder=9)
        ax.annotate("zoomed below", xy=(zhi, 0), xycoords=("data", "axes fraction"), xytext=(3, 3),
                    textcoords="offset points", fontsize=8, color="#333333", zorder=9,
                    bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.8))
        az = fig.add_subplot(gs[1])
        faults_seen |= _shade_faults(az, td, zlo, zhi, labelled=True)
        _draw_exact(az, td, zlo, zhi, 10**6)
        _setup_rows(az, td, zlo, zhi)
        az.set_title(f"zoom on the first violation ({what}), {zlo:.2f}\u2013{zhi:.2f} s", loc="left",
                     pad=36 if any(w.end >= run.t0 + zlo * 1e9 and w.start <= run.t0 + zhi * 1e9
                                   for w in run.windows) else 8)
    below_axes(fig, _legend(fig, td, faults_seen, binned=not td.detailed and not zoom))
    fig.savefig(path, dpi=DPI)
    return {"detailed": td.detailed, "zoom": zoom is not None, "figure": fig}
