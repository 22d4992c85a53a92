"""nn.Conv2d: MindSpore's signature and defaults, forward against direct loops for every padding form,
stride, dilation and group, compiled equal to eager, gradients by finite differences."""

import inspect

import numpy as np
import pytest

import graphjit as gj
from graphjit import nn
from layer_checks import compiled_equals_eager, gradients_match_fd


def same_pads(n, k, s, d):
    """MindSpore's 'same': ceil(n / s) outputs, the odd padding element after."""
    out = -(-n // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
    return total // 2, total - total // 2


def reference(x, net):
    """The convolution by direct loops over every output element."""
    n, c, h, w = x.shape
    o, cg, kh, kw = net.weight.shape
    (sh, sw), (dh, dw) = net.stride, net.dilation
    if net.pad_mode == "same":
        pads = same_pads(h, kh, sh, dh) + same_pads(w, kw, sw, dw)
    else:
        pads = net.padding
    xp = np.pad(x, ((0, 0), (0, 0), pads[:2], pads[2:]))
    oh = (xp.shape[2] - (kh - 1) * dh - 1) // sh + 1
    ow = (xp.shape[3] - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((n, o, oh, ow), x.dtype)
    per_group = o // net.group
    for b in range(n):
        for oc in range(o):
            first = oc // per_group * cg
            for i in range(oh):
                for j in range(ow):
                    patch = xp[b, first:first + cg, i * sh:i * sh + (kh - 1) * dh + 1:dh,
                               j * sw:j * sw + (kw - 1) * dw + 1:dw]
                    out[b, oc, i, j] = np.sum(patch * net.weight[oc])
            if net.has_bias:
                out[b, oc] += net.bias[oc]
    return out


CASES = [
    dict(kernel_size=3),                                                   # the defaults: 'same', no bias
    dict(kernel_size=3, pad_mode="valid"),
    dict(kernel_size=(3, 2), pad_mode="pad", padding=1),
    dict(kernel_size=3, pad_mode="pad", padding=(1, 2, 0, 3)),             # top, bottom, left, right
    dict(kernel_size=3, stride=2),
    dict(kernel_size=(2, 3), stride=(2, 1), pad_mode="valid"),
    dict(kernel_size=3, dilation=2, pad_mode="valid"),
    dict(kernel_size=3, stride=2, dilation=(2, 1)),                        # 'same' with both
    dict(kernel_size=1, has_bias=True),
    dict(kernel_size=3, group=2, has_bias=True),
    dict(kernel_size=(3, 1), group=4, pad_mode="pad", padding=(0, 1, 2, 0), stride=(1, 2)),
    dict(kernel_size=4, stride=3, pad_mode="same"),                        # even kernel, odd padding split
]


def make(in_channels=4, out_channels=8, **kwargs):
    gj.set_seed(0)
    return nn.Conv2d(in_channels, out_channels, dtype=np.float64, **kwargs)


@pytest.mark.parametrize("kwargs", CASES, ids=[str(c) for c in CASES])
def test_forward_matches_direct_loops_and_compiled_equals_eager(kwargs):
    net = make(**kwargs)
    x = np.random.default_rng(1).standard_normal((2, 4, 7, 6))
    out = compiled_equals_eager(net, x)
    np.testing.assert_allclose(out, reference(x, net), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kwargs", CASES[::2] + [CASES[9]], ids=[str(c) for c in CASES[::2] + [CASES[9]]])
def test_gradients_match_finite_differences(kwargs):
    net = make(**kwargs)
    x = np.random.default_rng(2).standard_normal((2, 4, 5, 6))
    gradients_match_fd(net, x)


def test_float32_in_float32_out_and_graph_mode():
    gj.set_seed(0)
    net = nn.Conv2d(3, 5, 3)
    x = np.random.default_rng(0).standard_normal((2, 3, 9, 9)).astype(np.float32)
    eager = net(x)
    gj.set_context(mode=gj.GRAPH_MODE)
    graph = net(x)
    assert eager.dtype == graph.dtype == np.float32 and eager.shape == (2, 5, 9, 9)
    np.testing.assert_array_equal(graph, eager)


def test_mindspore_signature_defaults_and_weights():
    params = inspect.signature(nn.Conv2d).parameters
    defaults = {name: p.default for name, p in params.items() if p.default is not inspect.Parameter.empty}
    assert list(params)[:3] == ["in_channels", "out_channels", "kernel_size"]
    assert {k: defaults[k] for k in ("stride", "pad_mode", "padding", "dilation", "group", "has_bias",
                                     "weight_init", "bias_init", "data_format")} == dict(
        stride=1, pad_mode="same", padding=0, dilation=1, group=1, has_bias=False, weight_init=None,
        bias_init=None, data_format="NCHW")
    net = nn.Conv2d(6, 4, (3, 2), group=2, has_bias=True)
    assert net.weight.shape == (4, 3, 3, 2) and net.weight.dtype == np.float32 and net.bias.shape == (4,)
    assert [name for name, _ in net.parameters_and_names()] == ["weight", "bias"]
    bound = np.sqrt(3.0) * np.sqrt(2.0 / 6.0) / np.sqrt(3 * 3 * 2)          # HeUniform(sqrt(5)), fan_in 18
    assert np.abs(net.weight).max() <= bound
    assert not hasattr(nn.Conv2d(1, 1, 1), "bias")
    assert nn.Conv2d(1, 2, 3, weight_init="zeros").weight.sum() == 0


@pytest.mark.parametrize("kwargs, message", [
    (dict(pad_mode="full"), "pad_mode"),
    (dict(padding=1), "padding must be 0"),
    (dict(pad_mode="pad", padding=(1, 2, 3)), "padding"),
    (dict(pad_mode="pad", padding=-1), "padding"),
    (dict(stride=0), "stride"),
    (dict(kernel_size=(1, 2, 3)), "kernel_size"),
    (dict(group=3), "divisible"),
    (dict(data_format="NHWC"), "NCHW"),
])
def test_bad_arguments_are_one_clear_error(kwargs, message):
    args = dict(in_channels=4, out_channels=4, kernel_size=3)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        nn.Conv2d(**args)


@pytest.mark.parametrize("shape", [(2, 3, 5, 5), (4, 5, 5)])
def test_input_of_the_wrong_shape_is_one_clear_error_eager_and_compiled(shape):
    net = nn.Conv2d(4, 2, 3)
    x = np.zeros(shape)

    def apply(x):
        return net(x)

    for fn in (net, gj.jit(apply)):
        with pytest.raises(ValueError, match=r"must have shape \(N, 4, H, W\), got"):
            fn(x)
