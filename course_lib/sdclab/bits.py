"""Bit flips in floating-point tensors: the layout of each float format, and one bit of one element
flipped through an integer view of the tensor's own memory (notebook 14).

A float is a sign bit, an exponent and a mantissa (IEEE 754; bfloat16 is float32 cut to 16 bits):

=========  =====  ==========  ========
dtype      bits   exponent    mantissa
=========  =====  ==========  ========
float16    16     10 .. 14    0 .. 9
bfloat16   16     7 .. 14     0 .. 6
float32    32     23 .. 30    0 .. 22
float64    64     52 .. 62    0 .. 51
=========  =====  ==========  ========

(the sign is the top bit). Flipping the **top exponent bit** of a number below 2 in magnitude multiplies
it by 2^128 (float32): a weight of 0.1 becomes about 3e37, and the next forward pass overflows. Flipping
the **lowest exponent bit** doubles or halves it. Flipping **mantissa bit 0** changes it by one unit in
the last place, a relative 1.2e-7 in float32: nothing downstream notices it except a bitwise comparison.

:func:`flip_bit` is the memory error itself: it views the tensor's storage as integers of the same width
(``tensor.view(torch.int32)`` for float32) and XORs one bit of one element, in place. Only this function
imports torch (inside it); the layout and the checks are plain Python.
"""
from __future__ import annotations

from .._validate import check_int_non_negative

__all__ = ["FLOAT_BITS", "EXPONENT_BITS", "bit_width", "bit_class", "named_bit", "check_bit", "check_element",
           "flip_bit", "BIT_NAMES"]

#: Width in bits of each float format.
FLOAT_BITS = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}
#: (lowest, highest) exponent bit of each float format; the mantissa is below, the sign above.
EXPONENT_BITS = {"float16": (10, 14), "bfloat16": (7, 14), "float32": (23, 30), "float64": (52, 62)}
#: The bits the lab names: the top exponent bit, the lowest exponent bit, the lowest mantissa bit, the sign.
BIT_NAMES = ("exponent_top", "exponent_low", "mantissa_low", "sign")


def _dtype_name(dtype) -> str:
    name = str(dtype).replace("torch.", "")
    if name not in FLOAT_BITS:
        raise ValueError(f"dtype must be one of {sorted(FLOAT_BITS)} (got {dtype!r})")
    return name


def bit_width(dtype) -> int:
    """Bits of one element of ``dtype`` (a name such as ``"float32"`` or a torch dtype)."""
    return FLOAT_BITS[_dtype_name(dtype)]


def check_bit(name: str, bit, dtype) -> int:
    """``bit`` as an int in ``[0, bits of dtype - 1]``, else a ValueError naming ``name`` and the range."""
    width = bit_width(dtype)
    b = check_int_non_negative(name, bit)
    if b >= width:
        raise ValueError(f"{name} must be an integer in [0, {width - 1}] (the bits of {_dtype_name(dtype)}; got {bit!r})")
    return b


def check_element(name: str, element, numel: int, what: str = "the tensor") -> int:
    """``element`` as an int in ``[0, numel - 1]``, else a ValueError naming ``name`` and the range."""
    e = check_int_non_negative(name, element)
    if e >= numel:
        raise ValueError(f"{name} must be an integer in [0, {numel - 1}] (the elements of {what}; got {element!r})")
    return e


def bit_class(dtype, bit) -> str:
    """``"sign"``, ``"exponent"`` or ``"mantissa"``: which field of ``dtype`` bit ``bit`` belongs to."""
    name = _dtype_name(dtype)
    b = check_bit("bit", bit, name)
    lo, hi = EXPONENT_BITS[name]
    return "mantissa" if b < lo else "exponent" if b <= hi else "sign"


def named_bit(dtype, name: str) -> int:
    """The bit index of ``name`` (one of :data:`BIT_NAMES`) in ``dtype``: e.g. float32's top exponent bit is 30."""
    d = _dtype_name(dtype)
    lo, hi = EXPONENT_BITS[d]
    bits = {"exponent_top": hi, "exponent_low": lo, "mantissa_low": 0, "sign": FLOAT_BITS[d] - 1}
    if name not in bits:
        raise ValueError(f"name must be one of {list(BIT_NAMES)} (got {name!r})")
    return bits[name]


_INT_OF_WIDTH = {16: "int16", 32: "int32", 64: "int64"}


def flip_bit(tensor, element: int, bit: int) -> tuple[float, float]:
    """Flip bit ``bit`` of element ``element`` (of the flattened tensor) in place, through an integer view
    of the same memory; return (value before, value after).

    ``tensor`` must be a contiguous floating-point torch tensor; ``element`` and ``bit`` are checked
    against its size and its dtype's width (a ValueError names the one out of range).
    """
    import torch

    if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point():
        raise ValueError(f"tensor must be a floating-point torch.Tensor (got {type(tensor).__name__})")
    if not tensor.is_contiguous():
        raise ValueError("tensor must be contiguous (its integer view must be the same memory)")
    width = bit_width(tensor.dtype)
    e = check_element("element", element, tensor.numel())
    b = check_bit("bit", bit, tensor.dtype)
    flat = tensor.view(-1)
    before = float(flat[e])
    ints = flat.view(getattr(torch, _INT_OF_WIDTH[width]))
    mask = 1 << b
    if b == width - 1:  # the sign bit: as a signed integer the mask is the most negative value
        mask -= 1 << width
    with torch.no_grad():
        ints[e] ^= mask
    return before, float(flat[e])
