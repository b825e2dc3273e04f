"""Numbers in sentences, each its value correctly rounded (the answer, the answer sheet, the dashboard, the drill).

**One rounding rule.** Every printed number is its value correctly rounded at the digits its face uses.
A spoken sum is checked by the listener at the precision it is spoken, so where the correctly rounded
terms do not add up to the correctly rounded total (``4.20 + 2.79 + 2.16 + 5.86`` is 15.01, the total
15.00), the sentence says so: :func:`added` reports it and :func:`sum_line` writes ``≈`` instead of
``=``. No term is moved off its own rounding to make a total come out. :func:`times` prints a product
with as many decimals as it takes to hold. tests/test_docs.py parses every sum and product of
ANSWER_SHEET.md and recomputes it from the printed numbers.
"""
from __future__ import annotations

import math
from decimal import Decimal
from typing import NamedTuple

__all__ = ["Added", "added", "times", "sum_line", "sig"]


class Added(NamedTuple):
    """Terms and their total as printed, each correctly rounded; ``exact``: the printed terms add up to the printed total."""
    terms: list[str]
    total: str
    exact: bool

    @property
    def eq(self) -> str:
        """``=`` where the printed terms add up to the printed total, else ``≈`` (the sentence says it is approximate)."""
        return "=" if self.exact else "≈"


def added(values, total: float | None = None, digits: int = 2) -> Added:
    """``values`` and their ``total`` (default: their sum), each correctly rounded at ``digits`` decimals.

    ``exact`` says whether the printed terms add up to the printed total; where they do not, the face says
    so (``≈``, "about"), it never moves a term. A ``total`` that is not the values' sum is refused
    (ValueError naming ``total``): that is a wrong sum, not a rounding. ``digits``: an integer >= 0.
    """
    if not isinstance(digits, int) or digits < 0:
        raise ValueError(f"digits must be an integer >= 0 (got {digits!r})")
    values = [float(v) for v in values]
    if not values or not all(math.isfinite(v) for v in values):
        raise ValueError(f"values must be one or more finite numbers (got {values!r})")
    exact_sum = math.fsum(values)
    total = exact_sum if total is None else float(total)
    if not math.isclose(total, exact_sum, rel_tol=1e-9, abs_tol=1e-9 * max(1.0, *map(abs, values))):
        raise ValueError(f"total {total!r} is not the values' sum {exact_sum!r}: no rounding makes a wrong sum right")
    terms = [_fixed(v, digits) for v in values]
    total_t = _fixed(total, digits)
    return Added(terms, total_t, sum(Decimal(t) for t in terms) == Decimal(total_t))


def _fixed(x: float, digits: int) -> str:
    """``x`` correctly rounded at ``digits`` decimals, without a negative zero."""
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and Decimal(text) == 0 else text


def times(a: float, b: float, product: float | None = None, digits=(2, 2, 1), max_extra: int = 8) -> tuple[str, str, str]:
    """``a``, ``b`` and ``a x b`` as strings whose printed product rounds to the printed result.

    digits: the decimals of ``a``, ``b`` and the product; the factors get more decimals until the printed
    factors' product rounds to the printed result (ValueError when ``max_extra`` more decimals do not suffice:
    a product a hair from a rounding boundary).
    """
    a, b = float(a), float(b)
    product = a * b if product is None else float(product)
    if not math.isclose(product, a * b, rel_tol=1e-9, abs_tol=1e-12):
        raise ValueError(f"product {product!r} is not {a!r} x {b!r} = {a * b!r}: no printing of the factors makes it hold")
    da, db, dc = digits
    target = round(product, dc)
    for extra in range(max_extra + 1):
        pa, pb = round(a, da + extra), round(b, db + extra)
        if f"{round(pa * pb, dc):.{dc}f}" == f"{target:.{dc}f}":  # the printed product rounds to the printed result
            break
    else:  # before: the last try was printed even though its product rounds elsewhere
        raise ValueError(f"max_extra {max_extra!r}: no printing of {a!r} x {b!r} with at most that many extra decimals "
                         f"rounds to {target:.{dc}f}")
    return f"{a:.{da + extra}f}", f"{b:.{db + extra}f}", f"{target:.{dc}f}"


def sum_line(values, total: float | None = None, digits: int = 2) -> str:
    """``a + b + c = total`` with :func:`added`'s rounding; ``≈`` where the printed terms do not add up to the printed total."""
    a = added(values, total, digits)
    return " + ".join(a.terms) + f" {a.eq} {a.total}"


def sig(x: float, digits: int = 2) -> str:
    """``x`` correctly rounded to ``digits`` significant figures, in plain notation (the spoken answer's numbers).

    Trailing zeros that are significant stay (0.30, 2.0), thousands get separators (1,400), and nothing is
    written as an exponent: 11.64 -> "12", 0.656 -> "0.66", 1,440 -> "1,400", 0.000123 -> "0.00012".
    digits: at least 1 (ValueError naming ``digits``).
    """
    if not isinstance(digits, int) or digits < 1:
        raise ValueError(f"digits must be an integer >= 1 (got {digits!r})")
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"x must be finite (got {x!r})")
    if x == 0.0:
        return "0"
    rounded = float(f"{x:.{digits - 1}e}")  # the correct rounding of the float, exponent and all
    exponent = math.floor(math.log10(abs(rounded)))
    return f"{rounded:,.{max(digits - 1 - exponent, 0)}f}"
