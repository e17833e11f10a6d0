"""Self-contained index.html pages (images embedded as base64, no scripts, no network)."""

import base64
import html
import os

import faultstyle
import narrative

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:24px auto;
max-width:1480px;padding:0 18px;color:#1d1d1f;line-height:1.45}
h1{font-size:1.45em;margin:0 0 4px} h2{font-size:1.15em;margin:26px 0 8px;border-bottom:1px solid #ddd;padding-bottom:3px}
.sub{color:#555;margin:0 0 14px}
.badge{display:inline-block;padding:2px 10px;border-radius:11px;font-weight:700;color:#fff;font-size:.95em}
.violated{background:#c8102e}.safe{background:#2b8a3e}.unknown{background:#b7791f}
table{border-collapse:collapse;margin:6px 0 10px;font-size:.92em}
th,td{border:1px solid #ddd;padding:4px 9px;text-align:left;vertical-align:top}
th{background:#f4f4f6} td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.bad td{background:#fff1f1} .ok{color:#2b8a3e;font-weight:700} .bad{color:#c8102e;font-weight:700}
img{max-width:100%;border:1px solid #e4e4e4;border-radius:4px}
.story{background:#fff8f8;border-left:4px solid #c8102e;padding:10px 14px;margin:8px 0}
.story.safe{background:#f3faf4;border-left-color:#2b8a3e}
.story p{margin:4px 0} .headline{font-weight:600}
pre{background:#f6f6f8;padding:10px;overflow:auto;font-size:.85em}
code{font-size:.92em} a{color:#1d5fb4}
.muted{color:#777;font-size:.9em}
"""


def esc(x):
    return html.escape(str(x), quote=True)


def img_tag(path, alt):
    with open(path, "rb") as fh:
        data = base64.b64encode(fh.read()).decode("ascii")
    return f'<img alt="{esc(alt)}" src="data:image/png;base64,{data}">'


def page(title, body):
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "img-src data:; style-src 'unsafe-inline'\">"
            "<link rel=\"icon\" href=\"data:,\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>\n{body}\n</body></html>\n")


def verdict_badge(v):
    v = str(v or "unknown")
    cls = v if v in ("violated", "safe") else "unknown"
    return f'<span class="badge {cls}">{esc(v)}</span>'


def _fmt(x):
    if isinstance(x, float):
        return f"{x:.3f}".rstrip("0").rstrip(".") if abs(x) < 1e6 else f"{x:.0f}"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if x is None:
        return "\u2013"
    if isinstance(x, list):
        return ", ".join(_fmt(y) for y in x) or "\u2013"
    return str(x)


def run_page(run, images, notes):
    r = run.results or {}
    alg = r.get("algorithm", "?")
    faults = r.get("faults") or []
    if isinstance(faults, list):
        faults_text = " + ".join(str(f) for f in faults) or "none"
    else:
        faults_text = str(faults)
    title = f"{alg} under {faults_text}"
    b = [f"<h1>{esc(title)} {verdict_badge(r.get('verdict'))}</h1>"]
    b.append(f"<p class=\"sub\">scenario <code>{esc(r.get('scenario', os.path.basename(os.path.dirname(run.dir))))}</code>"
             f", seed {esc(r.get('seed', '?'))}, {len(run.clients)} clients, {run.duration_s:.2f} s of history, "
             f"{len(run.history)} events, {len(run.holds)} holds. Run directory: <code>{esc(run.dir)}</code></p>")
    if run.results is None:
        b.append("<p class=\"bad\">results.json is missing (interrupted run?): the verdict is unknown; "
                 "everything below is derived from history.jsonl.</p>")
    for n in notes:
        b.append(f"<p class=\"bad\">{esc(n)}</p>")
    # counterexample
    headline, sents, bullets = narrative.counterexample(run)
    b.append("<h2>What happened</h2>")
    if headline:
        b.append('<div class="story">')
        b.append(f'<p class="headline">{esc(headline)}</p>')
        for s in sents:
            b.append(f"<p>{esc(s)}</p>")
        b.append("</div>")
    else:
        b.append('<div class="story safe"><p class="headline">No violation in this history: '
                 f'{len(run.holds)} holds by {len(run.clients)} clients, never two holders of one key at once'
                 + (f"; faults injected: {esc(faults_active_text_all(run))}" if run.windows else "")
                 + ".</p></div>")
    b.append("<h2>Timeline</h2>")
    b.append(img_tag(images["timeline"], "timeline: one row per client, hold intervals, overlaps in red, fault windows shaded"))
    if bullets:
        b.append("<h2>The events around the first violation</h2><table><tr><th>time</th><th>who</th><th>event</th></tr>")
        for t, who, what in bullets:
            b.append(f"<tr><td class=\"num\">{esc(t)}</td><td>{esc(who)}</td><td>{esc(what)}</td></tr>")
        b.append("</table>")
    # results table
    b.append("<h2>Results</h2>")
    b.append(results_table(run))
    if run.episodes:
        b.append(overlap_table(run))
    if run.windows:
        b.append(fault_table(run))
    b.append("<h2>Latency and throughput</h2>")
    b.append(img_tag(images["latency"], "acquire latency and throughput over time with fault windows shaded"))
    if run.scenario_text:
        b.append("<h2>Scenario</h2><p class=\"muted\">Replay with <code>locklab run scenario.toml</code>.</p>"
                 f"<pre>{esc(run.scenario_text)}</pre>")
    b.append("<p class=\"muted\">Generated by reports/report.py from the run files (history.jsonl, results.json, "
             "scenario.toml). Times are seconds since the first event of the history (CLOCK_MONOTONIC).</p>")
    return page(f"locklab: {title}", "\n".join(b))


def faults_active_text_all(run):
    return ", ".join(sorted({w.fault for w in run.windows}))


def results_table(run):
    r = run.results or {}
    rows = []
    checks = r.get("checks")
    if isinstance(checks, list) and checks:
        rows.append("<table><tr><th>check</th><th>result</th><th>detail</th></tr>")
        for c in checks:
            if not isinstance(c, dict):
                continue
            ok = c.get("ok")
            rows.append(f"<tr class=\"{'' if ok else 'bad'}\"><td>{esc(c.get('name', '?'))}</td>"
                        f"<td class=\"{'ok' if ok else 'bad'}\">{'pass' if ok else 'FAIL'}</td>"
                        f"<td>{esc(c.get('message', ''))}</td></tr>")
        rows.append("</table>")
    me = r.get("mutual_exclusion") if isinstance(r.get("mutual_exclusion"), dict) else {}
    res = r.get("resource") if isinstance(r.get("resource"), dict) else {}
    live = r.get("liveness") if isinstance(r.get("liveness"), dict) else {}
    lin = r.get("linearizability") if isinstance(r.get("linearizability"), dict) else {}
    facts = [
        ("verdict", r.get("verdict")),
        ("operations", r.get("ops")),
        ("holds (from the history)", len(run.holds)),
        ("overlapping pairs (report / results.json)", f"{run.pairs_total} / {_fmt(me.get('overlapping_pairs'))}"),
        ("overlap episodes (report / results.json)", f"{len(run.episodes)} / {_fmt(me.get('episodes'))}"),
        ("overlapped time", f"{sum(e.end - e.start for e in run.episodes) / 1e6:.1f} ms"),
        ("acknowledged writes", res.get("acknowledged_writes")),
        ("lost updates", res.get("lost_updates")),
        ("stale writes accepted / rejected", f"{_fmt(res.get('stale_writes_accepted'))} / {_fmt(res.get('stale_writes_rejected'))}"),
        ("linearizable", r.get("linearizable")),
    ]
    for part in ("lock", "resource"):
        x = lin.get(part)
        if isinstance(x, dict):
            facts.append((f"linearizability of the {part} history", f"{x.get('model', '?')}: {x.get('verdict', '?')}"))
    facts += [("stuck (liveness)", live.get("stuck")), ("longest wait with no holder", f"{_fmt(live.get('longest_wait_ms'))} ms")]
    cfg = r.get("config")
    if isinstance(cfg, dict):
        facts.append(("config", ", ".join(f"{k}={_fmt(v)}" for k, v in cfg.items())))
    rows.append("<table>")
    for k, v in facts:
        rows.append(f"<tr><th>{esc(k)}</th><td>{esc(_fmt(v))}</td></tr>")
    rows.append("</table>")
    return "\n".join(rows)


def overlap_table(run, limit=60):
    out = ["<h2>Overlaps (numbered as in the timeline)</h2><table><tr><th>#</th><th>key</th><th>from</th>"
           "<th>to</th><th>length</th><th>holders (hold start\u2013end)</th><th>faults active</th></tr>"]
    for ep in run.episodes[:limit]:
        holders = "; ".join(f"client {hd.process} ({run.sec(hd.start):.2f}\u2013{run.sec(hd.end):.2f} s"
                            + (", open at end" if hd.open_at_end else "") + ")" for hd in ep.holds)
        fa = ", ".join(faultstyle.label(w.fault, w.detail, w.end - w.start) for w in run.windows
                       if w.start <= ep.end and w.end >= ep.start) or "none"
        out.append(f"<tr><td class=\"num\">{ep.number}</td><td>{esc(ep.key)}</td><td class=\"num\">{run.sec(ep.start):.3f} s</td>"
                   f"<td class=\"num\">{run.sec(ep.end):.3f} s</td><td class=\"num\">{narrative.ms(ep.end - ep.start)}</td>"
                   f"<td>{esc(holders)}</td><td>{esc(fa)}</td></tr>")
    out.append("</table>")
    if len(run.episodes) > limit:
        out.append(f"<p class=\"muted\">\u2026 and {len(run.episodes) - limit} more.</p>")
    return "\n".join(out)


def fault_table(run, limit=60):
    out = ["<h2>Fault windows</h2><table><tr><th>fault</th><th>from</th><th>to</th><th>what</th></tr>"]
    for w in run.windows[:limit]:
        out.append(f"<tr><td>{esc(w.fault)}</td><td class=\"num\">{run.sec(w.start):.3f} s</td>"
                   f"<td class=\"num\">{run.sec(w.end):.3f} s{' (open at end)' if w.open_at_end else ''}</td>"
                   f"<td>{esc(faultstyle.describe(w.fault, w.detail, w.end - w.start))}</td></tr>")
    out.append("</table>")
    if len(run.windows) > limit:
        out.append(f"<p class=\"muted\">\u2026 and {len(run.windows) - limit} more.</p>")
    return "\n".join(out)


def matrix_page(title, heatmap_png, locks, faults, cells, trials, notes):
    b = [f"<h1>{esc(title)}</h1>",
         f"<p class=\"sub\">{len(trials)} trials, {len(locks)} locks \u00d7 {len(faults)} fault sets. "
         "Colour: fraction of trials with a violation.</p>"]
    for n in notes:
        b.append(f"<p class=\"bad\">{esc(n)}</p>")
    b.append(img_tag(heatmap_png, "matrix heatmap: locks by faults, coloured by fraction of violated trials"))
    b.append("<h2>Cells</h2><table><tr><th>lock</th>" + "".join(f"<th>{esc(f)}</th>" for f in faults) + "</tr>")
    for lk in locks:
        b.append(f"<tr><th>{esc(lk)}</th>")
        for ft in faults:
            c = cells.get((lk, ft))
            if not c:
                b.append("<td class=\"muted\">not run</td>")
                continue
            cls = "bad" if c["verdict"] == "violated" else "ok" if c["verdict"] == "safe" else ""
            b.append(f"<td><span class=\"{cls}\">{esc(c['verdict'])}</span> {c['violated']}/{c['trials']}</td>")
        b.append("</tr>")
    b.append("</table>")
    b.append("<h2>Trials</h2><table><tr><th>lock</th><th>faults</th><th>seed</th><th>verdict</th>"
             "<th>overlapping pairs</th><th>lost updates</th><th>report</th></tr>")
    for t in trials:
        link = (f"<a href=\"{esc(t['href'])}\">report</a>" if t.get("href") else "<span class=\"muted\">no report</span>")
        b.append(f"<tr class=\"{'bad' if t['verdict'] == 'violated' else ''}\"><td>{esc(t['lock'])}</td><td>{esc(t['faults'])}</td>"
                 f"<td class=\"num\">{esc(t['seed'])}</td><td>{verdict_badge(t['verdict'])}</td>"
                 f"<td class=\"num\">{esc(_fmt(t['pairs']))}</td><td class=\"num\">{esc(_fmt(t['lost']))}</td><td>{link}</td></tr>")
    b.append("</table>")
    return page(title, "\n".join(b))
