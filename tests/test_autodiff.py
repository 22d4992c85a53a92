"""Gradients: every program, eager (PYNATIVE) and jitted at O0/O1/O2, through the generated NumPy and
the interpreter, against central finite differences and against the `autograd` package."""

import numpy as np
import pytest

import graphjit as gj
from autodiff_programs import PROGRAMS, aux_output, mlp, rng_arrays, tuple_output

LEVELS = ["O0", "O1", "O2"]
MODES = ["auto", "no_sink"]


def directional_fd(fn, args, k, direction, eps=1e-6):
    """(f(x + eps d) - f(x - eps d)) / 2 eps for argument k, in float64."""
    plus = list(args)
    minus = list(args)
    plus[k] = args[k] + eps * direction
    minus[k] = args[k] - eps * direction
    value = lambda out: out[0] if isinstance(out, tuple) else out  # noqa: E731
    return (np.sum(value(fn(*plus))) - np.sum(value(fn(*minus)))) / (2 * eps)


def check_against_fd(fn, args, positions, grads):
    rng = np.random.default_rng(7)
    for k, g in zip(positions, grads):
        d = rng.standard_normal(np.shape(args[k]))
        expected = directional_fd(fn, args, k, d)
        assert np.sum(g * d) == pytest.approx(expected, rel=1e-5, abs=1e-6), f"argument {k}"


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("mode", MODES)
def test_program_gradient_matches_finite_differences(name, level, mode):
    fn, make_args, positions = PROGRAMS[name]
    args = make_args()
    compiled = gj.jit(fn, jit_config=gj.JitConfig(jit_level=level, exec_mode=mode))
    grads = gj.grad(compiled, positions)(*args)
    check_against_fd(fn, args, positions, grads)
    again = gj.grad(compiled, positions)(*args)          # a second call runs the cached entry
    for a, b in zip(grads, again):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_eager_grad_equals_jitted_grad(name):
    fn, make_args, positions = PROGRAMS[name]
    args = make_args()
    eager = gj.grad(fn, positions)(*args)
    jitted = gj.grad(gj.jit(fn, jit_config=gj.JitConfig(jit_level="O2")), positions)(*args)
    for a, b in zip(eager, jitted):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_matches_autograd_on_the_mlp():
    autograd = pytest.importorskip("autograd")
    anp = autograd.numpy

    def twin(x, w, b):
        h = anp.tanh(anp.dot(x, w) + b)
        return anp.mean(h * h)
    args = rng_arrays((3, 4), (4, 5), (5,))
    ours = gj.grad(mlp, (0, 1, 2))(*args)
    for k in range(3):
        np.testing.assert_allclose(ours[k], autograd.grad(twin, k)(*args), rtol=1e-10, atol=1e-12)


def test_weights_are_read_at_each_call():
    w = np.ones(4)

    def loss(x):
        return (x * w * w).sum()
    g = gj.grad(loss, None, [w])
    x = np.arange(4.0)
    np.testing.assert_allclose(g(x)[0], 2 * x * w)
    w[:] = 3.0                                            # an optimizer's in-place update
    np.testing.assert_allclose(g(x)[0], 2 * x * w)


def test_value_and_grad_with_positions_and_weights():
    x, w, b = rng_arrays((3, 4), (4, 5), (5,))
    value, (dx, (dw, db)) = gj.value_and_grad(mlp, 0, [w, b])(x, w, b)
    assert value == pytest.approx(mlp(x, w, b))
    check_against_fd(mlp, (x, w, b), (0, 1, 2), (dx, dw, db))


def test_a_weight_the_function_does_not_use_gets_zeros():
    x, w = rng_arrays((4,), (4,))
    unused = np.ones((2, 3), np.float32)
    dw, du = gj.grad(lambda_free_loss, None, [w, unused])(x, w)
    np.testing.assert_allclose(dw, x)
    assert du.shape == (2, 3) and du.dtype == np.float32 and not du.any()


def lambda_free_loss(x, w):
    return (x * w).sum()


def test_has_aux_returns_the_other_outputs_untouched():
    x, w = rng_arrays((4,), (4,))
    dx, (aux,) = gj.grad(aux_output, 0, has_aux=True)(x, w)
    np.testing.assert_allclose(dx, w)
    np.testing.assert_allclose(aux, x + 1.0)


def test_tuple_output_without_aux_differentiates_the_sum_of_all_outputs():
    x, w = rng_arrays((4,), (4,))
    dx = gj.grad(tuple_output, 0)(x, w)
    np.testing.assert_allclose(dx, w + 2.0)


def test_return_ids_pairs_each_gradient_with_its_position():
    x, w = rng_arrays((4,), (4,))
    (i, dx), (j, dw) = gj.grad(lambda_free_loss, (0, 1), return_ids=True)(x, w)
    assert (i, j) == (0, 1)
    np.testing.assert_allclose(dx, w)
    np.testing.assert_allclose(dw, x)


def test_grad_operation_get_all():
    x, w = rng_arrays((4,), (4,))
    dx, dw = gj.GradOperation(get_all=True)(lambda_free_loss)(x, w)
    np.testing.assert_allclose(dx, w)
    np.testing.assert_allclose(dw, x)
    np.testing.assert_allclose(gj.GradOperation()(lambda_free_loss)(x, w), w)


def test_source_shows_forward_and_backward_in_one_function():
    x, w, b = rng_arrays((3, 4), (4, 5), (5,))
    text = gj.grad(mlp, (1,)).source(x, w, b)
    assert text.startswith("def mlp(x, w, b):") and "np.tanh" in text and "x.T @" in text


@pytest.mark.parametrize("call, message", [
    (lambda x, w: gj.grad(lambda_free_loss, 5)(x, w), "grad_position 5 is out of range"),
    (lambda x, w: gj.grad(lambda_free_loss, None, [3.0])(x, w), "not a Parameter"),
    (lambda x, w: gj.grad(lambda_free_loss, 0)(np.arange(4), w), "integers carry no gradient"),
    (lambda x, w: gj.grad(lambda_free_loss, 0, has_aux=True)(x, w), "has_aux=True"),
    (lambda x, w: gj.grad(lambda_free_loss, None)(x, w), "cannot both be None"),
])
def test_bad_requests_get_one_clear_line(call, message):
    x, w = rng_arrays((4,), (4,))
    with pytest.raises(gj.GraphjitError) as info:
        call(x, w)
    assert message in str(info.value)
    assert "Traceback" not in str(info.value)


def opaque_loss(x):
    return np.sum(float_of(x) * x)


def float_of(x):
    return np.linalg.norm(x)


def test_an_op_without_a_rule_is_an_error_naming_the_line():
    with pytest.raises(gj.GraphjitError) as info:
        gj.grad(opaque_loss)(np.ones(3))
    assert "cannot differentiate" in str(info.value)


def test_grad_operation_with_sensitivity_takes_it_as_the_last_argument():
    x, w = rng_arrays((4,), (4,))
    sens = np.array([1.0, 2.0, 3.0, 4.0])
    dx = gj.GradOperation(sens_param=True)(elementwise_product)(x, w, sens)
    np.testing.assert_allclose(dx, w * sens)
    dx, dw = gj.GradOperation(get_all=True, sens_param=True)(elementwise_product)(x, w, sens)
    np.testing.assert_allclose(dw, x * sens)


def elementwise_product(x, w):
    return x * w


def test_network_parameters_have_mindspore_names_and_take_gradients():
    from graphjit import nn

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.dense_relu_sequential = nn.SequentialCell(nn.Dense(12, 8), nn.ReLU(), nn.Dense(8, 3))

        def construct(self, x):
            return self.dense_relu_sequential(self.flatten(x))
    net = Net()
    params = net.trainable_params()
    assert [p.name for p in params] == ["dense_relu_sequential.0.weight", "dense_relu_sequential.0.bias",
                                        "dense_relu_sequential.2.weight", "dense_relu_sequential.2.bias"]
    assert all(isinstance(p, gj.Parameter) for p in params)
    x = np.random.default_rng(0).standard_normal((5, 3, 4)).astype(np.float32)
    out = gj.jit(net)(x)
    assert type(out) is np.ndarray                       # results are plain arrays

    def loss(x):
        return (net(x) ** 2).mean()
    grad_fn = gj.grad(loss, None, gj.ParameterTuple(params), return_ids=True)
    named = grad_fn(x)
    assert [n for n, _ in named] == [p.name for p in params]
    for p, (_, g) in zip(params, named):
        assert g.shape == p.shape and g.dtype == np.float32
    before = float(loss(x))
    for p, (_, g) in zip(params, named):                 # one SGD step, in place
        p -= 0.1 * g
    assert all(isinstance(p, gj.Parameter) for p in net.trainable_params())
    assert float(loss(x)) < before
    assert float(gj.jit(loss)(x)) == pytest.approx(float(loss(x)), rel=1e-6)


def make_training(level, mode):
    """The tutorials' training step: value_and_grad over the weights, SGD in place, inside jit."""
    from graphjit import nn

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense_relu_sequential = nn.SequentialCell(nn.Dense(6, 5), nn.ReLU(), nn.Dense(5, 3))

        def construct(self, x):
            return self.dense_relu_sequential(x)
    gj.set_seed(3)
    net = Net()
    params = net.trainable_params()

    def forward_fn(data, label):
        logits = net(data)
        return softmax_loss(logits, label), logits
    grad_fn = gj.value_and_grad(forward_fn, None, params, has_aux=True)

    def train_step(data, label):
        (loss, _), grads = grad_fn(data, label)
        for p, g in zip(params, grads):
            p -= 0.1 * g
        return loss
    return train_step, gj.jit(train_step, jit_config=gj.JitConfig(jit_level=level, exec_mode=mode))


def softmax_loss(logits, label):
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -logp[np.arange(label.shape[0]), label].mean()


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("mode", MODES)
def test_a_training_step_compiles_forward_and_backward_into_one_graph(level, mode):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 6)).astype(np.float32), rng.integers(0, 3, 8)
    eager_step, _ = make_training(level, mode)
    eager = [float(eager_step(x, y)) for _ in range(4)]
    _, jitted_step = make_training(level, mode)
    compiled = [float(jitted_step(x, y)) for _ in range(4)]
    np.testing.assert_allclose(compiled, eager, rtol=1e-6)
    assert compiled[-1] < compiled[0]
    text = jitted_step.source(x, y)
    assert text.count("def ") == 1 and "# grad of" in text      # one function: forward, then backward


def test_gradients_of_gradients():
    from autodiff_programs import cubic_sine
    x = np.array(0.7)
    first, second = gj.grad(cubic_sine), gj.grad(gj.grad(cubic_sine))
    third = gj.grad(second)
    c, s = np.cos(0.7), np.sin(0.7)
    assert float(first(x)) == pytest.approx(0.49 * c + 1.4 * s)
    assert float(second(x)) == pytest.approx(-0.49 * s + 2.8 * c + 2 * s)
    assert float(third(x)) == pytest.approx(-0.49 * c - 4.2 * s + 6 * c)


# Programs autograd can run (it has no in-place writes): each is run again with `np` bound to
# autograd.numpy, an independent oracle for the whole program.
AUTOGRAD_RUNS = sorted(set(PROGRAMS) - {"writes", "gather_scatter", "grad_inside", "fill_loop", "accumulate",
                                         "recurrence", "nested_fill", "row_writes", "read_before_loop",
                                         "scalar_updates", "two_arrays_written", "result_written"})


@pytest.mark.parametrize("name", AUTOGRAD_RUNS)
def test_program_gradient_matches_autograd(name):
    import types
    autograd = pytest.importorskip("autograd")
    fn, make_args, positions = PROGRAMS[name]
    twin = types.FunctionType(fn.__code__, {**fn.__globals__, "np": autograd.numpy}, fn.__name__)
    args = make_args()
    ours = gj.grad(gj.jit(fn, jit_config=gj.JitConfig(jit_level="O2")), positions)(*args)
    for k, g in zip(positions, ours):
        np.testing.assert_allclose(g, autograd.grad(twin, k)(*args), rtol=1e-9, atol=1e-12, err_msg=f"argument {k}")


def test_methods_and_cells_are_differentiated_like_functions():
    from graphjit import nn

    class Scale(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = gj.Parameter(np.array([1.0, 2.0, 3.0]), "w")

        def construct(self, x):
            return (np.tanh(x * self.w) ** 2).sum()

        def energy(self, x):
            return (x * x * self.w).sum()
    cell = Scale()
    x = np.array([0.1, -0.2, 0.3])
    t = np.tanh(x * cell.w)
    np.testing.assert_allclose(gj.grad(cell)(x), 2 * t * (1 - t * t) * cell.w)
    np.testing.assert_allclose(gj.grad(cell.energy)(x), 2 * x * cell.w)
    np.testing.assert_allclose(gj.grad(cell.energy, None, cell.trainable_params())(x)[0], x * x)


def test_a_vectorized_loop_is_differentiated_in_its_whole_array_form():
    from autodiff_programs import fill_loop
    x, w = rng_arrays((5,), (5,))
    jitted = gj.jit(fill_loop, jit_config=gj.JitConfig(jit_level="O2"))
    grad_fn = gj.grad(jitted, (0, 1))
    check_against_fd(fill_loop, (x, w), (0, 1), grad_fn(x, w))
    text = grad_fn.source(x, w)
    code = [line.strip() for line in text.splitlines() if not line.strip().startswith("#")]
    assert not any(line.startswith(("for ", "while ")) for line in code)  # no loop left, forward or backward
    assert "np.sin(x)" in text
    looped = gj.grad(gj.jit(fill_loop, jit_config=gj.JitConfig(jit_level="O1")), (0, 1))   # O1 keeps the loop
    for a, b in zip(looped(x, w), grad_fn(x, w)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert "for i in range" in looped.source(x, w)


@pytest.mark.parametrize("mode", MODES)
def test_a_gradient_taken_inside_jit_sees_the_vectorized_loop(mode):
    """Inside a jitted function, the gradient is built after the passes before differentiation, as
    at the top level: at O2 the loop filling `out` is one array expression, forward and backward."""
    from autodiff_programs import fill_loop
    x, w = rng_arrays((5,), (5,))
    grad_fn = gj.grad(fill_loop, (0, 1))

    def step(x, w):
        dx, dw = grad_fn(x, w)
        return x - 0.1 * dx, w - 0.1 * dw
    jitted = gj.jit(step, jit_config=gj.JitConfig(jit_level="O2", exec_mode=mode))
    for _ in range(2):
        nx, nw = jitted(x, w)
        dx, dw = gj.grad(gj.jit(fill_loop, jit_config=gj.JitConfig(jit_level="O2")), (0, 1))(x, w)
        np.testing.assert_allclose(nx, x - 0.1 * dx, rtol=1e-12)
        np.testing.assert_allclose(nw, w - 0.1 * dw, rtol=1e-12)
        check_against_fd(fill_loop, (x, w), (0, 1), ((x - nx) / 0.1, (w - nw) / 0.1))
        x, w = nx, nw
    code = [line.strip() for line in jitted.source(x, w).splitlines() if not line.strip().startswith("#")]
    assert not any(line.startswith(("for ", "while ")) for line in code)
    looped = gj.jit(step, jit_config=gj.JitConfig(jit_level="O1"))        # O1 keeps the loop, forward and backward
    for a, b in zip(looped(x, w), jitted(x, w)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert "for i in range" in looped.source(x, w)


def test_a_gradient_inside_a_loop_of_a_jitted_function():
    """A gradient function called in a run-time loop: built in the loop's body (no vectorization first)."""
    from autodiff_programs import mlp
    x, w, b = rng_arrays((3, 4), (4, 5), (5,))
    grad_fn = gj.grad(mlp, (1, 2))

    def train(x, w, b, steps):
        for _ in range(steps):
            dw, db = grad_fn(x, w, b)
            w = w - 0.5 * dw
            b = b - 0.5 * db
        return w, b
    for level in LEVELS:
        jitted = gj.jit(train, jit_config=gj.JitConfig(jit_level=level))
        for got, want in zip(jitted(x, w, b, 3), train(x, w, b, 3)):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def _reads_in_a_branch(x, w):
    out = np.zeros_like(x)
    for i in range(1, x.shape[0]):
        out[i] = x[i] * w[i]
        if i > 1:
            w = w * out[i - 1]
    return out.sum()


def _scales_in_place(x, w):
    out = np.ones((3, 4))
    for i in range(3):
        out *= x
    return out.sum()


def _copies_part_of_itself(x, w):
    out = np.zeros(4)
    for i in range(3):
        out[i] = x[i]
        out[1:] = out[:-1]
    return (out * w).sum()


def _writes_through_a_view(x, w):
    z = x * 1.0
    v = z[1:]
    v[...] = v * w[1:]
    return (z * w).sum()


def _fills_through_a_method(x, w):
    y = x * 2.0
    y.fill(1.0)
    return (y * w).sum()


@pytest.mark.parametrize("fn, message", [
    (_writes_through_a_view, "in-place write into an argument, a weight or a view"),
    (_fills_through_a_method, "cannot differentiate through"),
    (_reads_in_a_branch, "reads, in a nested loop or branch, an array it writes"),
    (_scales_in_place, "writes in place an array it carries from one iteration to the next"),
    (_copies_part_of_itself, "writes part of an array it writes in place"),
])
def test_writes_the_gradient_cannot_follow_are_refused_with_the_line(fn, message):
    """Never a silent wrong gradient: a write through a view, or by a method the compiler cannot see
    into, changes an array the output reads; and loop writes the replay could not follow."""
    x, w = rng_arrays((4,), (4,))
    with pytest.raises(gj.GraphjitError, match=message) as info:
        gj.grad(fn, (0, 1))(x, w)
    assert "test_autodiff.py" in str(info.value)


def test_a_write_inside_a_branch_is_refused_never_a_silent_zero():
    from autodiff_programs import branch_write
    x, w = np.abs(rng_arrays((4,), (4,))[0]), np.ones(4)
    with pytest.raises(gj.GraphjitError, match="branch writes `out` in place"):
        gj.grad(branch_write)(x, w)


@pytest.mark.parametrize("inside_jit", [False, True])
def test_a_weight_replaced_between_calls_is_seen_as_eager_differentiation_sees_it(inside_jit, monkeypatch):
    """The weights are found by identity: put another array in the weight's place and the function
    no longer reads the weight (its gradient is zero, as eagerly); put it back and it is read again."""
    import autodiff_programs as P
    weight = P.WEIGHT
    grad_fn = gj.grad(P.uses_weight, None, [weight])
    call = gj.jit(lambda_free_call(grad_fn)) if inside_jit else grad_fn
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(call(x)[0], 2 * x * weight)
    monkeypatch.setattr(P, "WEIGHT", np.array([5.0, 5.0, 5.0]))     # same shape and dtype, another array
    np.testing.assert_allclose(call(x)[0], np.zeros(3))
    monkeypatch.setattr(P, "WEIGHT", weight)
    np.testing.assert_allclose(call(x)[0], 2 * x * weight)
    weight *= 2.0                                                     # changed in place: read at each call
    np.testing.assert_allclose(call(x)[0], 2 * x * weight)


def lambda_free_call(grad_fn):
    def step(x):
        return grad_fn(x)
    return step


def test_graphjit_dump_shows_the_graph_before_and_after_differentiation(tmp_path, monkeypatch):
    """At the top level (`grad(f)`) and inside a jitted function (`grad_fn(x)` in a step)."""
    from autodiff_programs import fill_loop
    monkeypatch.setenv("GRAPHJIT_DUMP", str(tmp_path))
    x, w = rng_arrays((5,), (5,))
    gj.grad(gj.jit(fill_loop, jit_config=gj.JitConfig(jit_level="O1"), cache=False))(x, w)
    grad_fn = gj.grad(fill_loop, (0, 1))

    def step(x, w):
        return grad_fn(x, w)
    gj.jit(step, jit_config=gj.JitConfig(jit_level="O1"), cache=False)(x, w)
    files = {p.name.split("-", 1)[1]: p.read_text() for p in tmp_path.rglob("*.txt")}
    assert "# grad of" not in files["before_transform.txt"] and "for_range" in files["after_transform.txt"]
    assert "gradient(" in files["before_gradients.txt"] and "gradient(" not in files["after_gradients.txt"]
