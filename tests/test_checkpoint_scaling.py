"""Scaling a measured write cost to per-GPU shards, and notebook 05's figures."""
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from course_lib.checkpoint.scaling import GIB, interval_rows, shard_bytes, write_cost_s  # noqa: E402
from course_lib.plots.checkpoint import scaled_cost_lines, write_cost_bars  # noqa: E402


def test_shard_of_405b_on_4096_gpus():
    # 405e9 x 16 B / 4096 = 1.58e9 B: Llama 3 405B [@llama3] at ZeRO's 16 B/param [@zero2020] on 4,096 GPUs
    assert shard_bytes(405e9, 4096) == pytest.approx(1.58203125e9)


@settings(max_examples=30, deadline=None)
@given(st.floats(1e-3, 1e3), st.floats(1e-3, 1e3), st.floats(1, 1e5))
def test_interval_is_young_and_waste_is_sqrt(shard_gib, rate, mtbf):
    (row,) = interval_rows({"m": shard_gib * GIB}, {"s": rate}, mtbf)
    delta_min = shard_gib * rate / 60
    assert row["delta_s"] == pytest.approx(shard_gib * rate)
    assert row["interval_min"] == pytest.approx(math.sqrt(2 * delta_min * mtbf))
    assert row["waste"] == pytest.approx(math.sqrt(2 * delta_min / mtbf))
    assert row["young_waste"] == pytest.approx(row["waste"])


def test_four_times_cheaper_write_halves_the_interval():
    a, b = interval_rows({"m": GIB}, {"slow": 4.0, "fast": 1.0}, 720)
    assert a["interval_min"] / b["interval_min"] == pytest.approx(2.0)


@pytest.mark.parametrize("call, word", [(lambda: shard_bytes(0, 8), "params"), (lambda: shard_bytes(1e9, 0), "n_gpus"),
                                        (lambda: write_cost_s(GIB, -1), "seconds_per_gib"), (lambda: interval_rows({}, {}, 0), "mtbf_min")])
def test_validation_names_parameter(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_figures_draw():
    summary = [{"strategy": s, "blocking_s": b, "durable_s": d, "reload_s": r}
               for s, b, d, r in [("bare_copy", 0.01, float("nan"), float("nan")), ("torch_save", 1.0, 1.0, 0.5), ("snapshot", 0.012, 1.1, 0.5)]]
    ax = write_cost_bars(summary)
    assert len(ax.patches) == 9 and ax.get_yscale() == "log"
    rows = interval_rows({"8B": 3e7, "405B": 1.6e9}, {"torch_save": 1.2, "H200 snapshot": 0.02}, 720)
    ax = scaled_cost_lines(rows)
    assert len(ax.lines) == 2 and ax.lines[1].get_linestyle() == "--"
    plt.close("all")
