"""matplotlib figures of a run's latency and throughput, and of a matrix (the heatmap).
The timeline is timeline.py; the shared look is figstyle.py.
"""

import matplotlib.colors
import numpy as np
from matplotlib.patches import Patch

from . import faultstyle, matrixcells
from . import results as result_table
from .figstyle import (DPI, HOLD_COLOR, OVERLAP_COLOR, UNKNOWN_COLOR, below_axes, new_figure,
                       styled, vertical_bands)
from .history import T_FAIL, T_INFO, T_OK

# --------------------------------------------------------------------------------------------
# latency and throughput


def _bin_width(span):
    for w in (0.25, 0.5, 1, 2, 5, 10, 15, 30, 60):
        if span / w <= 100:
            return w
    return span / 100


@styled
def latency(run, path, title):
    inv, done, typ, proc, _ = run.completed_ops(["acquire"])
    lat_ms = (done - inv) / 1e6
    x = run.sec(done)
    lo, hi = 0.0, max(run.duration_s, 1e-3)
    fig = new_figure((13, 6.4))
    a1, a2 = fig.subplots(2, 1, sharex=True)
    td_faults = set()
    for ax in (a1, a2):
        bands = {}  # colour -> [(start_s, end_s)]
        for w in run.windows:
            c = faultstyle.color(w.fault)
            s, e = run.sec(w.start), run.sec(w.end)
            if faultstyle.trait(w.fault, "kills_client"):
                ax.axvline(s, color=c, lw=1.2, ls="--")
            else:
                bands.setdefault(c, []).append((s, e))
            td_faults.add(w.fault)
        for c, iv in bands.items():
            vertical_bands(ax, iv, c, 0.13)
        vertical_bands(ax, [(run.sec(ep.start), run.sec(ep.end)) for ep in run.episodes], OVERLAP_COLOR, 0.12)
    bw = _bin_width(hi - lo)
    edges = np.arange(lo, hi, bw)
    if len(edges) < 2 or hi - edges[-1] > 0.25 * bw:
        edges = np.append(edges, hi)       # a last, partial bin only when it is not tiny
    else:
        edges[-1] = hi
    widths = np.diff(edges)
    if len(lat_ms) <= 20000:
        for t_code, color, marker, lab in ((T_OK, HOLD_COLOR, "o", "acquire ok"),
                                           (T_FAIL, "#606060", "x", "acquire failed"),
                                           (T_INFO, UNKNOWN_COLOR, "D", "acquire unknown (timeout)")):
            m = typ == t_code
            if m.any():
                a1.plot(x[m], np.maximum(lat_ms[m], 1e-3), ls="none", marker=marker, ms=3.2, color=color,
                        alpha=0.75, label=f"{lab} ({int(m.sum())})")
    else:
        idx = np.clip(np.digitize(x, edges) - 1, 0, len(edges) - 2)
        mids = (edges[:-1] + edges[1:]) / 2
        for q, color, lab in ((50, HOLD_COLOR, "median"), (99, "#d08000", "p99"), (100, "#606060", "max")):
            vals = np.full(len(mids), np.nan)
            for b in np.unique(idx):
                vals[b] = np.percentile(lat_ms[idx == b], q)
            a1.plot(mids, np.maximum(vals, 1e-3), color=color, lw=1.3, label=f"acquire latency {lab} per {bw:g} s")
    a1.set_yscale("log")
    a1.set_ylabel("acquire latency (ms)")
    a1.set_title(f"{title}: acquire latency (invoke \u2192 completion)", loc="left")
    a1.legend(loc="lower left", fontsize=8, ncol=3, frameon=True, framealpha=0.85)
    a1.grid(color="#e6e6e6", lw=0.6)
    # throughput
    h = run.history
    mids = (edges[:-1] + edges[1:]) / 2
    comp = (h.proc >= 0) & (h.type != 0)
    allx = run.sec(h.t[comp])
    a2.step(mids, np.histogram(allx, edges)[0] / widths, where="mid", color="#333333", lw=1.2,
            label="completed operations/s (all clients)")
    acq_ok = x[typ == T_OK]
    a2.step(mids, np.histogram(acq_ok, edges)[0] / widths, where="mid", color=HOLD_COLOR, lw=1.4,
            label="acquires ok/s")
    wsel = run.ops(["write", "cas"])
    wsel = wsel[h.type[wsel] == T_OK]
    a2.step(mids, np.histogram(run.sec(h.t[wsel]), edges)[0] / widths, where="mid", color="#2a9d8f", lw=1.2,
            ls="--", label="resource writes ok/s")
    a2.set_ylabel(f"per second ({bw:g} s bins)")
    a2.set_xlabel("seconds since the first event")
    a2.set_title("throughput", loc="left")
    a2.grid(color="#e6e6e6", lw=0.6)
    a2.set_xlim(lo, hi)
    a2.set_ylim(bottom=0)
    handles, labels = a2.get_legend_handles_labels()
    for f in sorted(td_faults):
        handles.append(Patch(fc=faultstyle.color(f), alpha=0.35))
        labels.append(f"fault: {f}")
    if run.episodes:
        handles.append(Patch(fc=OVERLAP_COLOR, alpha=0.3))
        labels.append("overlap of two holders")
    below_axes(fig, fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=8.5,
                                frameon=False))
    fig.savefig(path, dpi=DPI)
    return {"figure": fig}


# --------------------------------------------------------------------------------------------
# matrix heatmap


@styled
def heatmap(m, path, title):
    """The matrix as matrix.md prints it: one cell per lock and fault, its letter and marks
    (matrixcells.cell_text), coloured by letter. m: a matrixcells.Matrix."""
    locks, faults = m.locks, m.faults
    nl, nf = len(locks), len(faults)
    fig_w = max(6.5, 2.4 + 1.45 * nf)
    fig_h = max(3.0, 1.9 + 0.55 * nl)
    fig = new_figure((fig_w, fig_h))
    ax = fig.subplots()
    rgb = np.ones((nl, nf, 3))
    for i, lk in enumerate(locks):
        for j, ft in enumerate(faults):
            c = m.cell(lk, ft)
            fill = "#f4f4f4" if c and c.not_run else result_table.fill(c.letter) if c else "#ffffff"
            rgb[i, j] = matplotlib.colors.to_rgb(fill)
    ax.imshow(rgb, aspect="auto")
    for i, lk in enumerate(locks):
        for j, ft in enumerate(faults):
            c = m.cell(lk, ft)
            if not c or c.not_run:   # skipped by this matrix (quick mode), apart from n/a
                ax.text(j, i, "not run", ha="center", va="center", fontsize=8, color="#666666",
                        fontstyle="italic")
                continue
            head, rest = c.head, c.tail
            ax.text(j, i - (0.12 if rest else 0), head, ha="center", va="center", fontsize=11,
                    fontweight="bold", color=result_table.colour(c.letter))
            if rest:
                ax.text(j, i + 0.2, rest, ha="center", va="center", fontsize=7.5, color="#222222")
    ax.set_xticks(range(nf))
    ax.set_xticklabels(faults, rotation=30 if nf > 4 else 0, ha="right" if nf > 4 else "center")
    ax.set_yticks(range(nl))
    # a driver row by its file's name, as on the page (the full id is in matrix.md)
    ax.set_yticklabels([matrixcells.short_lock(lk) for lk in locks])
    ax.set_xlabel("fault(s)")
    ax.set_title(title, loc="left")
    ax.set_xticks(np.arange(-0.5, nf, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, nl, 1), minor=True)
    ax.grid(which="minor", color="white", lw=2)
    ax.tick_params(which="minor", length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    note = fig.text(0.01, 0.01, "S safe, V violated, L stuck, ? unknown, - interrupted, not run: skipped (quick "
                    "mode), n/a not applicable; "
                    "k/n violated/trials, @t median first violation;\nrS resource intact (fencing), "
                    "~ lab ran late, \u2260X expected X, \u2717 regressed (--fail-on)",
                    fontsize=7, color="#555555", ha="left", va="bottom")
    below_axes(fig, note)
    fig.savefig(path, dpi=DPI)
    return {"figure": fig}
