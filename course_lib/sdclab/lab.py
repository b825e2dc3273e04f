"""``run_sdclab``: the SDC lab's job under torchrun with its bit flips, read back from its event log
(notebook 14).

    from course_lib.sdclab import Flip, SdcLabConfig, run_sdclab
    ref = run_sdclab(SdcLabConfig(replicas=3, steps=12))                   # never corrupted
    res = run_sdclab(ref.config.replace(flips=[Flip("param", 5, rank=2, bit=0)]))
    res.alarms[0]["detector"], res.alarms[0]["suspect"]    # 'fingerprint', 2 (the odd one out)
    res.rewinds[0]["to"], res.excluded                      # 4, [2]
    res.final_digest == ref.final_digest                    # True: bit-identical to the run that never failed

    watch = run_sdclab(ref.config.replace(recover=False, flips=[Flip("grad", 5, rank=1, bit=30)]))
    watch.latencies()                                        # {detector: steps from the flip to its first alarm}

Everything runs under the lab kit's :class:`~course_lib.labkit.Lab` (one deadline, every process killed
on the way out); the flips strike at the steps the job reaches (by state, never after a sleep).
"""
from __future__ import annotations

import json
import os
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..labkit import Lab, LabError, LabResult
from .spec import SdcLabConfig

__all__ = ["SdcResult", "run_sdclab", "run_sdclab_trials", "JOB_SCRIPT"]

JOB_SCRIPT = Path(__file__).with_name("job.py")


@dataclass
class SdcResult(LabResult):
    """A run of the SDC lab: the kit's :class:`~course_lib.labkit.LabResult` plus what the job logged.

    injections: the ``inject`` events (flip index, target, step, bit, element, value before / after).
    alarms: the ``alarm`` events (detector, step, suspect, reason, window, acted).
    rewinds: the ``rewind`` events (step, to, detector, suspect, excluded, servers, lost_steps).
    unavailable: {detector: why it could not run}. outcome: ``"done"`` or ``"unrecoverable"``.
    digests: {rank: sha256 of its final parameters and optimizer state} of the ranks still active.
    excluded: the physical ranks excluded. steps: the ``step_done`` events (rank 0's, or the lowest active).
    """

    injections: list = field(default_factory=list)
    alarms: list = field(default_factory=list)
    rewinds: list = field(default_factory=list)
    unavailable: dict = field(default_factory=dict)
    outcome: str = ""
    digests: dict = field(default_factory=dict)
    excluded: list = field(default_factory=list)
    steps: list = field(default_factory=list, repr=False)

    @property
    def final_digest(self) -> str | None:
        """The final state's digest when every active replica ends with the same state (else None)."""
        values = set(self.digests.values())
        return values.pop() if len(values) == 1 else None

    def first_alarms(self) -> dict:
        """{detector: the step of its first alarm}."""
        out = {}
        for a in self.alarms:
            out.setdefault(a["detector"], a["step"])
        return out

    def flip_alarms(self, flip: int = 0) -> list:
        """The alarms raised after flip ``flip`` first struck and before the next flip did (by time)."""
        first = {}
        for e in self.injections:
            first.setdefault(e["flip"], e["t"])
        if flip not in first:
            return []
        later = [t for i, t in first.items() if t > first[flip]]
        end = min(later) if later else float("inf")
        return [a for a in self.alarms if first[flip] <= a["t"] < end]

    def latencies(self, flip: int = 0) -> dict:
        """{detector: steps from flip ``flip``'s step to the detector's first alarm after it} (0: the same step)."""
        step = next((e["step"] for e in self.injections if e["flip"] == flip), None)
        out = {}
        for a in self.flip_alarms(flip):
            out.setdefault(a["detector"], a["step"] - step)
        return out

    def false_alarms(self) -> list:
        """Alarms raised before any flip struck (on a clean run: every alarm)."""
        first = self.injections[0]["t"] if self.injections else float("inf")
        return [a for a in self.alarms if a["t"] < first]

    def fingerprint_cost(self) -> dict:
        """Medians over the steps: the fingerprint's digest and its all-gather (s; the gather includes waiting
        for the slowest rank), the whole step (s), and the bytes each rank sent for it (one int64). With
        ``cost_probe`` the probe's medians (digest and gather alone, after a barrier) are added as ``probe``."""
        from .fingerprint import FINGERPRINT_BYTES

        probe = next((e for e in self.events if e["ev"] == "fingerprint_cost"), None)
        fp = [e["fp_s"] for e in self.steps if e.get("fp_s") is not None]
        ga = [e["gather_s"] for e in self.steps if e.get("gather_s") is not None]
        st = [e["step_s"] for e in self.steps]
        return {"digest_s": statistics.median(fp) if fp else None, "gather_s": statistics.median(ga) if ga else None,
                "step_s": statistics.median(st) if st else None, "bytes_per_rank": FINGERPRINT_BYTES if fp else 0,
                "steps_measured": len(fp),
                "probe": None if probe is None else {k: probe[k] for k in ("digest_s", "gather_s", "params", "param_bytes",
                                                                          "world", "repeats")}}


def _result(lab: Lab, config: SdcLabConfig, trial: int, world: int) -> SdcResult:
    events = [e for e in lab.events() if e.get("trial") == trial]
    done = [e for e in events if e["ev"] == "done"]
    if len(done) < world:
        raise LabError(f"trial {trial}: {len(done)} of {world} ranks logged 'done'; output tails:\n{lab.tail(3000)}")
    start = min(e["t"] for e in events if e["ev"] == "trial_start")
    active = [e for e in done if not e.get("idle")]
    return SdcResult(
        config=config, events=events, run_dir=lab.run_dir, wall_s=max(e["t"] for e in done) - start,
        output=lab.tail(3000), pids=frozenset(lab.pids),
        injections=[e for e in events if e["ev"] == "inject"], alarms=[e for e in events if e["ev"] == "alarm"],
        rewinds=[e for e in events if e["ev"] == "rewind"],
        unavailable={e["detector"]: e["reason"] for e in events if e["ev"] == "detector_unavailable"},
        outcome=active[0]["outcome"], digests={e["rank"]: e["digest"] for e in active if e["digest"] is not None},
        excluded=list(active[0]["excluded"]), steps=[e for e in events if e["ev"] == "step_done"])


def run_sdclab(config: SdcLabConfig = SdcLabConfig(), *, timeout_s: float = 120.0,
               run_dir: str | os.PathLike | None = None) -> SdcResult:
    """Run ``config``'s job on ``config.replicas`` ranks under torchrun (gloo on CPU) with its flips; return
    an :class:`SdcResult`. ``timeout_s`` bounds the whole run (:class:`~course_lib.labkit.LabError` past it,
    with the output tails); ``run_dir``: where the run's files go (default: a temporary folder)."""
    return run_sdclab_trials([config], timeout_s=timeout_s, run_dir=run_dir)[0]


def run_sdclab_trials(configs, *, timeout_s: float = 180.0, run_dir: str | os.PathLike | None = None) -> list:
    """Run several configs one after the other in **one** torchrun launch (start-up paid once: ``import
    torch`` and the process group take seconds, a trial's steps milliseconds); one :class:`SdcResult` each.

    The launch has as many ranks as the largest ``replicas``; a trial with fewer leaves the others idle. Each
    trial starts from the seed, as a fresh job would; a rank excluded in one trial serves again in the next.
    """
    configs = list(configs)
    if not configs:
        raise ValueError("configs must hold at least one SdcLabConfig (got none)")
    for i, c in enumerate(configs):
        if not isinstance(c, SdcLabConfig):
            raise ValueError(f"configs[{i}] must be an SdcLabConfig (got {type(c).__name__})")
    world = max(c.replicas for c in configs)
    with Lab(run_dir, timeout_s=timeout_s, prefix="sdclab") as lab:
        spec = {"trials": [json.loads(c.to_json()) for c in configs], "_paths": {"events": str(lab.events_path)}}
        cfg_path = lab.run_dir / "config.json"
        cfg_path.write_text(json.dumps(spec, sort_keys=True, indent=1))
        # torchrun itself (no restarts here: recovery happens inside the job, within steps)
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(world),
               "--max-restarts", "0", "--monitor-interval", "0.1", str(JOB_SCRIPT), str(cfg_path)]
        env = lab.env(TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1, LOGLEVEL=os.environ.get("LOGLEVEL", "WARNING"))
        proc = lab.start("torchrun", cmd, env=env)
        rc = lab.wait(proc, "SDC lab run")
        if rc != 0:
            lab.fail(f"torchrun exited with {rc}")
        results = [_result(lab, c, i, world) for i, c in enumerate(configs)]
    return results
