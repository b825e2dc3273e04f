"""The SDC lab's training job: the script torchrun starts on every rank (notebook 14).

    torchrun --standalone --nproc-per-node R course_lib/sdclab/job.py CONFIG.json

Data-parallel training of the lab kit's toy problem (:mod:`course_lib.labkit.toy`) with SGD + momentum, in
which everything that decides the result is a pure function of the seed, the step and the **logical**
rank (the data shard): the batch of step ``s`` of shard ``l`` and its dropout seed. Each physical rank
serves one shard at the start; a rank found bad is excluded and its shard is served by a healthy one
(which then computes two micro-batches a step). The gradient average is a sum over the shards in shard
order, from an all-gather of every shard's gradient, so the arithmetic of a step does not depend on which
process computed which shard: a run that rewound and moved a shard ends bit-identical to one that never did.

One step, on every rank (the order matters for what each detector can see):

1. each served shard's forward and backward: its loss, its local gradient (a ``grad`` flip strikes here,
   before the all-reduce; a ``loss`` flip corrupts the loss the rank reports);
2. on replay steps, the gradient of the shard this rank checks, recomputed (:func:`~.detectors.checkers`);
3. telemetry all-gather (every shard's loss, gradient norm, gradient fingerprint, replay fingerprint), then
   the loss, gradient-norm and replay checks, before the update; a replay mismatch with three or more
   replicas is arbitrated by a third recomputation (one more small all-gather);
4. the gradient all-gather and the update (a ``param`` flip strikes after it: a memory error);
5. the parameter fingerprint (:func:`~.fingerprint.fingerprint64`) and its all-gather of 8 bytes a rank,
   then the fingerprint check;
6. with no alarm, a snapshot every ``snapshot_every`` steps (parameters, momentum, the running checks'
   state), the ``keep`` newest in memory.

On an alarm (``recover``) every rank rewinds to :func:`~.detectors.rewind_target`, the suspect (if the
numbers name one) is excluded (:func:`~.detectors.reassign`), and training goes on from the snapshot's
step. An excluded rank stays in the process group (it takes part in the all-gathers with zeros) until the
end. Without ``recover`` the detectors only watch: every alarm is logged and nothing is done.
"""
import time

_T_START = time.time()

import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from collections import deque  # noqa: E402
from datetime import timedelta  # noqa: E402
from pathlib import Path  # noqa: E402


def dropout_seed(seed: int, step: int, logical: int) -> int:
    """The dropout seed of shard ``logical`` in ``step``: a pure function, so a replay or another rank
    serving the shard draws the same mask."""
    return ((seed * 1_000_003 + step) * 64 + logical) * 2 + 1


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    spec = json.loads(Path(argv[0]).read_text())
    paths = spec["_paths"]
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    from course_lib.labkit import EventLog, die_with_parent

    die_with_parent()
    log = EventLog(paths["events"], rank=rank)
    log("worker_start", t=_T_START)

    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", timeout=timedelta(seconds=300))
    log("pg_ready", backend="gloo")

    for i, cfg in enumerate(spec["trials"]):  # one launch, several runs: start-up paid once
        log.static["trial"] = i
        dist.barrier()
        log("trial_start")
        run_trial(cfg, rank, world, log)
    dist.barrier()
    dist.destroy_process_group()
    os._exit(0)


def run_trial(cfg: dict, rank: int, world: int, log) -> None:
    """One run of the job (one trial of the launch) on the process group already formed; ranks beyond
    ``cfg["replicas"]`` sit it out (excluded from the start)."""
    import torch
    import torch.distributed as dist

    from course_lib.labkit.toy import state_digest, toy_batch, toy_model, toy_target
    from course_lib.sdclab import detectors as dt
    from course_lib.sdclab.bits import flip_bit
    from course_lib.sdclab.fingerprint import fingerprint64

    seed, steps, R = cfg["seed"], cfg["steps"], cfg["replicas"]
    if world < R:
        raise RuntimeError(f"the job needs WORLD_SIZE >= replicas ({world} < {R})")
    dtype = getattr(torch, cfg["dtype"])
    F, H, B = cfg["features"], cfg["hidden"], cfg["batch"]
    model = toy_model(seed, F, H).to(dtype)
    params = list(model.parameters())
    momentum = [torch.zeros_like(p) for p in params]  # SGD's momentum buffers (optimizer state)
    for p in params:  # a rank that serves no shard still applies the averaged gradient
        p.grad = torch.zeros_like(p)
    target = toy_target(seed, F).to(dtype)
    P = sum(p.numel() for p in params)
    detectors = set(cfg["detectors"])
    flips = cfg["flips"]
    fired: set = set()  # indices of one-shot flips that struck (a physical event: a rewind does not undo it)
    servers = {lg: lg for lg in range(R)}  # shard -> physical rank serving it
    excluded: list = []
    idle = list(range(R, world))  # ranks this trial does not use
    logger = 0  # the lowest active rank logs the decisions every rank takes alike

    def active():
        return sorted(set(range(world)) - set(excluded) - set(idle))

    for d in sorted(detectors):
        why = dt.unavailable(d, R)
        if why and rank == 0:
            log("detector_unavailable", detector=d, reason=why, step=0)
    loss_check = dt.RunningCheck("loss", cfg["loss_factor"], cfg["warmup"])
    norm_check = dt.RunningCheck("grad_norm", cfg["grad_norm_factor"], cfg["warmup"])

    def strikes(target_kind, step, for_replay=False):
        """The flips that strike this rank now: (index, flip)."""
        out = []
        for i, f in enumerate(flips):
            if f["target"] != target_kind or f["rank"] != rank or rank not in active():
                continue
            if f["persistent"] and step >= f["step"]:
                out.append((i, f))
            elif not f["persistent"] and step == f["step"] and i not in fired and not for_replay:
                out.append((i, f))
        return out

    def inject(i, f, tensor, step, what, element=None):
        before, after = flip_bit(tensor, f["element"] if element is None else element, f["bit"])
        if not f["persistent"]:
            fired.add(i)
        log("inject", flip=i, target=f["target"], step=step, bit=f["bit"], element=f["element"],
            persistent=f["persistent"], before=before, after=after, what=what)

    def shard_gradient(lg, step, replay=False):
        """(flat gradient, loss) of shard ``lg`` in ``step`` with the current parameters."""
        torch.manual_seed(dropout_seed(seed, step, lg))
        x, y = toy_batch(seed, step, lg, B, target)
        model.zero_grad(set_to_none=False)
        loss = torch.nn.functional.mse_loss(model(x.to(dtype)), y.to(dtype))
        loss.backward()
        flat = torch.cat([p.grad.reshape(-1) for p in params]).clone()
        for i, f in strikes("grad", step, for_replay=replay):
            inject(i, f, flat, step, f"{'replay of ' if replay else ''}shard {lg}'s gradient")
        lv = loss.detach().clone().reshape(1)
        if not replay:
            for i, f in strikes("loss", step):
                inject(i, f, lv, step, f"shard {lg}'s loss")
        return flat, float(lv[0])

    def f64_bits(x: float) -> int:
        return int(torch.tensor([x], dtype=torch.float64).view(torch.int64)[0])

    def bits_f64(n: int) -> float:
        return float(torch.tensor([n], dtype=torch.int64).view(torch.float64)[0])

    def gather_int64(values):
        """All-gather a 1-D int64 tensor from every rank; a list of them by rank."""
        t = torch.tensor(values, dtype=torch.int64)
        out = [torch.zeros_like(t) for _ in range(world)]
        dist.all_gather(out, t)
        return out

    snapshots: deque = deque(maxlen=cfg["keep"])

    def take_snapshot(step):
        snapshots.append((step, [p.detach().clone() for p in params], [b.clone() for b in momentum],
                          loss_check.state(), norm_check.state()))

    def restore(step):
        for s, ps, bs, ls, ns in snapshots:
            if s == step:
                with torch.no_grad():
                    for p, q in zip(params, ps):
                        p.copy_(q)
                    for b, q in zip(momentum, bs):
                        b.copy_(q)
                loss_check.restore(ls)
                norm_check.restore(ns)
                while snapshots and snapshots[-1][0] > step:
                    snapshots.pop()
                return
        raise RuntimeError(f"no snapshot of step {step}")

    take_snapshot(0)
    recoveries = 0
    outcome = "done"
    step = 0
    while step < steps:
        step += 1
        t0 = time.perf_counter()
        if cfg["step_compute_s"]:
            time.sleep(cfg["step_compute_s"])
        act = active()
        mine = sorted(lg for lg, p in servers.items() if p == rank)
        grads, losses = {}, {}
        for lg in mine:
            grads[lg], losses[lg] = shard_gradient(lg, step)
        # ----- replay: recompute the gradient of the shards this rank checks -----
        replaying = "replay" in detectors and step % cfg["replay_every"] == 0 and len(act) >= 2
        cks = dt.checkers(servers) if replaying else {}
        replays = {lg: fingerprint64(shard_gradient(lg, step, replay=True)[0])
                   for lg, c in cks.items() if c == rank} if replaying else {}
        # ----- telemetry: one small all-gather, then the checks that need no update -----
        row = []
        for lg in range(R):
            if lg in grads:
                row += [1, f64_bits(losses[lg]), f64_bits(float(grads[lg].double().norm())), fingerprint64(grads[lg])]
            else:
                row += [0, 0, 0, 0]
            row += [1, replays[lg]] if lg in replays else [0, 0]
        tele = [t.view(R, 6) for t in gather_int64(row)]
        loss_v = {lg: bits_f64(int(tele[servers[lg]][lg, 1])) for lg in range(R)}
        norm_v = {lg: bits_f64(int(tele[servers[lg]][lg, 2])) for lg in range(R)}
        grad_fp = {lg: int(tele[servers[lg]][lg, 3]) for lg in range(R)}
        alarms = []
        if "loss" in detectors and (a := loss_check.check(step, loss_v, servers)):
            alarms.append(a)
        if "grad_norm" in detectors and (a := norm_check.check(step, norm_v, servers)):
            alarms.append(a)
        if replaying:
            rep_fp = {lg: int(tele[c][lg, 5]) for lg, c in cks.items()}
            bad = sorted(lg for lg in rep_fp if rep_fp[lg] != grad_fp[lg])
            arb_fp = {}
            if bad and len(act) >= 3:  # a third recomputation says which side of each mismatch is wrong
                jobs = [(lg, dt.arbiter(servers[lg], cks[lg], act)) for lg in bad]
                mine_arb = [fingerprint64(shard_gradient(lg, step, replay=True)[0]) if a == rank else 0 for lg, a in jobs]
                arb = gather_int64(mine_arb)
                arb_fp = {lg: int(arb[a][j]) for j, (lg, a) in enumerate(jobs)}
            if (a := dt.replay_alarm(step, grad_fp, rep_fp, servers, arb_fp, cfg["replay_every"])):
                alarms.append(a)
        # ----- the update, from every shard's gradient in shard order -----
        sent = torch.zeros(R, P, dtype=dtype)
        for lg, g in grads.items():
            sent[lg] = g
        got = [torch.zeros_like(sent) for _ in range(world)]
        dist.all_gather(got, sent)
        total = got[servers[0]][0].clone()
        for lg in range(1, R):
            total += got[servers[lg]][lg]
        total /= R
        off = 0
        for p in params:
            n = p.numel()
            p.grad.copy_(total[off:off + n].view_as(p))
            off += n
        sgd_step(params, momentum, first=step == 1)
        flat_params = [p.data.view(-1) for p in params]
        for i, f in strikes("param", step):
            e, k = f["element"], 0
            while e >= flat_params[k].numel():
                e -= flat_params[k].numel()
                k += 1
            inject(i, f, flat_params[k], step, f"parameter {f['element']}", element=e)
        # ----- the fingerprint: 64 bits of every parameter, one all-gather of 8 bytes a rank -----
        fp_s = gather_s = None
        if "fingerprint" in detectors and len(act) >= 2:
            t1 = time.perf_counter()
            fp = fingerprint64(params)
            t2 = time.perf_counter()
            fps = gather_int64([fp])
            t3 = time.perf_counter()
            fp_s, gather_s = t2 - t1, t3 - t2
            if (a := dt.fingerprint_alarm(step, {p: int(fps[p][0]) for p in act})):
                alarms.append(a)
        step_s = time.perf_counter() - t0
        if rank == logger:
            log("step_done", step=step, loss=statistics.fmean(loss_v.values()), losses=[loss_v[lg] for lg in range(R)],
                norms=[norm_v[lg] for lg in range(R)], fp_s=fp_s, gather_s=gather_s, step_s=step_s,
                alarms=[a.detector for a in alarms], servers=[servers[lg] for lg in range(R)])
        if not alarms:
            if step % cfg["snapshot_every"] == 0:
                take_snapshot(step)
            continue
        if not cfg["recover"]:  # watch: every alarm logged, nothing done
            if rank == logger:
                for a in alarms:
                    log("alarm", detector=a.detector, step=a.step, suspect=a.suspect, reason=a.reason, window=a.window,
                        acted=False)
            if step % cfg["snapshot_every"] == 0:
                take_snapshot(step)
            continue
        # ----- recover: the first detector's alarm (cheapest first) decides -----
        a = min(alarms, key=lambda x: dt.DETECTORS.index(x.detector))
        if rank == logger:
            for other in alarms:
                log("alarm", detector=other.detector, step=other.step, suspect=other.suspect, reason=other.reason,
                    window=other.window, acted=other is a)
        recoveries += 1
        to = dt.rewind_target([s for s, *_ in snapshots], a)
        if to is None or recoveries > cfg["max_recoveries"]:
            why = (f"no kept snapshot is older than step {a.step - a.window} (kept: {[s for s, *_ in snapshots]})"
                   if to is None else f"{cfg['max_recoveries']} recoveries and the fault is still there")
            if rank == logger:
                log("unrecoverable", step=step, detector=a.detector, reason=why)
            outcome = "unrecoverable"
            break
        suspect = a.suspect if a.suspect is not None and a.suspect in act and len(act) > 1 else None
        if suspect is not None:
            excluded.append(suspect)
            servers = dt.reassign(servers, suspect)
            logger = active()[0]
        restore(to)
        if rank == logger:
            log("rewind", step=step, to=to, detector=a.detector, suspect=a.suspect, excluded=suspect,
                servers=[servers[lg] for lg in range(R)], lost_steps=step - to)
            for d in ("fingerprint", "replay"):
                if d in detectors and len(active()) < 2:
                    log("detector_unavailable", detector=d, step=step,
                        reason=f"{dt.unavailable(d, 1)} left after excluding rank {suspect}")
        step = to
    if cfg["cost_probe"]:  # the digest alone and the all-gather alone, each after a barrier
        digest_s, gather_s = [], []
        for _ in range(cfg["cost_probe"]):
            dist.barrier()
            t1 = time.perf_counter()
            fp = fingerprint64(params)
            digest_s.append(time.perf_counter() - t1)
            dist.barrier()  # the all-gather alone: no rank still digesting
            t1 = time.perf_counter()
            gather_int64([fp])
            gather_s.append(time.perf_counter() - t1)
        if rank == logger:
            log("fingerprint_cost", digest_s=statistics.median(digest_s), gather_s=statistics.median(gather_s),
                params=P, param_bytes=P * params[0].element_size(), world=world, repeats=cfg["cost_probe"])
    # ----- the end: every active rank's final state -----
    final = {"model": {k: v.detach().cpu() for k, v in model.state_dict().items()}, "momentum": momentum}
    if rank in active():
        log("done", step=step, outcome=outcome, digest=state_digest(final), fingerprint=fingerprint64(params),
            excluded=excluded, servers=[servers[lg] for lg in range(R)], recoveries=recoveries)
    else:
        log("done", step=step, outcome=outcome, excluded=excluded, digest=None, idle=rank in idle)


LR, MOMENTUM = 0.05, 0.9


def sgd_step(params, momentum, first: bool) -> None:
    """SGD with momentum, as ``torch.optim.SGD(lr=LR, momentum=MOMENTUM)`` computes it (the first step's
    buffer is the gradient itself), written out: constructing ``torch.optim.SGD`` imports ``torch._dynamo``
    in torch 2.13, seconds of every start on a loaded machine."""
    import torch

    with torch.no_grad():
        for p, b in zip(params, momentum):
            if first:
                b.copy_(p.grad)
            else:
                b.mul_(MOMENTUM).add_(p.grad)
            p.add_(b, alpha=-LR)


if __name__ == "__main__":
    sys.exit(main())
