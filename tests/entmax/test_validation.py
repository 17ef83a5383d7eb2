import re

import numpy as np
import pytest
import torch

from sparsetab.entmax._validation import (
    check_dim,
    check_input,
    check_input_scriptable,
    check_k,
    check_n_iter,
    check_positive_int,
    compute_dtype,
)

# ---------------------------------------------------------------- check_dim


@pytest.mark.parametrize("dim", [0, -1, 3, np.int64(2)])
def test_check_dim_accepts_integers_and_returns_python_ints(dim):
    assert check_dim(dim) == int(dim)
    assert type(check_dim(dim)) is int


@pytest.mark.parametrize("dim", [0.5, 1.0, "1", None, True, False, (1,)])
def test_check_dim_refuses_non_integers_naming_dim_and_value(dim):
    with pytest.raises(TypeError, match=re.escape(f"dim must be an int, got dim={dim!r}")):
        check_dim(dim)


# ---------------------------------------------------------------- check_input


@pytest.mark.parametrize(
    ("shape", "dim", "expected"), [((3,), 0, 0), ((3,), -1, 0), ((2, 3), -1, 1), ((2, 3, 4), -2, 1), ((0, 3), 1, 1)]
)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_check_input_accepts_floating_tensors_and_returns_the_normalised_dim(shape, dim, expected, dtype):
    assert check_input(torch.zeros(shape, dtype=dtype), dim) == expected


@pytest.mark.parametrize("X", [[0.1, 0.2], np.zeros(3), 1.0, None])
def test_check_input_refuses_non_tensors_naming_X_and_its_type(X):
    with pytest.raises(TypeError, match=re.escape(f"X must be a torch.Tensor, got {type(X).__name__}")):
        check_input(X, -1)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool, torch.complex64])
def test_check_input_refuses_non_floating_dtypes_naming_X_and_the_dtype(dtype):
    with pytest.raises(TypeError, match=re.escape(f"X must be a floating-point tensor, got dtype={dtype}")):
        check_input(torch.zeros(3, dtype=dtype), -1)


@pytest.mark.parametrize("dim", [0.5, "0", True, None])
def test_check_input_refuses_a_non_integer_dim_naming_dim_and_value(dim):
    with pytest.raises(TypeError, match=re.escape(f"dim must be an int, got dim={dim!r}")):
        check_input(torch.zeros(3), dim)


def test_check_input_refuses_a_0d_tensor_naming_X():
    with pytest.raises(ValueError, match="X must have at least one dimension to normalise over, got a 0-d tensor"):
        check_input(torch.tensor(1.0), 0)


@pytest.mark.parametrize(("shape", "dim"), [((2, 0), 1), ((2, 0), -1), ((0,), 0)])
def test_check_input_refuses_an_empty_dim_naming_dim_and_value(shape, dim):
    with pytest.raises(ValueError, match=re.escape(f"cannot normalise over dim={dim}: it has size 0")):
        check_input(torch.zeros(shape), dim)


@pytest.mark.parametrize("dim", [2, -3, 10])
def test_check_input_raises_index_error_for_an_out_of_range_dim_as_torch_does(dim):
    with pytest.raises(IndexError, match=str(dim)):
        check_input(torch.zeros(2, 3), dim)


def test_check_input_scriptable_gives_the_same_errors_as_check_input():
    for X, dim, error in (
        (torch.zeros(3, dtype=torch.int64), 0, TypeError),
        (torch.tensor(1.0), 0, ValueError),
        (torch.zeros(2, 0), 1, ValueError),
        (torch.zeros(2, 3), 2, IndexError),
    ):
        with pytest.raises(error) as plain:
            check_input(X, dim)
        with pytest.raises(error) as scriptable:
            check_input_scriptable(X, dim)
        assert str(plain.value) == str(scriptable.value)
    assert check_input_scriptable(torch.zeros(2, 3), -1) is None


def test_check_input_scriptable_compiles_with_torchscript():
    scripted = torch.jit.script(check_input_scriptable)
    scripted(torch.zeros(2, 3), 1)
    with pytest.raises(Exception, match="size 0"):
        scripted(torch.zeros(2, 0), 1)


# ---------------------------------------------------------------- positive integers


@pytest.mark.parametrize("value", [1, 2, 1000, np.int32(5)])
def test_check_positive_int_accepts_positive_integers(value):
    assert check_positive_int(value, "n") == int(value)
    assert type(check_positive_int(value, "n")) is int


@pytest.mark.parametrize("value", [0, -1, 1.0, 2.5, "3", True, None])
def test_check_positive_int_refuses_the_rest_naming_the_argument_and_value(value):
    with pytest.raises(ValueError, match=re.escape(f"count must be a positive integer, got count={value!r}")):
        check_positive_int(value, "count")


def test_check_positive_int_accepts_none_only_if_allowed_and_says_so():
    assert check_positive_int(None, "count", allow_none=True) is None
    with pytest.raises(ValueError, match=re.escape("count must be a positive integer or None, got count=0")):
        check_positive_int(0, "count", allow_none=True)


@pytest.mark.parametrize("k", [None, 1, 7, np.int64(3)])
def test_check_k_accepts_none_and_positive_integers(k):
    assert check_k(k) == (None if k is None else int(k))


@pytest.mark.parametrize("k", [0, -2, 1.5, 2.0, True, "4"])
def test_check_k_refuses_the_rest_naming_k_and_value(k):
    with pytest.raises(ValueError, match=re.escape(f"k must be a positive integer or None, got k={k!r}")):
        check_k(k)


@pytest.mark.parametrize(("n_iter", "expected"), [(None, 50), (1, 1), (50, 50), (np.int16(7), 7)])
def test_check_n_iter_accepts_positive_integers_and_none_for_50(n_iter, expected):
    assert check_n_iter(n_iter) == expected
    assert type(check_n_iter(n_iter)) is int


@pytest.mark.parametrize("n_iter", [0, -5, 10.0, False, "10"])
def test_check_n_iter_refuses_the_rest_naming_n_iter_and_value(n_iter):
    with pytest.raises(ValueError, match=re.escape(f"n_iter must be a positive integer, got n_iter={n_iter!r}")):
        check_n_iter(n_iter)


# ---------------------------------------------------------------- compute dtype


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [
        (torch.float16, torch.float32),
        (torch.bfloat16, torch.float32),
        (torch.float32, torch.float32),
        (torch.float64, torch.float64),
    ],
)
def test_compute_dtype_lifts_half_precision_to_float32_only(dtype, expected):
    assert compute_dtype(dtype) is expected
