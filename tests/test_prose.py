"""course_lib.prose: printed sums and products add up as printed."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_lib import prose


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
