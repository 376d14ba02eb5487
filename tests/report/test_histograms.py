"""The histogram section keeps trained heads readable next to the baseline's narrow spike:
separate panels on one x axis, each with its own density scale, and the baseline median
marked in both."""

from __future__ import annotations

import numpy as np

from qkforms import Head
from qkforms.report.figures import HISTOGRAM_STATS, histogram_figures
from qkforms.stats import observations
from qkforms.stats.synthetic_rows import survey_rows


def test_trained_and_baseline_have_their_own_panels() -> None:
    rng = np.random.default_rng(5)
    heads = [Head(rng.standard_normal((2, 24)) * rng.uniform(0.1, 3.0, 24),
                  rng.standard_normal((2, 24))) for _ in range(12)]
    h, s = survey_rows("toy", heads, heads_per_layer=4)
    t = observations(h, s, n_boot=0, fits=False)
    figs = histogram_figures(t["head_stats"], t["baseline_heads"])
    assert [f["id"] for f in figs] == [f"hist-{stat}" for stat, _ in HISTOGRAM_STATS]
    for fig in figs:
        trained, base = fig["data"]
        assert (trained["yaxis"], base["yaxis"]) == ("y", "y2")
        assert trained["xaxis"] == base["xaxis"] == "x"  # one x axis: comparable positions
        top, bottom = fig["layout"]["yaxis"]["domain"], fig["layout"]["yaxis2"]["domain"]
        assert bottom[1] < top[0]  # disjoint panels, so each has its own scale
        (line,) = fig["layout"]["shapes"]
        assert line["x0"] == line["x1"] == float(np.median(base["x"]))


def test_without_a_baseline_one_panel() -> None:
    rng = np.random.default_rng(6)
    h, s = survey_rows("toy", [Head(*rng.standard_normal((2, 2, 10))) for _ in range(4)])
    t = observations(h, s, n_boot=0, fits=False, baseline=False)
    for fig in histogram_figures(t["head_stats"], t["baseline_heads"]):
        assert len(fig["data"]) == 1 and fig["layout"]["yaxis"]["domain"] == [0.0, 1.0]
