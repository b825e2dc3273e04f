"""course_lib.prose: every printed number is its value correctly rounded; a sum that does not add as printed says so; products hold."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_lib import prose


# Hand-worked cases first (a mutation run stops at the first failure, before the property tests).

def test_each_term_is_its_own_correct_rounding_and_a_sum_that_does_not_add_says_so():
    # 0.4 + 0.45 + 0.15 hundredths: each term prints 0.00 (0.0045 is 0.004499... in binary), the total 0.01;
    # the old rule moved 0.0045 to 0.01 so that the sum came out
    assert prose.added([0.004, 0.0045, 0.0015]) == (["0.00", "0.00", "0.00"], "0.01", False)
    # the terms add up as printed: exact (0.29 is 0.28999... in binary, and still prints 0.29)
    assert prose.added([0.29, 0.58]) == (["0.29", "0.58"], "0.87", True)
    assert prose.added([1.234]) == (["1.23"], "1.23", True)
    assert prose.added([1.1, 0.6], digits=0) == (["1", "1"], "2", True)  # 1.7 rounds to 2, and 1 + 1 = 2
    assert prose.added([0.4, 0.4, 0.2], digits=0) == (["0", "0", "0"], "1", False)  # no term printed as 1
    # the course's baseline split: 4.196 + 2.787 + 2.158 + 5.859 = 15.000, printed 4.20 + 2.79 + 2.16 + 5.86 = 15.01
    assert prose.added([4.196, 2.787, 2.158, 5.859], 15.0) == (["4.20", "2.79", "2.16", "5.86"], "15.00", False)


def test_negative_terms_and_no_negative_zero():
    assert prose.added([-0.04, -0.04, -0.02], digits=1) == (["0.0", "0.0", "0.0"], "-0.1", False)
    assert prose.added([0.58, -2.79]) == (["0.58", "-2.79"], "-2.21", True)


def test_eq_and_sum_line_mark_a_sum_that_does_not_add():
    assert prose.added([0.5, 0.25]).eq == "="
    assert prose.added([0.4, 0.4, 0.2], digits=0).eq == "≈"
    assert prose.sum_line([0.5, 0.25]) == "0.50 + 0.25 = 0.75"  # two decimals by default
    assert prose.sum_line([0.4, 0.4, 0.2], digits=0) == "0 + 0 + 0 ≈ 1"
    assert prose.sum_line([1.23, 1.74], digits=1) == "1.2 + 1.7 ≈ 3.0"  # 2.97 prints 3.0, the terms add to 2.9


@pytest.mark.parametrize("values, total, digits", [
    ([1.0, 2.0], 10, 0),     # was printed "2 + 3 = 10"
    ([1.0, 2.0], -1, 0),
    ([0.29, 0.58], 0.29, 2),  # was printed "0.28 + 0.57 = 0.29"
    ([1.23, 1.74], 3.1, 1),  # a unit off: the old rule printed "1.3 + 1.8 = 3.1"
    ([5.0], 3.0, 1),
])
def test_a_total_that_is_not_the_sum_is_refused(values, total, digits):
    with pytest.raises(ValueError, match="total"):
        prose.added(values, total=total, digits=digits)
    with pytest.raises(ValueError, match="total"):
        prose.sum_line(values, total=total, digits=digits)


def test_a_total_within_a_billionth_of_the_sum_is_the_sum():
    assert prose.added([1.0, 2.0], 3.0 * (1 + 0.5e-9)) == (["1.00", "2.00"], "3.00", True)


@pytest.mark.parametrize("kwargs, name", [({"digits": -1}, "digits"), ({"digits": 1.5}, "digits"), ({"values": []}, "values"),
                                          ({"values": [1.0, float("nan")]}, "values"), ({"values": [float("inf")]}, "values")])
def test_bad_input_is_refused_by_name(kwargs, name):
    args = {"values": [1.0, 2.0], **kwargs}
    with pytest.raises(ValueError, match=name):
        prose.added(**args)


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


@given(st.lists(st.floats(-1e4, 1e4, allow_nan=False), min_size=1, max_size=6), st.integers(0, 3))
def test_every_printed_number_is_its_value_correctly_rounded(values, digits):
    from decimal import Decimal
    from fractions import Fraction

    terms, total, exact = prose.added(values, digits=digits)
    unit = Fraction(1, 10**digits)
    import math
    for text, v in zip(terms + [total], values + [math.fsum(values)]):
        assert len(text.split(".")[1]) == digits if digits else "." not in text
        err = abs(Fraction(Decimal(text)) - Fraction(v))
        assert err <= unit / 2  # no other number at these decimals is nearer the value (exact arithmetic)
        assert not text.startswith("-") or Decimal(text) != 0
    assert exact == (sum(Decimal(t) for t in terms) == Decimal(total))  # exact: the printed terms add up


@given(st.floats(0.01, 1e3), st.floats(0.01, 1e3))
def test_printed_product_holds(a, b):
    pa, pb, pc = prose.times(a, b)
    d = len(pc.split(".")[1]) if "." in pc else 0
    assert round(float(pa) * float(pb), d) == pytest.approx(float(pc), abs=10**-d / 1000)


def test_the_floor_line():
    # 7.2184 + 0.3628 + 1.8641 = 9.4453: each rounded, 7.22 + 0.36 + 1.86 = 9.44, the total 9.45; the old rule printed 1.87
    assert prose.sum_line([7.2184, 0.3628, 1.8641]) == "7.22 + 0.36 + 1.86 ≈ 9.45"


def test_a_product_that_is_not_the_factors_product_is_refused():
    with pytest.raises(ValueError, match="no printing of the factors"):
        prose.times(8.0, 3.77, 30.86)  # a floor with an idle-spare term is not lambda x X


def test_the_spare_verdict_subtracts_as_printed_or_says_about():
    import re

    from course_lib import Scenario
    from course_lib.answer import answer

    seen = set()
    for n in (1024, 4096, 16384, 65536):
        spare = answer(Scenario().replace(n_gpus=n), spread_draws=0).spare
        m = re.search(r"saves ([0-9.]+) min a day and its idle GPUs cost ([0-9.]+): net (about )?([-+0-9.]+)", spare.sentence)
        gross, cost, about, net = m.group(1), m.group(2), m.group(3), m.group(4)
        for text, value in ((gross, spare.gross), (cost, spare.cost), (net, spare.net)):
            assert abs(float(text) - value) <= 0.005 + 1e-12, spare.sentence  # each its own rounding
        holds = round(float(gross) - float(cost), 2) == float(net)
        assert holds == (about is None), spare.sentence
        seen.add(holds)
    assert seen == {True, False}  # 4,096 and 65,536 subtract as printed; 1,024 and 16,384 say "about"
