"""`grad`, `value_and_grad` and `GradOperation`: gradient functions compiled with their forward pass.

`grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False)` returns a function that
compiles `fn` to a graph, appends the backward pass (graph/autodiff) and runs both as one piece of
generated NumPy. Each signature compiles once, as with `jit`; `.source(*args)` shows the code.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import numpy as np

from .backends.namespaces import is_foreign_array, numpy_dtype
from .graph.autodiff.request import GradRequest
from .graph.diagnostics import GraphjitError
from .graph.autodiff.stop import stop_gradient  # noqa: F401  (public: graphjit.stop_gradient)


class GradArgumentError(GraphjitError, ValueError):
    """A gradient asked for with arguments that cannot give one (a position out of range...)."""


class GradFunction:
    """`fn` with its gradient: call it like `fn`; it returns what MindSpore's `grad` returns."""

    def __init__(self, fn: Callable, request: GradRequest, weights: Sequence[Any]):
        from .api import JitFunction
        self.fn = fn
        self.request = request
        self.weights = tuple(weights)
        plain, config = _plain_function(fn)
        # a gradient of a gradient, or a sensitivity riding along as the last argument: compiled
        # through a small wrapper taking `*args`, whose body calls `fn` (the front end inlines it)
        self._varargs = request.sens or hasattr(fn, "__graphjit_grad__")
        if request.sens:
            plain = _with_sensitivity(fn)
        elif self._varargs:
            plain = _through(fn)
        else:
            self._check_positions(plain)
        self._jit = JitFunction(plain, jit_config=config, cache=False, transform=_GradTransform(self))

    def _check_positions(self, plain) -> None:
        params = [p for p in inspect.signature(plain).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        count = len(params) - (1 if self._owner() is not None else 0)
        for k in self.request.positions or ():
            if not 0 <= k < count:
                raise GradArgumentError(f"grad_position {k} is out of range: {_name(self.fn)} takes {count} "
                                        f"positional argument(s)")

    def __call__(self, *args, **kwargs):
        self._check_arguments(args)
        return self._jit(*self._bound_self(args), **kwargs)

    def _owner(self):
        """The object a method or Cell is called on (compiled as the first argument), or None."""
        if self._varargs:
            return None
        owner = getattr(self.fn, "__self__", None)
        return self.fn if owner is None and _is_cell(self.fn) else owner

    def _bound_self(self, args: tuple) -> tuple:
        owner = self._owner()
        return args if owner is None else (owner,) + args

    def _check_arguments(self, args: tuple) -> None:
        count = len(args) - (1 if self.request.sens else 0)
        for k in self.request.positions or ():
            if k >= count:
                raise GradArgumentError(f"grad_position {k} is out of range: the call passed {count} "
                                        f"argument(s)")
            value = args[k]
            dtype = getattr(value, "dtype", None)
            if dtype is not None and is_foreign_array(value):   # array_api_strict's dtypes are not NumPy's
                dtype = numpy_dtype(dtype)
            if dtype is None or not (np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.complexfloating)):
                kind = type(value).__name__ if dtype is None else f"an array of {dtype}"
                raise GradArgumentError(f"argument {k} of {_name(self.fn)} is {kind}: a gradient needs a "
                                        f"floating-point array (integers carry no gradient)")

    @property
    def __graphjit_grad__(self) -> tuple:
        """What compiled code calling this function needs: (the function, the request, the weights)."""
        return self.fn, self.request, self.weights

    def source(self, *args, **kwargs) -> str:
        """The generated NumPy code (forward and backward) for these arguments."""
        return self._jit.source(*self._bound_self(args), **kwargs)

    def cache_info(self) -> dict:
        """The compiled function's counters (`JitFunction.cache_info`)."""
        return self._jit.cache_info()


def _through(fn):
    """A function compiled code can inline whose body calls `fn` (another gradient function)."""
    def call_gradient(*args):
        return fn(*args)
    return call_gradient


def _with_sensitivity(fn):
    """`fn` called on all arguments but the last, which comes back beside its value (the seed)."""
    def call_with_sensitivity(*args):
        return fn(*args[:-1]), args[-1]
    return call_with_sensitivity


class _GradTransform:
    """What the compiler runs on the lowered graph of the gradient function's `fn`."""

    def __init__(self, owner: GradFunction):
        self.owner = owner

    def __call__(self, lowered, args: tuple, roots) -> None:
        from .graph.autodiff.function import gradient_of, weight_specs
        graph = lowered.graph
        owner = self.owner
        output, sens = graph.outputs[0], None
        if owner._varargs:
            if owner.request.sens:
                output, sens = output.operands
            values = dict(enumerate(args))             # the call spreads `*args`
            inputs = {k: _item(graph, graph.args[0], k) for k in owner.request.positions or ()}
            by_value = [(values[k], inputs.get(k) or _item(graph, graph.args[0], k)) for k in values]
        else:
            inputs = self._arguments(lowered)
            by_value = [(dict(zip(lowered.arg_names, args)).get(a.name), a) for a in graph.args]
        weights = [[node for value, node in by_value if value is w] + _nodes_reading(graph, w, roots)
                   for w in owner.weights]
        _pin_weights(lowered, by_value, roots, owner.weights)
        positions = [inputs.get(k) for k in range(max(inputs, default=-1) + 1)]
        result = gradient_of(graph, owner.request, positions, weights, output, sens, weight_specs(owner.weights))
        graph.set_outputs([result])

    def _arguments(self, lowered) -> dict:
        """The graph argument of each position asked for."""
        shift = 1 if self.owner._owner() is not None else 0      # the method's `self`
        by_name = {a.name: a for a in lowered.graph.args}
        inputs = {}
        for k in self.owner.request.positions or ():
            name = lowered.arg_names[k + shift]
            if name not in by_name:
                raise GradArgumentError(f"argument {k} ({name}) of {_name(self.owner.fn)} is compiled as a "
                                        f"constant: pass a floating-point array to differentiate with respect to it")
            inputs[k] = by_name[name]
        return inputs


def _pin_weights(lowered, by_value, roots, weights) -> None:
    """Which arrays are the weights is decided here, by identity: guard every array the graph reads
    through a path, and every argument that is a weight, to be the same object at each call."""
    from .graph.paths import Path, parse_path
    if not weights:
        return
    for p in lowered.graph.params:
        path = parse_path(p.attrs["path"])
        value = path.resolve(roots)
        if isinstance(value, np.ndarray):
            lowered.guards.require_identity(path, value)
    for value, node in by_value:
        if node.op == "arg" and any(value is w for w in weights):
            lowered.guards.require_identity(Path("arg", node.name), value)


def _item(graph, tuple_arg, k: int):
    """`args[k]` of a `*args` argument: the node the graph already has, or a new one."""
    for node in graph.nodes:
        if node.op == "tuple_get" and node.operands[0] is tuple_arg and node.attrs["index"] == k:
            return node
    first = graph.nodes[0] if graph.nodes else None
    return graph.add("tuple_get", [tuple_arg], {"index": k}, tuple_arg.type.items[k], before=first)


def _nodes_reading(graph, weight, roots) -> list:
    """The graph's nodes whose value is `weight` itself (a parameter read or an argument)."""
    from .graph.paths import parse_path
    found = []
    for p in graph.params:
        try:
            value = parse_path(p.attrs["path"]).resolve(roots)
        except Exception:
            continue
        if value is weight:
            found.append(p)
    return found


def _plain_function(fn):
    """The Python function to compile, and the JitConfig of a jitted function or Cell."""
    config = getattr(fn, "jit_config", None)
    inner = getattr(fn, "__graphjit_fn__", None)
    if inner is not None:
        return inner, config
    if _is_cell(fn):
        return type(fn).construct, getattr(fn, "_jit_config", None)
    if inspect.ismethod(fn):
        return fn.__func__, config
    if callable(fn):
        return fn, config
    raise GradArgumentError(f"cannot differentiate {type(fn).__name__}: pass a function, a method or a Cell")


def _is_cell(fn) -> bool:
    return getattr(type(fn), "__graphjit_cell__", False)


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def _weights(weights) -> tuple:
    """`weights` as a tuple of arrays and whether one was given alone."""
    if weights is None:
        return (), False
    single = isinstance(weights, np.ndarray)
    items = (weights,) if single else tuple(weights)
    for k, w in enumerate(items):
        if not isinstance(w, np.ndarray):
            raise GradArgumentError(f"weights[{k}] is {type(w).__name__}, not a Parameter (an array a Cell holds)")
    return items, single


def _positions(grad_position) -> tuple:
    if grad_position is None:
        return None, False
    if isinstance(grad_position, int) and not isinstance(grad_position, bool):
        return (grad_position,), True
    if isinstance(grad_position, tuple) and all(isinstance(k, int) for k in grad_position) and grad_position:
        return tuple(grad_position), False
    raise GradArgumentError(f"grad_position must be an int, a tuple of ints or None, not {grad_position!r}")


def _request(fn, grad_position, weights, has_aux, return_ids, with_value, sens=False):
    positions, is_int = _positions(grad_position)
    items, single = _weights(weights)
    if positions is None and weights is None:
        raise GradArgumentError("grad_position and weights cannot both be None: nothing to differentiate")
    names = tuple(getattr(w, "name", None) or f"weights[{k}]" for k, w in enumerate(items)) \
        if weights is not None else None
    request = GradRequest(positions, is_int, names, single, bool(has_aux), with_value, bool(return_ids), sens)
    return GradFunction(fn, request, items)


def grad(fn: Callable, grad_position=0, weights=None, has_aux: bool = False, return_ids: bool = False):
    """The gradient of `fn` with respect to the arguments at `grad_position` and to `weights`."""
    return _request(fn, grad_position, weights, has_aux, return_ids, with_value=False)


def value_and_grad(fn: Callable, grad_position=0, weights=None, has_aux: bool = False, return_ids: bool = False):
    """`fn`'s value together with its gradient: `(value, gradients)`."""
    return _request(fn, grad_position, weights, has_aux, return_ids, with_value=True)


class GradOperation:
    """MindSpore's older interface: `GradOperation(get_all, get_by_list, sens_param)(fn[, weights])`."""

    def __init__(self, get_all: bool = False, get_by_list: bool = False, sens_param: bool = False):
        self.get_all = get_all
        self.get_by_list = get_by_list
        self.sens_param = sens_param

    def __call__(self, fn: Callable, weights=None) -> GradFunction:
        if self.get_by_list and weights is None:
            raise GradArgumentError("GradOperation(get_by_list=True) needs the weights: grad_op(fn, weights)")
        plain, _ = _plain_function(fn)
        params = [p for p in inspect.signature(plain).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        count = len(params) - (1 if inspect.ismethod(fn) or _is_cell(fn) else 0)
        positions = tuple(range(count)) if self.get_all else (0,)
        items, _ = _weights(weights if self.get_by_list else None)
        names = tuple(getattr(w, "name", None) or f"weights[{k}]" for k, w in enumerate(items)) \
            if self.get_by_list else None
        request = GradRequest(positions if self.get_all or not self.get_by_list else None, not self.get_all,
                              names, False, sens=self.sens_param)
        return GradFunction(fn, request, items)

