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

__all__ = ["toy_model", "toy_target", "toy_batch", "state_digest", "TOY_LR", "TOY_MOMENTUM"]

# The torchft lab's step size. One replica group training alone (a survivor while its peer is out, for up to
# the lab's grace_steps) sees one batch's gradient, twice as noisy as two groups' average: at lr 0.05 with
# momentum 0.9 that diverged to inf within 60-150 steps for seeds 1 and 2 (tests/test_labkit.py keeps it finite).
TOY_LR, TOY_MOMENTUM = 0.02, 0.9


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
