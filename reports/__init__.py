"""locklab reports: the HTML and PNG reports of a run or a matrix, made from its files.

Run it as `/usr/bin/python3 -m reports RUN_DIR`, `... -m reports --matrix MATRIX_DIR` or
`... -m reports --hunt HUNT_DIR` with the source directory on PYTHONPATH (`locklab report` does
exactly that, harness/cli/report_command.cc; a HUNT_DIR given as RUN_DIR is taken as a hunt); it writes
RUN_DIR/report/ (timeline.png, latency.png, index.html), MATRIX_DIR/report/ (heatmap.png,
index.html, cells/*.html) or HUNT_DIR/hunt.html. `locklab report HISTORY_FILE` (any history
`locklab check` reads) judges the file itself and hands the package its judgement and events
(`--history FILE --judged JSON --events JSONL --out PAGE.html`): one page, historypage.py. Debian's /usr/bin/python3 because it has
numpy and matplotlib (python3-numpy, python3-matplotlib); nothing else outside the standard
library.

It reads run files only, never the live system: a run directory's history.jsonl (every
operation, one JSON object a line), results.json and scenario.toml; a matrix directory's
matrix.json (its cells and trials, each trial a run directory). It never trusts results.json
for what the judge decides: the verdict, its reason, the counts, coverage, holds and overlap
episodes are the judgement of history.jsonl by the one judge (`locklab check --json`,
checker/verdict.h; `locklab report` points LOCKLAB_BINARY at itself). A results.json that
disagrees (doctored, or written by another checker) is ignored for those fields, and the page
and one line on stderr name the field ("RUN/results.json: field 'verdict': says safe, the
history judges violated; the report shows the history's judgement"); the report is still
made, exit 0. Its other fields (config, lab_lag, interrupted, history_error...) are shown as
written.

Exit codes: 0 written, 64 usage, 65 a run file that does not read (or a history the judge
refuses), 69 no interpreter with matplotlib or no judge, 70 a report file that cannot be
written (permission, read-only or full file system). Library warnings never reach stderr.

Start reading at cli.py (report_run, report_matrix, the command line). Then:
    runfiles.py     a run directory loaded: holds, episodes, fault windows, the verdict
    history.py      history.jsonl streamed into numpy columns; results.json and the small files
    matrixcells.py  a matrix directory: cells with matrix.md's letters and marks, their trials
    timeline.py     the timeline figure (holds per client, red overlaps, shaded fault windows)
    plots.py        the latency/throughput figure and the matrix heatmap
    figstyle.py     what every figure shares: colours, STYLE, the Figure factory
    narrative.py    the words: what happened, first violation, resource anomalies
    htmlreport.py   the self-contained pages of a run and a matrix (images inlined)
    explore.py      the run page's explorable timeline (inline SVG drawn by a little plain
                    JavaScript: zoom, pan, an operation's details on hover, the story's moments)
    huntpage.py     a hunt's page (hunt.html): its runs in time, finds, shrink, reproduction
    historypage.py  one history file's page (lab jsonl, EDN, Porcupine logs): check's verdict
                    and sentence, the timeline opening on the operation no order can place
    faultstyle.py   a fault's colour, label, story and traits: its descriptor's, from
                    `locklab list --json` (no binary to ask: exit 69, one line)
    tests/          unittest files run by CTest (reports/CMakeLists.txt), fixture run dirs

Importing the package changes no global state (no matplotlib rcParams, no pyplot, no
backend): every figure is a matplotlib.figure.Figure drawn under figstyle.STYLE.
"""
