"""MindSpore's other `jit` keywords (graphjit/jit_options.py): accepted, mapped where they mean something
(`dynamic=0/1`, `input_signature`, `fn=`), warned about once where they would change what MindSpore
does, silent for MindSpore's defaults; anything else is still a one-line TypeError."""

import pathlib
import warnings

import numpy as np
import pytest

import graphjit as ms
from graphjit import jit_options, nn
from graphjit.graph.diagnostics import GraphjitWarning

DOC = pathlib.Path(ms.__file__).resolve().parent / "docs" / "jit-keywords.md"


class Spec:
    """A Tensor placeholder as MindSpore's input_signature takes: a shape (None or -1 dynamic) and a dtype."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


def double(x):
    return x * 2.0 + 1.0


def affine(x, w, b):
    return x @ w + b


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch):
    """Each test sees the warn-once table empty."""
    monkeypatch.setattr(jit_options, "_WARNED", set())


@pytest.mark.parametrize("keywords", [
    dict(capture_mode="ast"), dict(mode="PSJit"), dict(backend=""), dict(backend="ms_backend"),
    dict(compile_once=False), dict(hash_args=[double, 3]), dict(dynamic=0), dict(fullgraph=False),
    dict(jit_level="O0"), dict(capture_mode="ast", jit_level="O1", dynamic=0, fullgraph=False, backend="ms_backend"),
])
def test_mindspores_defaults_are_silent(keywords):
    with warnings.catch_warnings():
        warnings.simplefilter("error", GraphjitWarning)
        f = ms.jit(double, **keywords)
        x = np.arange(4.0)
        np.testing.assert_array_equal(f(x), double(x))


@pytest.mark.parametrize("keywords,needle", [
    (dict(capture_mode="bytecode"), "capture_mode='bytecode'"),
    (dict(capture_mode="trace"), "capture_mode='trace'"),
    (dict(mode="PIJit"), "mode='PIJit'"),
    (dict(backend="GE"), "backend='GE'"),
    (dict(compile_once=True), "compile_once=True"),
    (dict(infer_boost="on"), "infer_boost='on'"),
    (dict(exec_order="dfs"), "exec_order='dfs'"),
    (dict(disable_format_transform=True), "disable_format_transform=True"),
    (dict(ge_options={"global": {}}), "ge_options="),
])
def test_keywords_that_would_change_mindspore_warn_once(keywords, needle):
    with pytest.warns(GraphjitWarning) as record:
        f = ms.jit(double, **keywords)
    assert len(record) == 1
    message = str(record[0].message)
    assert message.startswith(f"jit({needle}") and "has no effect in graphjit: " in message and "\n" not in message
    assert record[0].filename == __file__        # points at the user's line
    with warnings.catch_warnings():
        warnings.simplefilter("error", GraphjitWarning)         # the second time, silence
        g = ms.jit(affine, **keywords)
    x = np.arange(3.0)
    np.testing.assert_array_equal(f(x), double(x))   # and the function still compiles and runs
    np.testing.assert_array_equal(g(x, np.eye(3), x), affine(x, np.eye(3), x))


def test_a_different_value_of_a_keyword_warns_again():
    with pytest.warns(GraphjitWarning, match="bytecode"):
        ms.jit(double, capture_mode="bytecode")
    with pytest.warns(GraphjitWarning, match="trace"):
        ms.jit(double, capture_mode="trace")


@pytest.mark.parametrize("keywords,error,match", [
    (dict(capture_mode="graph"), ValueError, "capture_mode must be one of 'ast', 'bytecode', 'trace', not 'graph'"),
    (dict(mode="GRAPH"), ValueError, "mode must be one of 'PSJit', 'PIJit'"),
    (dict(backend="XLA"), ValueError, "backend must be one of '', 'ms_backend', 'GE', not 'XLA'"),
    (dict(compile_once="yes"), ValueError, "compile_once must be one of False, True"),
    (dict(dynamic=2), ValueError, "dynamic must be 0 or 1"),
    (dict(colour="red"), TypeError, "jit\\(\\) got unexpected options: colour"),
    (dict(ge_options={}, unroll=True), TypeError, "jit\\(\\) got unexpected options: unroll"),
])
def test_bad_values_and_unknown_keywords_are_one_line_errors(keywords, error, match):
    with pytest.raises(error, match=match) as info:
        ms.jit(double, **keywords)
    assert "\n" not in str(info.value)


def test_fn_is_mindspores_older_name_for_the_function():
    f = ms.jit(fn=double)
    x = np.ones(3)
    np.testing.assert_array_equal(f(x), double(x))
    with pytest.raises(TypeError, match="both `function` and `fn`"):
        ms.jit(double, fn=affine)
    decorator = ms.jit(mode="PSJit", jit_config=ms.JitConfig(jit_level="O2"))
    np.testing.assert_array_equal(decorator(double)(x), double(x))


def test_dynamic_1_compiles_once_for_every_shape_and_0_per_shape():
    generic, specific = ms.jit(double, dynamic=1), ms.jit(double, dynamic=0)
    for n in (2, 5, 9):
        x = np.linspace(0, 1, n)
        np.testing.assert_array_equal(generic(x), double(x))
        np.testing.assert_array_equal(specific(x), double(x))
    assert generic.cache_info()["compiles"] == 1
    assert specific.cache_info()["compiles"] == 3


def test_input_signature_with_none_dimensions_compiles_shape_generic():
    f = ms.jit(affine, input_signature=(Spec((None, 3), np.float32), Spec((3, 2), np.float32),
                                        Spec((2,), np.float32)))
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal(2).astype(np.float32)
    for n in (1, 4, 7):
        x = rng.standard_normal((n, 3)).astype(np.float32)
        np.testing.assert_allclose(f(x, w, b), affine(x, w, b), rtol=1e-6)
    assert f.cache_info()["compiles"] == 1
    assert f.dynamic == {"x": frozenset({0})}


@pytest.mark.parametrize("x,got", [
    (np.ones((4, 3)), "float64 (4, 3)"),                    # dtype
    (np.ones((4, 2), np.float32), "float32 (4, 2)"),        # a static dimension
    (np.ones((4, 3, 1), np.float32), "float32 (4, 3, 1)"),  # rank
    (3.0, "float"),                                         # not an array
])
def test_input_signature_rejects_other_arguments_even_after_a_fast_path_hit(x, got):
    f = ms.jit(double, input_signature=Spec([-1, 3], ms.float32))
    ok = np.ones((2, 3), np.float32)
    for _ in range(5):                                       # an inline (fast path) entry exists
        np.testing.assert_array_equal(f(ok), double(ok))
    with pytest.raises(TypeError) as info:
        f(x)
    assert str(info.value) == (f"double(): argument 'x' does not match input_signature: expected "
                               f"float32[?, 3], got {got}")
    with pytest.raises(TypeError):
        f(x)                                                 # no entry was made for it
    np.testing.assert_array_equal(f(ok), double(ok))


def test_input_signature_by_name_leaves_other_parameters_free():
    f = ms.jit(affine, input_signature={"w": Spec((3, None), np.float64)})
    x = np.ones((2, 3))
    for cols in (1, 4):
        np.testing.assert_array_equal(f(x, np.ones((3, cols)), 1.0), affine(x, np.ones((3, cols)), 1.0))
    assert f.dynamic == {"w": frozenset({1})}
    with pytest.raises(TypeError, match="argument 'w' does not match input_signature: expected float64\\[3, \\?\\]"):
        f(x, np.ones((2, 4)), 1.0)


def test_input_signature_of_a_static_tensor_and_of_a_dynamic_rank():
    f = ms.jit(double, input_signature=np.zeros((2, 2), np.float32))   # a Tensor: its own shape
    np.testing.assert_array_equal(f(np.ones((2, 2), np.float32)), double(np.ones((2, 2), np.float32)))
    with pytest.raises(TypeError, match="expected float32\\[2, 2\\], got float32 \\(2, 3\\)"):
        f(np.ones((2, 3), np.float32))
    g = ms.jit(double, input_signature=[Spec(None, np.int64)])
    for shape in ((3,), (2, 5), (4,)):
        x = np.ones(shape, np.int64)
        np.testing.assert_array_equal(g(x), double(x))
    assert g.cache_info()["compiles"] == 2                  # one per rank
    with pytest.raises(TypeError, match="expected int64\\[...\\], got int32"):
        g(np.ones(3, np.int32))


def test_input_signature_skips_self_for_a_cell():
    ms.set_seed(0)
    net = nn.Dense(3, 2)
    f = ms.jit(net, input_signature=(Spec((None, 3), np.float32),))
    for n in (1, 6):
        x = np.ones((n, 3), np.float32)
        np.testing.assert_array_equal(f(x), net.construct(x))
    with pytest.raises(TypeError, match="argument 'x' does not match"):
        f(np.ones((1, 4), np.float32))


@pytest.mark.parametrize("keywords,error,match", [
    (dict(input_signature=(Spec((1,), np.float32), Spec((1,), np.float32))), ValueError,
     "input_signature has 2 entries for 1 parameters"),
    (dict(input_signature={"y": Spec((1,), np.float32)}), ValueError, "names 'y', which is not a parameter"),
    (dict(input_signature=Spec((1,), np.float32), dynamic=True), ValueError, "input_signature or dynamic"),
    (dict(input_signature=(3,)), TypeError, "must be a Tensor"),
    (dict(input_signature=Spec((-3,), np.float32)), ValueError, "use None or -1"),
    (dict(input_signature=Spec((1,), "not a dtype")), TypeError, "not a NumPy dtype"),
])
def test_input_signature_errors(keywords, error, match):
    with pytest.raises(error, match=match) as info:
        ms.jit(double, **keywords)
    assert "\n" not in str(info.value)


def test_every_keyword_without_an_effect_is_documented():
    text = DOC.read_text()
    for keyword in [*jit_options.NO_EFFECT, *jit_options.BACKEND_OPTIONS, "input_signature", "dynamic", "fn"]:
        assert f"`{keyword}" in text, keyword
