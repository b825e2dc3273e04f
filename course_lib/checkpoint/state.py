"""A toy training state of a requested size, built deterministically (notebook 05 explains it).

Mixed-precision training with Adam keeps, per parameter,

* the bf16 weight the forward pass uses ......... 2 bytes
* the bf16 gradient ............................... 2 bytes
* the fp32 master copy the optimizer updates ..... 4 bytes
* Adam's first moment (fp32) ..................... 4 bytes
* Adam's second moment (fp32) .................... 4 bytes

in all :data:`BYTES_PER_PARAM` = 16 bytes, the accounting of ZeRO (Rajbhandari et al.,
"ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", SC 2020, section 3.1:
2 + 2 + 12 bytes per parameter; [@zero2020]) that the course uses to size per-GPU shards
(``data/levers.csv``, ``state_bytes_per_param``). Weights, master copy and moments alone are 14 bytes; the toy state carries the
bf16 gradient buffer too, so its bytes are exactly what the course scales with. A requested size
in bytes therefore becomes ``size // 16`` parameters, split over a few "layers" so that a
checkpoint holds several tensors, as a real one does. The values come from a seeded
``torch.Generator`` on the CPU, so the same (size, seed) gives the same bits on any device.
"""
from __future__ import annotations

import re

import torch

from .._validate import check_int_non_negative, check_int_positive

__all__ = [
    "BYTES_PER_PARAM",
    "N_LAYERS",
    "parse_size",
    "format_size",
    "n_params_for",
    "toy_state",
    "state_nbytes",
    "iter_tensors",
    "empty_like_state",
    "poison_state",
    "POISON",
    "states_equal",
]

#: bf16 weight (2) + bf16 gradient (2) + fp32 master (4) + two fp32 Adam moments (4 + 4)
BYTES_PER_PARAM = 2 + 2 + 4 + 4 + 4
#: number of layers the parameters are split over (each gives four tensors)
N_LAYERS = 4

_UNITS = {
    "": 1, "b": 1,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40,
}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*$")


def parse_size(text, name: str = "size") -> int:
    """Parse ``"256MiB"``, ``"1GiB"``, ``"1.5GB"``, ``"4096"`` (bytes) or an int into bytes.

    Binary units (KiB, MiB, GiB, TiB, and the bare K, M, G, T) are powers of 1024; decimal
    ones (kB, MB, GB, TB) powers of 1000.
    """
    if isinstance(text, bool):
        raise ValueError(f"{name} must be a size such as 256MiB or 1GiB (got {text!r})")
    if isinstance(text, int):
        return check_int_positive(name, text)
    m = _SIZE.match(str(text))
    unit = m.group(2).lower() if m else None
    if not m or unit not in _UNITS:
        raise ValueError(f"{name} must be a size such as 256MiB, 1GiB or a number of bytes (got {text!r})")
    value = float(m.group(1)) * _UNITS[unit]
    if value < 1:
        raise ValueError(f"{name} must be at least 1 byte (got {text!r})")
    return int(value)


def format_size(nbytes) -> str:
    """Bytes as a short binary-unit string: 268435456 -> ``'256 MiB'``."""
    n = check_int_non_negative("nbytes", nbytes)
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            v = n / scale
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.3g} {unit}"
    return f"{n} B"


def n_params_for(nbytes) -> int:
    """Parameters that fit in ``nbytes`` of training state (16 bytes each, at least one per layer)."""
    n = check_int_positive("nbytes", nbytes)
    if n < BYTES_PER_PARAM * N_LAYERS:
        raise ValueError(
            f"nbytes must be >= {BYTES_PER_PARAM * N_LAYERS} ({N_LAYERS} layers x {BYTES_PER_PARAM} bytes per parameter) (got {nbytes!r})"
        )
    return n // BYTES_PER_PARAM


def _layer_sizes(n_params: int) -> list[int]:
    base = n_params // N_LAYERS
    sizes = [base] * N_LAYERS
    sizes[-1] += n_params - base * N_LAYERS
    return sizes


def toy_state(nbytes, device="cpu", seed: int = 0) -> dict:
    """A training state of ``nbytes`` (rounded down to whole 16-byte parameters).

    Returns ``{"model": {"layerI.weight" | "layerI.grad": bf16}, "optim": {"layerI.master" | "layerI.exp_avg" |
    "layerI.exp_avg_sq": fp32}, "step": int}``, every tensor 1-D and contiguous on ``device``.
    The bits depend only on (nbytes, seed), not on the device.
    """
    n_params = n_params_for(nbytes)
    seed = check_int_non_negative("seed", seed)
    device = torch.device(device)
    gen = torch.Generator(device="cpu").manual_seed(seed)
    model, optim = {}, {}
    for i, n in enumerate(_layer_sizes(n_params)):
        master = torch.randn(n, generator=gen, dtype=torch.float32)
        # the moments are derived from the master copy (cheap, deterministic, all bits vary)
        exp_avg = master * 0.01
        exp_avg_sq = master * master * 1e-4
        weight = master.to(torch.bfloat16)
        grad = (exp_avg * 10.0).to(torch.bfloat16)
        model[f"layer{i}.weight"] = weight.to(device)
        model[f"layer{i}.grad"] = grad.to(device)
        optim[f"layer{i}.master"] = master.to(device)
        optim[f"layer{i}.exp_avg"] = exp_avg.to(device)
        optim[f"layer{i}.exp_avg_sq"] = exp_avg_sq.to(device)
    return {"model": model, "optim": optim, "step": seed}


def iter_tensors(state, prefix: str = ""):
    """Yield ``(dotted_key, tensor)`` for every tensor in a nested dict, in a stable order."""
    for k in sorted(state):
        v = state[k]
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            yield from iter_tensors(v, key + "/")
        elif isinstance(v, torch.Tensor):
            yield key, v


def state_nbytes(state) -> int:
    """Bytes held by the tensors of a (nested) state dict."""
    return sum(_local(t).numel() * t.element_size() for _, t in iter_tensors(state))


def _local(t: torch.Tensor) -> torch.Tensor:
    return t.to_local() if hasattr(t, "to_local") else t


def empty_like_state(state, device=None, pin_memory: bool = False) -> dict:
    """A structure like ``state`` with fresh, zero-filled tensors (touched, so no page faults later).

    Non-tensor leaves are copied. ``device`` moves the copy (e.g. to "cpu");
    ``pin_memory`` pins it (only meaningful for a CPU copy of a GPU state).
    """
    out = {}
    for k, v in state.items():
        if isinstance(v, dict):
            out[k] = empty_like_state(v, device, pin_memory)
        elif isinstance(v, torch.Tensor):
            if hasattr(v, "to_local"):  # DTensor: a template with the same sharding
                from torch.distributed.tensor import DTensor

                local = torch.zeros_like(v.to_local())
                out[k] = DTensor.from_local(local, v.device_mesh, v.placements, shape=v.shape, stride=v.stride(), run_check=False)
            else:
                dev = v.device if device is None else torch.device(device)
                out[k] = torch.zeros(v.shape, dtype=v.dtype, device=dev, pin_memory=pin_memory and dev.type == "cpu")
        else:
            out[k] = v
    return out


class _Poison:
    """The value :func:`poison_state` puts in non-tensor leaves: equal to nothing but itself."""

    def __eq__(self, other):
        return other is self

    __hash__ = object.__hash__

    def __repr__(self):
        return "POISON"


#: the non-tensor leaf of a poisoned state
POISON = _Poison()


def poison_state(state) -> dict:
    """Overwrite ``state`` in place so that no real state equals it; returns it.

    Every tensor (a DTensor's local shard) is filled with 0xFF bytes (NaN in bf16 and fp32, -1 in
    integers) and every non-tensor leaf becomes :data:`POISON`. Reload into a poisoned buffer and a
    load that writes nothing (or only part) fails :func:`states_equal` instead of passing on what
    the buffer held before.
    """
    for k, v in state.items():
        if isinstance(v, dict):
            poison_state(v)
        elif isinstance(v, torch.Tensor):
            t = _local(v).detach()
            if t.is_contiguous():
                t.view(-1).view(torch.uint8).fill_(0xFF)
            else:
                t.fill_(float("nan") if t.is_floating_point() else -1)
        else:
            state[k] = POISON
    return state


def states_equal(a, b) -> bool:
    """True when two states have the same keys, the same non-tensor leaves and bit-identical tensors."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(states_equal(a[k], b[k]) for k in a)
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        x, y = _local(a), _local(b)
        if x.dtype != y.dtype or x.shape != y.shape:
            return False
        x = x.detach().cpu().contiguous().view(-1).view(torch.uint8)
        y = y.detach().cpu().contiguous().view(-1).view(torch.uint8)
        return bool(torch.equal(x, y))
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return False
    return a == b
