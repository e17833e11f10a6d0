"""The figures leave matplotlib's global state alone, and their constrained layout keeps the
figure-level legend and footnote clear of the axes (matplotlib 3.6 lays out axes only)."""

import json
import os
import subprocess
import unittest

import matplotlib

from reports import figstyle, matrixcells, plots, runfiles, timeline
from reports.history import load_json

from .helpers import PYTHON, TempDirMixin, copy_fixture, report_env, run_report, write_history

# In a fresh interpreter: what importing every module of the package does to matplotlib.
IMPORT_PROBE = """
import json, sys
import matplotlib
before = matplotlib.rcParams.copy()
backend = dict.__getitem__(matplotlib.rcParams, "backend")   # raw: reading it may resolve it
import reports.cli, reports.faultstyle, reports.htmlreport, reports.matrixcells, reports.narrative
import reports.figstyle, reports.history, reports.plots, reports.runfiles, reports.timeline
changed = sorted(k for k in before if dict.__getitem__(matplotlib.rcParams, k) != dict.__getitem__(before, k))
print(json.dumps({"changed": changed, "pyplot": "matplotlib.pyplot" in sys.modules,
                  "backend_same": dict.__getitem__(matplotlib.rcParams, "backend") == backend}))
"""


class GlobalStateTest(TempDirMixin, unittest.TestCase):

    def test_importing_the_package_changes_no_rcparams_and_loads_no_pyplot(self):
        p = subprocess.run([PYTHON, "-c", IMPORT_PROBE], capture_output=True, text=True, timeout=60,
                           env=report_env(), cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = json.loads(p.stdout)
        self.assertEqual(got, {"changed": [], "pyplot": False, "backend_same": True})

    def test_drawing_uses_the_style_and_restores_rcparams(self):
        run = runfiles.Run(copy_fixture("violated-client-pause", self.tmp))
        before = matplotlib.rcParams.copy()
        info = timeline.timeline(run, os.path.join(self.tmp, "timeline.png"), "t")
        self.assertEqual(matplotlib.rcParams, before)
        ax = info["figure"].axes[0]
        self.assertFalse(ax.spines["top"].get_visible())
        self.assertFalse(ax.spines["right"].get_visible())
        self.assertEqual(ax.title.get_fontweight(), "bold")
        self.assertEqual(ax.title.get_fontsize(), figstyle.STYLE["axes.titlesize"])
        # the defaults came back: an axes made now has its top spine
        self.assertTrue(matplotlib.figure.Figure().add_subplot().spines["top"].get_visible())


# In a fresh interpreter (logging and warnings as a user's): a latency plot of a run whose only
# acquire never completed, so its upper axes has no labelled artist. argv[2] "raw" draws it
# without the package's silencing (figstyle.styled), to show the case does warn.
QUIET_PROBE = """
import sys
from reports import plots, runfiles
run = runfiles.Run(sys.argv[1])
draw = plots.latency.__wrapped__ if sys.argv[2] == "raw" else plots.latency
draw(run, sys.argv[1] + "/latency.png", "t")
"""


class QuietTest(TempDirMixin, unittest.TestCase):
    """Library warnings (matplotlib's "No artists with labels found to put in legend", numpy's)
    never reach stderr: the figures silence them where they are drawn, for the package's
    command line and for in-process callers alike."""

    def no_labelled_artists_run(self):
        return write_history(os.path.join(self.tmp, "r"), [
            (0, 1, "invoke", "acquire", "lock:0", None),
            (1_000_000, "harness", "invoke", "read", "counter:0", None),
        ])

    def probe(self, d, how):
        return subprocess.run([PYTHON, "-c", QUIET_PROBE, d, how], capture_output=True, text=True, timeout=120,
                              env=report_env(), cwd=self.tmp)

    def test_a_plot_with_no_labelled_artists_prints_nothing_to_stderr(self):
        d = self.no_labelled_artists_run()
        raw = self.probe(d, "raw")
        self.assertEqual(raw.returncode, 0, raw.stderr)
        self.assertIn("No artists with labels", raw.stderr)   # the case does warn, unsilenced
        p = self.probe(d, "styled")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        p = run_report(d)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        self.assertTrue(os.path.isfile(os.path.join(d, "report", "index.html")))

    def test_the_silencing_is_undone_after_drawing(self):
        import logging
        import warnings
        run = runfiles.Run(self.no_labelled_artists_run())
        level = logging.getLogger("matplotlib").level
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            plots.latency(run, os.path.join(self.tmp, "latency.png"), "t")
            warnings.warn("after drawing", UserWarning)
        self.assertEqual([str(w.message) for w in seen], ["after drawing"])
        self.assertEqual(logging.getLogger("matplotlib").level, level)


class LayoutTest(TempDirMixin, unittest.TestCase):

    def assert_below_every_axes(self, fig, artist, what):
        r = fig.canvas.get_renderer()
        top = artist.get_window_extent(r).y1
        self.assertIsInstance(fig.get_layout_engine(), matplotlib.layout_engine.ConstrainedLayoutEngine)
        for ax in fig.axes:
            # the axes with its tick labels and x label
            bottom = ax.get_tightbbox(r).y0
            self.assertLessEqual(top, bottom + 0.5, f"{what} reaches into axes '{ax.get_title()}'")
        self.assertGreaterEqual(artist.get_window_extent(r).y0, -0.5, f"{what} is cut off at the bottom")

    def test_run_legends_sit_below_the_axes(self):
        for name in ("violated-client-pause", "safe-none"):
            run = runfiles.Run(copy_fixture(name, self.tmp))
            for draw in (timeline.timeline, plots.latency):
                fig = draw(run, os.path.join(self.tmp, f"{name}-{draw.__name__}.png"), "t")["figure"]
                self.assertEqual(len(fig.legends), 1)
                self.assert_below_every_axes(fig, fig.legends[0], f"{name} {draw.__name__} legend")
            self.assertEqual(len(fig.axes), 2)

    def test_heatmap_footnote_sits_below_the_axes(self):
        d = copy_fixture("matrix-letters", self.tmp)
        mpath = os.path.join(d, "matrix.json")
        m = matrixcells.Matrix(d, load_json(mpath), mpath)
        fig = plots.heatmap(m, os.path.join(self.tmp, "heatmap.png"), "m")["figure"]
        note = [t for t in fig.texts if t.get_text().startswith("S safe")]
        self.assertEqual(len(note), 1)
        self.assert_below_every_axes(fig, note[0], "heatmap footnote")


if __name__ == "__main__":
    unittest.main()
