"""The written answers (ANSWER_SHEET.md, README's answer block) are generated from course_lib, and every printed sum adds up."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import render_docs  # noqa: E402

from course_lib.answer import answer  # noqa: E402

NUM = r"[0-9][0-9,]*(?:\.[0-9]+)?"


def test_generated_docs_are_up_to_date():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "render_docs.py"), "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _sums(text: str):
    """Every 'a + b (+ c ...) = d' in the text, as printed strings; a term may carry a word label before its number
    ('detect 4.19') and a parenthesis after it ('(the remainder)')."""
    flat = " ".join(text.split())
    term = rf"(?:[a-z][a-z ]* )?{NUM}(?: \([^()]*(?:\([^()]*\)[^()]*)*\))?"
    for m in re.finditer(rf"((?:{term} \+ )+{term}) = ({NUM})", flat):
        body = re.sub(r"\([^()]*(?:\([^()]*\)[^()]*)*\)", "", m.group(1))  # drop the parentheses and what they say
        terms = re.findall(rf"(?<![\w.])({NUM})(?![\w.])", body)
        yield m.group(0), terms, m.group(2)


def _products(text: str):
    flat = " ".join(text.split())
    for m in re.finditer(rf"({NUM}) a day x ({NUM}) min = ({NUM})", flat):
        yield m.group(0), m.group(1), m.group(2), m.group(3)


def test_every_printed_sum_and_product_in_the_answer_sheet_adds_up():
    text = (ROOT / "ANSWER_SHEET.md").read_text()
    sums = list(_sums(text))
    assert len(sums) >= 5, sums  # the 2-minute answer's, the 10-minute answer's, the floor's, the drill's
    for line, terms, total in sums:
        d = max(_decimals(t) for t in terms + [total])
        assert round(sum(_num(t) for t in terms), d) == pytest.approx(_num(total), abs=0.5 * 10**-d), line
    products = list(_products(text))
    assert products
    for line, a, b, c in products:
        d = _decimals(c)
        assert round(_num(a) * _num(b), d) == pytest.approx(_num(c), abs=0.5 * 10**-d), line


def test_the_floor_and_the_two_minute_answer_say_the_same_numbers():
    ans = answer()
    text = (ROOT / "ANSWER_SHEET.md").read_text()
    two_min = text.split("## The 2-minute answer")[1].split("## The 10-minute answer")[0]
    assert " ".join(two_min.split()) == ans.text  # the 2-minute answer is Answer.text, one source
    f = ans.after
    for fragment in (f"{f.floor_minutes_per_day:.2f} min", f"{f.loss_fraction:.3%}", "30.0 min a day (2.08%)",
                     "30.0 + 3.2 = 33.2", "do not keep one here"):
        assert fragment in " ".join(text.split()), fragment
    # the floor is named terms with its range, in the 10-minute answer too
    assert all(t.symbol in text for t in ans.floor_terms)
    assert f"90 % range {ans.spread.floor.low:.2%}-{ans.spread.floor.high:.2%}" in text


def test_one_lever_order_everywhere():
    ans = answer()
    order = list(ans.order)
    sheet = (ROOT / "ANSWER_SHEET.md").read_text()
    flat = " ".join(sheet.split())
    # the 2-minute answer, the 10-minute list and the drill's first follow-up all name them in this order
    for chunk in (flat.split("## The 10-minute answer")[0], flat.split("6. **Every lever")[1].split("7. **After")[0],
                  flat.split("**Follow-up 1.**")[1].split("**Follow-up 2.**")[0]):
        positions = [chunk.find(name) for name in order]
        assert all(p >= 0 for p in positions) and positions == sorted(positions), (order, chunk[:300])
    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- answer:begin -->")[1].split("<!-- answer:end -->")[0]
    assert ans.text in block


def test_readme_block_is_the_cli_table():
    block = render_docs.readme_block()
    assert answer().table() in block and answer().text in block
