"""Numbers in sentences that add up as printed (the answer, the answer sheet, the dashboard, the drill).

A spoken sum is checked by the listener at the precision it is spoken: ``7.22 + 0.36 + 1.86 = 9.45``
is wrong to anyone who adds, even when the unrounded terms do sum to 9.4453. :func:`added` rounds the
terms so that they add up to the rounded total (largest-remainder rounding); :func:`times` prints a
product with as many decimals as it takes to hold. tests/test_docs.py parses every
sum and product of ANSWER_SHEET.md and recomputes it from the printed numbers.
"""
from __future__ import annotations

import math

__all__ = ["added", "times", "sum_line", "sig"]


def _round(x: float, d: int) -> float:
    return round(float(x), d)


def added(values, total: float | None = None, digits: int = 2) -> tuple[list[str], str]:
    """``values`` and their ``total`` (default: their sum) at ``digits`` decimals, the terms adding up to the total as printed.

    Each term is rounded to ``digits``; where the rounded terms miss the rounded total by a few units of
    the last digit, those units go to the terms with the largest remainders (largest-remainder rounding),
    so a term may print one unit of the last digit away from its own rounding. A ``total`` more units
    from the terms' rounded-down sum than there are terms is refused (ValueError naming ``total``): no
    such rounding adds up to it.
    """
    values = [float(v) for v in values]
    total = math.fsum(values) if total is None else float(total)
    unit = 10.0**-digits
    target = round(round(total, digits) / unit)
    units = [math.floor(v / unit + 1e-9) for v in values]
    missing = target - sum(units)
    if abs(missing) > len(values):  # a unit a term is all largest-remainder rounding may move
        raise ValueError(f"total {total!r} is {abs(missing)} units of {unit:g} from the terms' rounded sum, more than "
                         f"one a term ({len(values)} terms): no rounding of the terms adds up to it")
    sign = int(math.copysign(1, missing))  # 0 missing: nothing to move either way
    # missing units go to the largest remainders; surplus units (an explicit total below the floors, or
    # negative terms) come from the smallest
    order = sorted(range(len(values)), key=lambda i: sign * (values[i] / unit - units[i]), reverse=True)
    for i in order[:abs(missing)]:
        units[i] += sign
    return [f"{u * unit:.{digits}f}" for u in units], f"{target * unit:.{digits}f}"


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
    """``a + b + c = total`` with :func:`added`'s precision."""
    terms, t = added(values, total, digits)
    return " + ".join(terms) + f" = {t}"


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
