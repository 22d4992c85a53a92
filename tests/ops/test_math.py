"""ops.matmul, maximum, minimum, abs, sqrt, square, pow, exp, log and the other elementwise ops: eager
and compiled (STRICT, O0-O2, emitter and interpreter) agree, Tensors stay Tensors, gradients match
finite differences."""

import numpy as np
import pytest

import graphjit as gj
from graphjit import Tensor, ops
from op_checks import check_compiled, check_gradient


def matmul_of(x, y):
    return ops.matmul(x, y.T)


def maximum_of(x, y):
    return ops.maximum(x, y)


def minimum_of(x, y):
    return ops.minimum(x, y)


def abs_of(x):
    return ops.abs(x) + ops.absolute(x)


def sqrt_of(x):
    return ops.sqrt(x) + ops.rsqrt(x)


def square_of(x):
    return ops.square(x)


def pow_of(x, y):
    return ops.pow(x, y)


def pow_scalar(x):
    return ops.pow(x, 3)


def exp_log(x):
    return ops.exp(x) + ops.log(x) + ops.log1p(x) + ops.expm1(x)


def trig(x):
    return ops.sin(x) * ops.cos(x)


def arithmetic(x, y):
    return ops.div(ops.sub(ops.add(x, y), ops.mul(x, y)), y) + ops.neg(x) + ops.reciprocal(y)


def rounding(x, y):
    return ops.floor(x) + ops.ceil(y) + ops.sign(x - 1.5) + ops.div(x, y, rounding_mode="floor") + \
        ops.div(x, y, rounding_mode="trunc")


def clamped(x):
    return ops.clamp(x, 0.7, 1.8) + ops.clip(x, max=1.5)


RNG = np.random.default_rng(3)
X = Tensor(RNG.uniform(0.5, 2.0, (3, 4)), gj.float32)
Y = RNG.uniform(0.5, 2.0, (3, 4)).astype(np.float32)

CASES = {
    "matmul": (matmul_of, (X, Y), ("matmul",), True),
    "maximum": (maximum_of, (X, Y), ("maximum",), True),
    "minimum": (minimum_of, (X, Y), ("minimum",), True),
    "abs": (abs_of, (X,), ("abs",), True),
    "sqrt": (sqrt_of, (X,), ("sqrt",), True),
    "square": (square_of, (X,), ("square",), True),
    "pow": (pow_of, (X, Y), ("power",), True),
    "pow_scalar": (pow_scalar, (X,), ("power",), True),
    "exp_log": (exp_log, (X,), ("exp", "log", "log1p", "expm1"), True),
    "trig": (trig, (X,), ("sin", "cos"), True),
    "arithmetic": (arithmetic, (X, Y), ("divide", "negative"), True),
    "rounding": (rounding, (X, Y), ("floor", "ceil", "sign", "floor_divide", "trunc"), False),
    "clamp": (clamped, (X,), ("clip",), True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiles_and_equals_eager(name):
    fn, args, expected_ops, _ = CASES[name]
    result = check_compiled(fn, args, expected_ops)
    assert type(result) is Tensor and result.dtype == np.float32


@pytest.mark.parametrize("name", sorted(CASES))
def test_plain_arrays_give_plain_arrays(name):
    fn, args, _, _ = CASES[name]
    assert type(check_compiled(fn, tuple(np.asarray(a) for a in args))) is np.ndarray


@pytest.mark.parametrize("name", sorted(n for n, case in CASES.items() if case[3]))
def test_gradient_matches_finite_differences(name):
    fn, args, _, _ = CASES[name]
    args = tuple(np.asarray(a, dtype=np.float64) for a in args)
    check_gradient(fn, args, tuple(range(len(args))))


def test_bad_arguments_are_one_clear_line():
    with pytest.raises(ValueError, match="rounding_mode must be None, 'floor' or 'trunc'"):
        ops.div(X, Y, rounding_mode="round")
    with pytest.raises(ValueError, match="at least one of min and max"):
        ops.clamp(X)
