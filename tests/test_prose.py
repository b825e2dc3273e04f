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
