#!/usr/bin/env python
"""Benchmark: which cheap detector catches which silent corruption, after how many steps; false alarms on
clean runs; what the fingerprint costs per step (notebook 14).

    .venv/bin/python benchmarks/sdclab_bench.py            # one torchrun launch of 3 ranks, every trial (~3 min)
    .venv/bin/python benchmarks/sdclab_bench.py --clean-runs 2 --clean-steps 100

Every trial runs in one torchrun launch (course_lib.sdclab.run_sdclab_trials) on the lab kit's toy job,
3 data-parallel replicas on gloo, snapshots every 2 steps (3 kept), replay every 4 steps:

* **detection**: each case (a flip of one bit of one element: a weight after the update, a gradient before
  the all-reduce, once or from then on, the reported loss; the top and the lowest exponent bit and mantissa
  bit 0) runs twice: watching (every detector logs its alarms, nothing is done; the latency of each is the
  steps from the flip to its first alarm, within a horizon) and recovering (the first alarm rewinds, the
  suspect is excluded; does the run end bit-identical to the clean one?);
* **replay sweep**: a persistent low-bit compute fault started at each offset of the replay period: the
  replay's mean latency;
* **false alarms**: clean runs of several seeds, every alarm counted; the loss and gradient-norm checks
  re-run offline on the same logged values at other thresholds (with the same class the job uses), and on
  the detection cases, so the table shows what a lower threshold buys and costs;
* **fingerprint cost**: the digest alone and its 8-byte all-gather alone (each after a barrier), medians, on models of
  577, 1.05 M and 4.2 M parameters; the toy job's step for scale.

Writes ``benchmarks/results/sdclab.{md,csv,json}``.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from machine import machine, shown_command, write_tables  # benchmarks/ (on sys.path when run as a script)

from course_lib.sdclab import DETECTORS, Flip, SdcLabConfig, named_bit, run_sdclab_trials
from course_lib.sdclab.detectors import RunningCheck
from course_lib.sdclab.fingerprint import FINGERPRINT_BYTES

OUT = Path(__file__).resolve().parent / "results"
FLIP_STEP, HORIZON, RANK = 30, 10, 1
BASE = SdcLabConfig(replicas=3, steps=FLIP_STEP + HORIZON, snapshot_every=2, keep=3, replay_every=4)
#: (case, target, bit name, persistent, step)
CASES = [
    ("memory, top exponent bit", "param", "exponent_top", False, FLIP_STEP),
    ("memory, lowest exponent bit", "param", "exponent_low", False, FLIP_STEP),
    ("memory, mantissa bit 0", "param", "mantissa_low", False, FLIP_STEP),
    ("compute once, top exponent bit", "grad", "exponent_top", False, FLIP_STEP),
    ("compute once, lowest exponent bit", "grad", "exponent_low", False, FLIP_STEP),
    ("compute once, mantissa bit 0", "grad", "mantissa_low", False, FLIP_STEP),
    ("compute once on a replayed step, mantissa bit 0", "grad", "mantissa_low", False, 32),
    ("compute from then on, top exponent bit", "grad", "exponent_top", True, FLIP_STEP),
    ("compute from then on, lowest exponent bit", "grad", "exponent_low", True, FLIP_STEP),
    ("compute from then on, mantissa bit 0", "grad", "mantissa_low", True, FLIP_STEP),
    ("loss, top exponent bit", "loss", "exponent_top", False, FLIP_STEP),
    ("loss, mantissa bit 0", "loss", "mantissa_low", False, FLIP_STEP),
]
SWEEP = range(FLIP_STEP - 1, FLIP_STEP + 3)  # one replay period of offsets
FACTORS = (2.0, 3.0, 5.0, 10.0, 20.0)
PROBES = ((16, 32), (1024, 1024), (2048, 2048))  # (features, hidden): 577, 1.05 M, 4.2 M parameters


def flip_of(target, bit_name, persistent, step) -> Flip:
    return Flip(target, step, rank=RANK, bit=named_bit(BASE.dtype, bit_name), persistent=persistent)


def offline_alarms(res, detector: str, factor: float) -> list:
    """Steps at which ``detector`` (loss or grad_norm) at ``factor`` raises an alarm on the run's logged values."""
    check = RunningCheck(detector, factor, BASE.warmup)
    key = "losses" if detector == "loss" else "norms"
    return [e["step"] for e in res.steps if check.check(e["step"], dict(enumerate(e[key]))) is not None]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clean-runs", type=int, default=5)
    ap.add_argument("--clean-steps", type=int, default=200)
    ap.add_argument("--probe-repeats", type=int, default=30)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)

    trials, index = [], {}

    def add(key, cfg):
        index[key] = len(trials)
        trials.append(cfg)

    add("reference", BASE)
    for name, target, bit, persistent, step in CASES:
        f = flip_of(target, bit, persistent, step)
        add(("watch", name), BASE.replace(recover=False, flips=[f]))
        add(("recover", name), BASE.replace(flips=[f]))
    for step in SWEEP:
        add(("sweep", step), BASE.replace(recover=False, flips=[flip_of("grad", "mantissa_low", True, step)]))
    for seed in range(args.clean_runs):
        add(("clean", seed), BASE.replace(seed=seed, steps=args.clean_steps, recover=False))
    for f, h in PROBES:
        add(("probe", f, h), BASE.replace(features=f, hidden=h, steps=1, detectors=("fingerprint",),
                                          cost_probe=args.probe_repeats))
    print(f"{len(trials)} trials in one launch of {BASE.replicas} ranks ...", flush=True)
    results = run_sdclab_trials(trials, timeout_s=3600)
    get = {k: results[i] for k, i in index.items()}
    ref = get["reference"]

    cases, rows = [], []
    for name, target, bit, persistent, step in CASES:
        w, r = get[("watch", name)], get[("recover", name)]
        inj = w.injections[0]
        lat = w.latencies()
        first = min(lat, key=lambda d: (lat[d], DETECTORS.index(d))) if lat else None
        acted = next((a for a in r.alarms if a["acted"]), None)
        rw = r.rewinds[0] if r.rewinds else {}
        case = {
            "case": name, "target": target, "bit": inj["bit"], "bit_name": bit, "persistent": persistent, "step": step,
            "rank": RANK, "before": inj["before"], "after": inj["after"],
            "latency": {d: lat.get(d) for d in DETECTORS}, "first": first,
            "corrupted_at_end": w.final_digest != ref.final_digest,
            "recover": {"detector": acted and acted["detector"], "step": acted and acted["step"],
                        "suspect": acted and acted["suspect"], "rewound_to": rw.get("to"), "excluded": r.excluded,
                        "outcome": r.outcome, "bit_identical": r.final_digest == ref.final_digest},
        }
        cases.append(case)
        rows.append({"case": name, "target": target, "bit": inj["bit"], "persistent": persistent, "step": step,
                     "before": inj["before"], "after": inj["after"],
                     **{f"{d}_latency_steps": lat.get(d, "") for d in DETECTORS}, "first_detector": first or "",
                     "corrupted_at_end_unrecovered": case["corrupted_at_end"],
                     "recovered_by": case["recover"]["detector"] or "", "suspect": case["recover"]["suspect"],
                     "rewound_to": rw.get("to", ""), "bit_identical_after_recovery": case["recover"]["bit_identical"]})

    sweep = [{"step": s, "latency": get[("sweep", s)].latencies().get("replay")} for s in SWEEP]
    caught_first: dict[str, list] = {}
    for c in cases:
        if c["first"] is not None:
            caught_first.setdefault(c["first"], []).append(c["latency"][c["first"]])
    latency_steps = {d: max(v) for d, v in caught_first.items()}
    if all(s["latency"] is not None for s in sweep):
        latency_steps["replay_mean"] = statistics.fmean(s["latency"] for s in sweep)

    clean = [get[("clean", s)] for s in range(args.clean_runs)]
    clean_steps = sum(len(c.steps) for c in clean)
    by_det = {d: sum(1 for c in clean for a in c.alarms if a["detector"] == d) for d in DETECTORS}
    sweep_f = {det: {str(f): {"false_alarms": sum(len(offline_alarms(c, det, f)) for c in clean),
                              "cases_caught": sum(1 for name, *_ in CASES
                                                  if any(s >= FLIP_STEP for s in offline_alarms(get[("watch", name)], det, f)))}
                     for f in FACTORS} for det in ("loss", "grad_norm")}

    probes = []
    for f, h in PROBES:
        p = get[("probe", f, h)].fingerprint_cost()["probe"]
        probes.append({**p, "bytes_per_rank": FINGERPRINT_BYTES, "ns_per_param": 1e9 * p["digest_s"] / p["params"],
                       "GB_per_s": p["param_bytes"] / p["digest_s"] / 1e9})
    toy_steps = [e["step_s"] for e in ref.steps]
    replay_steps = [e["step_s"] for e in ref.steps if e["step"] % BASE.replay_every == 0]
    plain_steps = [e["step_s"] for e in ref.steps if e["step"] % BASE.replay_every]
    toy_fp = [e["fp_s"] for e in ref.steps]
    toy_gather = [e["gather_s"] for e in ref.steps]

    payload = {
        "machine": machine(), "command": shown_command("benchmarks/sdclab_bench.py", sys.argv[1:] if argv is None else argv),
        "settings": {"replicas": BASE.replicas, "steps": BASE.steps, "flip_step": FLIP_STEP, "horizon": HORIZON,
                     "snapshot_every": BASE.snapshot_every, "keep": BASE.keep, "replay_every": BASE.replay_every,
                     "loss_factor": BASE.loss_factor, "grad_norm_factor": BASE.grad_norm_factor, "warmup": BASE.warmup,
                     "rank": RANK, "params": BASE.params, "dtype": BASE.dtype},
        "cases": cases, "replay_sweep": sweep, "latency_steps": latency_steps,
        "false_alarms": {"runs": args.clean_runs, "steps": clean_steps, "by_detector": by_det, "factor_sweep": sweep_f},
        "fingerprint_cost": probes,
        "toy_step": {"step_s": statistics.median(toy_steps), "replay_step_s": statistics.median(replay_steps),
                     "plain_step_s": statistics.median(plain_steps), "fp_digest_s": statistics.median(toy_fp),
                     "fp_gather_in_step_s": statistics.median(toy_gather)},
        "all_recovered_bit_identical": all(c["recover"]["bit_identical"] for c in cases if c["recover"]["detector"]),
    }
    write_tables(args.out, "sdclab", payload, rows, markdown(payload))
    print(markdown(payload))
    return 0


def _lat(v) -> str:
    return "-" if v is None else f"{v}"


def markdown(p: dict) -> str:
    s = p["settings"]
    m = p["machine"]
    lines = [
        "# SDC lab: which detector catches which corruption, how late, at what cost",
        "",
        f"`{p['command']}` on {m['cpu']} ({m['cores_usable']} of {m['cores']} cores usable, load {m['load_average_1min']}), "
        f"{m['date']}. {s['replicas']} data-parallel replicas of the lab kit's toy MLP ({s['params']} {s['dtype']} "
        f"parameters), gloo; one bit of element 0 flipped on rank {s['rank']} at step {s['flip_step']} (unless the case "
        f"says otherwise); snapshots every {s['snapshot_every']} steps, {s['keep']} kept; replay every {s['replay_every']} "
        f"steps; loss and gradient-norm checks at {s['loss_factor']:g} x and {s['grad_norm_factor']:g} x their running "
        f"estimate after {s['warmup']} steps.",
        "",
        "## Detection: steps from the flip to each detector's first alarm (watching, horizon "
        f"{s['horizon']} steps; - = never), and the recovery",
        "",
        "| case | value before -> after | fingerprint | loss | grad norm | replay | wrong at the end, unrecovered | "
        "recovered by (suspect) | rewound to | bit-identical |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in p["cases"]:
        L, r = c["latency"], c["recover"]
        rec = f"{r['detector']} (rank {r['suspect']})" if r["detector"] else "nothing noticed"
        lines.append(
            f"| {c['case']} (bit {c['bit']}, step {c['step']}) | {c['before']:.4g} -> {c['after']:.4g} | "
            + " | ".join(_lat(L[d]) for d in DETECTORS)
            + f" | {'yes' if c['corrupted_at_end'] else 'no'} | {rec} | {_lat(r['rewound_to'])} | "
            f"{'yes' if r['bit_identical'] else 'no'} |")
    sw = p["replay_sweep"]
    lines += ["", "Replay sweep (a persistent mantissa-bit-0 compute fault started at each step of one replay period): "
              + ", ".join(f"step {x['step']} -> {_lat(x['latency'])}" for x in sw)
              + (f"; mean {p['latency_steps']['replay_mean']:.2f} steps." if "replay_mean" in p["latency_steps"] else "."),
              "", "Worst latency of the cases each detector catches first (steps): "
              + ", ".join(f"{d} {v:g}" for d, v in p["latency_steps"].items()) + ".", ""]
    fa = p["false_alarms"]
    lines += ["## False alarms on clean runs", "",
              f"{fa['runs']} clean runs (seeds 0-{fa['runs'] - 1}), {fa['steps']} steps in all: "
              + ", ".join(f"{d} {n}" for d, n in fa["by_detector"].items()) + " alarms.", "",
              "The running checks at other thresholds, re-run offline on the same logged values (false alarms on the "
              f"clean runs; detection cases caught within the horizon, of {len(p['cases'])}):", "",
              "| threshold (x the running estimate) | " + " | ".join(fa["factor_sweep"]["loss"]) + " |",
              "|---|" + "---|" * len(fa["factor_sweep"]["loss"])]
    for det, by in fa["factor_sweep"].items():
        lines.append(f"| {det}: false alarms / cases caught | "
                     + " | ".join(f"{v['false_alarms']} / {v['cases_caught']}" for v in by.values()) + " |")
    t = p["toy_step"]
    lines += ["", "## What the fingerprint costs", "",
              "The digest alone and its all-gather alone (each after a barrier, so no rank waits on another), medians:", "",
              "| parameters | bytes read | digest | ns per parameter | GB/s | all-gather (bytes sent per rank) |",
              "|---|---|---|---|---|---|"]
    for x in p["fingerprint_cost"]:
        lines.append(f"| {x['params']:,} | {x['param_bytes']:,} | {1e3 * x['digest_s']:.3f} ms | {x['ns_per_param']:.2f} | "
                     f"{x['GB_per_s']:.2f} | {1e3 * x['gather_s']:.3f} ms ({x['bytes_per_rank']} B) |")
    lines += ["", f"In the toy job's step ({1e3 * t['step_s']:.1f} ms median; a replayed step {1e3 * t['replay_step_s']:.1f} ms, "
              f"another {1e3 * t['plain_step_s']:.1f} ms) the digest took {1e3 * t['fp_digest_s']:.3f} ms and its all-gather "
              f"{1e3 * t['fp_gather_in_step_s']:.3f} ms (that one includes waiting for the slowest rank).", "",
              f"Every case that was caught ended bit-identical to the clean run after recovery: {p['all_recovered_bit_identical']}.",
              ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
