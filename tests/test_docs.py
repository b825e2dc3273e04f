"""The written answers (ANSWER_SHEET.md, README's answer block) are generated from course_lib, and every printed sum adds up."""
from __future__ import annotations

import math
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
    for m in re.finditer(rf"((?:{term} \+ )+{term}) ([=≈]) ({NUM})", flat):
        body = re.sub(r"\([^()]*(?:\([^()]*\)[^()]*)*\)", "", m.group(1))  # drop the parentheses and what they say
        terms = re.findall(rf"(?<![\w.])({NUM})(?![\w.])", body)
        yield m.group(0), terms, m.group(2), m.group(3)


def _products(text: str):
    flat = " ".join(text.split())
    for m in re.finditer(rf"({NUM}) a day x ({NUM}) min = ({NUM})", flat):
        yield m.group(0), m.group(1), m.group(2), m.group(3)


def test_every_printed_sum_and_product_in_the_answer_sheet_adds_up():
    text = (ROOT / "ANSWER_SHEET.md").read_text()
    sums = list(_sums(text))
    assert len(sums) >= 5, sums  # the 2-minute answer's, the 10-minute answer's, the floor's, the drill's
    assert any(eq == "≈" for _, _, eq, _ in sums)  # the floor's terms, each correctly rounded, miss 9.45 by a unit
    for line, terms, eq, total in sums:
        d = max(_decimals(t) for t in terms + [total])
        adds = round(sum(_num(t) for t in terms), d) == pytest.approx(_num(total), abs=0.5 * 10**-d)
        if eq == "=":
            assert adds, line  # "=" only where the printed terms add up
        else:  # "≈": correctly rounded terms that miss the total by at most half a unit each, and do miss it
            assert not adds and abs(sum(_num(t) for t in terms) - _num(total)) <= (len(terms) + 1) * 0.5 * 10**-d, line
    products = list(_products(text))
    assert products
    for line, a, b, c in products:
        d = _decimals(c)
        assert round(_num(a) * _num(b), d) == pytest.approx(_num(c), abs=0.5 * 10**-d), line


def test_the_floor_and_the_two_minute_answer_say_the_same_numbers():
    ans = answer()
    text = (ROOT / "ANSWER_SHEET.md").read_text()
    two_min = text.split("## The 2-minute answer")[1].split("## The written answer")[0]
    spoken = " ".join(two_min.split()).split(" *")[0]
    assert spoken == ans.spoken  # the 2-minute answer is Answer.spoken, one source
    written = text.split("## The written answer")[1].split("## The 10-minute answer")[0]
    assert " ".join(written.split()) == ans.written  # the written answer is Answer.written
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
    # the written answer, the 10-minute list and the drill's first follow-up all name them in this order
    for chunk in (flat.split("## The written answer")[1].split("## The 10-minute answer")[0], flat.split("6. **Every lever")[1].split("7. **After")[0],
                  flat.split("**Follow-up 1.**")[1].split("**Follow-up 2.**")[0]):
        positions = [chunk.find(name) for name in order]
        assert all(p >= 0 for p in positions) and positions == sorted(positions), (order, chunk[:300])
    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- answer:begin -->")[1].split("<!-- answer:end -->")[0]
    assert ans.text in block and ans.spoken in block and block.index(ans.spoken) < block.index(ans.text)


def test_readme_block_is_the_cli_table():
    block = render_docs.readme_block()
    assert answer().table() in block and answer().text in block


# ---------------------------------------------------------------- issue 37: the printed numbers re-derived by hand (correctness, not drift)
def _readme_table() -> dict:
    """README's answer block, the CLI table: {(label, unit): printed value}."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- answer:begin -->")[1].split("<!-- answer:end -->")[0]
    table = block.split("$ python -m course_lib budget")[1].split("```")[0]
    rows = {}
    for line in table.strip().splitlines():
        label, value, unit = re.split(r"\s{2,}", line.strip(), maxsplit=2)
        rows[(label, unit)] = value
    return rows


def test_the_readme_tables_numbers_follow_from_the_question_by_hand():
    t = _readme_table()

    def v(label, unit):
        return _num(t[(label, unit)])

    # the question: 4,096 GPUs, two failures a day of 15 min; the rate is 2 / 4,096 per GPU-day and the count follows from it
    assert v("GPUs in the job", "GPUs") == 4096
    assert t[("failure rate per GPU", "per GPU-day")] == f"{2 / 4096:.3e}" == "4.883e-04"
    # failures a day = GPUs x rate, within the rate's printed last digit (4,096 x 5e-8) and the count's (3 figures)
    assert v("failures per day", "per day") == pytest.approx(4096 * v("failure rate per GPU", "per GPU-day"), abs=4096 * 5e-8 + 5e-3)
    # 2 x 15 = 30 min a day, 30 / 1,440 = 2.08 %
    assert v("baseline: restarts (the question's)", "min/day") == 2 * 15
    assert v("baseline: restarts (the question's)", "% of the day") == round(100 * 30 / 1440, 2) == 2.08
    # the four stages add to the question's 15 minutes (each printed to 0.01)
    stages = [v(f"{s} per restart (baseline)", "min") for s in ("detect", "reschedule", "reload", "rewind")]
    assert sum(stages) == pytest.approx(15.0, abs=4 * 0.005)
    # the writes: the 405B model's 12 bytes a parameter over 4,096 GPUs is a 1.1865 GB shard, 1.364 s at torch.save's 0.87 GB/s
    # and 21.6 ms at the 55 GB/s pinned copy; writes + restarts = the total
    shard_gb = 405e9 * 12 / 4096 / 1e9
    assert v("blocking write, synchronous checkpoint", "s") == round(shard_gb / 0.87, 2) == 1.36
    assert v("blocking in-memory snapshot", "ms") == round(1000 * shard_gb / 55, 1) == 21.6
    total = v("baseline: restarts + writes", "min/day")
    assert total == pytest.approx(30.0 + v("baseline: blocking synchronous writes", "min/day"), abs=0.05 + 0.005)
    assert v("baseline: restarts + writes", "% of the day") == pytest.approx(100 * total / 1440, abs=100 * 0.05 / 1440 + 0.005)
    # ETTR = 100 % - the loss
    assert v("baseline ETTR", "% of the day") == pytest.approx(100 - v("baseline: restarts + writes", "% of the day"), abs=0.05 + 0.005)
    after_pct = v("loss after the levers", "% of the day")
    assert v("ETTR after the levers", "% of the day") == pytest.approx(100 - after_pct, abs=0.05 + 0.0005)
    # the interval with the synchronous write: the optimum of the day model, tau* = -delta + sqrt(delta^2 + 2 delta (M - A)),
    # M = 1,440 / 2 = 720 min, A = 15 - 10 / 2 = 10 min of each restart that the interval does not move: 5.66 min
    delta = shard_gb / 0.87 / 60
    assert v("optimal interval with the synchronous write", "min") == round(-delta + math.sqrt(delta ** 2 + 2 * delta * 710), 2) == 5.66
    # after the snapshot, Young's first order sqrt(2 delta M / s), s = 1 - the SDC share (6 of 419 in Table 5): 0.72 min
    snap = shard_gb / 55 / 60
    assert v("optimal interval after the in-memory checkpoint", "min") == pytest.approx(
        math.sqrt(2 * snap * 720 / (1 - 6 / 419)), rel=0.01)
    # the waterfall: each lever's saving taken off what was left, down to the loss after the levers
    savings = [_num(val) for (label, unit), val in t.items() if label.startswith("saved by ")]
    after = v("loss after the levers", "min/day")
    assert len(savings) == 3 and savings == sorted(savings, reverse=True)
    assert total - sum(savings) == pytest.approx(after, abs=0.05 + 3 * 0.005 + 0.005)
    assert after_pct == pytest.approx(100 * after / 1440, abs=100 * 0.005 / 1440 + 0.0005)
    assert v("loss after the levers, in GPUs' worth", "GPUs") == pytest.approx(4096 * after_pct / 100, abs=4096 * 5e-6 + 0.05)
    # the floor's terms add to the floor (each printed to 0.01), and the floor is its share of the day
    terms = [_num(val) for (label, unit), val in t.items() if label.startswith("floor term: ")]
    floor = v("floor", "min/day")
    assert len(terms) == 3 and sum(terms) == pytest.approx(floor, abs=3 * 0.005 + 0.005)
    assert v("floor", "% of the day") == pytest.approx(100 * floor / 1440, abs=100 * 0.005 / 1440 + 0.0005)
    assert v("floor", "% of the day") <= after_pct <= v("baseline: restarts + writes", "% of the day")
    # the spare: net = what it saves - what its idle GPUs cost
    gross, cost = v("hot spare: what its faster restart saves", "min/day"), v("hot spare: its idle GPUs", "min/day")
    assert v("hot spare, net", "min/day") == pytest.approx(gross - cost, abs=3 * 0.005)
    # the range holds the floor's point value, and its ends are ordered
    lo, mid, hi = (v(f"floor, {x}", "% of the day") for x in ("5th percentile", "central (median of the inputs' range)",
                                                             "95th percentile"))
    assert lo < v("floor", "% of the day") < hi and lo < mid < hi


def test_the_answer_sheets_sourced_numbers_by_hand():
    from scipy import stats

    flat = " ".join((ROOT / "ANSWER_SHEET.md").read_text().split())
    # Llama 3's 419 interruptions in 54 days on 16,384 GPUs: 419 / (54 x 16,384) = 4.74e-04 per GPU-day, its exact (Garwood)
    # 95 % interval chi2(0.025; 838) / 2 to chi2(0.975; 840) / 2 over the GPU-days
    gpu_days = 54 * 16384
    low, high = stats.chi2.ppf(0.025, 2 * 419) / 2 / gpu_days, stats.chi2.ppf(0.975, 2 * 420) / 2 / gpu_days
    assert (f"419 unexpected interruptions in 54 days on up to 16,384 GPUs: {419 / gpu_days:.2e} failures per GPU-day "
            f"(exact Poisson 95 % CI {low:.2e} to {high:.2e})") in flat
    # at 4,096 GPUs that rate is 4,096 x 4.736e-4 = 1.94 failures a day, an MTBF of 24 / 1.94 = 12.4 h
    per_day = 4096 * 419 / gpu_days
    assert f"gives {per_day:.2f} failures/day, MTBF {24 / per_day:.1f} h" in flat and f"{per_day:.2f}" == "1.94"
    # the question: two a day, MTBF 24 / 2 = 12 h
    assert f"stops {2:.2f} times a day (MTBF {24 / 2:.3g} h)" in flat
    # Young inverted: a one-minute interval at M = 12 h is optimal at delta = tau^2 / (2 M) = 1 / 1,440 min = 41.7 ms
    assert f"needs a blocking cost of only {60_000 / (2 * 720):.0f} ms" in flat
    # the bound on the rate: no faulty GPU and no HBM3 failure, (148 + 72) / 419 = 52.5 % of Table 5, rate x 0.47
    assert f"({100 * 220 / 419:.1f}% of Table 5's interruptions), rate x {1 - 220 / 419:.2f}" in flat
    # each floor term a day is lambda = 2 x its minutes per failure (the printed terms are rounded to add up: within 0.01)
    terms = re.findall(rf"= ({NUM}) min/day \(({NUM}) min per failure\)", flat)
    assert len(terms) == 3
    for per_day_text, per_failure_text in terms:
        assert _num(per_day_text) == pytest.approx(2 * _num(per_failure_text), abs=0.01 + 2 * 0.0005)
    # the spare's share of the GPUs paid for, and the doubled fleet's failures
    assert "8 / (4,096 + 8) of the GPUs paid for" in flat and "8,192 GPUs: 4.00 failures a day" in flat
