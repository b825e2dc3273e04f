"""Self-checks of notebooks 01-03: right answers pass, every typical mistake gets its own hint.

The generic tests at the top run over every exercise in the registry (``course_lib.check.registry()``,
filled by ``@exercise`` in every ``course_lib/check/nbNN.py``), so no exercise can escape them; the
notebook-specific ones for 01-03 follow (later notebooks' specific tests live in their own files).
"""
from __future__ import annotations

import importlib
import inspect
import math
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest
import sympy
from scipy import stats

from course_lib import Scenario, data, failures
from course_lib import restart as rs
from course_lib.check import Feedback, nb01, nb02, nb03, registry
from course_lib.check._common import ExprCheck, NumberCheck

ROOT = Path(__file__).resolve().parent.parent
REGISTRY = registry()  # {"nbNN.name": builder} of every declared exercise


def _graded(key, spec):
    """(id, check) of each graded answer of one exercise: the check itself, or each part of a multi-part one."""
    if isinstance(spec, Mapping):
        return [(f"{key}[{part}]", c) for part, c in spec.items()]
    return [(key, spec)]


GRADED = [pair for key, builder in REGISTRY.items() for pair in _graded(key, builder())]
NUMBER_CHECKS = [(name, c) for name, c in GRADED if isinstance(c, NumberCheck)]
EXPR_CHECKS = [(name, c) for name, c in GRADED if isinstance(c, ExprCheck)]


# ---------------------------------------------------------------- every check, generically
def test_every_graded_answer_is_a_number_or_an_expression_check():
    assert len(REGISTRY) >= 27 and all(re.fullmatch(r"nb\d\d\.[a-z]\w*", key) for key in REGISTRY)
    assert len(GRADED) == len(NUMBER_CHECKS) + len(EXPR_CHECKS), [n for n, c in GRADED if not isinstance(c, (NumberCheck, ExprCheck))]
    for _, c in NUMBER_CHECKS:
        assert math.isfinite(c.expected) and 0 < c.rel_tol < 0.1


@pytest.mark.parametrize("key", REGISTRY)
def test_each_exercise_is_its_modules_public_check_named_in_its_docstring_and_solution(key):
    """The learner's call ``nbNN.name(answer)`` is the registered exercise, the module docstring lists
    it, and the solution source calls it (a registered check no notebook uses is a stale one)."""
    module_name, name = key.split(".")
    module = importlib.import_module(f"course_lib.check.{module_name}")
    check = getattr(module, name)
    assert check.spec is REGISTRY[key] and check.key == key and name in module.__all__
    assert f":func:`{name}`" in module.__doc__
    assert list(inspect.signature(check).parameters) != [] and check.__doc__
    (solution,) = (ROOT / "solutions" / "src").glob(f"{module_name[2:]}-*-sol.py")
    assert f"{module_name}.{name}(" in solution.read_text()


@pytest.mark.parametrize("module_name", sorted({k.split(".")[0] for k in REGISTRY}))
def test_every_exercise_a_docstring_lists_is_registered(module_name):
    module = importlib.import_module(f"course_lib.check.{module_name}")
    listed = set(re.findall(r"^- :func:`(\w+)`", module.__doc__, flags=re.M))
    assert listed == {k.split(".")[1] for k in REGISTRY if k.startswith(module_name + ".")}


@pytest.mark.parametrize("name,check", NUMBER_CHECKS, ids=[n for n, _ in NUMBER_CHECKS])
def test_number_check_accepts_the_right_answer_within_its_tolerance(name, check):
    """Within its tolerance (``rel_tol``, or less where an anticipated mistake sits inside it) and not beyond."""
    assert 0 < check.tolerance <= check.rel_tol
    assert check(check.expected).ok
    assert check(check.expected * (1 + check.tolerance / 2)).ok and check(check.expected * (1 - check.tolerance / 2)).ok
    assert not check(check.expected * (1 + 3 * check.rel_tol)).ok
    assert check(check.expected).message.startswith(f"{check.expected:.4g}")


@pytest.mark.parametrize("name,check", NUMBER_CHECKS, ids=[n for n, _ in NUMBER_CHECKS])
def test_every_typical_mistake_gets_its_own_hint(name, check):
    assert len(check.mistakes) >= 3, "list the typical mistakes of the exercise"
    hints = [m.hint for m in check.mistakes]
    assert len(set(hints)) == len(hints), f"{name}: two mistakes share a hint, so the learner cannot tell them apart"
    for mistake in check.mistakes:
        fb = check(mistake.value)
        assert not fb.ok, f"{name}: mistake {mistake.hint!r} is within tolerance of the right answer"
        assert fb.message.startswith(mistake.hint), f"{name}: {mistake.value:.4g} got {fb.message!r}, not its own hint"
        assert fb.message != "wrong" and len(fb.message) > 20
        assert "check the units and each input" not in fb.message, f"{name}: {mistake.value:.4g} gets only the generic hint"


@pytest.mark.parametrize("name,check", EXPR_CHECKS, ids=[n for n, _ in EXPR_CHECKS])
def test_expression_checks_accept_the_right_answer_and_name_each_mistake(name, check):
    assert check(check.expected).ok
    assert check(sympy.expand(check.expected)).ok
    hints = [hint for _, hint in check.mistakes]
    assert len(hints) >= 3 and len(set(hints)) == len(hints), f"{name}: list distinct typical mistakes"
    for wrong, hint in check.mistakes:
        fb = check(wrong)
        assert not fb.ok and fb.message == hint, f"{name}: {wrong} got {fb.message!r}"
    other = check(sympy.Symbol("x") ** 3)
    assert not other.ok and check.fallback in other.message


def test_placeholders_and_wrong_types_get_form_hints():
    assert "no answer yet" in nb01.gpu_category_rate(...).message
    assert "expected a number" in nb03.hourly_interval_loss("five").message
    assert "no answer yet" in nb02.mixed_fleet_mtbf(...).message
    assert "expected a sympy expression" in nb02.mixed_fleet_mtbf("1/(N*").message
    P, c, lam, T, *_ = nb03.health_check_symbols()
    fb = nb03.health_check_period([sympy.sqrt(2 * c * T / lam)])
    assert not fb.ok and "sp.solve returns a list" in fb.message
    assert "pair" in nb01.opt_rate(nb01.opt_rate.spec()["rate"].expected, 0.3).message
    assert "low < high" in nb01.opt_rate(nb01.opt_rate.spec()["rate"].expected, (2.0, 1.0)).message


def test_small_tolerances_are_reported_as_they_are():
    fb = nb01.gpu_category_rate(nb01.gpu_category_rate.spec().expected)
    assert fb.message.endswith("within 0.5%)") and "Correct" in repr(fb)


# ---------------------------------------------------------------- notebook 01
def _row(run):
    return data.failure_logs().where("run", run).rows[0]


def test_opt_rate_is_the_count_over_gpu_days_with_the_exact_99_interval():
    row = _row("OPT-175B")
    k, exposure = int(row["events_low"]), row["gpus"] * row["period_days"]
    rate = k / exposure
    low = stats.chi2.ppf(0.005, 2 * k) / 2 / exposure
    high = stats.chi2.ppf(0.995, 2 * k + 2) / 2 / exposure
    fb = nb01.opt_rate(rate, (low, high))
    assert isinstance(fb, Feedback) and fb.ok and "99% high" in fb.message
    # the 95 % interval of notebook 01 is the typical slip
    r95 = next(r for r in failures.log_rates() if r.run == "OPT-175B")
    fb = nb01.opt_rate(rate, (r95.ci_low, r95.ci_high))
    assert not fb.ok and "95 %" in fb.message and fb.message.startswith("99% low")
    # a per-node-day rate is named before the interval is looked at
    fb = nb01.opt_rate(rate * row["gpus_per_node"], (low, high))
    assert not fb.ok and "node-day" in fb.message and fb.message.startswith("rate")
    # the normal approximation is named
    z = stats.norm.ppf(0.995)
    fb = nb01.opt_rate(rate, ((k - z * math.sqrt(k)) / exposure, high))
    assert not fb.ok and "normal approximation" in fb.message


def test_gpu_category_rate_uses_the_counts_not_the_printed_percentages():
    t = data.llama3_table5()
    gpu = np.array([c == "GPU" for c in t["category"]])
    row = _row("Llama 3 405B")
    exposure = row["gpus"] * row["period_days"]
    assert nb01.gpu_category_rate(t["count"][gpu].sum() / exposure).ok
    printed = t["printed_percent"][gpu].sum() / 100 * t["count"].sum() / exposure
    fb = nb01.gpu_category_rate(printed)
    assert not fb.ok and "printed Table 5 percentages" in fb.message
    fb = nb01.gpu_category_rate(t["count"][gpu].sum() / (exposure / 2))
    assert not fb.ok and "8,192" in fb.message


def test_normal_interval_coverage_exact_sum_agrees_with_simulation():
    mean = nb01.bloom_mean_count()
    assert mean == (_row("BLOOM-176B")["events_low"] + _row("BLOOM-176B")["events_high"]) / 2
    exact = nb01.normal_interval_coverage_exact(mean)
    rng = np.random.default_rng(1)
    k = rng.poisson(mean, 20_000)
    sim = np.mean(np.abs(k - mean) <= stats.norm.ppf(0.975) * np.sqrt(k))
    assert abs(sim - exact) < 4 * math.sqrt(exact * (1 - exact) / k.size)
    assert exact < 0.9  # the point of the exercise: far below the nominal 95 %
    assert nb01.normal_interval_coverage(sim).ok
    fb = nb01.normal_interval_coverage(1 - sim)
    assert not fb.ok and "miss rate" in fb.message


# ---------------------------------------------------------------- notebook 02
def test_mixed_fleet_by_name_and_as_a_string():
    t, N, M, lam, mu = sympy.symbols("t N M lambda mu")  # no assumptions: matched by name
    assert nb02.mixed_fleet_mtbf(sympy.integrate(sympy.exp(-(N * lam + M * mu) * t), (t, 0, sympy.oo), conds="none")).ok
    assert nb02.mixed_fleet_mtbf("1/(N*lambda + M*mu)").ok
    fb = nb02.mixed_fleet_mtbf(1 / (N * lam) + 1 / (M * mu))
    assert not fb.ok and "added the two MTBFs" in fb.message


def test_rsc1_fleet_mtbf_from_the_published_rate():
    row = _row("Meta RSC-1")
    rate = row["published_per_1000_node_days"] / 1000 / row["gpus_per_node"]
    assert nb02.rsc1_fleet_mtbf(24 / (nb02.RSC1_GPUS * rate)).ok
    fb = nb02.rsc1_fleet_mtbf(24 / (nb02.RSC1_GPUS * rate) / 24)
    assert not fb.ok and "days" in fb.message
    fb = nb02.rsc1_fleet_mtbf(24 / (nb02.RSC1_GPUS * rate * row["gpus_per_node"]))
    assert not fb.ok and "per-node-day rate" in fb.message


def test_wearout_first_failure_matches_the_closed_form():
    rate = next(r for r in failures.log_rates() if r.run == "Llama 3 405B").rate_low
    k, n = nb02.WEAROUT_SHAPE, 4096
    # mean of the minimum = scale N**(-1/k) Gamma(1 + 1/k) with scale = mean / Gamma(1 + 1/k): mean N**(-1/k)
    hours = 24 / rate * n ** (-1 / k)
    assert nb02.wearout_first_failure(hours).ok
    fb = nb02.wearout_first_failure(24 / (n * rate))
    assert not fb.ok and "exponential MTBF" in fb.message


# ---------------------------------------------------------------- notebook 03
def test_hourly_interval_loss_replaces_the_rewind_with_half_the_interval():
    s = Scenario()
    st = rs.baseline_stages(s)
    sdc = s.modes.share("sdc") * s.modes.sdc_latency_min  # a silent corruption still rewinds its latency past the checkpoint
    right = 100 * 2 * (st.restart_cost + nb03.HOURLY_INTERVAL_MIN / 2 + sdc) / 1440
    assert nb03.hourly_interval_loss(right).ok
    fb = nb03.hourly_interval_loss(100 * 2 * (st.restart_cost + nb03.HOURLY_INTERVAL_MIN / 2) / 1440)
    assert not fb.ok and "silent corruption" in fb.message
    fb = nb03.hourly_interval_loss(100 * 2 * (st.restart_cost + nb03.HOURLY_INTERVAL_MIN) / 1440)
    assert not fb.ok and "interval / 2" in fb.message
    fb = nb03.hourly_interval_loss(100 * 2 * (nb03.HOURLY_INTERVAL_MIN / 2) / 1440)
    assert not fb.ok and "forgot the restart term" in fb.message


def test_health_check_period_is_youngs_form():
    P, c, lam, T, S, L, tau = nb03.health_check_symbols()
    W = lam * (P / 2 + S + L + tau / 2) + c * T / P
    (p_star,) = sympy.solve(sympy.diff(W, P), P)
    assert nb03.health_check_period(p_star).ok
    W_full = lam * (P + S + L + tau / 2) + c * T / P
    fb = nb03.health_check_period(sympy.solve(sympy.diff(W_full, P), P)[0])
    assert not fb.ok and "P/2" in fb.message


def test_levers_at_four_a_day_counts_the_writes_and_reoptimises_the_interval():
    check = nb03.levers_at_four_a_day.spec()
    base = check.mistakes[0].value  # the linear scaling
    assert check.expected < base  # sqrt growth of rewind + writes
    fb = nb03.levers_at_four_a_day(base)
    assert not fb.ok and "linearly" in fb.message


# ---------------------------------------------------------------- exercise notebooks (every solution, not only 01-03)
def _loads_and_stores(source: str):
    import ast

    stored, loaded = set(), set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else stored).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            stored.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            stored.add(node.name)
        elif isinstance(node, ast.arg):
            stored.add(node.arg)
    return stored, loaded


SOLUTION_SOURCES = sorted((ROOT / "solutions" / "src").glob("[0-9][0-9]-*-sol.py"))  # the jupytext sources the exercises come from


@pytest.mark.parametrize("path", SOLUTION_SOURCES, ids=lambda p: p.stem)
def test_cells_after_a_stub_use_only_names_the_task_asks_for(path):
    """In the exercise notebook the solution cells are gone: later cells may only use names defined
    in untagged cells or named (in backticks) by a task line, or they break for a learner whose
    solution names its helpers differently."""
    import builtins

    import jupytext

    nb = jupytext.read(path)
    known = set(dir(builtins)) | {"display", "get_ipython"}
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if "solution" in cell.metadata.get("tags", []):
            task = next(line for line in cell.source.splitlines() if line.strip().lower().startswith("# task:"))
            known |= set(re.findall(r"`([A-Za-z_]\w*)", task))
            continue
        stored, loaded = _loads_and_stores(cell.source)
        missing = loaded - known - stored
        assert not missing, f"cell {i} uses {sorted(missing)}, defined only in a solution cell (name them in the task or define them untagged)"
        known |= stored
