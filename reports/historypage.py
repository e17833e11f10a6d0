"""The page of one history file (`locklab report HISTORY_FILE`): any history `locklab check`
reads (lab jsonl, Jepsen/Knossos EDN, Porcupine etcd logs), judged by the binary itself
(harness/cli/report_command.cc), never here.

The binary hands over two files: the judgement (`--judged`: {"file", "format", "time_unit",
"check_text": what `locklab check FILE` prints, "check": what `check --json` prints}) and the
history's events as native JSON Lines (`--events`). A history without a clock (EDN, Porcupine
logs: times are positions) comes with each event at its source line (time_unit "line": one
line is one millisecond of the drawing's axis, which reads "line N"), the unit check's own
sentence speaks in. The page: the verdict and its line exactly as check prints it, the
sentence naming the operation no order can place, the explorable timeline (explore.py, one
lane per process) with that operation and its conflicts highlighted, and check's whole text.
"""

import os

import numpy as np

from . import explore
from .htmlreport import esc, moment, page
from .history import LOCK_FS, RunError, load_history, load_json
from .narrative import Sentence
from .runfiles import compute_windows, episodes_from_judgement, holds_from_judgement, unplaceable_of

# check's verdicts, as the page's badge classes (htmlreport.CSS)
BADGE = {"violated": "violated", "invalid": "violated", "safe": "safe", "valid": "safe"}


class HistoryView:
    """What explore.py draws, from one judged history: the shape of runfiles.Run that the
    timeline reads (history, clients, lock_keys, holds, episodes, windows, t0, t_end,
    unplaceable), plus check's verdict, line and text."""

    def __init__(self, history_path, judged_path, events_path):
        self.path = history_path
        bundle = load_json(judged_path)
        check = bundle.get("check") if isinstance(bundle, dict) else None
        text = bundle.get("check_text") if isinstance(bundle, dict) else None
        if not isinstance(check, dict) or not isinstance(text, str):
            raise RunError(f"{judged_path}: not a judgement of {history_path} (\"check\", \"check_text\")")
        self.check, self.check_text = check, text
        self.format = str(bundle.get("format") or "jsonl")
        self.time_unit = "line" if bundle.get("time_unit") == "line" else "s"
        h = self.history = load_history(events_path)
        self.t0, self.t_end = int(h.t[0]), int(h.t[-1])
        if self.time_unit == "line":
            self.t0 = 0   # the axis counts lines from the file's start
        where = f"locklab check --json {history_path}"
        judged_run = "verdict" in check   # a lab history judged by the run's judge
        self.holds = holds_from_judgement(check, where) if judged_run else []
        self.episodes = episodes_from_judgement(check, self.holds, where)[0] if judged_run else []
        self.windows = compute_windows(h)
        for w in self.windows:   # another tool's nemesis names no fault (Jepsen's :start/:stop)
            w.fault = w.fault or "nemesis"
        self.clients = sorted(set(int(p) for p in np.unique(h.proc) if p >= 0))
        self.lock_keys = sorted({hd.key for hd in self.holds}) or self._lock_keys()
        self.unplaceable = self._unplaceable(judged_run)
        # check's line for the verdict: the first after the file's own (the judge's
        # "verdict: ..." or the model's "cas-register: invalid (...)")
        lines = text.splitlines()
        self.verdict_line = lines[1].strip() if len(lines) > 1 else ""
        if judged_run:
            self.verdict = str(check.get("verdict") or "unknown")
        else:
            lins = [x for x in check.get("linearizability") or [] if isinstance(x, dict)]
            verdicts = [str(x.get("verdict") or "unknown") for x in lins]
            self.verdict = ("invalid" if "invalid" in verdicts else "unknown" if "unknown" in verdicts or not verdicts
                            else "valid")

    def _lock_keys(self):
        h = self.history
        codes = [h.f_code(f) for f in LOCK_FS if h.f_code(f) >= 0]
        if not codes:
            return []
        return sorted({h.key_names[k] for k in np.unique(h.key[np.isin(h.f, codes)])})

    def _unplaceable(self, judged_run):
        if judged_run:
            return unplaceable_of(self.check, None)
        for lin in self.check.get("linearizability") or []:
            u = unplaceable_of({"linearizability": lin}, None) if isinstance(lin, dict) else None
            if u is not None:
                return u
        return None

    def sec(self, t_ns):
        return (t_ns - self.t0) / 1e9

    def focus_ms(self):
        """[lo, hi] (the drawing's ms) around the unplaceable operation and its conflicts: where
        the page opens. None when there is none."""
        u = self.unplaceable
        if u is None:
            return None
        ops = [u.op] + list(u.conflicts)
        lo = min(o.invoke for o in ops)
        hi = max(o.complete if o.complete is not None else o.invoke for o in ops)
        pad = max((hi - lo) * 0.35, 5_000_000 if self.time_unit == "line" else 50_000_000)
        return [round((max(lo - pad, self.t0) - self.t0) / 1e6, 3), round((min(hi + pad, self.t_end) - self.t0) / 1e6, 3)]


def _sentence(view):
    """The checker's sentence about the unplaceable operation, linked to its moment."""
    u = view.unplaceable
    if u is None or not u.sentence:
        return None
    ops = [u.op] + list(u.conflicts)
    at = (min(o.invoke for o in ops), max(o.complete if o.complete is not None else o.invoke for o in ops))
    return Sentence(u.sentence, *at)


def history_page(view):
    name = os.path.basename(view.path)
    cls = BADGE.get(view.verdict, "unknown")
    b = [f'<h1>{esc(name)} <span class="badge {cls}">{esc(view.verdict)}</span></h1>',
         f'<p class="sub">{esc(view.format)} history, {len(view.history)} events, {len(view.clients)} processes. '
         f'File: <code>{esc(os.path.abspath(view.path))}</code></p>',
         f'<p class="reason" id="verdict-line"><b>locklab check:</b> <code>{esc(view.verdict_line)}</code></p>']
    s = _sentence(view)
    b.append("<h2>What happened</h2>")
    if s is not None:
        u = view.unplaceable
        b.append('<div class="story">'
                 f'<p class="headline" id="unplaceable-sentence">{moment(view, s)}</p>'
                 f'<p class="muted">The operation no order of the history can place is drawn filled in violet on '
                 f'the timeline, the {len(u.conflicts)} operation{"" if len(u.conflicts) == 1 else "s"} it '
                 'conflicts with outlined; click the sentence to see them.</p></div>')
    elif view.verdict in ("safe", "valid"):
        b.append('<div class="story safe"><p class="headline">No violation in this history.</p></div>')
    else:
        b.append(f'<div class="story"><p class="headline">{esc(view.verdict_line)}</p></div>')
    b.append("<h2>Timeline</h2>")
    b.append(explore.section(view))
    b.append("<h2>What <code>locklab check</code> prints</h2>")
    b.append(f"<pre id=\"check-text\">{esc(view.check_text)}</pre>")
    unit = ("Times are the history's source lines (it has no clock)." if view.time_unit == "line"
            else "Times are seconds since the first event of the history.")
    b.append(f'<p class="muted">Generated by <code>locklab report</code> from {esc(name)}, judged by '
             f'<code>locklab check</code>. {unit}</p>')
    return page(f"locklab: {name} ({view.verdict})", "\n".join(b), explore.CSS, explore.SCRIPT)
