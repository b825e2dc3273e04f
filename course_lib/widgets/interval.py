"""Notebook 04's dashboard: write cost, fleet MTBF and restart cost -> the optimal interval and its waste.

The number shown is produced by :func:`interval_summary` (tested) and lives in an
``ipywidgets.HTML`` with the CSS class ``course-result``. :func:`interval_view` is the one
function the notebook calls statically first and then hands to ``interact`` with the sliders
from :func:`interval_controls`.
"""
from __future__ import annotations

import html
import math

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from .. import interval as iv
from ..plots import interval as interval_plots

__all__ = ["interval_numbers", "interval_summary", "interval_result_widget", "interval_view", "interval_controls"]


def interval_numbers(write_cost_s, mtbf_h, restart_min) -> dict:
    """The dashboard's numbers (minutes and fractions) for a write cost in s, MTBF in h, restart in min."""
    delta = iv._check("write_cost_s", write_cost_s) / 60.0
    m = iv._check("mtbf_h", mtbf_h) * 60.0
    r = iv._check("restart_min", restart_min, allow_zero=True)
    tau = iv.optimal_interval_exact(delta, m)
    return {
        "young_min": iv.young_interval(delta, m),
        "daly_min": iv.daly_interval(delta, m),
        "exact_min": tau,
        "waste": iv.expected_waste(tau, delta, m, r),
        "restart_share": math.exp(r / m) - 1.0,  # the waste a perfect checkpoint would leave
    }


def interval_summary(write_cost_s, mtbf_h, restart_min) -> str:
    """One line: the optimal interval (exact, Young, Daly) and the waste at it."""
    n = interval_numbers(write_cost_s, mtbf_h, restart_min)
    return (
        f"write cost {write_cost_s:.3g} s, MTBF {mtbf_h:.3g} h, restart {restart_min:.3g} min: "
        f"optimal interval {n['exact_min']:.3g} min (Young {n['young_min']:.3g}, Daly {n['daly_min']:.3g}); "
        f"waste {n['waste']:.2%} of useful work, {n['restart_share']:.2%} of it from restarts"
    )


def interval_result_widget(write_cost_s, mtbf_h, restart_min) -> widgets.HTML:
    """The dashboard's key number as an ``HTML`` widget with class ``course-result``."""
    w = widgets.HTML(value=f"<b>{html.escape(interval_summary(write_cost_s, mtbf_h, restart_min))}</b>")
    w.add_class("course-result")
    return w


def interval_view(write_cost_s, mtbf_h, restart_min):
    """Show the result widget and the waste curve around the optimum."""
    display(interval_result_widget(write_cost_s, mtbf_h, restart_min))
    n = interval_numbers(write_cost_s, mtbf_h, restart_min)
    taus = np.linspace(n["exact_min"] / 5, min(5 * n["exact_min"], 3 * mtbf_h * 60), 200)
    ax = interval_plots.waste_curve(taus, write_cost_s / 60, mtbf_h * 60, restart_min)
    ax.set_title("Waste against the interval for the chosen costs")
    plt.show()


def interval_controls(write_cost_s, mtbf_h, restart_min) -> dict:
    """Sliders (log scale for the write cost and MTBF) starting at the given values, labelled in words."""
    style = {"description_width": "initial"}  # the whole label, never cut to "restart (m..."
    return {
        "write_cost_s": widgets.FloatLogSlider(
            value=write_cost_s, base=10, min=-2, max=3, step=0.05, description="write cost δ (s)", readout_format=".3g",
            continuous_update=False, style=style,
        ),
        "mtbf_h": widgets.FloatLogSlider(
            value=mtbf_h, base=10, min=-1, max=2.5, step=0.05, description="fleet MTBF M (h)", readout_format=".3g",
            continuous_update=False, style=style,
        ),
        "restart_min": widgets.FloatSlider(
            value=restart_min, min=0, max=60, step=0.5, description="restart cost R (min)", readout_format=".1f",
            continuous_update=False, style=style,
        ),
    }
