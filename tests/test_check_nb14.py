"""Self-checks of notebook 14's exercises: right answers pass, the typical mistakes get their hints."""
import pytest

from course_lib import Scenario
from course_lib.answer import answer
from course_lib.check import nb14
from course_lib.sdclab.results import load_sdc_benchmark


def test_the_sdc_term_exercise_wants_the_term_at_the_measured_latency_in_minutes():
    n = nb14.sdc_numbers()
    sc = Scenario()
    f = answer(sc, spread_draws=0).after.floor_budget
    m = next(x for x in f.modes if x.mode == "sdc")
    # the model's SDC term written out: the SDC failures a day x (D + S + R + tau_p / 2 + latency)
    steps = load_sdc_benchmark().raw["latency_steps"]["replay_mean"]  # the slowest first catch: the replay
    latency = (steps + 0.5) * sc.step_min
    right = f.failures_per_day * (1 - f.idle_share) * m.share * (m.detect + m.reschedule + m.reload
                                                                 + f.persisted_interval_min / 2 + latency)
    assert n["latency_steps"] == steps and n["term"] == pytest.approx(right)
    assert nb14.sdc_term_at_measured_latency(right).ok
    fb = nb14.sdc_term_at_measured_latency(n["term_hour"])
    assert not fb.ok and "assumed hour" in fb.message
    fb = nb14.sdc_term_at_measured_latency(n["term_no_half_step"])
    assert not fb.ok and "half step" in fb.message


def test_the_quarantine_exercise_wants_the_floor_saving_with_the_stand_ins_failures():
    n = nb14.quarantine_numbers()
    assert n["saving"] == pytest.approx(n["floor"] * (1 - n["factor"]))  # a factor on the rate scales the floor
    assert n["factor"] == pytest.approx(1 - n["week"].share + n["week"].poisson_share)
    assert nb14.quarantine_floor_saving(n["saving"]).ok
    fb = nb14.quarantine_floor_saving(n["saving_no_baseline"])
    assert not fb.ok and "poisson_share" in fb.message
