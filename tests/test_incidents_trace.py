"""The vendored InfiniteHBD trace, the answer for its fleet, and ``course-budget --log`` (notebook 13)."""
from __future__ import annotations

import csv
import itertools
import json
import math
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from course_lib import data
from course_lib import incidents as inc
from course_lib.__main__ import main
from course_lib.answer import answer
from course_lib.incidents import analysis as an
from course_lib.incidents.report import scenario_for_log
from poisson_by_hand import poisson_cdf_by_sum, spares_by_search  # the spare pool's reference, by hand

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "data" / "infinitehbd_fault_trace.json"


@pytest.fixture(scope="module")
def result():
    return inc.answer_for_log(inc.load_trace(), inc.trace_fleet())


# ---------------------------------------------------------------- a brute-force reference, from the JSON and the CSV
# Every expected number about the trace below is computed here with json, csv and arithmetic (no course_lib reader,
# classifier or estimator): the trace's README says 400 servers (the 231 with a fault appear), the course assumes 8
# GPUs a server; each fault_end closes its node's open fault_start of the same cause (every end in this trace has
# one); the window runs from day 0 to the last event.
SERVERS, GPUS_PER_SERVER = 400, 8


def _busy_at_faults(starts, durs, T):
    """At each fault, the other repairs [t, t + d) in progress, circularly over a window [0, T) (pairwise)."""
    t, d = np.asarray(starts)[:, None], np.asarray(durs)
    s = np.asarray(starts)[None, :]
    covered = ((s <= t) & (t < s + d)) | ((s - T <= t) & (t < s + d - T))
    np.fill_diagonal(covered, False)
    return covered.sum(axis=1)


def _pool(counts, q):
    srt = np.sort(counts)
    return int(srt[math.ceil(q * srt.size) - 1]) + 1


@pytest.fixture(scope="module")
def ref():
    events = json.loads(TRACE.read_text())
    with open(ROOT / "data" / "incident_classes.csv", newline="") as fh:
        rules = {(r["level"], r["class"], r["desc"]): r["interruption"] == "yes" for r in csv.DictReader(fh)}
    pending, faults = defaultdict(list), []
    for e in sorted(events, key=lambda e: e["event_time"]):
        cause = (e["fault_type"]["Level"], e["fault_type"]["Class"], e["fault_type"]["Desc"])
        if e["event_type"] == "fault_start":
            pending[e["node_id"]].append((e["event_time"], cause))
        else:
            opened = pending[e["node_id"]]
            t0, c = opened.pop(next(i for i, (_, c) in enumerate(opened) if c == cause))
            faults.append((e["node_id"], t0, e["event_time"], c))
    assert not any(pending.values())  # every fault of the trace ends

    def interrupts(c):  # a row with the description first, then the class's row; an unlisted class interrupts
        return rules.get(c, rules.get((c[0], c[1], ""), True))

    intr = [f for f in faults if interrupts(f[3])]
    T = max(e["event_time"] for e in events)
    per_node = defaultdict(list)
    for node, t0, t1, _ in intr:
        per_node[node].append(t0)
    r = {"events": len(events), "faults": faults, "intr": intr, "T": T, "per_node": {k: sorted(v) for k, v in per_node.items()}}
    r["rate"] = len(intr) / (SERVERS * GPUS_PER_SERVER * T)  # per GPU-day, every server counted
    r["mean_repair"] = sum(t1 - t0 for _, t0, t1, _ in intr) / len(intr)
    return r


def _lemon(ref, split=0.5, false_flag=0.01):
    """Lemon removal by hand: nodes with k or more interruptions before the split, k the smallest >= 2 with
    P(Poisson(mean before) >= k) <= 1 %; the factor is the kept nodes' share of the later interruptions over their
    share of the fleet."""
    from scipy import stats

    split_day = split * ref["T"]
    before = defaultdict(int)
    for node, t0, _, _ in ref["intr"]:
        before[node] += t0 < split_day
    mean = sum(before.values()) / SERVERS
    k = 2
    while 1 - poisson_cdf_by_sum(k - 1, mean) > false_flag:
        k += 1
    removed = {node for node, c in before.items() if c >= k}
    later = [f for f in ref["intr"] if f[1] >= split_day]
    kept = sum(1 for f in later if f[0] not in removed)
    scale = SERVERS / (SERVERS - len(removed))
    lo, hi = stats.beta.ppf(0.025, kept, len(later) - kept + 1), stats.beta.ppf(0.975, kept + 1, len(later) - kept)
    return dict(split_day=split_day, days_after=ref["T"] - split_day, threshold=k, n_removed=len(removed), removed=removed, count_all=len(later),
                count_kept=kept, factor=kept / len(later) * scale, factor_low=lo * scale, factor_high=hi * scale)


def _repeats(ref, within):
    """Interruptions whose node had one before (within ``within`` days; None: ever), and identical nodes' share."""
    gaps = [b - a for starts in ref["per_node"].values() for a, b in itertools.pairwise(starts)]
    k = sum(1 for g in gaps if within is None or g <= within)
    n, m = len(ref["intr"]), len(ref["intr"]) / SERVERS
    poisson = 1 - (1 - math.exp(-m)) / m if within is None else 1 - math.exp(-m * within / ref["T"])
    return k, n, poisson


def _replay(ref, job_nodes, draws=20, seed=0, q=0.99):
    """The replayed spare pool by brute force. For a job as large as the fleet: the trace itself. Larger: copies of the
    fleet, each after the first shifted by a uniform offset, and the job's node-copies drawn without replacement, the
    draws taken from numpy's stream in the order replay_spares takes them (one uniform per extra copy, then the choice;
    tests/test_incidents_stats.py pins that order); each copy's node k is the k-th smallest id with an interruption."""
    T, intr = ref["T"], ref["intr"]
    slot = {node: i for i, node in enumerate(sorted(ref["per_node"]))}
    if job_nodes == SERVERS:
        return _pool(_busy_at_faults([f[1] for f in intr], [f[2] - f[1] for f in intr], T), q)
    copies = math.ceil(job_nodes / SERVERS)
    rng = np.random.default_rng(seed)
    seen = []
    for _ in range(draws):
        offsets = [0.0] + list(rng.uniform(0, T, copies - 1))
        chosen = set(rng.choice(copies * SERVERS, job_nodes, replace=False).tolist())
        reps = [((t0 + off) % T, t1 - t0) for c, off in enumerate(offsets) for node, t0, t1, _ in intr
                if c * SERVERS + slot[node] in chosen]
        seen.append(_busy_at_faults([r[0] for r in reps], [r[1] for r in reps], T))
    return _pool(np.concatenate(seen), q)


def test_the_brute_force_reference_reads_the_trace_as_its_readme_and_statistics_say(ref):
    stats_file = json.loads((ROOT / "data" / "infinitehbd_fault_statistics.json").read_text())
    assert len(ref["faults"]) == sum(v["LevelTotal"] for v in stats_file.values()) == 584 and ref["events"] == 1168
    assert len({f[0] for f in ref["faults"]}) == 231 and math.floor(ref["T"]) == 348
    assert len(ref["intr"]) == 480  # the 104 others: stress tests, changes, tests, firmware (not interruptions)


def test_the_vendored_trace_matches_its_own_statistics_and_readme():
    log = inc.load_trace()
    stats = json.loads((ROOT / "data" / "infinitehbd_fault_statistics.json").read_text())
    fleet = data.sourced("infinitehbd_fleet.csv")
    assert len(log) == sum(v["LevelTotal"] for v in stats.values())
    for level, classes in stats.items():
        for cls, descs in classes.items():
            if cls == "LevelTotal":
                continue
            got = int(np.sum((log.cause_part("level") == level) & (log.cause_part("class") == cls)))
            assert got == descs["ClassTotal"], (level, cls)
    assert len(np.unique(log.node)) == fleet["servers_with_fault"].value
    assert math.floor(log.days) == fleet["days"].value
    assert log.report.rows_read == 2 * len(log) and log.report.rows_rejected == 0 and not log.open.any()


def test_every_class_of_the_trace_has_a_decision_with_its_reason():
    from course_lib.incidents import policy

    c = policy.classify(inc.load_trace())
    assert c.unlisted == 0
    pol = policy.load_policy()
    assert all(basis.strip() for _, _, basis in pol.rules.values())
    log = inc.load_trace()
    no = set(log.cause_part("class")[~c.interruption].tolist())
    assert no == {"Stress Test Failure", "Change", "Test", "Firmware"}


def test_the_rate_counts_every_server_of_the_fleet_not_only_those_that_failed(ref):
    intr = inc.trace_interruptions()
    fleet = inc.trace_fleet()
    est = an.rate(intr, fleet)
    assert est.count == len(ref["intr"]) and est.days == ref["T"]
    assert est.rate_per_gpu_day == pytest.approx(ref["rate"], rel=1e-12)  # 480 / (400 x 8 x 348.98 days)
    seen_only = an.rate(intr, an.Fleet(231, 8))
    assert seen_only.rate_per_gpu_day / est.rate_per_gpu_day == pytest.approx(400 / 231)  # the trap, by that factor
    counts = an.node_counts(intr, 400)
    want = sorted([len(v) for v in ref["per_node"].values()] + [0] * (400 - len(ref["per_node"])))
    assert counts.size == 400 and sorted(counts.tolist()) == want  # the servers without an interruption count as 0


def test_the_answer_for_the_trace_adds_up(result, ref):
    from scipy import stats

    from course_lib.scenario import Scenario

    rows = {r.key: r.value for r in result.rows()}
    T, k = ref["T"], len(ref["intr"])
    for tag, ans, gpus in (("fleet", result.fleet_answer, 3200), ("job", result.job_answer, 4096)):
        assert 0 < ans.after.floor_fraction <= ans.after.fraction_of_day <= ans.baseline.fraction_of_day <= 1
        assert ans.n_gpus == gpus
        assert ans.failures_per_day == pytest.approx(ref["rate"] * gpus, rel=1e-12)  # the fleet's: 480 / 348.98 a day
    assert result.fleet_answer.failures_per_day == pytest.approx(k / T, rel=1e-12)
    # the answers are the course's for the course's scenario at the trace's rate (a log without stage times keeps the
    # sourced stages): every input but the rate is Scenario()'s, and the rate is the reference's
    for ans, gpus, rate in ((result.job_answer, 4096, ref["rate"]), (result.fleet_answer, 3200, ref["rate"]),
                            (result.job_low, 4096, stats.gamma.ppf(0.025, k) / (3200 * T)),
                            (result.job_high, 4096, stats.gamma.ppf(0.975, k + 1) / (3200 * T))):
        sc = ans.scenario
        assert sc.rate_per_gpu_day == pytest.approx(rate, rel=1e-9)  # the point and Garwood's ends as gamma quantiles
        assert sc == Scenario().replace(n_gpus=gpus, rate_per_gpu_day=sc.rate_per_gpu_day)
    # the floor's range follows the rate's interval and contains the point value
    assert rows["job_floor_low_pct"] <= rows["job_floor_pct"] <= rows["job_floor_high_pct"]
    assert rows["job_floor_pct"] == 100 * result.job_answer.after.floor_fraction
    assert (rows["log_rows_read"], rows["log_rows_used"], rows["log_rows_ignored"], rows["log_rows_rejected"]) == (1168, 1168, 0, 0)
    assert (rows["faults"], rows["interruptions"], rows["fleet_nodes"], rows["nodes_with_fault"]) == (584, 480, 400, 231)
    assert rows["rate_per_gpu_day"] == pytest.approx(ref["rate"], rel=1e-12)
    assert rows["rate_all_per_gpu_day"] == pytest.approx(584 / (3200 * T), rel=1e-12)
    assert result.spares_poisson == spares_by_search(ref["rate"] * 8 * 512 * ref["mean_repair"], 0.99)
    assert result.spares_replay == _replay(ref, 512)
    assert result.spare_cost_min_per_day == pytest.approx(result.spares_poisson * 8 / 4096 * 1440)
    text = result.text
    assert f"{k:,} of the log's {len(ref['faults']):,} faults interrupt a job" in text
    assert f"on 400 nodes x 8 GPUs over {T:.0f} days that is {ref['rate']:.2e} per GPU-day" in text


def assert_lemon_is(lem, want, log):
    """A LemonRemoval against the brute-force one (its removed nodes by id)."""
    assert (lem.split_day, lem.threshold, lem.n_nodes, lem.n_removed) == (want["split_day"], want["threshold"], 400, want["n_removed"])
    assert (lem.count_all, lem.count_kept, lem.days_after) == (want["count_all"], want["count_kept"], pytest.approx(want["days_after"]))
    assert {log.nodes[i] for i in lem.removed_nodes} == want["removed"]
    for name in ("factor", "factor_low", "factor_high"):
        assert getattr(lem, name) == pytest.approx(want[name], rel=1e-9), name
    assert lem.capacity_removed == want["n_removed"] / 400


def test_the_measured_numbers_other_modules_take(result, ref):
    lem = inc.trace_lemon_removal()
    want = _lemon(ref)
    assert_lemon_is(lem, want, inc.load_trace())
    assert_lemon_is(result.analysis.lemon, want, inc.load_trace())  # the answer carries the same measurement
    assert 0 < lem.capacity_removed < 0.2 and lem.factor_low <= lem.factor <= lem.factor_high
    rep = inc.trace_repeat_fault_share()
    k, n, poisson = _repeats(ref, 7.0)
    assert (rep.repeats, rep.total, rep.within_days) == (k, n, 7.0) and rep.poisson_share == pytest.approx(poisson, rel=1e-12)
    assert rep.low > rep.poisson_share  # nodes that just failed fail again
    pool = inc.trace_spare_pool(4096)
    assert pool.poisson == spares_by_search(ref["rate"] * 8 * 512 * ref["mean_repair"], 0.99)
    assert pool.replay == _replay(ref, 512)


def test_the_lemon_rows_of_data_are_the_traces_measurement_and_the_lever_clamps_them():
    """data/floor_inputs.csv's infinitehbd_lemon_* rows recomputed from the trace; the course's lever uses them, clamped."""
    from course_lib import levers as lv
    from course_lib.scenario import Scenario

    lem = inc.trace_lemon_removal()
    m = lv.measured_lemon_removal()
    assert (m.threshold, m.nodes_removed) == (lem.threshold, lem.n_removed) == (4, 16)
    assert m.capacity_removed == pytest.approx(lem.capacity_removed, abs=5e-4)
    for row, measured in ((m.factor, lem.factor), (m.factor_low, lem.factor_low), (m.factor_high, lem.factor_high)):
        assert row == pytest.approx(measured, abs=5e-5)  # the rows hold 4 decimals
    # in sample: the same threshold chosen and judged on the whole trace (the gain out of sample does not show)
    intr, fleet = inc.trace_interruptions(), inc.trace_fleet()
    whole = np.bincount(intr.node, minlength=len(intr.nodes))
    lemons = np.flatnonzero(whole >= lem.threshold)
    kept = ~np.isin(intr.node, lemons)
    assert m.in_sample == pytest.approx(kept.sum() / len(intr) * fleet.n_nodes / (fleet.n_nodes - lemons.size), abs=5e-5)
    # out of sample removal bought nothing: the lever's factor is clamped at 1, the bound stays the most removal could buy
    assert m.factor > 1 and not m.gained and m.lever_factor == 1.0
    assert Scenario().lemon_factor == lv.lemon_node_factor() == 1.0
    levers = {x.name: x for x in lv.rate_levers()}
    assert levers["lemon-node removal"].factor == 1.0 and "clamped at x 1.00" in levers["lemon-node removal"].description
    assert levers["no faulty GPU / HBM3"].factor == pytest.approx(lv.lemon_bound())
    assert lv.lemon_bound() < 0.5
    a = answer(spread_draws=0)
    assert "bought nothing out of sample" in a.text and f"x {m.factor:.2f}" in a.text
    fewer = {lever.name: g for lever, g in a.fewer}
    assert fewer["lemon-node removal"].floor_minutes_per_day == pytest.approx(a.after.floor_minutes_per_day)
    assert lv.clamp_lemon_factor(1.3) == 1.0 and lv.clamp_lemon_factor(0.2, lv.lemon_bound()) == lv.lemon_bound()
    with pytest.raises(ValueError, match="give 1"):
        Scenario().replace(lemon_factor=m.factor)
    # a log's own measured factor above 1 is clamped the same way in its answer
    res = inc.answer_for_log(inc.load_trace(), inc.trace_fleet())
    assert res.lemon_after.floor_fraction == pytest.approx(res.job_answer.after.floor_fraction)
    assert "removal buys nothing here" in res.text


def test_scenario_for_log_takes_measured_stages_where_the_log_has_them():
    lab = inc.read_lab_events(ROOT / "data" / "faultlab_events.jsonl")
    st = inc.report.stage_minutes(lab)
    s = scenario_for_log(4e-4, 4096, stages_min=st)
    assert s.detect_min == pytest.approx(st["detect"]) and s.reschedule_min == pytest.approx(st["reschedule"])
    assert s.reload_min == pytest.approx(st["reload"]) and s.rate_per_gpu_day == 4e-4
    plain = scenario_for_log(4e-4, 4096)
    assert plain.detect_min == type(plain)().detect_min


def test_the_cli_prints_the_traces_numbers(capsys):
    assert main(["--log", str(TRACE), "--format", "infinitehbd", "--nodes", "400"]) == 0
    out = capsys.readouterr().out
    for label in ("interruption rate per GPU", "95 % interval, low", "variance / mean", "worst 1 % of nodes",
                  "rate factor, out of sample", "within 5 min of one on another node", "repair time of an interrupted node, median",
                  "90th percentile", "a 4,096-GPU job: GPUs", "floor (its named terms", "rows read 1,168"):
        assert label in out, label
    assert main(["--log", str(TRACE), "--format", "infinitehbd", "--nodes", "400", "--json", "--gpus", "8192"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["job_gpus"]["value"] == 8192 and js["report"]["rows_read"] == 1168 and js["text"]


@pytest.mark.parametrize("args, message", [
    (["--format", "infinitehbd", "--nodes", "400"], None),
    (["--nodes", "400"], "--format: required with --log"),
    (["--format", "infinitehbd"], "--nodes: required with --log"),
    (["--format", "infinitehbd", "--nodes", "100"], "n_nodes must be >= the 231 distinct nodes"),
    (["--format", "infinitehbd", "--nodes", "400", "--rate", "1e-4"], "not with --log"),
    (["--format", "infinitehbd", "--nodes", "400", "--tz", "UTC"], "--tz: the InfiniteHBD trace has no clock times"),
    (["--format", "sacct", "--nodes", "400"], "column missing from the header"),
])
def test_the_cli_refuses_bad_log_calls_in_one_line(capsys, args, message):
    code = main(["--log", str(TRACE)] + args)
    err = capsys.readouterr().err
    if message is None:
        assert code == 0
        return
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_the_cli_reads_sacct_with_a_time_zone_and_a_missing_file(capsys, tmp_path):
    fix = ROOT / "tests" / "fixtures" / "incidents" / "sacct_small.txt"
    assert main(["--log", str(fix), "--format", "sacct", "--nodes", "30", "--tz", "Europe/Berlin", "--gpus", "64"]) == 0
    out = capsys.readouterr().out
    assert "rows read 7: used 4, ignored 3, rejected 0" in out and "not measured:" in out
    assert main(["--log", str(tmp_path / "nope.json"), "--format", "infinitehbd", "--nodes", "4"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_the_incident_maths_loads_no_screen_and_no_torch():
    code = ("import importlib, json, sys; importlib.import_module('course_lib.incidents'); "
            "importlib.import_module('course_lib.incidents.cli'); print(json.dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = {m.split(".")[0] for m in json.loads(out)}
    assert not loaded & {"matplotlib", "ipywidgets", "torch"}


# ---------------------------------------------------------------- issue 29: the trace's measured numbers at their defaults
def test_the_trace_functions_defaults_are_the_documented_ones(ref):
    intr, fleet = inc.trace_interruptions(), inc.trace_fleet()
    assert (fleet.n_nodes, fleet.gpus_per_node) == (400, 8)  # the README's 400 servers x the course's 8 GPUs
    log = inc.load_trace()
    assert_lemon_is(inc.trace_lemon_removal(), _lemon(ref, 0.5), log)  # lemons chosen on the first half, the 1 % rule
    assert_lemon_is(inc.trace_lemon_removal(split=0.25), _lemon(ref, 0.25), log)  # the split passed on
    assert inc.trace_lemon_removal(threshold=2).threshold == 2
    for kw, within in (({}, 7.0), ({"within_days": None}, None), ({"within_days": 30.0}, 30.0)):  # default: a week
        rep = inc.trace_repeat_fault_share(**kw)
        k, n, poisson = _repeats(ref, within)
        assert (rep.repeats, rep.total, rep.within_days) == (k, n, within), kw
        assert rep.share == k / n and rep.poisson_share == pytest.approx(poisson, rel=1e-12), kw
    assert inc.trace_path().name == "infinitehbd_fault_trace.json" and inc.trace_path(data.DATA_DIR) == inc.trace_path()
    assert len(inc.load_trace(data.DATA_DIR)) == len(inc.load_trace()) >= len(intr)


def test_the_spare_pool_is_poissons_quantile_over_the_jobs_nodes(ref):
    fleet = inc.trace_fleet()
    assert fleet.n_nodes == 400
    per_node_day = len(ref["intr"]) / (400 * ref["T"])  # interruptions per server-day, the zero-fault servers counted
    mean_repair = ref["mean_repair"]  # every interruption of the trace is repaired within it: the plain mean
    for gpus, nodes in ((4096, 512), (4100, 513)):  # a part-filled server is a whole server: ceil(4100 / 8) = 513
        pool = inc.trace_spare_pool(gpus)
        assert pool.poisson == spares_by_search(per_node_day * nodes * mean_repair, 0.99)
        assert pool.replay == _replay(ref, nodes)
        assert pool == (pool.poisson, pool.replay)
    # the whole fleet (400 servers): the replay is the trace itself, no draw
    whole = inc.trace_spare_pool(3200)
    assert whole == (spares_by_search(per_node_day * 400 * mean_repair, 0.99), _replay(ref, 400))
    # the defaults: a 4,096-GPU job, a free spare 99 % of the time
    assert inc.trace_spare_pool() == (spares_by_search(per_node_day * 512 * mean_repair, 0.99), _replay(ref, 512))
    assert inc.trace_spare_pool(4096, 0.5).poisson == spares_by_search(per_node_day * 512 * mean_repair, 0.5)
    assert inc.trace_spare_pool(4096, 0.5).poisson < inc.trace_spare_pool(4096, 0.999).poisson


@pytest.mark.parametrize("fmt", ["infinitehbd", "sacct", "csv"])  # the CLI's formats
def test_the_cli_names_a_binary_log_and_says_it_is_not_a_text_export(capsys, tmp_path, fmt):
    binary = tmp_path / "trace.gz"
    binary.write_bytes(b"\x1f\x8b\x08\x00\xd2\x00\xff" * 4)  # a gzip header: what a compressed export starts with
    code = main(["--log", str(binary), "--format", fmt, "--nodes", "4"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert str(binary) in err and f"not a text export of the {fmt} format" in err
    assert "0x8b at offset 1" in err  # 0x1f is ASCII; 0x8b is the first byte UTF-8 cannot start a character with
