"""A 64-bit fingerprint of a model's parameters, cheap enough to compare across replicas every step
(notebook 14).

Data-parallel replicas hold the same parameters bit for bit after every step: each applies the same
averaged gradient to the same weights. A memory error on one replica breaks that, and nothing else in
the job notices a low bit. :func:`fingerprint64` reads every parameter once and reduces it to one
64-bit integer; the replicas compare theirs with one tiny collective (an all-gather of 8 bytes per rank).

The digest: each element's bits as a signed integer of its own width (an integer view of its memory,
no conversion), times an odd weight ``2 i + 1`` for its position ``i`` in the concatenation, summed
modulo 2^64. **Every single-bit flip changes it**: flipping bit ``k`` of element ``i`` changes the sum by
``+/- 2^k (2 i + 1)``, and an odd number times ``2^k`` with ``k < 64`` is never a multiple of 2^64. Two
flips can cancel only in contrived pairs (it is a checksum, not a cryptographic hash: the threat is a
cosmic ray, not an adversary). The sum runs in chunks, so its scratch memory stays bounded on a large shard.
"""
from __future__ import annotations

__all__ = ["fingerprint64", "FINGERPRINT_BYTES", "CHUNK"]

#: Bytes one rank contributes to the comparison: one signed 64-bit integer.
FINGERPRINT_BYTES = 8
#: Elements per chunk of the weighted sum (bounds the int64 scratch to 8 MiB).
CHUNK = 1 << 20

_INT = {2: "int16", 4: "int32", 8: "int64"}
_WEIGHTS: dict = {}  # device -> the odd weights 1, 3, 5, ... (as many as the largest chunk so far)


def _weights(n: int, device):
    """The first ``n`` odd weights on ``device`` (cached, grown as needed)."""
    key = str(device)
    w = _WEIGHTS.get(key)
    if w is None or w.numel() < n:
        import torch

        w = _WEIGHTS[key] = torch.arange(n, dtype=torch.int64, device=device) * 2 + 1
    return w[:n]


def fingerprint64(tensors, chunk: int = CHUNK) -> int:
    """The 64-bit fingerprint (a Python int in [-2^63, 2^63)) of ``tensors`` (a tensor or an iterable of
    tensors, in order), computed on their device; see the module doc for what it guarantees."""
    import torch

    if isinstance(tensors, torch.Tensor):
        tensors = [tensors]
    total = None
    offset = 0
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"tensors must hold torch tensors (got {type(t).__name__})")
        flat = t.detach().contiguous().view(-1)
        if flat.numel() == 0:
            continue
        ints = flat.view(getattr(torch, _INT[flat.element_size()])) if flat.is_floating_point() else flat
        for lo in range(0, ints.numel(), chunk):
            part = ints[lo:lo + chunk].to(torch.int64)
            # sum of v_j (2 (start + j) + 1) = sum of v_j (2 j + 1) + 2 start sum of v_j; int64 wraps modulo 2^64
            s = (part * _weights(part.numel(), part.device)).sum()
            start = offset + lo
            if start:
                s = s + part.sum() * (2 * start)
            total = s if total is None else total + s
        offset += ints.numel()
    return 0 if total is None else int(total)
