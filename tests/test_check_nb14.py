"""Self-checks of notebook 14's exercises: right answers pass, the typical mistakes get their hints."""
import pytest

from course_lib import Scenario, modes
from course_lib.check import nb14
from course_lib.sdclab.results import load_sdc_benchmark


def test_the_sdc_term_exercise_wants_the_term_at_the_measured_latency_in_minutes():
    n = nb14.sdc_numbers()
    bench = load_sdc_benchmark()
    sc, inp = Scenario(), modes.ModeInputs()
    # the term is linear in the latency: the no-latency term plus the SDC failures a day x the latency
    right = n["term_zero"] + sc.failures_per_day * inp.share("sdc") * bench.latency_steps() * inp.step_min(sc)
    assert n["term"] == pytest.approx(right)
    assert nb14.sdc_term_at_measured_latency(right).ok
    fb = nb14.sdc_term_at_measured_latency(n["term_hour"])
    assert not fb.ok and "assumed hour" in fb.message


def test_the_quarantine_exercise_wants_the_floor_saving_with_the_stand_ins_failures():
    n = nb14.quarantine_numbers()
    assert n["saving"] == pytest.approx(n["floor"] * (1 - n["factor"]))  # a factor on the rate scales the floor
    assert n["factor"] == pytest.approx(1 - n["week"].share + n["week"].poisson_share)
    assert nb14.quarantine_floor_saving(n["saving"]).ok
    fb = nb14.quarantine_floor_saving(n["saving_no_baseline"])
    assert not fb.ok and "poisson_share" in fb.message
