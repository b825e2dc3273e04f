"""The labs' toy training problem: a tiny MLP, its data and its state digest (notebooks 07, 10, 11).

Everything that decides a result is a pure function of the seed, the step and the rank (or replica
group): the model is initialised from ``seed``, the batch of ``step`` on ``rank`` comes from a generator
seeded with ``(seed, step, rank)``, and the target is a fixed random linear map. The fault lab's job
(:mod:`course_lib.faultlab.job`, also run on namespaced nodes by :mod:`course_lib.nodelab`) and the
torchft lab's (:mod:`course_lib.ftlab.job`) train it; a resumed run is bit-identical to an uninterrupted
one exactly when it restored everything a step reads. torch is imported inside each function: the
workers log their start before paying for ``import torch``.
"""
from __future__ import annotations

__all__ = ["toy_model", "toy_target", "toy_batch", "state_digest", "toy_uninterrupted_state", "TOY_LR", "TOY_MOMENTUM",
           "FAULTLAB_LR", "FAULTLAB_MOMENTUM"]

# The torchft lab's step size. One replica group training alone (a survivor while its peer is out, for up to
# the lab's grace_steps) sees one batch's gradient, twice as noisy as two groups' average: at lr 0.05 with
# momentum 0.9 that diverged to inf within 60-150 steps for seeds 1 and 2 (tests/test_labkit.py keeps it finite).
TOY_LR, TOY_MOMENTUM = 0.02, 0.9
# The fault lab's job (course_lib/faultlab/job.py, also run on namespaced nodes by course_lib.nodelab): SGD at lr 0.05,
# momentum 0.9 (the literals in its torch.optim.SGD call; toy_uninterrupted_state replays them).
FAULTLAB_LR, FAULTLAB_MOMENTUM = 0.05, 0.9


def toy_model(seed: int, features: int, hidden: int):
    """The tiny MLP (with dropout, so the random stream matters), initialised from ``seed``."""
    import torch

    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(features, hidden), torch.nn.ReLU(), torch.nn.Dropout(0.1), torch.nn.Linear(hidden, 1)
    )


def toy_target(seed: int, features: int):
    """The fixed random linear map the MLP learns."""
    import torch

    return torch.randn(features, 1, generator=torch.Generator().manual_seed(seed + 7))


def toy_batch(seed: int, step: int, rank: int, batch: int, target):
    """The batch of ``step`` on ``rank``: a pure function of the seed, the step and the rank."""
    import torch

    g = torch.Generator().manual_seed((seed * 1_000_003 + step) * 64 + rank)
    x = torch.randn(batch, target.shape[0], generator=g)
    return x, x @ target + 0.01 * torch.randn(batch, 1, generator=g)


def state_digest(state) -> str:
    """sha256 over every tensor (name, dtype, shape, bytes) and scalar of a nested state, in key order."""
    import hashlib

    import torch

    h = hashlib.sha256()

    def walk(prefix, obj):
        if isinstance(obj, torch.Tensor):
            t = obj.detach().cpu().contiguous()
            h.update(f"{prefix}:{t.dtype}:{tuple(t.shape)}:".encode())
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
        elif isinstance(obj, dict):
            for k in sorted(obj, key=str):
                walk(f"{prefix}/{k}", obj[k])
        elif isinstance(obj, (list, tuple)):
            for i, v in enumerate(obj):
                walk(f"{prefix}[{i}]", v)
        else:
            h.update(f"{prefix}={obj!r};".encode())

    walk("", state)
    return h.hexdigest()


def toy_uninterrupted_state(*, steps: int, world: int, seed: int = 0, batch: int = 32, features: int = 16,
                            hidden: int = 32, lr: float = FAULTLAB_LR, momentum: float = FAULTLAB_MOMENTUM) -> dict:
    """The final state of the fault lab's job (:mod:`course_lib.faultlab.job`) run uninterrupted for ``steps``
    steps on ``world`` ranks on CPU (gloo), computed in this process: ``{"step", "applied", "model", "optim",
    "rng"}``, what rank 0 saves as the job's final state (``rng``: every rank's dropout stream). Its
    :func:`state_digest` is the job's ``done`` digest.

    Each rank is replayed as the job runs it: its own model and SGD (the same initial weights), its batch, its
    dropout stream in torch's global generator, ``zero_grad(set_to_none=False)`` and ``backward``; the
    all-reduce of the flattened gradients is their sum, then divided by ``world``. That is bit-exact only where
    the order of the sum cannot matter: one rank, or two (a + b == b + a in floating point; three or more
    summed in another order than gloo's ring can differ in the last bit), so ``world`` must be 1 or 2. The
    caller's global random state and thread count are restored on return.
    """
    import torch

    from .._validate import check_int_non_negative, check_int_positive

    steps = check_int_positive("steps", steps)
    seed = check_int_non_negative("seed", seed)
    batch, features, hidden = (check_int_positive(n, v) for n, v in (("batch", batch), ("features", features),
                                                                      ("hidden", hidden)))
    if isinstance(world, bool) or world not in (1, 2):
        raise ValueError(f"world must be 1 or 2 (the in-process sum is gloo's bit for bit only there; got {world!r})")
    saved_rng, saved_threads = torch.get_rng_state(), torch.get_num_threads()
    try:
        torch.set_num_threads(1)  # as every worker runs (job.py); a reduction split over threads may round otherwise
        models = [toy_model(seed, features, hidden) for _ in range(world)]
        opts = [torch.optim.SGD(m.parameters(), lr=lr, momentum=momentum) for m in models]
        target = toy_target(seed, features)
        rngs = []
        for rank in range(world):
            torch.manual_seed(seed * 1000 + 17 + rank)  # the rank's dropout stream, as the job seeds it
            rngs.append(torch.get_rng_state())
        for step in range(1, steps + 1):
            flats = []
            for rank, (model, opt) in enumerate(zip(models, opts)):
                torch.set_rng_state(rngs[rank])
                x, y = toy_batch(seed, step, rank, batch, target)
                opt.zero_grad(set_to_none=False)
                torch.nn.functional.mse_loss(model(x), y).backward()
                rngs[rank] = torch.get_rng_state()
                flats.append(torch.cat([p.grad.reshape(-1) for p in model.parameters()]))
            total = flats[0] + flats[1] if world == 2 else flats[0]  # the all-reduce (sum)
            total /= world
            for model, opt in zip(models, opts):
                off = 0
                for p in model.parameters():
                    n = p.numel()
                    p.grad.copy_(total[off: off + n].view_as(p))
                    off += n
                opt.step()
        return {"step": steps, "applied": steps,
                "model": {k: v.detach().cpu() for k, v in models[0].state_dict().items()},
                "optim": opts[0].state_dict(), "rng": [r.clone() for r in rngs]}
    finally:
        torch.set_rng_state(saved_rng)
        torch.set_num_threads(saved_threads)
