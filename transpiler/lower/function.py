"""Lowering a whole function: binding the call's arguments, running the body, retrying until reads settle."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import libcst as cst
import numpy as np

from ...graph.diagnostics import GraphSyntaxError, GraphjitError, LoweringError
from ...graph.guards import GuardSet
from ...graph.ir import Graph
from ...graph.paths import Path
from ...graph.types import TupleType, type_of_value
from ..rules import LAX, hint_at
from ...graph.spans import SourceSpan
from ..deep_stack import run_deep
from ..source import function_source, unwrap
from ..values import Seq, Static
from .dispatch import CONSTRUCTS
from .fallback import return_problem, whole_function_problem
from .frame import Frame
from .inline import note_attribute_writes, note_source, run_body
from .state import LoweringState


@dataclass
class Lowered:
    """A lowered function: its graph and the run-time roots its access paths start from."""

    graph: Graph
    globals: dict
    closure: dict
    consts: list
    sources: list = field(default_factory=list)   # (qualname, filename) of everything inlined
    arg_names: list = field(default_factory=list)
    signature: Optional[inspect.Signature] = None
    recipes: dict = field(default_factory=dict)    # const index -> (class, args, kwargs)
    diagnostics: list = field(default_factory=list)
    fallbacks: int = 0
    eager: bool = False                            # nothing compilable: run the function as it is
    # (qualname, filename, first line, last line, sha256 of those lines) of the function and of every
    # function, method and Cell construct it inlined: the cache checks them before reusing an entry
    inlined: list = field(default_factory=list)
    guards: GuardSet = field(default_factory=GuardSet)  # the compile-time reads the graph depends on


@dataclass(frozen=True)
class AbstractArray:
    """An argument known only by its type (`graphjit transpile` without example inputs)."""

    type: Any


def is_runtime_arg(value: Any) -> bool:
    """Arrays (and NumPy scalars) are run-time values; Python scalars and objects compile-time."""
    if isinstance(value, (np.ndarray, np.generic, AbstractArray)):
        return True
    if isinstance(value, (tuple, list)):
        return any(is_runtime_arg(v) for v in value)
    return False

def runtime_type(value: Any):
    """The graph type of a run-time argument; an `AbstractArray` (also an item of a tuple or list) is its type."""
    if isinstance(value, AbstractArray):
        return value.type
    if isinstance(value, (tuple, list)):
        return TupleType(tuple(v.type if isinstance(v, AbstractArray) else type_of_value(v) for v in value))
    return type_of_value(value)


MAX_LOWERINGS = 4   # lower_function lowers a function at most this many times


@dataclass
class Findings:
    """What lowering a function found that every read in it must know, also reads lowered before the finding."""

    runtime_objects: set = field(default_factory=set)   # containers (by id) the compiled code changes
    runtime_globals: set = field(default_factory=set)   # (id of a module dict, name) it writes (`global`)
    runtime_attrs: set = field(default_factory=set)     # attribute names written by setattr(obj, "name", v)
    over_budget: dict = field(default_factory=dict)     # loops and calls over the compile budget: skipped at once
    retyped: dict = field(default_factory=dict)         # access path -> attributes a loop or branch retypes

    def learn(self, state: LoweringState) -> bool:
        """Add what one lowering found; True when it found something the function must be lowered again for."""
        self.over_budget.update(state.budget.found)
        new_objects = state.container_writes - self.runtime_objects
        new_globals = state.written_globals - self.runtime_globals
        new_attrs = state.attr_writes - state.mutated_attrs
        new_retyped = {k: v for k, v in state.retyped_paths.items() if not v <= self.retyped.get(k, set())}
        for key, names in new_retyped.items():
            self.retyped[key] = self.retyped.get(key, set()) | names
        if not new_objects and not new_globals and not new_attrs and not new_retyped:
            return False
        self.runtime_objects |= new_objects
        self.runtime_globals |= new_globals
        self.runtime_attrs |= new_attrs
        return True


def lower_until_settled(lower_once: Callable[[Findings], tuple]) -> tuple:
    """Lower a function again while a lowering finds writes that earlier reads must see.

    A container or module global the compiled code changes (`LOG.append(v)`, a helper's `global n`),
    an attribute set through `setattr`, an array whose shape a loop changes: every read of it in the
    function must be made at call time (or typed as unknown), also the reads lowered before the
    write was found. `lower_once(found)` lowers the function knowing `found`; each finding of a
    lowering makes the next one start with it. Findings only grow, so this settles; at most
    MAX_LOWERINGS lowerings, the last one kept. Returns (Lowered, LoweringState) of the last one.
    """
    found = Findings()
    for _ in range(MAX_LOWERINGS):
        lowered, state = lower_once(found)
        if not found.learn(state):
            break
    return lowered, state


def lower_function(fn, args: tuple, kwargs: dict, name: Optional[str] = None, level: str = LAX,
                   collect: bool = False, static: tuple = ()) -> Lowered:
    """Lower `fn` called with these arguments into a graph (specialized to their signature).

    At STRICT and COMPATIBLE every construct the level rejects is reported at once, in one
    `GraphSyntaxError`; at LAX they become fallback blocks. With `collect`, nothing is raised
    for them: `Lowered.diagnostics` lists them (what `graphjit check` prints). `static` names
    parameters that are compile-time values whatever their type (`static_argnums`).

    A Python container or module global the compiled code changes (`LOG.append(v)`, a helper's
    `global n`) must be read at call time everywhere in the function, also before the change: when
    lowering finds such a write, it lowers the function again with those reads made at run time.
    """
    fn = unwrap(fn)
    code = getattr(fn, "__code__", None)
    where = SourceSpan(code.co_filename, code.co_firstlineno, 1) if code is not None else None
    return run_deep(_lower_function, fn, args, kwargs, name, level, collect, static, where=where,
                    what=f"compiling {getattr(fn, '__qualname__', fn)}")


def _lower_function(fn, args, kwargs, name, level, collect, static) -> Lowered:
    lowered, state = lower_until_settled(
        lambda found: _lower_once(fn, args, kwargs, name, level, collect, found, static))
    state.flush_warnings()
    errors = [d for d in lowered.diagnostics if d.severity == "error"]
    if errors and not collect:
        raise GraphSyntaxError(errors)
    return lowered


def _lower_once(fn, args, kwargs, name, level, collect, found: Findings, static=()):
    """One lowering of `fn`, starting from what the earlier ones found."""
    parsed, node = function_source(fn)
    graph = Graph(name or fn.__qualname__)
    graph.span = parsed.span(node)
    state = LoweringState(fn, graph, CONSTRUCTS, level, quiet=collect, over_budget=found.over_budget)
    state.runtime_objects = set(found.runtime_objects)
    state.guards.read_at_call_time = state.runtime_objects
    state.runtime_globals = set(found.runtime_globals)
    state.mutated_attrs |= set(found.runtime_attrs)   # written by setattr(obj, "name", v) found last time
    state.unstable_paths = {k: set(v) for k, v in found.retyped.items()}
    sig = inspect.signature(fn)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise LoweringError(f"{fn.__qualname__}(): {e}", graph.span) from None
    bound.apply_defaults()
    # the state's own closure dict: `lookup` recognises the root's closure by identity, so that
    # closure variables are read through `closure['name']` at run time instead of being baked in
    frame = Frame(parsed, fn.__qualname__, {}, fn.__globals__, state.root_closure)
    spans = {p.name.value: parsed.span(p) for p in _all_params(node.params)}
    arg_names = []
    for pname, value in bound.arguments.items():
        arg_names.append(pname)
        if pname not in static and is_runtime_arg(value):
            arg_type = runtime_type(value)
            arg = graph.add_arg(pname, arg_type, spans.get(pname))
            if isinstance(value, (tuple, list)):
                frame.env[pname] = Seq([state.emit("tuple_get", [arg], {"index": k}, spans.get(pname),
                                                     name=f"{pname}{k}") for k in range(len(value))],
                                       "tuple" if isinstance(value, tuple) else "list")
            else:
                frame.env[pname] = arg
        else:
            graph.add_arg(pname, type_of_value(value) if not isinstance(value, tuple) else TupleType(()),
                          spans.get(pname))
            frame.env[pname] = Static(value, Path("arg", pname))
    state.sources.append((fn.__qualname__, parsed.filename))
    note_attribute_writes(state, node)
    note_source(state, fn.__qualname__, parsed, node)
    whole = whole_function_problem(state, node, parsed)
    if whole is not None:
        state.diagnostics.append(whole)
        result = Static(None)
    else:
        result = run_body(state, node, frame)
    out = None
    if whole is None:
        try:
            out = state.operand(result, state.return_span or graph.span)
        except GraphjitError as error:  # the returned value cannot be built by the graph
            whole = return_problem(state, error, fn.__qualname__)
            if whole is not None:
                state.diagnostics.append(whole)
    if out is None:
        out = graph.const(None, graph.span)
    graph.set_outputs([out])
    lowered = Lowered(graph, fn.__globals__, state.root_closure, state.consts, state.sources, arg_names, sig,
                      state.recipes, _unique(state.diagnostics), state.fallbacks, whole is not None,
                      list(state.inlined.values()), state.guards.result())
    return lowered, state


def _unique(diagnostics: list) -> list:
    """Each problem once (a helper inlined twice reports its problems once), hints fit for its level."""

    seen, out = set(), []
    for d in diagnostics:
        key = (d.code, d.severity, d.message, d.span)
        if key not in seen:
            seen.add(key)
            hint = hint_at(d.level, d.hint)
            out.append(d if hint == d.hint else dataclasses.replace(d, hint=hint))
    return out


def _all_params(params: cst.Parameters) -> list:
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            out.append(star)
    return out
