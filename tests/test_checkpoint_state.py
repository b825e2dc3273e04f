"""Toy training state: sizes, determinism, 16 bytes per parameter, validation (course_lib.checkpoint.state)."""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.checkpoint.state import (
    BYTES_PER_PARAM,
    N_LAYERS,
    empty_like_state,
    format_size,
    iter_tensors,
    n_params_for,
    parse_size,
    state_nbytes,
    states_equal,
    toy_state,
)


def test_bytes_per_param_is_two_bf16_plus_three_fp32():
    assert BYTES_PER_PARAM == 16
    s = toy_state(1 << 16)
    layer = {k.split("/")[-1].split(".")[-1]: t for k, t in iter_tensors(s) if "layer0." in k}
    assert set(layer) == {"weight", "grad", "master", "exp_avg", "exp_avg_sq"}
    assert layer["weight"].dtype == layer["grad"].dtype == torch.bfloat16
    assert {layer[k].dtype for k in ("master", "exp_avg", "exp_avg_sq")} == {torch.float32}
    per_param = sum(t.element_size() for t in layer.values())
    assert per_param == BYTES_PER_PARAM


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=BYTES_PER_PARAM * N_LAYERS, max_value=1 << 16))
def test_size_is_requested_bytes_rounded_down_to_whole_params(nbytes):
    s = toy_state(nbytes)
    assert state_nbytes(s) == n_params_for(nbytes) * BYTES_PER_PARAM
    assert nbytes - BYTES_PER_PARAM < state_nbytes(s) <= nbytes


def test_deterministic_and_seed_dependent():
    a, b, c = toy_state(4096, seed=3), toy_state(4096, seed=3), toy_state(4096, seed=4)
    assert states_equal(a, b)
    assert not states_equal(a, c)


def test_states_equal_is_bitwise():
    a = toy_state(4096)
    b = empty_like_state(a)
    assert not states_equal(a, b)
    for (_, x), (_, y) in zip(iter_tensors(a), iter_tensors(b)):
        y.copy_(x)
    assert states_equal(a, b)
    t = b["optim"]["layer0.master"]
    t.view(torch.int32)[0] ^= 1  # one bit
    assert not states_equal(a, b)


@pytest.mark.parametrize(
    "text, expected",
    [("256MiB", 256 * 2**20), ("1GiB", 2**30), ("1.5GB", 1_500_000_000), ("4096", 4096), ("64k", 65536), (" 2 MiB ", 2 * 2**20), (512, 512)],
)
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["", "abc", "10q", "-5MiB", "0", True, 0, -1])
def test_parse_size_rejects_and_names_parameter(bad):
    with pytest.raises(ValueError, match="sizes"):
        parse_size(bad, "sizes")


def test_format_size():
    assert format_size(256 * 2**20) == "256 MiB"
    assert format_size(2**30) == "1 GiB"
    assert format_size(1536) == "1.5 KiB"
    assert format_size(10) == "10 B"


@pytest.mark.parametrize("bad", [0, -1, 10, 1.5, "x"])
def test_toy_state_rejects_bad_size(bad):
    with pytest.raises(ValueError, match="nbytes"):
        toy_state(bad)


def test_toy_state_rejects_bad_seed():
    with pytest.raises(ValueError, match="seed"):
        toy_state(4096, seed=-1)
