"""course_lib.sizing: shards, copy times, a measured write cost scaled to per-GPU shards; notebook 05's figures."""
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from course_lib.sizing import GB, GIB, copy_min, interval_rows, shard_bytes, write_cost_min_per_gib  # noqa: E402
from course_lib.plots.checkpoint import scaled_cost_lines, write_cost_bars  # noqa: E402


def test_shard_of_405b_on_4096_gpus():
    # 405e9 x 16 B / 4096 = 1.58e9 B (Llama 3 405B [@llama3], ZeRO's 16 B/param [@zero2020]); 12 B/param (the checkpoint content without gradients) is 3/4 of it
    assert shard_bytes(405e9, 16, 4096) == pytest.approx(1.58203125e9, rel=1e-15, abs=0)
    assert shard_bytes(405e9, 12, 4096) / shard_bytes(405e9, 16, 4096) == pytest.approx(0.75, rel=1e-15, abs=0)


@settings(max_examples=30, deadline=None)
@given(st.floats(1e6, 1e12), st.floats(1e-2, 1e3), st.integers(1, 2**20))
def test_shard_scales_as_one_over_n_and_copy_time_as_bytes(params, bw, n):
    one = shard_bytes(params, 14, 1)
    assert shard_bytes(params, 14, n) == pytest.approx(one / n, rel=1e-12, abs=0)
    assert copy_min(one, bw) == pytest.approx(one / GB / bw / 60, rel=1e-12, abs=0)
    assert copy_min(2 * one, bw) == pytest.approx(2 * copy_min(one, bw), rel=1e-12, abs=0)
    assert write_cost_min_per_gib(GIB, bw) == pytest.approx(bw / 60, rel=1e-12, abs=0)


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


@pytest.mark.parametrize("call, word", [(lambda: shard_bytes(0, 16, 8), "params"), (lambda: shard_bytes(1e9, 16, 0), "n_gpus"), (lambda: shard_bytes(1e9, -1, 8), "bytes_per_param"), (lambda: copy_min(1e9, 0), "gb_per_s"),
                                        (lambda: write_cost_min_per_gib(GIB, -1), "seconds_per_gib"), (lambda: interval_rows({}, {}, 0), "mtbf_min")])
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


def test_units_and_copies_by_hand_in_literal_bytes():
    # the units as numbers, not as the module's own constants: a GiB is 1,073,741,824 bytes, a GB 1e9
    assert (GIB, GB) == (1073741824, 1e9)
    assert copy_min(1.2e9, 2.0) == pytest.approx(0.01, rel=1e-12, abs=0)  # 1.2 GB at 2 GB/s: 0.6 s
    assert write_cost_min_per_gib(2147483648, 3.0) == pytest.approx(0.1, rel=1e-12, abs=0)  # 2 GiB at 3 s/GiB: 6 s
    (row,) = interval_rows({"m": 3 * 1073741824}, {"s": 2.0}, 600.0)
    assert row["shard_GiB"] == pytest.approx(3.0, rel=1e-12, abs=0) and row["delta_s"] == pytest.approx(6.0, rel=1e-12)
    # Young: sqrt(2 x 0.1 min x 600 min) = sqrt(120) min
    assert row["interval_min"] == pytest.approx(math.sqrt(120.0), rel=1e-12)
