"""Self-contained HTML pages (images embedded as base64, no network): the run page (with its
explorable timeline, explore.py: inline SVG and a little plain JavaScript), the matrix page
and its cell pages."""

import base64
import html
import os
import re

from . import explore
from . import faultstyle
from . import matrixcells
from . import results as result_table
from . import narrative

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:24px auto;
max-width:1480px;padding:0 18px;color:#1d1d1f;line-height:1.45}
h1{font-size:1.45em;margin:0 0 4px} h2{font-size:1.15em;margin:26px 0 8px;border-bottom:1px solid #ddd;padding-bottom:3px}
.sub{color:#555;margin:0 0 14px}
.badge{display:inline-block;padding:2px 10px;border-radius:11px;font-weight:700;color:#fff;font-size:.95em}
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
.reason{margin:0 0 12px;font-size:1.02em} .warn{background:#fff4e0;border-left:4px solid #b7791f;padding:8px 12px;margin:8px 0;font-weight:600}
"""


def esc(x):
    return html.escape(str(x), quote=True)


def img_tag(path, alt):
    with open(path, "rb") as fh:
        data = base64.b64encode(fh.read()).decode("ascii")
    return f'<img alt="{esc(alt)}" src="data:image/png;base64,{data}">'


def _badge_css():
    """The verdict badges' colours (verdict_class's four words), from the lab's results table."""
    return "".join(f".{w}{{background:{result_table.colour(r['letter'])}}}"
                   for r in result_table.table() for w in [r["word"]] if w == verdict_class(w)) + "\n"


def page(title, body, extra_css="", script=""):
    """A whole page. Its Content-Security-Policy allows nothing from the network: inline
    styles, data: images and, when the page has one, its inline script."""
    csp = "default-src 'none'; img-src data:; style-src 'unsafe-inline'" + ("; script-src 'unsafe-inline'" if script else "")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">"
            "<link rel=\"icon\" href=\"data:,\">"
            f"<title>{esc(title)}</title><style>{CSS}{_badge_css()}{extra_css}</style></head><body>\n{body}\n"
            + (f"<script>{script}</script>\n" if script else "") + "</body></html>\n")


def moment(run, sentence):
    """A narrative sentence, linked to its moment on the timeline when it has one."""
    at = getattr(sentence, "at", None)
    if at is None:
        return esc(sentence)
    return f'<a class="moment" href="{explore.moment_href(run, at)}" title="show this moment on the timeline">{esc(sentence)}</a>'


EPISODE_WORDS = ("an episode is a stretch of time during which two or more clients held the same key at "
                 "once; its pairs are the pairs of clients that held it together")


_LONG_MS = re.compile(r"\b(\d+\.\d{3,}) ?ms\b")


def rounded_ms(text):
    """A line from another program with its milliseconds rounded as the page's own
    ("longest wait with no holder 22.068994 ms" -> "... 22 ms")."""
    return _LONG_MS.sub(lambda m: narrative.ms(float(m.group(1)) * 1e6), str(text))


def verdict_class(word):
    """A badge's class: the result's word when it is safe, violated or stuck, else unknown."""
    return word if word in ("violated", "safe", "stuck") else "unknown"


def verdict_badge(v):
    v = str(v or "unknown")
    return f'<span class="badge {verdict_class(v)}">{esc(v)}</span>'


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
        # the faults that act (a fault whose descriptor has the trait no_effect does nothing)
        faults_text = " + ".join(str(f) for f in faults if not faultstyle.trait(str(f), "no_effect"))
    else:
        faults_text = "" if faultstyle.trait(str(faults), "no_effect") else str(faults)
    title = f"{alg} under {faults_text}" if faults_text else f"{alg} with no fault"
    # the judge's result beside its verdict when it adds to it (a safe run that was stuck)
    stuck = " " + verdict_badge(result_table.word("L")) if result_table.of(r) == "L" else ""
    b = [f"<h1>{esc(title)} {verdict_badge(r.get('verdict'))}{stuck}</h1>"]
    b.append(f"<p class=\"sub\">scenario <code>{esc(r.get('scenario', os.path.basename(os.path.dirname(run.dir))))}</code>"
             f", seed {esc(r.get('seed', '?'))}, {len(run.clients)} clients, {run.duration_s:.2f} s of history, "
             f"{len(run.history)} events, {len(run.holds)} holds. Run directory: <code>{esc(run.dir)}</code></p>")
    reason = r.get("verdict_reason")
    if isinstance(reason, str) and reason:
        define = f' <span class="muted">({EPISODE_WORDS})</span>' if "episode" in reason else ""
        b.append(f'<p class="reason"><b>Why {esc(r.get("verdict", "unknown"))}:</b> {esc(rounded_ms(reason))}{define}</p>')
    expired = run.result("acquires", "expired_grants")
    if isinstance(expired, int) and not isinstance(expired, bool) and expired > 0:
        b.append(f'<p class="warn">\u26a0 {expired} acquire{"s were" if expired != 1 else " was"} answered ok with '
                 "validity_ms \u2264 0: the lock library handed back a lock that had already expired "
                 "(the client believed it held a lock nobody was protecting).</p>")
    if run.file_results is None:
        b.append("<p class=\"bad\">results.json is missing (a killed run?): the verdict, the holds and the "
                 "overlaps below are the judgement of history.jsonl (<code>locklab check --json</code>).</p>")
    for n in notes:
        b.append(f"<p class=\"bad\">{esc(n)}</p>")
    # counterexample
    headline, sents, bullets = narrative.counterexample(run)
    b.append("<h2>What happened</h2>")
    if headline:
        b.append('<div class="story">')
        b.append(f'<p class="headline">{moment(run, headline)}</p>')
        for s in sents:
            b.append(f"<p>{moment(run, s)}</p>")
        b.append("</div>")
        if any(getattr(x, "at", None) for x in [headline] + list(sents)):
            b.append('<p class="muted">Click a sentence to see its moment on the timeline.</p>')
    else:
        b.append('<div class="story safe"><p class="headline">No violation in this history: '
                 f'{len(run.holds)} holds by {len(run.clients)} clients, never two holders of one key at once'
                 + (f"; faults injected: {esc(faults_active_text_all(run))}" if run.windows else "")
                 + ".</p>"
                 + "".join(f"<p>{moment(run, x)}</p>" for w in run.windows if faultstyle.trait(w.fault, "promotes_replica")
                           for x in narrative.promotion_sentences(run, w))
                 + "</div>")
    b.append("<h2>Timeline</h2>")
    b.append(explore.section(run))
    b.append("<details class=\"still\"><summary>The same timeline as a picture (timeline.png)</summary>"
             + img_tag(images["timeline"], "timeline: one row per client, hold intervals, overlaps in red, fault windows shaded")
             + "</details>")
    if bullets:
        b.append("<h2>The events around the first violation</h2><table><tr><th>time</th><th>who</th><th>event</th></tr>")
        for t, who, what in bullets:
            b.append(f"<tr><td class=\"num\">{esc(t)}</td><td>{esc(who)}</td><td>{esc(what)}</td></tr>")
        b.append("</table>")
    # results table
    b.append("<h2>Results</h2>")
    b.append(results_table(run))
    cov = coverage_table(run)
    if cov:
        b.append(cov)
    if run.episodes:
        b.append(overlap_table(run))
    if run.windows:
        b.append(fault_table(run))
    b.append("<h2>Latency and throughput</h2>")
    b.append(img_tag(images["latency"], "acquire latency and throughput over time with fault windows shaded"))
    if run.scenario_text:
        b.append("<h2>Scenario</h2><p class=\"muted\">Replay with <code>locklab run scenario.toml</code>.</p>"
                 f"<pre>{esc(run.scenario_text)}</pre>")
    b.append("<p class=\"muted\">Generated by <code>python3 -m reports</code> from the run files "
             "(history.jsonl, results.json, scenario.toml). Times are seconds since the first event of the "
             "history (CLOCK_MONOTONIC).</p>")
    return page(f"locklab: {title}", "\n".join(b), explore.CSS, explore.SCRIPT)


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
                        f"<td>{esc(rounded_ms(c.get('message', '')))}</td></tr>")
        rows.append("</table>")
    me = r.get("mutual_exclusion") if isinstance(r.get("mutual_exclusion"), dict) else {}
    res = r.get("resource") if isinstance(r.get("resource"), dict) else {}
    live = r.get("liveness") if isinstance(r.get("liveness"), dict) else {}
    lin = r.get("linearizability") if isinstance(r.get("linearizability"), dict) else {}
    facts = [
        ("verdict", r.get("verdict")),
        ("operations", r.get("ops")),
        (f"holds ({run.holds_source})", len(run.holds)),
        ("overlapping pairs (drawn / judged)", f"{run.pairs_total} / {_fmt(me.get('overlapping_pairs'))}"),
        ("overlap episodes (drawn / judged)", f"{len(run.episodes)} / {_fmt(me.get('episodes'))} ({EPISODE_WORDS})"),
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
    wait = live.get("longest_wait_ms")
    facts += [("stuck (liveness)", live.get("stuck")),
              ("longest wait with no holder", narrative.ms(wait * 1e6) if isinstance(wait, (int, float))
               and not isinstance(wait, bool) else _fmt(wait))]
    acq = r.get("acquires")
    if isinstance(acq, dict):
        facts.insert(2, ("acquires: invoked / ok / refused / unknown",
                         " / ".join(_fmt(acq.get(k)) for k in ("invoked", "ok", "refused", "unknown"))))
        facts.insert(3, ("expired grants (ok with validity_ms \u2264 0)", acq.get("expired_grants")))
    if not isinstance(r.get("coverage"), list):   # an older results.json's shape: one line
        cov = matrixcells.coverage_text(r.get("coverage"))
        if cov:
            facts.append(("fault coverage", cov))
    cfg = r.get("config")
    if isinstance(cfg, dict):
        facts.append(("config", ", ".join(f"{k}={_fmt(v)}" for k, v in cfg.items())))
    rows.append("<table>")
    for k, v in facts:
        rows.append(f"<tr><th>{esc(k)}</th><td>{esc(_fmt(v))}</td></tr>")
    rows.append("</table>")
    return "\n".join(rows)


COVERAGE_COLUMNS = (("planned", "planned"), ("armed", "pause points armed"), ("windows_opened", "windows opened"),
                    ("windows_met", "met lock work"), ("windows_closed", "closed"),
                    ("windows_cut", "cut by the run's end"), ("clients_hit", "clients hit"), ("nodes_hit", "nodes hit"))


def coverage_table(run):
    """results.json "coverage": per fault what it did (the checker's FaultCoverage), which
    evidence of its effect it produced, and whether it bit (a window opened while the workload
    did lock work, and, with evidence recorded, its effect was seen). "" when there is none."""
    cov = run.result("coverage")
    if not isinstance(cov, list):
        return ""
    rows = [c for c in cov if isinstance(c, dict)]
    if not rows:
        return ""
    # Runs that record effect evidence (results.json "evidence"): which evidence each fault
    # produced, seen or not; older results have no such column.
    with_evidence = any("evidence" in c for c in rows)
    out = ["<h2>Fault coverage</h2><p class=\"muted\">A fault bit when one of its windows opened while "
           "the workload did lock work" + (" and its effect was seen" if with_evidence else "")
           + "; a run whose faults never bit cannot vouch for safe.</p>",
           "<table class=\"coverage\"><tr><th>fault</th>"
           + "".join(f"<th>{esc(h)}</th>" for _, h in COVERAGE_COLUMNS)
           + ("<th>effect evidence</th>" if with_evidence else "") + "<th>bit</th></tr>"]
    for c in rows:
        bit = c.get("bit")
        cells = []
        for k, _ in COVERAGE_COLUMNS:
            v = c.get(k)
            cls = " class=\"num\"" if isinstance(v, int) and not isinstance(v, bool) else ""
            cells.append(f"<td{cls}>{esc(_fmt(v))}</td>")
        if with_evidence:
            seen = isinstance(c.get("effects_seen"), int) and c["effects_seen"] > 0
            line = c.get("evidence") if isinstance(c.get("evidence"), str) and c.get("evidence") else "none recorded"
            cells.append(f"<td class=\"{'' if seen else 'bad'}\">{'seen: ' if seen else 'not seen: '}{esc(line)}</td>")
        word = "yes" if bit is True else "no" if bit is False else "\u2013"
        out.append(f"<tr class=\"{'bad' if bit is False else ''}\" title=\"{esc(c.get('summary', ''))}\">"
                   f"<td>{esc(c.get('fault', '?'))}</td>{''.join(cells)}"
                   f"<td class=\"{'ok' if bit else 'bad'}\">{word}</td></tr>")
    out.append("</table>")
    return "\n".join(out)


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


MATRIX_CSS = """
body{max-width:none;padding:0 12px;margin:16px auto}
.matrix-wrap{display:inline-block;max-width:100%;box-sizing:border-box;overflow:auto;max-height:calc(100vh - 24px);border:1px solid #ddd;border-radius:4px;margin:6px 0 10px}
table.matrix{margin:0;border-collapse:separate;border-spacing:0}
table.matrix th,table.matrix td{border:0;border-right:1px solid #ddd;border-bottom:1px solid #ddd}
table.matrix tr:first-child th{position:sticky;top:0;z-index:2;background:#f4f4f6;white-space:nowrap}
table.matrix th.lock{position:sticky;left:0;z-index:1;background:#f4f4f6;white-space:nowrap;max-width:190px;
overflow:hidden;text-overflow:ellipsis}
table.matrix tr:first-child th:first-child{left:0;z-index:3}
.drv{color:#777;font-weight:400;font-size:.85em}
table.matrix{font-size:.84em} table.matrix th.lock{vertical-align:middle} table.matrix th{padding:4px 5px}
table.matrix td.cell{min-width:52px;text-align:center;vertical-align:middle;padding:4px 4px;white-space:nowrap}
table.matrix td.cell .why{white-space:normal} table.matrix td.cell .at{display:block;font-size:.85em;color:#444}
table.matrix td.cell a.lead{text-decoration:none;color:inherit}
table.matrix td.cell a.lead:hover{text-decoration:underline}
.letter{font-weight:800;font-size:1.15em} .mk{font-weight:700}
.trial-links{display:block;font-size:.8em;color:#555} .why{display:block;font-size:.74em;line-height:1.25;color:#6b4a00;max-width:130px;margin:2px auto 0}
.c-n-a{color:#777}
.c-NR{background:repeating-linear-gradient(135deg,#f7f7f7 0 6px,#e9e9ee 6px 12px);color:#555}
.c-NR .letter{font-size:.85em;font-weight:700;color:#555}
table.matrix td.cell.regressed{outline:3px solid #7a0019;outline-offset:-3px}
dl.legend{display:grid;grid-template-columns:max-content 1fr;gap:3px 12px;font-size:.9em;margin:8px 0 14px}
td.nw{white-space:nowrap} td.notes{min-width:17em;max-width:60em}
table.trials{font-size:.86em} table.trials td.seed{font-size:.9em}
.table-wrap{overflow-x:auto}
dl.legend dt{font-weight:800;text-align:center;padding:0 8px;border-radius:4px} dl.legend dd{margin:0}
"""


def _matrix_css():
    """The matrix pages' style: the fixed part, then each result's colours from the lab's table."""
    return MATRIX_CSS + result_table.css() + "\n"


def _href(path, base, is_dir=False):
    rel = os.path.relpath(path, base).replace(os.sep, "/")
    return rel + "/" if is_dir else rel


def lock_label(lock):
    """(short label HTML, full id): a driver row by its file's name ("driver: redis_py_lock"),
    every other lock as it is."""
    short = matrixcells.short_lock(lock)
    if short != lock and short.startswith("driver: "):
        return f'<span class="drv">driver: </span>{esc(short[len("driver: "):])}', lock
    return esc(lock), lock


def cell_slug(c):
    """The file name of a cell's page: cells/LOCK--FAULT.html, with anything but letters,
    digits, '.', '_' and '-' made '_'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", f"{c.lock}--{c.fault}").strip("_") + ".html"


def _cell_page_href(c):
    return "cells/" + cell_slug(c)


def _trial_target(c, t, base):
    """(href, what) for a trial: its report when made, else its entry on its cell's page (which
    says how to make the report and links its files), else None (no run directory)."""
    if t.report:
        return _href(t.report, base), "report"
    if t.run_dir:
        return f"{_cell_page_href(c)}#trial-{t.index + 1}", "cell page"
    return None, None


def _trial_title(c, t):
    parts = [f"{c.lock} \u00d7 {c.fault}, trial {t.index + 1} (seed {t.seed}): {t.verdict_word}"]
    if t.reason:
        parts.append(t.reason)
    if t.coverage:
        parts.append("coverage: " + t.coverage)
    if not t.report and t.run_dir:
        parts.append(f"no report yet: locklab report {t.run_dir}")
    return "; ".join(parts)


def _cell_title(c):
    f = c.fields
    if c.not_run:
        return (f"{c.lock} \u00d7 {c.fault}: not run" + (f": {c.why_not}" if c.why_not else "")
                + (f"; run it with: {c.command}" if c.command else ""))
    if c.letter == "n/a":
        return f"{c.lock} \u00d7 {c.fault}: not applicable" + (f": {c.why_not}" if c.why_not else "")
    n = f.get("trials", len(c.trials))
    parts = [f"{c.lock} \u00d7 {c.fault}: {result_table.word(c.letter)} ({c.text})",
             f"{f.get('violated', 0)} of {n} trial(s) violated, {f.get('stuck', 0)} stuck, "
             f"{f.get('safe', 0)} safe, {f.get('unknown', 0)} unknown"]
    if "rS" in c.marks:
        parts.append("the resource stayed intact (rS: fencing rejected the stale writes)")
    if "~" in c.marks:
        parts.append(f"{f.get('untrusted_timing')} trial(s) with the lab running late (~)")
    if f.get("matches") is False:
        parts.append(f"expected {f.get('expected') or '-'} / resource {f.get('expected_resource') or '-'}"
                     + (f" ({f['expected_origin']})" if f.get("expected_origin") else ""))
    if f.get("regressed") is True:
        parts.append("regressed, fails the run" + (f": {f['regression']}" if f.get("regression") else ""))
    reasons = sorted(set(c.reasons()))
    if reasons:
        parts.append("why unknown: " + " | ".join(reasons))
    bits = [t.bit for t in c.trials if t.bit is not None]
    if bits:
        parts.append(f"the fault bit in {sum(bits)} of {len(bits)} trial(s)")
    if not c.trials:
        parts.append("no trials of this cell in this matrix directory")
    return "; ".join(parts)


def _cell_td(c, base):
    if c.not_run:
        return (f'<td class="cell c-NR" title="{esc(_cell_title(c))}"><a class="lead" href="#not-run">'
                '<span class="letter">not run</span></a></td>')
    cls = result_table.css_class(c.letter) + (" regressed" if c.fields.get("regressed") is True else "")
    title = esc(_cell_title(c))
    if c.letter == "n/a":
        return f'<td class="cell {cls}" title="{title}">n/a</td>'
    head = f'<span class="letter">{esc(c.letter)}</span>' + (' <span class="mk">rS</span>' if "rS" in c.marks else "")
    # the median time to the first violation on a line of its own: narrow columns
    rest = " ".join(f'<span class="at">{esc(w)}</span>' if w.startswith("@") else esc(w) for w in c.tail.split())
    lead = c.lead_trial()
    href = None
    if lead is not None:
        href = _trial_target(c, lead, base)[0] if len(c.trials) == 1 or lead.report else _cell_page_href(c)
    first = f'<a class="lead" href="{esc(href)}">{head}</a>' if href else head
    out = [f'<td class="cell {cls}" title="{title}">{first} {rest}']
    if len(c.trials) > 1:
        links = []
        for t in c.trials:
            h, _ = _trial_target(c, t, base)
            lab = f"{t.index + 1}{'' if t.letter == 'S' else t.letter}"
            links.append(f'<a href="{esc(h)}" title="{esc(_trial_title(c, t))}">{esc(lab)}</a>' if h else esc(lab))
        out.append(f'<span class="trial-links">trials {" ".join(links)} '
                   f'<a class="all" href="{esc(_cell_page_href(c))}" title="every trial of this cell">all</a></span>')
    if c.letter == "?":
        reasons = sorted(set(c.reasons()))
        if reasons:
            why = reasons[0] if len(reasons) == 1 else f"{reasons[0]} (+{len(reasons) - 1} more)"
            out.append(f'<span class="why">{esc(why if len(why) <= 80 else why[:77] + "...")}</span>')
    out.append("</td>")
    return "".join(out)


def matrix_legend(with_not_run=False):
    out = ['<dl class="legend">']
    for key, text in matrixcells.LEGEND:
        cls = result_table.css_class(key) if key in result_table.letters() else ""
        out.append(f'<dt class="{cls}">{esc(key)}</dt><dd>{esc(text)}</dd>')
    if with_not_run:
        out.append(f'<dt class="c-NR">not run</dt><dd>{esc(matrixcells.NOT_RUN_LEGEND)}</dd>')
    out.append("</dl>")
    return "".join(out)


def _trial_link_cell(c, t, base):
    h, what = _trial_target(c, t, base)
    if what == "report":
        return f'<a href="{esc(h)}">timeline</a>'
    if what == "cell page":
        cmd = f"locklab report {t.run_dir}"
        return f'<a href="{esc(h)}" title="{esc(cmd)}">no report: make it</a>'
    return '<span class="muted">no run directory</span>'


def matrix_page(title, m, base):
    """m: a matrixcells.Matrix; base: the directory index.html is written to (links are
    relative to it, so a moved matrix directory keeps them). Returns the index page; the cell
    pages are cell_pages(m, base)'s."""
    doc = m.doc
    about = []
    if doc.get("seed") is not None:
        about.append(f"seed {doc['seed']}")
    if doc.get("mode"):
        about.append(f"{doc['mode']} mode")
    if doc.get("shard"):
        about.append(f"shard {doc['shard'].get('index')}/{doc['shard'].get('count')} (its trials only)")
    b = [f"<h1>{esc(title)}</h1>",
         f"<p class=\"sub\">{len(m.trials)} trials, {len(m.locks)} locks \u00d7 {len(m.faults)} fault sets"
         + (", " + ", ".join(esc(a) for a in about) if about else "")
         + ". The letters and marks are matrix.md's. A cell opens its trial's report (the timeline, "
           "overlaps in red), or its page when it has several trials or no report yet. Hover a cell or a "
           "lock for its counts, reasons and full id.</p>"]
    for n in m.notes:
        b.append(f"<p class=\"bad\">{esc(n)}</p>")
    b.append("<div class=\"matrix-wrap\"><table class=\"matrix\"><tr><th>lock</th>"
             + "".join(f"<th>{esc(f)}</th>" for f in m.faults) + "</tr>")
    for lk in m.locks:
        label, full = lock_label(lk)
        b.append(f"<tr><th class=\"lock\" title=\"{esc(full)}\">{label}</th>")
        for ft in m.faults:
            c = m.cell(lk, ft)
            b.append(_cell_td(c, base) if c else "<td class=\"muted\">not run</td>")
        b.append("</tr>")
    b.append("</table></div>")
    regressed = [c for c in m.cells if c.fields.get("regressed") is True]
    if regressed:
        b.append(f"<h2>Regressed</h2><p>{len(regressed)} cell(s) fail the run (exit 1), outlined in the table:</p><ul>")
        b.extend(f"<li>{esc(c.fields.get('regression') or f'{c.lock} x {c.fault}')}</li>" for c in regressed)
        b.append("</ul>")
    b.append(matrix_legend(any(c.not_run for c in m.cells)))
    skipped = [c for c in (m.cell(lk, ft) for lk in m.locks for ft in m.faults) if c is not None and c.not_run]
    if skipped:
        b.append(f"<h2 id=\"not-run\">Not run ({len(skipped)} cell{'s' if len(skipped) != 1 else ''})</h2>"
                 "<p class=\"muted\">The fault applies to the lock, but this matrix skipped the cell.</p>"
                 "<table><tr><th>lock</th><th>fault</th><th>why</th><th>command that runs it</th></tr>")
        for c in skipped:
            label, full = lock_label(c.lock)
            cmd = f'<span class="cmd">{esc(c.command)}</span>' if c.command else '<span class="muted">\u2013</span>'
            b.append(f"<tr><td class=\"nw\" title=\"{esc(full)}\">{label}</td><td>{esc(c.fault)}</td>"
                     f"<td>{esc(c.why_not or 'skipped')}</td><td>{cmd}</td></tr>")
        b.append("</table>")
    b.append("<p class=\"muted\">The same table as an image (the heatmap): <a href=\"heatmap.png\">heatmap.png</a>. "
             "Violated and stuck trials have their report; any other trial's page says how to make its report "
             "(<code>locklab report TRIAL_DIR</code>).</p>")
    b.append("<h2>Trials</h2><div class=\"table-wrap\"><table class=\"trials\"><tr><th>lock</th><th>faults</th><th>trial</th>"
             "<th>verdict</th><th>report</th><th>seed</th><th>resource</th><th>overlapping pairs</th>"
             "<th>lost updates</th><th>first violation</th><th>why unknown / coverage</th></tr>")
    for c in (m.cell(lk, ft) for lk in m.locks for ft in m.faults):
        if c is None:
            continue
        label, full = lock_label(c.lock)
        for t in c.trials:
            r = t.results or {}
            me = r.get("mutual_exclusion") if isinstance(r.get("mutual_exclusion"), dict) else {}
            res = r.get("resource") if isinstance(r.get("resource"), dict) else {}
            fv = r.get("first_violation_ms")
            notes = "; ".join(x for x in (t.reason, ("coverage: " + t.coverage) if t.coverage else "") if x)
            b.append(f"<tr id=\"t{esc(t.n)}\" class=\"{'bad' if t.letter == 'V' else ''}\">"
                     f"<td class=\"nw\" title=\"{esc(full)}\">{label}</td>"
                     f"<td class=\"nw\">{esc(c.fault)}</td><td class=\"num\">{t.index + 1}/{len(c.trials)}</td>"
                     f"<td>{verdict_badge(t.verdict_word)}</td><td class=\"nw\">{_trial_link_cell(c, t, base)}</td>"
                     f"<td class=\"num seed\">{esc(_fmt(t.seed))}</td>"
                     f"<td>{esc(_fmt(r.get('resource_verdict')))}</td>"
                     f"<td class=\"num\">{esc(_fmt(me.get('overlapping_pairs')))}</td>"
                     f"<td class=\"num\">{esc(_fmt(res.get('lost_updates')))}</td>"
                     f"<td class=\"num\">{esc(_fmt(fv / 1000) + ' s' if isinstance(fv, (int, float)) else _fmt(None))}</td>"
                     f"<td class=\"notes\">{esc(notes)}</td></tr>")
    b.append("</table></div>")
    return page(title, "\n".join(b), _matrix_css() + CELL_CSS)


DASH = "\u2013"

CELL_CSS = """
.files a{margin-right:10px} .cmd{background:#f6f6f8;padding:4px 8px;border-radius:4px;display:inline-block;
font-family:monospace;font-size:.9em;user-select:all}
"""


def cell_pages(title, m, base):
    """{file name: HTML} of every cell with trials: its counts, and each trial with its report's
    link or the command that makes it, and the links of its run files (never a directory:
    artifact hosts do not list them). Written to base/cells/; links relative to it."""
    pages = {}
    cells_dir = os.path.join(base, "cells")
    for c in m.cells:
        if not c.trials:
            continue
        label, full = lock_label(c.lock)
        b = [f'<p><a href="../index.html">\u2190 {esc(title)}</a></p>',
             f"<h1>{esc(full)} \u00d7 {esc(c.fault)} "
             f"<span class=\"badge {verdict_class(result_table.word(c.letter))}\">{esc(c.text)}</span></h1>",
             f"<p class=\"sub\">{esc(_cell_title(c))}</p>",
             "<table><tr><th>trial</th><th>seed</th><th>verdict</th><th>why unknown / coverage</th>"
             "<th>report</th><th>run files</th></tr>"]
        for t in c.trials:
            if t.report:
                rep = f'<a href="{esc(_href(t.report, cells_dir))}">report (timeline)</a>'
            elif t.run_dir:
                rep = (f'no report yet; make it with<br><span class="cmd">locklab report {esc(t.run_dir)}</span>'
                       f'<br><span class="muted">or every trial\'s, linked from here, with '
                       f'<code>locklab report --matrix {esc(m.dir)}</code></span>')
            else:
                rep = '<span class="muted">no run directory</span>'
            files = []
            if t.run_dir:
                for fn in ("results.json", "history.jsonl", "scenario.toml", "junit.xml"):
                    if os.path.isfile(os.path.join(t.run_dir, fn)):
                        files.append(f'<a href="{esc(_href(os.path.join(t.run_dir, fn), cells_dir))}">{fn}</a>')
            notes = "; ".join(x for x in (t.reason, ("coverage: " + t.coverage) if t.coverage else "") if x)
            b.append(f"<tr id=\"trial-{t.index + 1}\"><td class=\"num\">{t.index + 1}/{len(c.trials)}</td>"
                     f"<td class=\"num\">{esc(_fmt(t.seed))}</td><td>{verdict_badge(t.verdict_word)}</td>"
                     f"<td class=\"notes\">{esc(notes) or DASH}</td><td>{rep}</td>"
                     f"<td class=\"files\">{' '.join(files) or DASH}</td></tr>")
        b.append("</table>")
        pages[cell_slug(c)] = page(f"{c.lock} \u00d7 {c.fault}: {title}", "\n".join(b), _matrix_css() + CELL_CSS)
    return pages
