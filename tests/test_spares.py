"""course_lib.spares: the idle spare's cost and the elastic alternative, each value worked by hand (issue 29)."""
from __future__ import annotations

import pytest

from course_lib import spares as sp


def test_spare_cost_is_the_idle_share_of_the_day():
    assert sp.spare_cost_minutes_per_day(8, 4096) == pytest.approx(8 / 4096 * 1440, rel=1e-15) == pytest.approx(2.8125)
    assert sp.spare_cost_minutes_per_day(16, 1024) == pytest.approx(22.5, rel=1e-15)
    assert sp.spare_cost_minutes_per_day(0, 1024) == 0.0
    assert sp.spare_cost_minutes_per_day(8, 4096, pooled=True) == 0.0  # pooled across jobs: charged nothing
    for args, name in (((-1, 4096), "spare_gpus"), ((8, 0), "job_gpus"), ((8, -4), "job_gpus")):
        with pytest.raises(ValueError, match=name):
            sp.spare_cost_minutes_per_day(*args)


def test_net_saving_is_saving_minus_cost_and_falls_as_the_spare_grows():
    assert sp.net_saving_minutes_per_day(10.0, 8, 4096) == pytest.approx(10 - 2.8125, rel=1e-15)
    assert sp.net_saving_minutes_per_day(1.0, 8, 4096) == pytest.approx(-1.8125, rel=1e-15)  # the spare costs more
    assert sp.net_saving_minutes_per_day(1.0, 8, 4096, pooled=True) == 1.0
    nets = [sp.net_saving_minutes_per_day(5.0, s, 4096) for s in (0, 8, 16, 64)]
    assert nets[0] == 5.0 and all(a > b for a, b in zip(nets, nets[1:]))


def test_elastic_cost_is_rate_times_replica_share_times_repair():
    # 2 failures a day, a 128-GPU replica of 4,096, 30 min repair: 2 x 1/32 x 30 = 1.875 min/day
    assert sp.elastic_cost_minutes_per_day(2, 128, 4096, 30) == pytest.approx(1.875, rel=1e-15)
    assert sp.elastic_cost_minutes_per_day(3, 8, 64, 10) == pytest.approx(3.75, rel=1e-15)
    assert sp.elastic_cost_minutes_per_day(2, 4096, 4096, 30) == pytest.approx(60.0, rel=1e-15)  # one replica: the whole job waits
    assert sp.elastic_cost_minutes_per_day(0, 128, 4096, 30) == 0.0
    assert sp.elastic_cost_minutes_per_day(2, 128, 4096, 0) == 0.0
    for args, name in (((-1, 128, 4096, 30), "failures_per_day"), ((2, 0, 4096, 30), "replica_gpus"),
                       ((2, 128, 0, 30), "job_gpus"), ((2, 128, 4096, -1), "repair_min"), ((2, 8192, 4096, 30), "replica_gpus")):
        with pytest.raises(ValueError, match=name):
            sp.elastic_cost_minutes_per_day(*args)


def test_break_even_repair_time():
    # the docstring's example: one 8-GPU spare, 128-GPU replicas, 2 failures a day: 8 x 1440 / 256 = 45 min
    assert sp.break_even_repair_min(2, 128, 8) == pytest.approx(45.0, rel=1e-15)
    assert sp.break_even_repair_min(4, 16, 2) == pytest.approx(45.0, rel=1e-15)
    assert sp.break_even_repair_min(1, 8, 8) == pytest.approx(1440.0, rel=1e-15)
    assert sp.break_even_repair_min(2, 128, 0) == 0.0
    # at the break-even repair the elastic alternative costs exactly what the idle spare does
    for lam, r, s, g in ((2, 128, 8, 4096), (0.5, 64, 16, 1024), (7, 8, 8, 512)):
        t = sp.break_even_repair_min(lam, r, s)
        assert sp.elastic_cost_minutes_per_day(lam, r, g, t) == pytest.approx(sp.spare_cost_minutes_per_day(s, g), rel=1e-12)
    for args, name in (((0, 128, 8), "failures_per_day"), ((2, 0, 8), "replica_gpus"), ((2, 128, -1), "spare_gpus")):
        with pytest.raises(ValueError, match=name):
            sp.break_even_repair_min(*args)
