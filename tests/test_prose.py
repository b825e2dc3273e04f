"""course_lib.prose: printed sums and products add up as printed."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_lib import prose


# Hand-worked cases first (a mutation run stops at the first failure, before the property tests).

def test_largest_remainders_take_the_missing_units_at_the_default_two_decimals():
    # 0.4 + 0.45 + 0.15 hundredths: floors 0, 0, 0, total 1 hundredth; the largest remainder (0.45) gets it
    assert prose.added([0.004, 0.0045, 0.0015]) == (["0.00", "0.01", "0.00"], "0.01")
    # no unit missing: every term prints as its own rounding (0.29 is 28.999... hundredths in binary)
    assert prose.added([0.29, 0.58]) == (["0.29", "0.58"], "0.87")
    assert prose.added([1.234]) == (["1.23"], "1.23")
    # the remainder decides, not the size: 1.1 + 0.6 = 1.7 -> 2, and the unit goes to 0.6 (remainder 0.6 > 0.1)
    assert prose.added([1.1, 0.6], digits=0) == (["1", "1"], "2")
    assert prose.added([0.11, 0.06], digits=1) == (["0.1", "0.1"], "0.2")


def test_a_term_prints_a_unit_away_from_its_own_rounding():
    # 0.4 + 0.4 + 0.2 = 1: one of the 0.4s must print as 1 (stable order: the first)
    assert prose.added([0.4, 0.4, 0.2], digits=0) == (["1", "0", "0"], "1")
    # tenths: 0.4 + 0.3 + 0.2 + 0.1 = 1.0 tenth (0.1); the 0.04 is the largest remainder
    assert prose.added([0.04, 0.03, 0.02, 0.01], digits=1) == (["0.1", "0.0", "0.0", "0.0"], "0.1")


def test_negative_terms():
    # -0.4, -0.4, -0.2 tenths: floors -1, -1, -1 (sum -3), total -1: two units go back to the largest
    # remainders (0.8 for -0.02, then 0.6 for the first -0.04)
    assert prose.added([-0.04, -0.04, -0.02], digits=1) == (["0.0", "-0.1", "0.0"], "-0.1")


def test_a_total_below_the_floors_takes_units_from_the_smallest_remainders():
    # floors 1, 1, 1 (remainders 0.2, 0.7, 0.9); total 2 takes one unit from 1.2, total 1 from 1.2 and 1.7
    assert prose.added([1.2, 1.7, 1.9], total=2, digits=0) == (["0", "1", "1"], "2")
    assert prose.added([1.2, 1.7, 1.9], total=1, digits=0) == (["0", "0", "1"], "1")
    # the same in tenths (units 12, 17, 19; total 1 tenth)
    assert prose.added([0.12, 0.17, 0.19], total=0.1, digits=1) == (["0.0", "0.0", "0.1"], "0.1")


def test_an_explicit_total_is_printed_not_the_sum():
    # sum 2.97 (3.0 printed), total given 3.1: floors 12 + 17 tenths, both take a unit
    assert prose.added([1.23, 1.74], total=3.1, digits=1) == (["1.3", "1.8"], "3.1")
    assert prose.sum_line([1.23, 1.74], total=3.1, digits=1) == "1.3 + 1.8 = 3.1"
    assert prose.added([1.23, 1.74], digits=1) == (["1.2", "1.8"], "3.0")
    # terms on a unit exactly (1.0 is 10 tenths, its floor 10 and not 9): a total one unit above the sum goes to
    # one of them, and the terms still add up
    assert prose.added([1.0], total=1.1, digits=1) == (["1.1"], "1.1")
    assert prose.added([1.0, 1.0], total=3.0, digits=0) == (["2", "1"], "3")


def test_a_total_a_unit_a_term_away_is_the_most_rounding_can_reach():
    # floors 0 + 0 against a total of 2: both terms take their unit (the largest move allowed)
    assert prose.added([0.6, 0.6], total=2, digits=0) == (["1", "1"], "2")
    # floors 1 + 1 against a total of 0: both give theirs
    assert prose.added([1.2, 1.7], total=0, digits=0) == (["0", "0"], "0")
    assert prose.added([-0.6, -0.6], total=-2, digits=0) == (["-1", "-1"], "-2")


@pytest.mark.parametrize("values, total, digits", [
    ([1.0, 2.0], 10, 0),    # was printed "2 + 3 = 10"
    ([1.0, 2.0], -1, 0),    # 4 units below
    ([0.29, 0.58], 0.29, 2),  # was printed "0.28 + 0.57 = 0.29"
    ([0.6, 0.6], 2.6, 0),   # 3 units above two terms
    ([5.0], 3.0, 1),        # 20 tenths
])
def test_a_total_no_rounding_of_the_terms_reaches_is_refused(values, total, digits):
    with pytest.raises(ValueError, match="total"):
        prose.added(values, total=total, digits=digits)
    with pytest.raises(ValueError, match="total"):
        prose.sum_line(values, total=total, digits=digits)


def test_sum_line_defaults_to_two_decimals():
    assert prose.sum_line([0.5, 0.25]) == "0.50 + 0.25 = 0.75"
    assert prose.sum_line([0.4, 0.4, 0.2], digits=0) == "1 + 0 + 0 = 1"


def test_times_prints_the_factors_at_their_decimals():
    # 8 x 3.77 = 30.16 -> 30.2, and 8.00 x 3.77 rounds to it already
    assert prose.times(8.0, 3.77) == ("8.00", "3.77", "30.2")
    assert prose.times(8.0, 3.77, 30.16) == ("8.00", "3.77", "30.2")
    assert prose.times(8.0, 3.77, digits=(1, 3, 2)) == ("8.0", "3.770", "30.16")


def test_times_adds_decimals_until_the_printed_product_holds():
    # 0.1249 x 2.004 = 0.2503 -> 0.3; printed 0.12 x 2.00 = 0.24 -> 0.2 does not hold, 0.125 x 2.004 = 0.2505 does
    assert prose.times(0.1249, 2.004) == ("0.125", "2.004", "0.3")
    # the second factor needs them: at (3, 0) decimals 2.004 x 0, x 0.1, x 0.12 round to 0.0, 0.2, 0.2, and
    # x 0.125 = 0.2505 to 0.3: three extra decimals, for both factors
    assert prose.times(2.004, 0.1249, digits=(3, 0, 1)) == ("2.004000", "0.125", "0.3")
    # 0.25 + 3e-11 needs 11 decimals: 0.25 x 1 rounds (half to even) to 0.2, the product to 0.3
    assert prose.times(0.25 + 3e-11, 1.0, max_extra=9) == ("0.25000000003", "1.00000000000", "0.3")


def test_times_refuses_when_max_extra_decimals_do_not_suffice():
    # 0.25 + 3e-11 needs 9 extra decimals (above); at the default 8 the printing 0.2500000000 x 1.0000000000 = 0.3
    # was returned although it rounds to 0.2
    with pytest.raises(ValueError, match="max_extra 8"):
        prose.times(0.25 + 3e-11, 1.0)
    with pytest.raises(ValueError, match="max_extra 0"):
        prose.times(0.1249, 2.004, max_extra=0)  # needs one
    assert prose.times(0.1249, 2.004, max_extra=1) == ("0.125", "2.004", "0.3")
    with pytest.raises(ValueError, match="max_extra -1"):
        prose.times(8.0, 3.77, max_extra=-1)  # was an UnboundLocalError


def test_times_tolerates_a_product_within_a_billionth():
    assert prose.times(2.0, 3.0, 6.0 * (1 + 0.9e-9)) == ("2.00", "3.00", "6.0")
    assert prose.times(0.0, 5.0, 0.9e-12) == ("0.00", "5.00", "0.0")
    with pytest.raises(ValueError, match="product"):
        prose.times(2.0, 3.0, 6.0 * (1 + 1.5e-9))
    with pytest.raises(ValueError, match="product"):
        prose.times(0.0, 5.0, 1.5e-12)


@given(st.lists(st.floats(0.0, 1e4, allow_nan=False), min_size=1, max_size=6), st.integers(0, 3))
def test_printed_terms_add_up_to_the_printed_total(values, digits):
    terms, total = prose.added(values, digits=digits)
    assert sum(float(t) for t in terms) == pytest.approx(float(total), abs=10**-digits / 1000)
    assert float(total) == pytest.approx(round(sum(values), digits), abs=10**-digits)
    for t, v in zip(terms, values):
        assert abs(float(t) - v) <= 10**-digits * (1 + 1e-9)  # each term within one unit of the last digit


@given(st.floats(0.01, 1e3), st.floats(0.01, 1e3))
def test_printed_product_holds(a, b):
    pa, pb, pc = prose.times(a, b)
    d = len(pc.split(".")[1]) if "." in pc else 0
    assert round(float(pa) * float(pb), d) == pytest.approx(float(pc), abs=10**-d / 1000)


def test_the_floor_line():
    assert prose.sum_line([7.2184, 0.3628, 1.8641]) == "7.22 + 0.36 + 1.87 = 9.45"


def test_a_product_that_is_not_the_factors_product_is_refused():
    with pytest.raises(ValueError, match="no printing of the factors"):
        prose.times(8.0, 3.77, 30.86)  # a floor with an idle-spare term is not lambda x X


def test_the_spare_verdict_adds_up_as_printed():
    import re

    from course_lib import Scenario
    from course_lib.answer import answer

    for n in (4096, 16384, 65536):
        text = answer(Scenario().replace(n_gpus=n), spread_draws=0).spare.sentence
        gross, cost, net = map(float, re.search(r"saves ([0-9.]+) min a day and its idle GPUs cost ([0-9.]+): net ([-+0-9.]+)",
                                                text).groups())
        assert round(gross - cost, 2) == pytest.approx(net, abs=1e-9), text


@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=6), st.integers(0, 2), st.data())
def test_printed_terms_add_up_to_an_explicit_total_within_reach(values, digits, data):
    unit = 10.0**-digits
    floors = sum(int((v / unit + 1e-9) // 1) for v in values)
    target = data.draw(st.integers(floors - len(values), floors + len(values)))
    terms, total = prose.added(values, total=target * unit, digits=digits)
    assert round(sum(float(t) for t in terms) / unit) == round(float(total) / unit) == target
    for t, v in zip(terms, values):
        assert abs(float(t) - v) < 2 * unit  # at most one unit from the term's floor, or its floor's next unit
