"""The SDC lab's parts without a launch (notebook 14): bit flips through an integer view, the 64-bit
fingerprint against an independent reference, the detectors' decisions, recovery's rewind and exclusion,
and the config's validation (every flip checked: bit within the dtype, step within the run, rank within
the world). The lab itself runs in tests/test_sdclab_lab.py."""
import math
import statistics
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_lib.sdclab import Flip, SdcLabConfig
from course_lib.sdclab import detectors as dt
from course_lib.sdclab.bits import BIT_NAMES, EXPONENT_BITS, FLOAT_BITS, bit_class, check_bit, flip_bit, named_bit

torch = pytest.importorskip("torch")
from course_lib.sdclab.fingerprint import fingerprint64  # noqa: E402

STRUCT = {"float32": ("f", "I", "i", 4), "float64": ("d", "Q", "q", 8), "float16": ("e", "H", "h", 2)}


def _raw(x: float, dtype: str) -> int:
    f, u, _, _ = STRUCT[dtype]
    return struct.unpack(f"<{u}", struct.pack(f"<{f}", x))[0]


# ----- bits -----
def _memory(t) -> list:
    """Each element's bits as an unsigned integer, read from the tensor's storage as little-endian bytes
    (not through the integer view flip_bit uses)."""
    raw, w = bytes(t.untyped_storage()), t.element_size()
    assert len(raw) == w * t.numel()
    return [int.from_bytes(raw[k * w:(k + 1) * w], "little") for k in range(t.numel())]


@pytest.mark.parametrize("dtype, width", [("float16", 16), ("bfloat16", 16), ("float32", 32), ("float64", 64)])
def test_flip_bit_flips_exactly_that_bit_and_twice_restores(dtype, width):
    """Every bit of every element, the lowest mantissa bit up to the sign (the top bit): exactly that bit of
    that element changes, every other bit of it and every other element stay, a second flip restores the
    memory. ``width`` is IEEE 754's (bfloat16: float32's top 16 bits), written here, not read from the code."""
    values = [0.1, -3.5, 1e-3, 0.0]

    def fresh():
        return torch.tensor(values, dtype=getattr(torch, dtype))

    raw = _memory(fresh())
    assert len(set(raw)) == len(values) and raw[3] == 0  # distinct patterns: a flip in the wrong element would show
    assert raw[1] >> (width - 1) == 1 and raw[0] >> (width - 1) == 0  # -3.5 has the top bit set, 0.1 has not
    for element in range(len(values)):
        for bit in range(width):
            t = fresh()
            flip_bit(t, element, bit)
            want = list(raw)
            want[element] ^= 1 << bit
            assert _memory(t) == want, (dtype, element, bit)
            flip_bit(t, element, bit)
            assert _memory(t) == raw, (dtype, element, bit)
    # the top bit is the sign: -3.5 -> 3.5 and 0.0 -> -0.0 exactly, in every format
    t = fresh()
    assert flip_bit(t, 1, width - 1) == (-3.5, 3.5)
    before, after = flip_bit(t, 3, width - 1)
    assert before == 0.0 and after == 0.0 and math.copysign(1.0, after) == -1.0 and math.copysign(1.0, before) == 1.0
    assert _memory(t)[3] == 1 << (width - 1)


def test_bfloat16_flips_through_its_own_16_bits():
    t = torch.tensor([0.1], dtype=torch.bfloat16)
    before = int(t.view(torch.int16)[0]) & 0xFFFF
    flip_bit(t, 0, 14)
    assert (int(t.view(torch.int16)[0]) & 0xFFFF) == before ^ (1 << 14)


def test_the_classic_flips_of_a_float32_weight():
    """The top exponent bit of a value below 2 makes it huge, the lowest one halves or doubles it, mantissa
    bit 0 moves it by one unit in the last place."""
    w = 0.1
    for name, check in [("exponent_top", lambda a: a > 1e37), ("exponent_low", lambda a: a in (0.05, 0.2)),
                        ("mantissa_low", lambda a: a != w and abs(a - w) / w < 2 ** -22)]:
        t = torch.tensor([w], dtype=torch.float32)
        before, after = flip_bit(t, 0, named_bit("float32", name))
        assert check(pytest.approx(after) if name == "exponent_low" else after), (name, after)
    t = torch.tensor([3.0], dtype=torch.float32)  # >= 2: the top exponent bit is set, flipping it makes the value tiny
    assert flip_bit(t, 0, 30)[1] < 1e-37


def test_bit_classes_follow_ieee_754():
    for dtype, (lo, hi) in EXPONENT_BITS.items():
        classes = [bit_class(dtype, b) for b in range(FLOAT_BITS[dtype])]
        assert classes == ["mantissa"] * lo + ["exponent"] * (hi - lo + 1) + ["sign"]
        assert [named_bit(dtype, n) for n in BIT_NAMES] == [hi, lo, 0, FLOAT_BITS[dtype] - 1]


@pytest.mark.parametrize("dtype, bad", [("float32", 32), ("float16", 16), ("bfloat16", 16), ("float64", 64), ("float32", -1)])
def test_a_bit_outside_the_dtype_is_rejected_naming_it(dtype, bad):
    with pytest.raises(ValueError, match=r"bit must be an integer"):
        check_bit("bit", bad, dtype)
    with pytest.raises(ValueError, match=r"bit"):
        flip_bit(torch.zeros(2, dtype=getattr(torch, dtype)), 0, bad)


def test_flip_bit_rejects_what_it_cannot_flip():
    with pytest.raises(ValueError, match=r"element must be an integer in \[0, 2\]"):
        flip_bit(torch.zeros(3), 3, 0)
    with pytest.raises(ValueError, match="floating-point"):
        flip_bit(torch.zeros(3, dtype=torch.int32), 0, 0)
    with pytest.raises(ValueError, match="contiguous"):
        flip_bit(torch.zeros(3, 3).t(), 0, 0)
    with pytest.raises(ValueError, match="dtype must be one of"):
        bit_class("int8", 0)
    with pytest.raises(ValueError, match="name must be one of"):
        named_bit("float32", "exponent_middle")


# ----- the fingerprint -----
def _reference(tensors, dtype):
    """Sum of each element's signed integer bits times 2 i + 1, modulo 2^64, in plain Python."""
    f, _, i, n = STRUCT[dtype]
    ints = []
    for t in tensors:
        ints += struct.unpack(f"<{t.numel()}{i}", t.numpy().tobytes())
    s = sum(v * (2 * k + 1) for k, v in enumerate(ints)) % 2**64
    return s - 2**64 if s >= 2**63 else s


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_fingerprint_equals_an_independent_reference_across_chunks(dtype):
    g = torch.Generator().manual_seed(1)
    parts = [torch.randn(n, generator=g).to(getattr(torch, dtype)) for n in (7, 100, 1)]
    expected = _reference(parts, dtype)
    assert fingerprint64(parts) == expected
    assert fingerprint64(parts, chunk=5) == expected  # the chunked sum is the same sum
    assert fingerprint64(torch.cat(parts)) == expected  # one tensor or its pieces: the same digest


def test_every_single_bit_flip_changes_the_fingerprint():
    t = torch.randn(257, generator=torch.Generator().manual_seed(2))
    base = fingerprint64(t)
    for element in (0, 128, 256):
        for bit in range(32):
            c = t.clone()
            flip_bit(c, element, bit)
            assert fingerprint64(c) != base, (element, bit)


@given(st.lists(st.floats(-1e6, 1e6, width=32), min_size=2, max_size=40), st.data())
def test_a_flip_anywhere_changes_it_and_swapping_two_elements_does_too(values, data):
    t = torch.tensor(values, dtype=torch.float32)
    base = fingerprint64(t)
    e = data.draw(st.integers(0, len(values) - 1))
    b = data.draw(st.integers(0, 31))
    c = t.clone()
    flip_bit(c, e, b)
    assert fingerprint64(c) != base
    i, j = 0, len(values) - 1
    if _raw(values[i], "float32") != _raw(values[j], "float32"):
        s = t.clone()
        s[i], s[j] = t[j], t[i]
        assert fingerprint64(s) != base


def test_fingerprint_of_nothing_is_zero_and_non_tensors_are_rejected():
    assert fingerprint64([]) == 0 and fingerprint64(torch.zeros(0)) == 0
    with pytest.raises(ValueError, match="torch tensors"):
        fingerprint64([1.0, 2.0])


# ----- detectors -----
def test_the_fingerprint_names_the_odd_one_out_only_with_a_majority():
    assert dt.fingerprint_alarm(3, {0: 5, 1: 5, 2: 5}) is None
    a = dt.fingerprint_alarm(3, {0: 5, 1: 5, 2: 9})
    assert (a.detector, a.step, a.suspect, a.window) == ("fingerprint", 3, 2, 0)
    two = dt.fingerprint_alarm(3, {0: 5, 2: 9})
    assert two.suspect is None and "no majority" in two.reason
    split = dt.fingerprint_alarm(3, {0: 1, 1: 2, 2: 3, 3: 3})
    assert split.suspect is None
    with pytest.raises(ValueError, match="two or more replicas"):
        dt.fingerprint_alarm(3, {0: 5})


def test_a_detector_that_cannot_run_says_why():
    assert "1" in dt.unavailable("fingerprint", 1) and "replica" in dt.unavailable("replay", 1)
    assert dt.unavailable("fingerprint", 2) is None and dt.unavailable("loss", 1) is None
    assert SdcLabConfig(replicas=1).unavailable().keys() == {"fingerprint", "replay"}
    assert SdcLabConfig(replicas=2).unavailable() == {}
    with pytest.raises(ValueError, match="detector must be one of"):
        dt.unavailable("checksum", 3)


def test_the_running_check_follows_its_moving_average_and_flags_spikes_and_non_finite_values():
    c = dt.RunningCheck("loss", factor=10.0, warmup=2, decay=0.5)
    assert c.check(1, {0: math.nan, 1: 1.0}).suspect == 0  # not finite: flagged from the first step
    assert c.check(1, {0: 4.0, 1: 2.0, 2: 3.0}) is None  # median 3
    assert c.check(2, {0: 1.0, 1: 1.0, 2: 1.0}) is None  # 0.5 * 3 + 0.5 * 1
    assert c.estimate == pytest.approx(2.0) and c.seen == 2
    assert c.check(3, {0: 19.9, 1: 1.0, 2: 1.0}) is None  # below 10 x 2 ...
    spike = c.check(4, {0: 1.0, 1: 80.0, 2: 1.0}, servers={0: 0, 1: 0, 2: 2})
    assert spike.suspect == 0 and spike.window == 1 and "exceeds 10" in spike.reason  # shard 1 is served by rank 0
    assert c.check(5, {0: 90.0, 1: 80.0, 2: 1.0}).suspect is None  # averaged into several: no single suspect
    state = c.state()
    c.check(6, {0: 1.0, 1: 1.0, 2: 1.0})
    c.restore(state)
    assert c.state() == state
    with pytest.raises(ValueError, match="factor must be a finite number > 1"):
        dt.RunningCheck("loss", factor=1.0)
    with pytest.raises(ValueError, match="detector must be"):
        dt.RunningCheck("fingerprint", factor=2.0)


def test_replay_checkers_never_check_themselves():
    assert dt.checkers({0: 0, 1: 1, 2: 2}) == {0: 1, 1: 2, 2: 0}
    assert dt.checkers({0: 0, 1: 0, 2: 2}) == {0: 2, 1: 2, 2: 0}
    assert dt.checkers({0: 0, 1: 0}) == {}
    assert dt.arbiter(1, 2, [0, 1, 2]) == 0 and dt.arbiter(0, 2, [0, 2]) is None


def test_replay_with_an_arbiter_blames_the_rank_every_mismatch_points_at():
    servers = {0: 0, 1: 1, 2: 2}
    good = {0: 10, 1: 11, 2: 12}
    # rank 1 miscomputes: its own gradient (shard 1) and its replay of shard 0 are both off
    grad = {0: 10, 1: 99, 2: 12}
    replay = {0: 98, 1: 11, 2: 12}  # shard 0 replayed on rank 1 (wrong), shard 1 on rank 2 (right)
    a = dt.replay_alarm(8, grad, replay, servers, arbiter_fps={0: 10, 1: 11}, every=4)
    assert (a.suspect, a.window) == (1, 3) and "blames rank 1" in a.reason
    assert dt.replay_alarm(8, good, good, servers) is None
    two = dt.replay_alarm(8, {0: 10, 1: 99}, {0: 98, 1: 11}, {0: 0, 1: 1})
    assert two.suspect is None and "two replicas" in two.reason


def test_rewind_goes_to_the_newest_snapshot_older_than_the_corruption_can_be():
    steps = [4, 6, 8]
    assert dt.rewind_target(steps, dt.Alarm("fingerprint", 9, 1, "", 0)) == 8
    assert dt.rewind_target(steps, dt.Alarm("loss", 9, 1, "", 1)) == 6
    assert dt.rewind_target(steps, dt.Alarm("replay", 8, 1, "", 3)) == 4
    assert dt.rewind_target(steps, dt.Alarm("replay", 8, 1, "", 4)) is None  # every kept snapshot may be corrupt
    assert [dt.window(d, 4) for d in dt.DETECTORS] == [0, 1, 0, 3]


def test_an_excluded_ranks_shards_go_to_the_least_loaded_healthy_rank():
    assert dt.reassign({0: 0, 1: 1, 2: 2}, 1) == {0: 0, 1: 0, 2: 2}
    assert dt.reassign({0: 0, 1: 0, 2: 2, 3: 3}, 0) == {0: 2, 1: 3, 2: 2, 3: 3}
    assert dt.reassign({0: 0, 1: 0}, 0) == {0: 0, 1: 0}  # nobody to hand it to


# ----- the config -----
@pytest.mark.parametrize("kw, message", [
    ({"flips": [Flip("param", 3, bit=32)]}, r"flips\[0\]\.bit must be an integer in \[0, 31\] \(the bits of float32"),
    ({"flips": [Flip("param", 3, rank=3)]}, r"flips\[0\]\.rank must be an integer in \[0, 2\]"),
    ({"flips": [Flip("param", 17)]}, r"flips\[0\]\.step must be an integer in \[1, steps=16\]"),
    ({"flips": [Flip("param", 3), Flip("grad", 3)]}, r"flips\[1\]\.step must be > 3"),
    ({"flips": [Flip("grad", 3, element=577)]}, r"flips\[0\]\.element must be an integer in \[0, 576\]"),
    ({"flips": [("param", 0)]}, r"flips\[0\]\.step must be an integer >= 1"),
    ({"flips": [("memory", 3)]}, r"flips\[0\]\.target must be one of"),
    ({"flips": [("grad", 3, 0, -1)]}, r"flips\[0\]\.bit must be an integer >= 0"),
    ({"replicas": 0}, r"replicas must be an integer >= 1"),
    ({"keep": 0}, r"keep must be an integer >= 1"),
    ({"detectors": ("fingerprint", "crc")}, r"detectors\[1\] must be one of"),
    ({"detectors": "loss"}, r"detectors must be a sequence"),
    ({"loss_factor": 1.0}, r"loss_factor must be a finite number > 1"),
    ({"dtype": "int8"}, r"dtype must be one of"),
])
def test_every_injection_and_setting_is_validated_naming_it(kw, message):
    with pytest.raises(ValueError, match=message):
        SdcLabConfig(**kw)


def test_flip_records_refuse_what_the_lab_cannot_mean():
    with pytest.raises(ValueError, match="persistent applies to target 'grad'"):
        Flip("param", 3, persistent=True)
    with pytest.raises(ValueError, match="element must be 0 for target 'loss'"):
        Flip("loss", 3, element=2)
    assert SdcLabConfig(dtype="float64", flips=[Flip("param", 2, bit=63)]).flips[0].bit == 63


def test_the_config_round_trips_through_the_json_the_job_reads():
    cfg = SdcLabConfig(replicas=2, flips=[Flip("grad", 5, rank=1, bit=0, persistent=True)], recover=False)
    assert SdcLabConfig.from_json(cfg.to_json()) == cfg
    assert cfg.params == 16 * 32 + 32 + 32 + 1


# ----- the committed benchmark and the floor's SDC term -----
def _sdc_term_closed_form(day):
    """The model's SDC term written out (below saturation): lambda (1 - i) s_sdc (D + S + R + tau_p / 2 + L)."""
    f = day.floor_budget
    m = next(x for x in f.modes if x.mode == "sdc")
    assert m.persisted and f.busy_share < 1 and f.persisted_interval_min is not None
    return lambda lat: f.failures_per_day * (1 - f.idle_share) * m.share * (
        m.detect + m.reschedule + m.reload + f.persisted_interval_min / 2 + lat)


def test_notebook_14s_sdc_terms_are_the_models_closed_form_at_the_committed_latencies():
    """Every SDC term notebook 14 speaks, recomputed from the committed JSON and the day's own inputs: each
    detector on its own (the largest latency among the cases it caught; the replay's mean over its period),
    plus the half step of the fault's own step, times the scenario's step; all four (the slowest first
    catch); the assumed hour (the course's own term)."""
    import json

    from course_lib import Scenario
    from course_lib import floor as fl
    from course_lib.answer import answer
    from course_lib.sdclab.results import SDCLAB_JSON, load_sdc_benchmark

    raw = json.loads(SDCLAB_JSON.read_text())
    sc = Scenario()
    after = answer(sc, spread_draws=0).after
    closed = _sdc_term_closed_form(after)
    expected = {}
    for d in dt.DETECTORS:
        seen = [c["latency"][d] for c in raw["cases"] if c["latency"][d] is not None]
        if seen:
            expected[d] = raw["latency_steps"]["replay_mean"] if d == "replay" else max(seen)
    b = load_sdc_benchmark()
    rows = b.sdc_terms(after, sc.step_min)
    assert {r.detector: r.steps for r in rows} == expected
    for r in rows:
        lat = (expected[r.detector] + 0.5) * sc.step_min
        assert r.latency_min == pytest.approx(lat) and r.minutes_per_day == pytest.approx(closed(lat))
        assert set(r.cases) == {c["case"] for c in raw["cases"] if c["latency"][r.detector] is not None}
    first = [min((v, dt.DETECTORS.index(d), d) for d, v in c["latency"].items() if v is not None) for c in raw["cases"]
             if any(v is not None for v in c["latency"].values())]
    slowest = max(raw["latency_steps"]["replay_mean"] if d == "replay" else v for v, _, d in first)
    assert b.latency_min(sc.step_min) == pytest.approx((slowest + 0.5) * sc.step_min)
    assert fl.sdc_minutes_per_day(after, b.latency_min(sc.step_min)) == pytest.approx(closed((slowest + 0.5) * sc.step_min))
    assert closed(sc.modes.sdc_latency_min) == pytest.approx(fl.per_mode(after)["sdc"])  # the hour: the course's floor
    assert closed(0.0) < min(r.minutes_per_day for r in rows) < closed(sc.modes.sdc_latency_min)
    with pytest.raises(ValueError, match="step_min must be"):
        b.latency_min(0.0)


def test_the_committed_detection_table_holds_together():
    from course_lib.sdclab.results import load_sdc_benchmark

    b = load_sdc_benchmark()
    assert b.raw["all_recovered_bit_identical"] and b.false_alarms["by_detector"] == {d: 0 for d in dt.DETECTORS}
    for c in b.cases:
        seen = {d: v for d, v in c["latency"].items() if v is not None}
        assert (c["first"] is None) == (not seen)
        if seen:
            assert seen[c["first"]] == min(seen.values())
        if c["recover"]["detector"]:  # recovery acted on a detector the watching run also saw
            assert c["recover"]["detector"] in seen and c["recover"]["bit_identical"] and c["recover"]["suspect"] == c["rank"]
        if c["target"] == "param":  # every weight flip: the fingerprint, the same step
            assert c["latency"]["fingerprint"] == 0
        else:  # the all-reduce hands a gradient flip to every replica alike; a loss flip never touches the weights
            assert c["latency"]["fingerprint"] is None
    invisible = b.invisible()
    assert invisible and all(c["target"] in ("grad", "loss") and not c["persistent"] for c in invisible)
    assert all(c["latency"]["replay"] is not None for c in b.cases if c["persistent"])
    sweep = [x["latency"] for x in b.replay_sweep]
    assert sorted(sweep) == list(range(len(sweep))) and b.raw["latency_steps"]["replay_mean"] == pytest.approx(statistics.fmean(sweep))
    worst = max(b.raw["latency_steps"]["replay_mean"] if d == "replay" else steps for _, d, steps in b.caught())
    assert b.latency_steps() == worst and b.latency_steps(("fingerprint",)) == 0
    assert b.latency_min(0.5) == pytest.approx(0.5 * b.latency_steps() + 0.25)  # the half step of the fault's own step
    assert all(x["bytes_per_rank"] == 8 for x in b.fingerprint_cost)
