"""The page of a hunt: HUNT_DIR/hunt.html, made from hunt.json and the hunt directory.

A hunt directory (harness/hunt/hunt_story.cc WriteHuntOutputs, docs/hunt.md "Reading what a hunt
wrote") holds hunt.json, minimal.toml, narrative.md, found/, and the runs: trials/tNNNN.toml
(+ .log, and the run directory trials/tNNNN/STAMP/), shrink/sK-R.toml (the R-th rerun of the
K-th shrink step tried, hunt.json shrink_tried[K-1]; a later find's are named after it,
shrink/tNNNN-sK-R), reruns/rB-I.toml (the I-th of the ten reruns of the scenario with its last
B kept steps undone) and reruns/gN-I.toml (of the N-th strengthened one). A run's .log ends
with "run: RUN_DIR". Every run's times are read from its history.jsonl (CLOCK_MONOTONIC, one
clock for every run on the machine), so the page draws the runs as they happened: the search's
trials side by side (--jobs), then the shrink's reruns, then the reproduction.

The page shows: the hunt in numbers, the runs in time (an inline SVG; hover a run for what it
was, click it for its report or scenario), each find, each shrink step tried (kept, refused or
undone, with its runs), each reproduction with its runs, the minimal scenario's story and a
link to its failing run's report (made here when it is missing: an interrupted hunt, or one
run with --no-report), and the corpus entry (--corpus FILE, or the entry of a corpus directory
whose scenario is minimal.toml's). Nothing here re-judges a run: a run failed when its
results.json says violated (or stuck, when the hunt counted liveness).
"""

import html
import json
import os
import re
import tomllib

from . import results as result_table
from .history import RunError, load_json, load_text

PHASES = (("trials", "search"), ("shrink", "shrink"), ("reruns", "reproduce"))



# hunt.json's fate of a find (hunt_story.h FindFate), in words; files from before it say only
# whether it counted.
_FATES = {"counted": "yes", "baseline-failed": "no: the baseline failed it too",
          "not-confirmed": "no: its confirmation did not reproduce the difference",
          "not-run": "no: never confirmed", "known": "no: already known"}


def _fate(f):
    if "fate" not in f:
        return "yes" if f.get("counted", True) else "no (the baseline failed it too, or it did not reproduce)"
    text = _FATES.get(f["fate"], str(f["fate"]))
    return text + (" (" + str(f["why"]) + ")" if f.get("why") else "")

def esc(x):
    return html.escape(str(x), quote=True)


def scenario_ttl_ms(toml_text):
    """A scenario file's [lock] ttl_ms (an int), or None (none, or not TOML)."""
    try:
        ttl = tomllib.loads(toml_text).get("lock", {}).get("ttl_ms")
    except (tomllib.TOMLDecodeError, AttributeError):
        return None
    return ttl if isinstance(ttl, int) and not isinstance(ttl, bool) else None


def is_hunt_dir(d):
    return os.path.isfile(os.path.join(d, "hunt.json"))


def _edge_times(path):
    """(first, last) time_ns of a history.jsonl, reading its first and last lines only."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline()
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 65536))
            tail = fh.read().splitlines()
    except OSError:
        return None
    try:
        t0 = json.loads(first)["time_ns"]
    except (ValueError, KeyError, TypeError):
        return None
    for line in reversed(tail):
        try:
            return t0, json.loads(line)["time_ns"]
        except (ValueError, KeyError, TypeError):
            continue
    return t0, t0


class HuntRun:
    """One run of the hunt: its scenario file, log, run directory, results and times."""

    def __init__(self, hunt_dir, sub, name):
        self.sub, self.name = sub, name
        self.phase = dict(PHASES)[sub]
        self.toml = os.path.join(hunt_dir, sub, name + ".toml")
        self.log = os.path.join(hunt_dir, sub, name + ".log")
        self.baseline = "-baseline" in name
        self.run_dir = self._run_dir(hunt_dir)
        self.results = None
        self.start = self.end = None
        if self.run_dir:
            r = load_json(os.path.join(self.run_dir, "results.json"), required=False) \
                if os.path.isfile(os.path.join(self.run_dir, "results.json")) else None
            self.results = r if isinstance(r, dict) else None
            edges = _edge_times(os.path.join(self.run_dir, "history.jsonl"))
            if edges:
                self.start, self.end = edges
        report = os.path.join(self.run_dir, "report", "index.html") if self.run_dir else None
        self.report = report if report and os.path.isfile(report) else None

    def _run_dir(self, hunt_dir):
        text = load_text(self.log) or ""
        m = re.findall(r"^run: (.+)$", text, re.M)
        if not m:
            return None
        rd = m[-1].strip()
        # the same SUB/NAME/STAMP under this hunt directory first (a moved or copied hunt),
        # then the path as logged
        cand = os.path.join(hunt_dir, self.sub, os.path.basename(os.path.dirname(rd)), os.path.basename(rd))
        for c in (cand, rd):
            if os.path.isdir(c):
                return c
        return None

    @property
    def trusted(self):
        """False when the lab itself ran late in the run: the hunt does not count its failure."""
        lag = (self.results or {}).get("lab_lag")
        return not (isinstance(lag, dict) and lag.get("timing_trusted") is False)

    def letter(self):
        """The run's result letter as its results.json recorded it ("-": it left none)."""
        return "-" if self.results is None else result_table.of(self.results)

    def title(self):
        r = self.results or {}
        faults = r.get("faults")
        faults = " + ".join(map(str, faults)) if isinstance(faults, list) and faults else "no fault"
        bits = [f"{self.sub}/{self.name}: {result_table.word(self.letter())}", faults]
        if not self.trusted:
            bits.append("the lab ran late: its timing is not trusted, a failure here is not counted")
        if isinstance(r.get("verdict_reason"), str) and r["verdict_reason"]:
            bits.append(r["verdict_reason"])
        return "; ".join(bits)


class Hunt:
    def __init__(self, hunt_dir):
        self.dir = os.path.abspath(hunt_dir)
        self.path = os.path.join(self.dir, "hunt.json")
        doc = load_json(self.path)
        if not isinstance(doc, dict) or "lock" not in doc:
            raise RunError(f"{self.path}: not a hunt's hunt.json (field 'lock')")
        self.doc = doc
        self.runs = []
        for sub, _ in PHASES:
            d = os.path.join(self.dir, sub)
            if not os.path.isdir(d):
                continue
            names = sorted(f[:-5] for f in os.listdir(d) if f.endswith(".toml"))
            self.runs += [HuntRun(self.dir, sub, n) for n in names]
        timed = [r for r in self.runs if r.start is not None]
        self.t0 = min((r.start for r in timed), default=0)
        self.by_name = {(r.sub, r.name): r for r in self.runs}

    def get(self, key, default=None):
        v = self.doc.get(key, default)
        return default if v is None else v

    def sec(self, t):
        return (t - self.t0) / 1e9

    def minimal(self):
        m = self.doc.get("minimal")
        return m if isinstance(m, dict) else None

    def failing_run(self):
        """The minimal's failing rerun: hunt.json's, else the failing-run link; None if gone."""
        m = self.minimal() or {}
        fr = m.get("failing_run") if isinstance(m.get("failing_run"), str) else ""
        cands = []
        if fr:   # the same reruns/NAME/STAMP under this hunt directory first (a moved hunt)
            cands.append(os.path.join(self.dir, "reruns", os.path.basename(os.path.dirname(fr)), os.path.basename(fr)))
        cands += [os.path.join(self.dir, "failing-run"), fr]
        for cand in cands:
            if cand and os.path.isfile(os.path.join(cand, "history.jsonl")):
                return os.path.realpath(cand)
        return None

    def find_runs(self):
        """The trial run of each find in hunt.json "found" (those whose run is here)."""
        out = []
        for f in self.doc.get("found") or []:
            if isinstance(f, dict):
                stem = os.path.splitext(os.path.basename(str(f.get("scenario", ""))))[0]
                r = self.by_name.get(("trials", stem))
                if r is not None:
                    out.append(r)
        return out

    def attempt_prefix(self):
        """Shrink and rerun files of the minimal's find: '' for the first find shrunk, else
        'tNNNN-' (harness/hunt/hunt.cc ShrinkUntilOneReproduces)."""
        m = self.minimal() or {}
        shrunk = self.doc.get("shrunk") if isinstance(self.doc.get("shrunk"), list) else []
        if not shrunk or not isinstance(shrunk[0], dict) or shrunk[0].get("found") == m.get("found"):
            return ""
        stem = os.path.splitext(os.path.basename(str(m.get("found") or "")))[0]
        return stem + "-" if stem else ""

    def runs_named(self, sub, stem):
        """The runs sub/STEM-1, STEM-2, ... (not the baseline's), in order."""
        out = []
        pat = re.compile(re.escape(stem) + r"-(\d+)$")
        for r in self.runs:
            mm = pat.match(r.name) if r.sub == sub else None
            if mm:
                out.append((int(mm.group(1)), r))
        return [r for _, r in sorted(out, key=lambda x: x[0])]

    def ttls(self):
        """{TTL ms: number of the search's trials that ran with it}, from the trials' own
        scenarios (trials/tNNNN.toml [lock] ttl_ms): without --ttl a hunt draws each
        scenario's TTL, and hunt.json's ttl_ms is only the one a scenario is scaled from."""
        out = {}
        for r in self.runs:
            if r.phase == "search" and not r.baseline:
                ttl = scenario_ttl_ms(load_text(r.toml) or "")
                if ttl is not None:
                    out[ttl] = out.get(ttl, 0) + 1
        return out

    def ttl_text(self):
        """The header's TTL: "TTL 750 ms" when every trial ran with one, else each TTL drawn
        with its trials and minimal.toml's ("TTL drawn per scenario: 750 ms (2 trials), ...");
        hunt.json's ttl_ms when no trial scenario is here."""
        ttls = self.ttls()
        minimal = scenario_ttl_ms(load_text(os.path.join(self.dir, "minimal.toml")) or "") if self.minimal() else None
        if not ttls:
            one = minimal if minimal is not None else self.doc.get("ttl_ms")
            return f"TTL {esc(one)} ms"
        if len(ttls) == 1:
            return f"TTL {next(iter(ttls))} ms"
        drawn = ", ".join(f"{t} ms ({n} trial{'s' if n != 1 else ''})" for t, n in sorted(ttls.items()))
        return f"TTL drawn per scenario: {drawn}" + (f"; minimal.toml's {minimal} ms" if minimal is not None else "")

    def corpus_entry(self, corpus):
        """The corpus file this hunt wrote: corpus itself when it is a file, else the file of
        the directory whose scenario is minimal.toml's (only its name differs)."""
        if not corpus:
            return None
        if os.path.isfile(corpus):
            return os.path.abspath(corpus)
        mine = load_text(os.path.join(self.dir, "minimal.toml"))
        if not mine or not os.path.isdir(corpus):
            return None

        def body(t):
            return [ln for ln in t.splitlines() if not ln.startswith("name = ")]
        for f in sorted(os.listdir(corpus)):
            p = os.path.join(corpus, f)
            if f.endswith(".toml") and os.path.isfile(p) and body(load_text(p) or "") == body(mine):
                return os.path.abspath(p)
        return None


# --------------------------------------------------------------------------------------------
# the page

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:20px auto;
max-width:1380px;padding:0 16px;color:#1d1d1f;line-height:1.45}
h1{font-size:1.45em;margin:0 0 4px} h2{font-size:1.15em;margin:24px 0 8px;border-bottom:1px solid #ddd;padding-bottom:3px}
.sub{color:#555;margin:0 0 12px} .muted{color:#777;font-size:.9em}
.badge{display:inline-block;padding:2px 10px;border-radius:11px;font-weight:700;color:#fff;font-size:.95em}
.found{background:#c8102e}.none{background:#2b8a3e}.partial{background:#b7791f}
table{border-collapse:collapse;margin:6px 0 10px;font-size:.92em}
th,td{border:1px solid #ddd;padding:4px 9px;text-align:left;vertical-align:top}
th{background:#f4f4f6} td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.kept td{background:#eef8ee} tr.undone td{background:#fff6e0} tr.told td{background:#eef4ff}
.story{background:#fff8f8;border-left:4px solid #c8102e;padding:10px 14px;margin:8px 0}
pre{background:#f6f6f8;padding:10px;overflow:auto;font-size:.85em}
code{font-size:.92em} a{color:#1d5fb4}
.runs a{display:inline-block;min-width:1.4em;text-align:center;border-radius:3px;color:#fff;text-decoration:none;
font-size:.85em;margin:1px;padding:0 3px}
.svgwrap{border:1px solid #ddd;border-radius:6px;padding:4px;overflow-x:auto}
.svgwrap svg{display:block;width:100%;min-width:900px}
.legend span{margin-right:14px;font-size:.85em} .legend i{display:inline-block;width:12px;height:10px;margin-right:4px;border-radius:2px}
"""


def _rel(path, base):
    return os.path.relpath(path, base).replace(os.sep, "/")


def _target(run, base):
    return _rel(run.report or run.toml, base)


def _run_links(runs, base):
    out = []
    for n, r in enumerate(runs, 1):
        letter = r.letter()
        late = "" if r.trusted else "~"
        style = (f"background:{result_table.colour(letter)}" if r.trusted else
                 f"background:repeating-linear-gradient(135deg,{result_table.colour(letter)} 0 4px,#9a9a9a 4px 7px)")
        out.append(f'<a href="{esc(_target(r, base))}" style="{style}" '
                   f'title="{esc(r.title())}">{n}{"" if letter == "S" else letter}{late}</a>')
    return '<span class="runs">' + "".join(out) + "</span>" if out else '<span class="muted">no run found</span>'


def timeline_svg(h, base):
    """The runs in time: one band per phase, runs that overlapped in time on lanes of their
    own, coloured by outcome; finds marked above."""
    runs = [r for r in h.runs if r.start is not None]
    if not runs:
        return '<p class="muted">No run of this hunt has a history to place in time.</p>'
    span_s = max(h.sec(r.end) for r in runs) or 1.0
    W, LEFT, RIGHT, LANE, GAP, TOP = 1300, 92, 16, 11, 14, 34

    def x(s):
        return LEFT + s / span_s * (W - LEFT - RIGHT)
    parts, y = [], TOP
    rows = []
    for sub, phase in PHASES:
        ps = sorted((r for r in runs if r.sub == sub), key=lambda r: r.start)
        if not ps:
            continue
        lanes = []   # end time of the last run on each lane
        placed = []
        for r in ps:
            lane = next((i for i, e in enumerate(lanes) if e <= r.start), None)
            if lane is None:
                lane = len(lanes)
                lanes.append(0)
            lanes[lane] = r.end
            placed.append((r, lane))
        h_band = len(lanes) * LANE
        rows.append((phase, y, h_band, placed))
        y += h_band + GAP
    H = y + 22
    parts.append(f'<svg viewBox="0 0 {W} {H}" role="img" '
                 f'aria-label="the hunt\'s runs in time">')
    # grid
    step = next(s for s in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200) if span_s / s <= 14)
    t = 0.0
    while t <= span_s + 1e-9:
        parts.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{TOP - 6}" y2="{H - 20}" stroke="#e6e6e6"/>'
                     f'<text x="{x(t):.1f}" y="{H - 6}" font-size="11" text-anchor="middle" fill="#555">{t:g} s</text>')
        t += step
    for phase, y0, hb, placed in rows:
        parts.append(f'<text x="{LEFT - 8}" y="{y0 + hb / 2 + 4:.1f}" font-size="12" text-anchor="end" '
                     f'fill="#333" font-weight="600">{esc(phase)}</text>'
                     f'<rect x="{LEFT}" y="{y0 - 2}" width="{W - LEFT - RIGHT}" height="{hb + 4}" fill="#fafafa"/>')
        for r, lane in placed:
            x0, x1 = x(h.sec(r.start)), x(h.sec(r.end))
            letter = r.letter()
            stroke = ' stroke="#333" stroke-dasharray="2 1"' if r.baseline else ""
            opacity = "" if r.trusted else ' fill-opacity="0.45"'
            parts.append(f'<a href="{esc(_target(r, base))}"><rect class="run" x="{x0:.1f}" y="{y0 + lane * LANE}" '
                         f'width="{max(x1 - x0, 2):.1f}" height="{LANE - 2}" fill="{result_table.colour(letter)}" '
                         f'data-run="{esc(r.sub + "/" + r.name)}"{stroke}{opacity}><title>{esc(r.title())} '
                         f'({h.sec(r.start):.1f}\u2013{h.sec(r.end):.1f} s)</title></rect></a>')
    # finds: a mark at the end of the trial that failed
    found = h.doc.get("found") if isinstance(h.doc.get("found"), list) else []
    for f in found:
        if not isinstance(f, dict):
            continue
        stem = os.path.splitext(os.path.basename(str(f.get("scenario", ""))))[0]
        r = h.by_name.get(("trials", stem))
        if r is None or r.end is None:
            continue
        fx = x(h.sec(r.end))
        word = "find" if f.get("counted", True) else "find (%s)" % f.get("fate", "not counted")
        parts.append(f'<path d="M{fx - 6:.1f},{TOP - 20} l12,0 l-6,9 z" fill="#c8102e"><title>{esc(stem)}: '
                     f'{esc(word)} at {h.sec(r.end):.1f} s</title></path>'
                     f'<text x="{fx + 8:.1f}" y="{TOP - 12}" font-size="11.5" fill="#c8102e" font-weight="700">'
                     f'{esc(word)} {esc(stem)}</text>')
    parts.append("</svg>")
    legend = "".join(f'<span><i style="background:{result_table.colour(k)}"></i>{result_table.word(k)}</span>' for k in ("V", "L", "S", "?"))
    return (f'<div class="svgwrap">{"".join(parts)}</div><p class="legend">{legend}'
            '<span>dashed outline: a baseline run; faded (or ~ below): the lab ran late, not counted</span><span>hover a run for what it was; click it for its '
            'report (or its scenario)</span></p>')


def _kept_flags(h):
    """Per shrink_tried entry: 'kept', 'refused' or 'undone' (kept when 3 of 4 reruns
    failed and no baseline run did, as harness/hunt/hunt.cc Shrink keeps a step; the last
    undone_steps kept ones were undone by the reproduction)."""
    tried = h.doc.get("shrink_tried") if isinstance(h.doc.get("shrink_tried"), list) else []
    flags = []
    for t in tried:
        t = t if isinstance(t, dict) else {}
        reruns = t.get("reruns") or 4
        need = (3 * reruns + 3) // 4
        flags.append("kept" if (t.get("failed") or 0) >= need and not t.get("baseline_failed") else "refused")
    undone = h.doc.get("undone_steps") or 0
    for i in reversed(range(len(flags))):
        if undone <= 0:
            break
        if flags[i] == "kept":
            flags[i] = "undone"
            undone -= 1
    return tried, flags


def hunt_page(h, failing_report, corpus_entry):
    """The page's HTML. failing_report: the failing run's report/index.html (or None);
    corpus_entry: the corpus file this hunt wrote (or None)."""
    base = h.dir
    d = h.doc
    lock = d.get("lock", "?")
    m = h.minimal()
    counted = [f for f in d.get("found") or [] if isinstance(f, dict) and f.get("counted", True)]
    if m:
        badge = '<span class="badge found">failure found</span>'
    elif counted:
        badge = '<span class="badge partial">found, not reproduced</span>'
    else:
        badge = '<span class="badge none">no failure within the budget</span>'
    b = [f"<h1>hunt: {esc(lock)} {badge}</h1>"]
    faults = d.get("faults") if isinstance(d.get("faults"), list) else []
    about = [f"seed {esc(d.get('seed'))}", h.ttl_text(),
             f"{len(faults)} fault{'s' if len(faults) != 1 else ''} ({esc(', '.join(map(str, faults)))})",
             f"budget {esc(d.get('budget_s'))} s"]
    if d.get("baseline"):
        about.append(f"counted only when {esc(d['baseline'])} does not fail the same scenario")
    b.append(f'<p class="sub">{"; ".join(about)}. Hunt directory: <code>{esc(h.dir)}</code></p>')
    nums = (f"{esc(d.get('trials'))} trials in {float(d.get('elapsed_s') or 0):.0f} s (search "
            f"{float(d.get('search_s') or 0):.0f} s, shrink {float(d.get('shrink_s') or 0):.0f} s)")
    if d.get("time_to_first_s") is not None:
        nums += f"; the first counted find after {float(d['time_to_first_s']):.0f} s"
    if isinstance(d.get("guide"), dict):
        nums += (f"; {esc(d['guide'].get('mutations'))} scenarios built on the {esc(d['guide'].get('kept'))} "
                 "the guide kept")
    if d.get("interrupted"):
        nums += "; <b>interrupted</b>"
    b.append(f"<p>{nums}.</p>")
    # the minimal's story first: what a reader came for
    if m:
        b.append("<h2>What it found</h2>")
        b.append(f'<div class="story"><p>{esc(d.get("narrative") or "")}</p></div>')
        links = []
        if failing_report:
            links.append(f'<a href="{esc(_rel(failing_report, base))}">the failing run\'s report</a> '
                         "(its timeline, overlaps in red)")
        else:
            links.append('<span class="muted">no failing run to report on (none of the reruns kept failed)</span>')
        links.append(f'<a href="minimal.toml">minimal.toml</a> (replay: <code>locklab run {esc(h.dir)}/minimal.toml</code>)')
        b.append("<p>" + "; ".join(links) + ".</p>")
        if m.get("regression_note"):
            b.append(f'<p class="muted">{esc(m["regression_note"])}.</p>')
        if corpus_entry:
            b.append(f'<p>Corpus entry: <a href="{esc(_rel(corpus_entry, base))}">{esc(corpus_entry)}</a> '
                     f'(<code>locklab replay {esc(os.path.dirname(corpus_entry))}</code> replays it).</p>')
        elif (m.get("regression") or {}).get("corpus"):
            b.append('<p class="muted">A corpus entry is written with <code>--corpus DIR</code>; this page was '
                     'made without one.</p>')
    b.append("<h2>The runs in time</h2>")
    b.append(timeline_svg(h, base))
    trials = [r for r in h.runs if r.sub == "trials"]
    if trials:
        b.append(f"<details><summary>The search's {len(trials)} trials, one by one</summary>"
                 "<table><tr><th>trial</th><th>started</th><th>lasted</th><th>faults</th><th>verdict</th>"
                 "<th>why</th></tr>")
        for r in sorted(trials, key=lambda r: (r.start is None, r.start or 0, r.name)):
            res = r.results or {}
            faults = res.get("faults")
            faults = " + ".join(map(str, faults)) if isinstance(faults, list) and faults else "no fault"
            when = f"{h.sec(r.start):.1f} s" if r.start is not None else "\u2013"
            took = f"{(r.end - r.start) / 1e9:.1f} s" if r.start is not None else "\u2013"
            late = "" if r.trusted else " (the lab ran late: not counted)"
            b.append(f"<tr><td><a href=\"{esc(_target(r, base))}\">{esc(r.name)}</a></td><td class=\"num\">{when}</td>"
                     f"<td class=\"num\">{took}</td><td>{esc(faults)}</td><td>{result_table.word(r.letter())}{late}</td>"
                     f"<td>{esc(res.get('verdict_reason') or '')}</td></tr>")
        b.append("</table></details>")
    # finds
    found = [f for f in d.get("found") or [] if isinstance(f, dict)]
    b.append("<h2>Failing scenarios found</h2>")
    if not found:
        b.append("<p>None within the budget (not a proof that the lock is safe).</p>")
    else:
        b.append("<table><tr><th>scenario</th><th>found at</th><th>faults</th><th>what failed</th>"
                 "<th>counted</th><th>its run</th></tr>")
        for f in found:
            stem = os.path.splitext(os.path.basename(str(f.get("scenario", ""))))[0]
            r = h.by_name.get(("trials", stem))
            run = (f'<a href="{esc(_target(r, base))}">{"report" if r.report else "scenario"}</a>' if r else "\u2013")
            b.append(f"<tr><td><a href=\"{esc(f.get('scenario', ''))}\">{esc(f.get('scenario', ''))}</a></td>"
                     f"<td class=\"num\">{float(f.get('at_s') or 0):.1f} s</td>"
                     f"<td>{esc(' + '.join(map(str, f.get('faults') or [])) or 'no fault')}</td>"
                     f"<td>{esc(', '.join(map(str, f.get('kinds') or [])))}</td>"
                     f"<td>{esc(_fate(f))}</td>"
                     f"<td>{run}</td></tr>")
        b.append("</table>")
    shrunk = [s for s in d.get("shrunk") or [] if isinstance(s, dict)]
    if len(shrunk) > 1:
        b.append("<p>Finds shrunk (one whose minimal did not reproduce is set aside and the search goes on): "
                 + "; ".join(f"{esc(s.get('found'))}: failed {esc(s.get('reproduced'))} of {esc(s.get('reruns'))}"
                             for s in shrunk) + ".</p>")
    # shrink
    tried, flags = _kept_flags(h)
    if tried:
        prefix = h.attempt_prefix()
        b.append(f"<h2>Shrinking {esc((m or {}).get('found', ''))}</h2>"
                 "<p class=\"muted\">Each step is one simplification of the scenario, rerun up to 4 times; it is kept "
                 "when 3 of 4 reruns fail (and, with a baseline, the baseline does not). The runs: green safe, red "
                 "failed; click one for its report or scenario.</p>")
        b.append("<table><tr><th>#</th><th>step tried</th><th>failed</th><th>outcome</th><th>runs</th></tr>")
        for k, (t, flag) in enumerate(zip(tried, flags), 1):
            t = t if isinstance(t, dict) else {}
            runs = h.runs_named("shrink", f"{prefix}s{k}")
            word = {"kept": "kept", "refused": "not kept",
                    "undone": "kept, then undone (the result did not reproduce)"}[flag]
            b.append(f"<tr class=\"{flag}\"><td class=\"num\">{k}</td><td>{esc(t.get('step'))}</td>"
                     f"<td class=\"num\">{esc(t.get('failed'))} of {len(runs) or esc(t.get('reruns'))}"
                     f"{' (baseline failed)' if t.get('baseline_failed') else ''}</td><td>{word}</td>"
                     f"<td>{_run_links(runs, base)}</td></tr>")
        b.append("</table>")
        kept = d.get("shrink_steps") or []
        b.append("<p>Steps kept: " + (esc("; ".join(map(str, kept))) if kept else "none") + ".</p>")
    # reproduction
    repro = [r for r in d.get("reproductions") or [] if isinstance(r, dict)]
    if repro:
        prefix = h.attempt_prefix()
        b.append("<h2>Reproducing (10 reruns each)</h2><table><tr><th>scenario</th><th>failed</th>"
                 + ("<th>baseline failed</th>" if d.get("baseline") else "") + "<th>runs</th></tr>")
        g = 0
        told = None
        if m:
            told = next((i for i, r in enumerate(repro) if r.get("failed") == m.get("reproduced")
                         and r.get("baseline_failures") == m.get("baseline_failures")), None)
        for i, r in enumerate(repro):
            what = str(r.get("scenario", ""))
            if what.startswith("strengthened"):
                g += 1
                stem = f"{prefix}g{g}"
            else:
                mm = re.match(r"(\d+) kept steps? undone", what)
                stem = f"{prefix}r{mm.group(1) if mm else 0}"
            runs = h.runs_named("reruns", stem)
            b.append(f"<tr class=\"{'told' if i == told else ''}\"><td>{esc(what)}"
                     f"{' (the minimal told above)' if i == told else ''}</td>"
                     f"<td class=\"num\">{esc(r.get('failed'))} of {esc(r.get('reruns'))}</td>"
                     + (f"<td class=\"num\">{esc(r.get('baseline_failures'))}</td>" if d.get("baseline") else "")
                     + f"<td>{_run_links(runs, base)}</td></tr>")
        b.append("</table>")
    if m:
        text = load_text(os.path.join(h.dir, "minimal.toml"))
        if text:
            b.append(f"<h2>minimal.toml</h2><pre>{esc(text)}</pre>")
    b.append(f"<p class=\"muted\">Made by <code>python3 -m reports {esc(h.dir)}</code> from hunt.json and the hunt "
             "directory (hunt.md says the same in text). Times are seconds since the hunt's first run started.</p>")
    csp = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\"><link rel=\"icon\" href=\"data:,\">"
            f"<title>hunt: {esc(lock)}</title><style>{CSS}</style></head><body>\n" + "\n".join(b)
            + "\n</body></html>\n")
