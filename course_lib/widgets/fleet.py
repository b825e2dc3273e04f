"""Notebook 02's dashboard: fleet size and per-GPU rate -> failures per day and fleet MTBF.

The number shown is produced by :func:`fleet_summary` (tested) and lives in an
``ipywidgets.HTML`` with the CSS class ``course-result``. :func:`fleet_view` is the one
function the notebook calls statically first and then hands to ``interact`` with the
sliders from :func:`fleet_controls`.
"""
from __future__ import annotations

import html
import math

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import display

from .. import failures
from ..plots import failures as failure_plots

__all__ = ["fleet_summary", "fleet_result_widget", "fleet_view", "fleet_controls"]


def fleet_summary(n_gpus, rate_per_gpu_day) -> str:
    """One line: failures per day and fleet MTBF for ``n_gpus`` GPUs at ``rate_per_gpu_day``."""
    n = failures.failures_per_day(n_gpus, rate_per_gpu_day)  # validates both inputs
    mtbf = failures.fleet_mtbf_hours(n_gpus, rate_per_gpu_day)
    return (
        f"{int(n_gpus):,} GPUs at {rate_per_gpu_day:.2e} failures per GPU-day: "
        f"{n:.2f} failures per day, fleet MTBF {mtbf:.1f} h"
    )


def fleet_result_widget(n_gpus, rate_per_gpu_day) -> widgets.HTML:
    """The dashboard's key number as an ``HTML`` widget with class ``course-result``."""
    w = widgets.HTML(value=f"<b>{html.escape(fleet_summary(n_gpus, rate_per_gpu_day))}</b>")
    w.add_class("course-result")
    return w


def fleet_view(n_gpus, rate_per_gpu_day, reference_rate=None, reference_label="Llama 3"):
    """Show the result widget and the MTBF-vs-size plot with the chosen fleet marked.

    ``n_gpus`` may come from a log-scale slider as a float; it is rounded to whole GPUs.
    """
    n = max(1, int(round(n_gpus)))
    display(fleet_result_widget(n, rate_per_gpu_day))
    refs = {reference_label: reference_rate} if reference_rate is not None else None
    mtbf = failures.fleet_mtbf_hours(n, rate_per_gpu_day)
    ax = failure_plots.fleet_mtbf_vs_size(
        [1, max(n, 2)], rate_per_gpu_day, reference_rates=refs, points=[(f"your fleet: {n:,} GPUs, {mtbf:.1f} h", n, mtbf)],
        rate_label="chosen rate",
    )
    ax.set_title("Fleet MTBF for the chosen size and per-GPU rate")
    plt.show()


def fleet_controls(n_gpus=4096, rate_per_gpu_day=5e-4) -> dict:
    """Sliders for ``interact(fleet_view, ...)``: log-scale fleet size (1 to 131,072) and rate."""
    failures.failures_per_day(n_gpus, rate_per_gpu_day)  # validates both inputs
    decade = math.floor(math.log10(rate_per_gpu_day))
    style = {"description_width": "initial"}  # the whole label, never cut to "rate /GPU..."
    return {
        "n_gpus": widgets.FloatLogSlider(
            value=int(n_gpus), base=2, min=0, max=17, step=0.25, description="GPUs in the job", readout_format=",.0f",
            continuous_update=False, style=style,
        ),
        "rate_per_gpu_day": widgets.FloatLogSlider(
            value=rate_per_gpu_day, base=10, min=decade - 1, max=decade + 1,
            step=0.05, description="failures per GPU-day", readout_format=".1e", continuous_update=False, style=style,
        ),
    }
