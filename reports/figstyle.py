"""The look every figure shares: colours, STYLE, a figure factory and two drawing helpers.

Every figure is a matplotlib.figure.Figure with its own Agg canvas (no pyplot, no backend
chosen, nothing global), laid out by layout="constrained" and drawn under STYLE through
matplotlib.rc_context (the `styled` decorator): importing a reports module or drawing a figure
leaves matplotlib's rcParams as they were. A figure is drawn with library warnings silenced
(matplotlib's "No artists with labels found", numpy's, fonts' log lines): they say nothing to
the user, and the filters and the log level are restored when the drawing returns.
"""

import functools
import logging
import warnings

import matplotlib
import matplotlib.transforms
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

HOLD_COLOR = "#3b6fb6"
OVERLAP_COLOR = "#e0102a"
WAIT_COLOR = "#9a9a9a"
WRITE_OK_COLOR = "#111111"
WRITE_REJECT_COLOR = "#b000b0"
UNKNOWN_COLOR = "#f08c00"
LIN_COLOR = "#6f42c1"   # the operation linearizability could not place, and its conflicts
KEY_COLORS = ["#3b6fb6", "#2a9d8f", "#7b5ea7", "#c4832a", "#5a8f29", "#b5546b"]


DPI = 110

# The look of every figure here, applied per figure (matplotlib.rc_context), never globally.
STYLE = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def styled(draw):
    """draw(...) runs under STYLE with library warnings silenced; matplotlib's rcParams, the
    warning filters and matplotlib's log level are restored when it returns."""
    @functools.wraps(draw)
    def styled(*args, **kwargs):
        log = logging.getLogger("matplotlib")
        level = log.level
        log.setLevel(logging.ERROR)   # e.g. font fallbacks, logged at WARNING
        try:
            with warnings.catch_warnings(), matplotlib.rc_context(STYLE):
                warnings.simplefilter("ignore")
                return draw(*args, **kwargs)
        finally:
            log.setLevel(level)
    return styled


def new_figure(figsize):
    """A constrained-layout Figure on its own Agg canvas (not registered with pyplot)."""
    fig = Figure(figsize=figsize, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def below_axes(fig, artist):
    """Keeps the axes above a figure-level artist at the bottom (a legend, a footnote):
    matplotlib 3.6's constrained layout lays out axes and their decorations only, so the strip
    up to the artist's top edge is taken out of the layout's rectangle."""
    top = artist.get_window_extent(fig.canvas.get_renderer()).y1 / fig.bbox.height
    fig.get_layout_engine().set(rect=(0, top, 1, 1 - top))


def vertical_bands(ax, intervals, color, alpha, zorder=0):
    """Vertical bands across the whole axes for [(x0, x1), ...]."""
    if not intervals:
        return
    tr = matplotlib.transforms.blended_transform_factory(ax.transData, ax.transAxes)
    verts = [[(a, 0), (a, 1), (b, 1), (b, 0)] for a, b in intervals]
    ax.add_collection(PolyCollection(verts, transform=tr, facecolors=color, alpha=alpha,
                                     linewidths=0, zorder=zorder), autolim=False)
