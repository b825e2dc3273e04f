"""Fast tests of the fault-injection lab's pure parts: settings, event log, stage extraction.

The torchrun runs themselves are in tests/test_faultlab_reliability.py (marked slow).
"""
import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.faultlab import (
    STAGE_NAMES,
    Failure,
    LabConfig,
    RestartResult,
    restart_stages,
    run_lab,
    same_final_state,
    to_restart_stages,
)
from course_lib.restart import RestartStages


# ----- settings -----
@pytest.mark.parametrize(
    "kw, name",
    [
        ({"steps": 0}, "steps"),
        ({"ckpt_every": -1}, "ckpt_every"),
        ({"collective_timeout_s": 0}, "collective_timeout_s"),
        ({"monitor_interval_s": float("nan")}, "monitor_interval_s"),
        ({"snapshot": "tape"}, "snapshot"),
        ({"step_compute_s": -0.1}, "step_compute_s"),
        ({"state_mb": -1}, "state_mb"),
        ({"nproc": 1}, "nproc"),
        ({"keep": 1}, "keep"),
        ({"failures": "kill"}, "failures"),
        ({"failures": [("kill", 30)]}, r"failures\[0\].step"),
        ({"failures": [("kill", 5, 2)]}, r"failures\[0\].rank"),
        ({"failures": [("kill", 9), ("kill", 8)]}, r"failures\[1\].step"),
        ({"failures": [("kill_in_ckpt", 6)]}, r"failures\[0\].step must be a multiple of ckpt_every"),
        ({"failures": [("explode", 6)]}, "kind"),
        ({"failures": [("hang", 6)], "collective_timeout_s": 1800}, "collective_timeout_s"),
    ],
)
def test_bad_settings_are_rejected_naming_the_parameter(kw, name):
    with pytest.raises(ValueError, match=name):
        LabConfig(**kw)


def test_run_lab_validates_before_starting_anything(tmp_path):
    with pytest.raises(ValueError, match="^config must be a LabConfig"):
        run_lab({"steps": 4}, run_dir=tmp_path)
    with pytest.raises(ValueError, match="^timeout_s"):
        run_lab(LabConfig(steps=4), timeout_s=0, run_dir=tmp_path)
    assert not list(tmp_path.iterdir())  # nothing written, nothing started


def test_the_default_run_folder_is_removed_when_the_process_exits():
    import subprocess
    import sys
    from pathlib import Path

    code = "from course_lib.labkit import temporary_run_dir as t; d = t('faultlab'); (d / 'f').write_text('x'); print(d)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    made = Path(out.stdout.strip())
    assert made.name.startswith("faultlab-") and not made.exists()


def test_failure_progress_and_writer_rank():
    assert Failure("kill", 7).progress_before == 6
    assert Failure("hang", 7, 0).progress_before == 6
    assert Failure("kill_in_ckpt", 8, 1).progress_before == 8
    assert Failure("kill_in_ckpt", 8, 1).rank == 0  # the checkpoint writer is rank 0
    assert Failure.coerce({"kind": "kill", "step": 3}) == Failure("kill", 3, 1)


failure_lists = st.lists(st.sampled_from(["kill", "hang", "corrupt_ckpt"]), max_size=4).map(
    lambda kinds: tuple(Failure(k, 3 * (i + 1), i % 2) for i, k in enumerate(kinds))
)


@settings(max_examples=40, deadline=None)
@given(
    steps=st.integers(12, 200),
    every=st.integers(1, 12),
    timeout=st.floats(0.1, 600),
    monitor=st.floats(0.01, 30),
    snapshot=st.sampled_from(["disk", "memory"]),
    failures=failure_lists,
)
def test_config_json_round_trip(steps, every, timeout, monitor, snapshot, failures):
    cfg = LabConfig(steps=steps, ckpt_every=every, collective_timeout_s=timeout, monitor_interval_s=monitor,
                    snapshot=snapshot, failures=failures)
    assert LabConfig.from_json(cfg.to_json()) == cfg
    assert cfg.max_restarts == len(failures)


# ----- comparing two runs' final states -----
def _final(tmp_path, name, *, rng_bump=None, ranks=2):
    """A RestartResult whose final file holds a fixed state; ``rng_bump`` alters one byte of that rank's RNG state."""
    import torch

    from course_lib.checkpoint.safe import save_checkpoint

    gen = torch.Generator().manual_seed(3)
    model = {"0.weight": torch.randn(4, 3, generator=gen), "0.bias": torch.randn(4, generator=gen)}
    optim = {"state": {0: {"momentum_buffer": torch.randn(4, 3, generator=gen)}}, "param_groups": [{"lr": 0.05, "params": [0]}]}
    rng = [torch.Generator().manual_seed(100 + r).get_state() for r in range(ranks)]
    if rng_bump is not None:
        rng[rng_bump][-1] ^= 1
    path = tmp_path / f"{name}.pt"
    save_checkpoint({"step": 24, "applied": 24, "model": model, "optim": optim, "rng": rng}, path)
    return RestartResult(config=LabConfig(), events=[], run_dir=tmp_path, wall_s=0.0, restarts=[], final_digest=name,
                         final_path=path, applied=24, returncode=0)


def test_same_final_state_compares_every_ranks_rng_state(tmp_path):
    ref = _final(tmp_path, "ref")
    assert same_final_state(ref, _final(tmp_path, "same")) == {
        "params": True, "optimizer": True, "rng": True, "applied": (24, 24), "digest": False}
    for other in (_final(tmp_path, "rank0", rng_bump=0), _final(tmp_path, "rank1", rng_bump=1)):
        cmp = same_final_state(ref, other)
        assert cmp["params"] and cmp["optimizer"] and not cmp["rng"]
    # a final state that keeps fewer RNG states than the job has ranks does not compare equal
    assert not same_final_state(_final(tmp_path, "one", ranks=1), _final(tmp_path, "one'", ranks=1))["rng"]


# ----- stages from the event log -----
def _synthetic_log(*, agent=True, cut_short=False, resumed=4, pre=6, t_fail=100.0):
    """A hand-made log of one kill at step 7: every boundary time is known."""
    ev = []

    def add(t, name, rank, gen, **kw):
        ev.append({"t": t, "ev": name, "rank": rank, "gen": gen, "pid": 1, **kw})

    for r in (0, 1):
        add(90.0 + r * 0.01, "pg_ready", r, 0)
        add(90.5, "state_loaded", r, 0, step=0, source="init")
        for s in range(1, pre + 1):
            add(90.5 + 0.1 * s + r * 0.001, "step_done", r, 0, step=s)
    add(t_fail, "inject", 1, 0, kind="kill", step=pre + 1, progress=pre)
    add(t_fail + 0.05, "noticed", 0, 0, reason="RuntimeError: Connection reset by peer")
    if agent:
        add(t_fail + 0.3, "agent_noticed", -1, 0, exitcodes={"0": 1, "1": -9})
    if cut_short:
        return ev
    for r in (0, 1):
        add(t_fail + 4.0 + r * 0.2, "pg_ready", r, 1)  # all running at t_fail + 4.2
        add(t_fail + 4.5 + r * 0.1, "state_loaded", r, 1, step=resumed, source="disk")  # loaded at + 4.6
        for k, s in enumerate(range(resumed + 1, pre + 3)):
            add(t_fail + 4.6 + 0.25 * (k + 1) + r * 0.01, "step_done", r, 1, step=s)
    return ev


def test_stages_from_a_known_log():
    (m,) = restart_stages(_synthetic_log())
    assert m.kind == "kill" and m.noticed_by == "agent"
    assert m.detect_s == pytest.approx(0.3)
    assert m.peer_noticed_s == pytest.approx(0.05)
    assert m.reschedule_s == pytest.approx(4.2 - 0.3)
    assert m.reload_s == pytest.approx(4.6 - 4.2)
    # back at step 6 on both ranks: 2 steps after loading step 4, the slower rank at +0.01
    assert m.rewind_s == pytest.approx(0.5 + 0.01)
    assert (m.pre_failure_step, m.resumed_step, m.steps_recomputed) == (6, 4, 2)
    assert m.step_time_s == pytest.approx(0.25)
    assert m.total_s == pytest.approx(4.6 + 0.51)
    assert list(m.stages_s()) == list(STAGE_NAMES)
    assert sum(m.stages_s().values()) == pytest.approx(m.total_s)


def test_peer_notice_is_used_without_agent_events():
    (m,) = restart_stages(_synthetic_log(agent=False))
    assert m.noticed_by == "peer"
    assert m.detect_s == pytest.approx(0.05)


def test_zero_rewind_when_the_checkpoint_is_the_pre_failure_step():
    (m,) = restart_stages(_synthetic_log(resumed=6))
    assert m.steps_recomputed == 0 and m.rewind_s == 0.0


def test_a_restart_that_never_came_back_is_left_out():
    assert restart_stages(_synthetic_log(cut_short=True)) == []
    assert restart_stages([]) == []


@settings(max_examples=50, deadline=None)
@given(t_fail=st.floats(1e3, 2e9), resumed=st.integers(0, 6))
def test_stages_add_up_to_the_restart_time(t_fail, resumed):
    (m,) = restart_stages(_synthetic_log(t_fail=t_fail, resumed=resumed))
    assert all(v >= 0 for v in m.stages_s().values())
    assert sum(m.stages_s().values()) == pytest.approx(m.total_s)


def test_conversion_to_the_course_restart_stages_is_in_minutes():
    (m,) = restart_stages(_synthetic_log())
    rs = to_restart_stages(m)
    assert isinstance(rs, RestartStages)
    assert rs.detect == pytest.approx(m.detect_s / 60)
    assert rs.total == pytest.approx(m.total_s / 60)


# ----- the committed benchmark and the figures -----
def test_load_benchmark_reads_medians_and_ratios(tmp_path):
    from course_lib.faultlab import load_benchmark

    stages = {"detect": 30.0, "reschedule": 4.0, "reload": 1.0, "rewind": 15.0}
    tuned = {"detect": 1.0, "reschedule": 4.0, "reload": 0.1, "rewind": 0.5}
    payload = {
        "scale": 20, "machine": {"cpu": "x"},
        "default_like": {"collective_timeout_s": 30.0}, "tuned": {"collective_timeout_s": 1.0},
        "summary": [
            {"scenario": "hang", "setting": "default-like", "reps": 3, **stages, "total_s": 50.0},
            {"scenario": "hang", "setting": "tuned", "reps": 3, **tuned, "total_s": 5.6},
        ],
        "ratios": {"hang": 50.0 / 5.6},
    }
    p = tmp_path / "b.json"
    p.write_text(json.dumps(payload))
    b = load_benchmark(p)
    assert b.stages("hang", "default-like") == stages
    assert b.medians[("hang", "tuned")]["reps"] == 3
    assert b.ratios["hang"] == pytest.approx(50 / 5.6)
    with pytest.raises(FileNotFoundError, match="faultlab_bench"):
        load_benchmark(tmp_path / "missing.json")


def test_timeline_and_bars_draw_every_stage():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from course_lib.plots.faultlab import restart_timeline, stage_bars_seconds

    ev = _synthetic_log()
    restarts = restart_stages(ev)
    ax = restart_timeline(ev, restarts)
    labels = {t.get_text() for t in ax.get_legend().get_texts()}
    assert set(STAGE_NAMES) <= labels
    ax = restart_timeline(ev, restarts, zoom=0)
    lo, hi = ax.get_xlim()
    assert hi - lo == pytest.approx(restarts[0].total_s + 2.0)
    ax = stage_bars_seconds({"a": restarts[0].stages_s(), "b": {"detect": 1.0, "reschedule": 2.0}})
    assert len(ax.patches) == 6
    plt.close("all")


# ----- the in-process reference (course_lib.faultlab.reference), against an independent implementation -----
def _by_hand(cfg, steps):
    """The job's uninterrupted run written out independently of course_lib.faultlab (module doc of job.py): both
    ranks start from the seed's model; rank r's dropout stream is torch's generator seeded seed * 1000 + 17 + r;
    its batch of step s is toy_batch(seed, s, r); the mean of the two ranks' gradients feeds SGD with momentum
    0.9 and lr 0.05 (buf = g at the first step, then 0.9 buf + g; w -= 0.05 buf). Functional forward, no
    optimizer object: params, momentum buffers, each rank's RNG state after the run, and every loss."""
    import torch

    from course_lib.labkit.toy import toy_batch, toy_model, toy_target

    w = [p.detach().clone() for p in toy_model(cfg.seed, cfg.features, cfg.hidden).parameters()]
    target = toy_target(cfg.seed, cfg.features)
    rngs = []
    for r in range(2):
        torch.manual_seed(cfg.seed * 1000 + 17 + r)
        rngs.append(torch.get_rng_state())
    bufs, losses = None, {}
    for step in range(1, steps + 1):
        grads = []
        for r in range(2):
            torch.set_rng_state(rngs[r])
            x, y = toy_batch(cfg.seed, step, r, cfg.batch, target)
            ps = [t.clone().requires_grad_() for t in w]
            h = torch.nn.functional.dropout(torch.relu(x @ ps[0].T + ps[1]), 0.1, training=True)
            loss = ((h @ ps[2].T + ps[3] - y) ** 2).mean()
            grads.append(torch.autograd.grad(loss, ps))
            rngs[r] = torch.get_rng_state()
            losses[(step, r)] = loss.item()
        g = [(a + b) / 2 for a, b in zip(*grads)]
        bufs = [gi.clone() for gi in g] if bufs is None else [0.9 * b + gi for b, gi in zip(bufs, g)]
        w = [wi - 0.05 * b for wi, b in zip(w, bufs)]
    return w, bufs, rngs, losses


@pytest.mark.parametrize("kw", [{}, {"seed": 3, "batch": 8, "features": 5, "hidden": 7}])
def test_the_in_process_reference_is_the_job_written_out_by_hand(kw, tmp_path):
    """reference_run against _by_hand: equal to float32 rounding. The two differ only in the order of a few float32
    operations per step (autograd of a functional forward, the mean as (a + b) / 2 against (a + b) /= 2, momentum
    as 0.9 b + g): a few ulp (1.2e-7 each) per step, grown by at most the momentum's 1 / (1 - 0.9) = 10 over
    6 steps, so well within rtol 1e-5 (atol 1e-7 for values near zero). The RNG states must be equal exactly (the
    same number of draws), the step count and the events exact. Bit-exactness against torchrun is the lab
    tests' (tests/test_faultlab_guard.py)."""
    import torch

    from course_lib.checkpoint.safe import load_checkpoint
    from course_lib.faultlab import reference_run

    cfg = LabConfig(steps=6, ckpt_every=3, failures=[("kill", 4)], **kw)
    before = torch.get_rng_state()
    run_dir = tmp_path / "not" / "yet"  # made, parents too
    t0 = time.monotonic()
    res = reference_run(cfg, run_dir=run_dir)
    took = time.monotonic() - t0
    assert torch.equal(torch.get_rng_state(), before)  # the caller's generator untouched
    assert 0 < res.wall_s <= took
    w, bufs, rngs, losses = _by_hand(cfg, 6)
    st = load_checkpoint(run_dir / "final.pt")
    assert res.final_path == run_dir / "final.pt" and set(st) == {"step", "applied", "model", "optim", "rng"}
    assert (st["step"], st["applied"], res.applied, res.returncode, res.restarts) == (6, 6, 6, 0, [])
    assert res.config == cfg.replace(failures=()) and res.pids == frozenset()
    names = ["0.weight", "0.bias", "3.weight", "3.bias"]
    assert list(st["model"]) == names
    for name, mine in zip(names, w):
        assert torch.allclose(st["model"][name], mine, rtol=1e-5, atol=1e-7), name
    assert sorted(st["optim"]["state"]) == [0, 1, 2, 3]
    for i, b in enumerate(bufs):
        assert torch.allclose(st["optim"]["state"][i]["momentum_buffer"], b, rtol=1e-5, atol=1e-7), i
    (group,) = st["optim"]["param_groups"]
    assert (group["lr"], group["momentum"], group["params"]) == (0.05, 0.9, [0, 1, 2, 3])
    assert len(st["rng"]) == 2 and all(torch.equal(a, b) for a, b in zip(st["rng"], rngs))
    steps = [e for e in res.events if e["ev"] == "step_done"]
    assert [(e["step"], e["rank"], e["gen"]) for e in steps] == [(s, r, 0) for s in range(1, 7) for r in (0, 1)]
    assert all(e["loss"] == pytest.approx(losses[(e["step"], e["rank"])], rel=1e-5) for e in steps)
    (done,) = [e for e in res.events if e["ev"] == "done"]
    assert (done["rank"], done["gen"], done["step"], done["applied"], done["digest"]) == (0, 0, 6, 6, res.final_digest)
    assert len(res.final_digest) == 64 and res.final_digest != reference_run(cfg.replace(steps=5)).final_digest


def test_the_in_process_reference_restores_torchs_settings_and_refuses_what_it_cannot_reproduce(monkeypatch):
    import torch

    from course_lib.faultlab import job, reference_state

    seen = []

    def spy(*args):  # the job's own step function, recording the thread count it runs with
        seen.append(torch.get_num_threads())
        return forward_backward(*args)

    forward_backward = job.forward_backward
    monkeypatch.setattr(job, "forward_backward", spy)
    threads, dtype = torch.get_num_threads(), torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(3)  # the reference runs on one thread, as the job: the caller's 3 must come back
    try:
        st, _ = reference_state(LabConfig(steps=2))
        assert seen == [1] * 4  # 2 steps x 2 ranks, each on one thread
        assert st["model"]["0.weight"].dtype == torch.float32  # the job's dtype, whatever the caller's default
        assert torch.get_default_dtype() == torch.float64 and torch.get_num_threads() == 3
    finally:
        torch.set_default_dtype(dtype)
        torch.set_num_threads(threads)
    with pytest.raises(ValueError, match=r"^nproc must be 2 for the in-process reference \(got 3\)"):
        reference_state(LabConfig(nproc=3))
    with pytest.raises(ValueError, match="^config must be a LabConfig"):
        reference_state({"steps": 4})
    from types import SimpleNamespace

    fields = {k: getattr(LabConfig(), k) for k in ("steps", "seed", "batch", "features", "hidden", "nproc")}
    with pytest.raises(ValueError, match="^config must be a LabConfig"):  # the fields alone do not make a lab config
        reference_state(SimpleNamespace(**fields))
