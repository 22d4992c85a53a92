"""nn.MaxPool2d and nn.AvgPool2d: MindSpore's defaults, forward against direct loops (padding, stride,
dilation, ceil_mode, count_include_pad, divisor_override, return_indices, CHW input), compiled equal
to eager, gradients by finite differences, and where max pooling sends the gradient on ties."""

import inspect
import math

import numpy as np
import pytest

import graphjit as gj
from graphjit import nn
from layer_checks import compiled_equals_eager, gradients_match_fd


def out_length(n, k, s, d, before, after, ceil_mode):
    room = n + before + after - (k - 1) * d - 1
    out = (math.ceil(room / s) if ceil_mode else room // s) + 1
    return out - 1 if ceil_mode and (out - 1) * s >= n + before else out


def same_pads(n, k, s, d):
    total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
    return total // 2, total - total // 2


def reference(x, net, kind):
    """(output, flat indices) by direct loops; pads and ceil_mode's extra elements never win a max nor
    count in an average, except 'pad' padding with count_include_pad."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (dh, dw) = net.kernel_size, net.stride, net.dilation
    if net.pad_mode == "same":
        (top, bottom), (left, right) = same_pads(h, kh, sh, dh), same_pads(w, kw, sw, dw)
    else:
        top, bottom, left, right = net.padding
    oh = out_length(h, kh, sh, dh, top, bottom, net.ceil_mode and net.pad_mode != "same")
    ow = out_length(w, kw, sw, dw, left, right, net.ceil_mode and net.pad_mode != "same")
    out, index = np.zeros((n, c, oh, ow), x.dtype), np.zeros((n, c, oh, ow), np.intp)
    counted = net.pad_mode == "pad" and getattr(net, "count_include_pad", False)
    for b in range(n):
        for ch in range(c):
            for i in range(oh):
                for j in range(ow):
                    taps, count = [], 0
                    for p in range(kh):
                        for q in range(kw):
                            r, s = i * sh + p * dh - top, j * sw + q * dw - left
                            if 0 <= r < h and 0 <= s < w:
                                taps.append((x[b, ch, r, s], r * w + s))
                                count += 1
                            elif counted and -top <= r < h + bottom and -left <= s < w + right:
                                count += 1
                    if kind == "max":
                        best = max(v for v, _ in taps)
                        out[b, ch, i, j] = best
                        index[b, ch, i, j] = next(k for v, k in taps if v == best)   # the first largest
                    else:
                        out[b, ch, i, j] = sum(v for v, _ in taps) / (net.divisor_override or count)
    return out, index


CASES = [
    dict(kernel_size=2, stride=2),
    dict(kernel_size=3),
    dict(kernel_size=3, stride=2, pad_mode="same"),
    dict(kernel_size=(3, 2), stride=(2, 1), pad_mode="pad", padding=(1, 0)),
    dict(kernel_size=3, stride=2, pad_mode="pad", padding=1),
    dict(kernel_size=2, stride=2, ceil_mode=True),
    dict(kernel_size=3, stride=2, pad_mode="pad", padding=1, ceil_mode=True),
    dict(kernel_size=(1, 3), stride=(3, 2)),
]
MAX_ONLY = [dict(kernel_size=2, dilation=2), dict(kernel_size=3, stride=2, dilation=(1, 2), pad_mode="same")]
AVG_ONLY = [dict(kernel_size=3, stride=2, pad_mode="pad", padding=1, count_include_pad=False),
            dict(kernel_size=2, stride=1, pad_mode="pad", padding=1, divisor_override=3)]
X = np.maximum(np.random.default_rng(0).standard_normal((2, 3, 7, 6)), 0)    # zeros: ties in windows


@pytest.mark.parametrize("kwargs", CASES + MAX_ONLY, ids=[str(c) for c in CASES + MAX_ONLY])
def test_max_pool_matches_direct_loops_and_compiled_equals_eager(kwargs):
    net = nn.MaxPool2d(return_indices=True, **kwargs)
    out, index = compiled_equals_eager(net, X)
    expected, expected_index = reference(X, net, "max")
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(index, expected_index)
    plain = compiled_equals_eager(nn.MaxPool2d(**kwargs), X)
    np.testing.assert_array_equal(plain, expected)


@pytest.mark.parametrize("kwargs", CASES + AVG_ONLY, ids=[str(c) for c in CASES + AVG_ONLY])
def test_avg_pool_matches_direct_loops_and_compiled_equals_eager(kwargs):
    net = nn.AvgPool2d(**kwargs)
    out = compiled_equals_eager(net, X)
    np.testing.assert_allclose(out, reference(X, net, "avg")[0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("layer", [nn.MaxPool2d, nn.AvgPool2d])
@pytest.mark.parametrize("kwargs", [CASES[0], CASES[1], CASES[4], CASES[6]], ids=["2s2", "3s1", "pad", "ceil"])
def test_gradients_match_finite_differences(layer, kwargs):
    x = np.random.default_rng(5).standard_normal((2, 2, 7, 6))      # distinct values: no ties
    gradients_match_fd(layer(**kwargs), x)


@pytest.mark.parametrize("jitted", [False, True])
def test_max_pool_gradient_goes_to_the_first_largest_element(jitted):
    """Ties go to the first element in row-major order, as np.argmax picks it; overlapping windows
    that pick the same element add up."""
    x = np.array([[[[1.0, 1.0, 0.0],
                    [1.0, 0.0, 2.0],
                    [0.0, 2.0, 2.0]]]])
    net = nn.MaxPool2d(kernel_size=2, stride=1)

    def loss(x):
        return net(x).sum()

    fn = gj.jit(loss) if jitted else loss
    g = gj.grad(fn)(x)
    np.testing.assert_array_equal(g, [[[[1.0, 0.0, 0.0], [0.0, 0.0, 2.0], [0.0, 1.0, 0.0]]]])


def test_chw_input_and_float32():
    x = X[0].astype(np.float32)
    out, index = compiled_equals_eager(nn.MaxPool2d(2, 2, return_indices=True), x)
    assert out.shape == index.shape == (3, 3, 3) and out.dtype == np.float32
    np.testing.assert_array_equal(out, reference(X[:1].astype(np.float32), nn.MaxPool2d(2, 2), "max")[0][0])
    avg = compiled_equals_eager(nn.AvgPool2d(3, 1), x)
    assert avg.shape == (3, 5, 4) and avg.dtype == np.float32


def test_mindspore_defaults():
    def defaults(cls):
        return {k: p.default for k, p in inspect.signature(cls).parameters.items()}
    assert defaults(nn.MaxPool2d) == dict(kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1,
                                          return_indices=False, ceil_mode=False, data_format="NCHW")
    assert defaults(nn.AvgPool2d) == dict(kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                                          count_include_pad=True, divisor_override=None, data_format="NCHW")
    np.testing.assert_array_equal(nn.MaxPool2d()(X), X)       # a 1x1 window, stride 1: the input


@pytest.mark.parametrize("layer", [nn.MaxPool2d, nn.AvgPool2d])
@pytest.mark.parametrize("kwargs, message", [
    (dict(pad_mode="full"), "pad_mode"),
    (dict(padding=1), "padding must be 0"),
    (dict(pad_mode="pad", padding=(1, 2, 3)), "padding"),
    (dict(kernel_size=0), "kernel_size"),
    (dict(stride=(1, 2, 3)), "stride"),
    (dict(data_format="NHWC"), "NCHW"),
])
def test_bad_arguments_are_one_clear_error(layer, kwargs, message):
    with pytest.raises(ValueError, match=message):
        layer(**kwargs)


@pytest.mark.parametrize("jitted", [False, True])
def test_max_pool_propagates_nan_to_its_first_occurrence(jitted):
    x = np.array([[[[1.0, np.nan, 3.0, np.nan],
                    [np.nan, 0.0, 2.0, 5.0]]]])
    net = nn.MaxPool2d(kernel_size=2, stride=2, return_indices=True)

    def pool(x):
        return net(x)

    def loss(x):
        return net(x)[0].sum()

    out, index = (gj.jit(pool) if jitted else pool)(x)
    np.testing.assert_array_equal(out, [[[[np.nan, np.nan]]]])
    np.testing.assert_array_equal(index, [[[[1, 3]]]])
    g = gj.grad(gj.jit(loss) if jitted else loss)(x)
    np.testing.assert_array_equal(g, [[[[0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]]]])
