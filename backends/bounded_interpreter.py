"""The interpreter for graphs read from a file: sizes checked before each node runs, failures named.

A loaded graph is checked when it is read (export_load.py), but what a node allocates can depend on
values (`np.zeros(n)`, `np.tile(a, k)`, `'a' * n`, `10 ** n`, broadcasting): before such a node runs,
the size of its result is worked out from its operands and refused beyond `limit_bytes` (and the
string and integer limits of graph/loadable.py); after it runs, an array result is checked too. A
failure that is not the graph's own `raise` becomes one `LoadedGraphError` naming the file and line.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from ..graph import loadable
from ..graph.attrs import keyword_attrs
from ..graph.diagnostics import GraphjitError
from ..graph.evaluate import build_index
from ..graph.ops import OPS
from ..graph.types import ArrayType
from .interpreter import Interpreter


class LoadedGraphError(GraphjitError):
    """A graph read from a file failed or went beyond its bounds while it ran."""


class _Raised(Exception):
    """Carries the exception a `raise` or `assert` node raised out of the size checks, untouched."""

    def __init__(self, error: BaseException, node):
        super().__init__()
        self.error = error
        self.node = node


class BoundedInterpreter(Interpreter):
    """Runs a loaded graph; `where` names the file in errors, `limit_bytes` bounds each value."""

    def __init__(self, graph, roots, where: str, limit_bytes: int, lines: Optional[dict] = None):
        super().__init__(graph, roots)
        self.where = where
        self.lines = lines or {}
        self.limit_bytes = limit_bytes
        self.failed_at = None

    def __call__(self, *args) -> Any:
        self.failed_at = None
        self.steps = 0
        try:
            return super().__call__(*args)
        except _Raised as r:
            r.error.add_note(f"graphjit: raised by the graph's `{r.node.op}` node at {self.where}: "
                             f"{self._place(r.node)}")
            raise r.error.with_traceback(None) from None
        except LoadedGraphError:
            raise
        except (Exception, RecursionError, MemoryError) as e:
            node = self.failed_at
            at = f"{self._place(node)}: `{node.op}`" if node is not None else "the graph"
            message = f"{self.where}: {at} failed: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
            raise LoadedGraphError(message.rstrip(": ") + _source(node)) from None

    def run(self, g, env: dict) -> tuple:
        for node in g.nodes:
            self.steps += 1
            if self.steps > loadable.MAX_STEPS:
                self.failed_at = node
                raise LoadedGraphError(f"{self.where}: {self._place(node)}: the call ran more than "
                                       f"{loadable.MAX_STEPS} nodes (loop iterations included), the most a loaded "
                                       "graph may" + _source(node))
            try:
                env[node.id] = self.eval(node, env)
            except (_Raised, LoadedGraphError):
                raise
            except BaseException as e:
                if not isinstance(e, Exception) and not isinstance(e, (RecursionError, MemoryError)):
                    raise
                if self.failed_at is None:
                    self.failed_at = node
                raise
        return tuple(env[o.id] for o in g.outputs)

    def eval(self, node, env: dict) -> Any:
        if node.op in ("raise", "assert"):
            try:
                return super().eval(node, env)
            except Exception as e:
                raise _Raised(e, node) from None
        if node.op not in ("if", "for_range", "while"):
            self._precheck(node, [env[o.id] for o in node.operands])
        value = super().eval(node, env)
        self._postcheck(node, value)
        return value

    def _place(self, node) -> str:
        return self.lines.get(node.id, "graph.txt")

    # --- sizes ---------------------------------------------------------------------------------
    def _refuse(self, node, what: str) -> LoadedGraphError:
        self.failed_at = node
        return LoadedGraphError(f"{self.where}: {self._place(node)}: `{node.op}` would make {what}, more than a "
                                "loaded graph may (limits in docs/security.md)" + _source(node))

    def _check_elements(self, node, elements: int, itemsize: int = 8) -> None:
        if elements * max(itemsize, 1) > self.limit_bytes:
            raise self._refuse(node, f"an array of {elements} elements")

    def _precheck(self, node, vals: list) -> None:
        op = node.op
        if op == "inplace":
            op = node.attrs.get("op", "")
        elif op == "call":   # an allowlisted function (graph/loadable.py): sized by its own name's rule
            op = str(node.attrs.get("fn", "")).rpartition(".")[2]
        kw = node.attrs.get("kw", ())
        n_pos = len(vals) - len(kw)
        args, kwargs = vals[:n_pos], {**dict(zip(kw, vals[n_pos:])), **keyword_attrs(node.attrs)}
        for v in vals:   # a view may be far larger than its memory (`broadcast_to`, windows)
            if isinstance(v, np.ndarray):
                self._check_elements(node, v.size, v.itemsize)
        self._python_values(node, op, args)
        if node.op not in ("format", "dict", "note", "tuple", "list", "getitem", "tuple_get"):
            for v in [*args, *kwargs.values(), *node.attrs.values()]:
                if isinstance(v, str) and _big_dtype(v):
                    raise self._refuse(node, f"arrays of dtype {v!r}"[:200])
        if op == "append" and isinstance(args[0] if args else None, list) \
                and len(args[0]) >= loadable.MAX_STRING_CHARS:
            raise self._refuse(node, f"a list of more than {loadable.MAX_STRING_CHARS} items")
        if op == "tolist" and isinstance(args[0] if args else None, np.ndarray):
            self._check_elements(node, args[0].size, 40)   # a Python object per element
        if op == "getitem" and args and isinstance(args[0], np.ndarray):
            index = build_index(node, node.attrs.get("index", ()), vals)
            elements = _index_elements(args[0], index if isinstance(index, tuple) else (index,))
            if elements is not None:
                self._check_elements(node, elements, args[0].itemsize)
        elements = _result_elements(op, args, kwargs)
        if elements is not None:
            itemsize = np.dtype(node.type.dtype).itemsize if isinstance(node.type, ArrayType) and node.type.dtype else 8
            self._check_elements(node, elements, itemsize)

    def _python_values(self, node, op: str, args: list) -> None:
        """`10 ** n`, `1 << n`, `'a' * n`, `[0] * n` on Python values: sized before they are computed."""
        if len(args) != 2 or any(isinstance(a, (np.ndarray, np.generic)) for a in args):
            return
        a, b = args
        if op in ("pow", "power") and _is_int(a) and _is_int(b) and b > 0:
            if max(a.bit_length(), 1) * b > loadable.MAX_INT_BITS:
                raise self._refuse(node, f"an integer of about {a.bit_length() * b} bits")
        elif op in ("lshift",) and _is_int(a) and _is_int(b):
            if a.bit_length() + b > loadable.MAX_INT_BITS:
                raise self._refuse(node, f"an integer of {a.bit_length() + b} bits")
        elif op == "mul":
            seq, n = (a, b) if isinstance(a, (str, bytes, list, tuple)) else (b, a)
            if isinstance(seq, (str, bytes, list, tuple)) and _is_int(n) and len(seq) * n > loadable.MAX_STRING_CHARS:
                raise self._refuse(node, f"a sequence of {len(seq) * n} items")

    def _postcheck(self, node, value) -> None:
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, np.ndarray):
                self._check_elements(node, v.size, v.itemsize)
            elif isinstance(v, (str, bytes, list, tuple)) and len(v) > loadable.MAX_STRING_CHARS:
                raise self._refuse(node, f"a {type(v).__name__} of {len(v)} items")
            elif _is_int(v) and v.bit_length() > loadable.MAX_INT_BITS:
                raise self._refuse(node, f"an integer of {v.bit_length()} bits")


def _source(node) -> str:
    """The node's source location as the file states it: text only. Errors about a loaded graph carry
    no span, so rendering them never reads a local file the graph names."""
    return f" (exported from {node.span})" if node is not None and node.span is not None else ""


def _big_dtype(text: str) -> bool:
    """Does `text` name a dtype that is not a number (`'U1000000000'`, `'O'`, `'V8'`, a record)?"""
    if len(text) > 64:
        return False
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dtype = np.dtype(text)
    except Exception:   # not a dtype: a mode, an einsum spec, a message
        return False
    return dtype.hasobject or dtype.kind in "OSUVMm" or dtype.itemsize > 16 or dtype.fields is not None


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _shape(v) -> tuple:
    return tuple(getattr(v, "shape", ()) or ())


def _count(v) -> int:
    """Elements of a shape argument (`3`, `(2, 3)`)."""
    dims = tuple(v) if isinstance(v, (tuple, list, np.ndarray)) else (v,)
    return math.prod(max(int(d), 0) for d in dims)


def _index_elements(base: np.ndarray, index: tuple):
    """At most how many elements `base[index]` has: the index arrays broadcast together (a mask counts
    as its size) times the axes they leave; None for an index without arrays (a view of `base`)."""
    try:
        arrays = [np.asarray(i) for i in index if isinstance(i, (np.ndarray, list))]
        if not arrays:
            return None
        consumed = sum(a.ndim if a.dtype == bool else 1 for a in arrays) + \
            sum(1 for i in index if isinstance(i, (int, np.integer)) and not isinstance(i, bool))
        picked = math.prod(np.broadcast_shapes(*((a.size,) if a.dtype == bool else a.shape for a in arrays)))
        left = sorted(base.shape)[min(consumed, base.ndim):]   # the largest axes: an upper bound
        return picked * math.prod(left)
    except (TypeError, ValueError, OverflowError):
        return None


def _arrays_in(values) -> int:
    """Elements of every array among `values`, inside tuples and lists too."""
    total = 0
    for v in values:
        if isinstance(v, (tuple, list)):
            total += _arrays_in(v)
        else:
            total += int(np.size(v)) if isinstance(v, (np.ndarray, np.generic, int, float, complex)) else 1
    return total


def _result_elements(op: str, args: list, kwargs: dict):
    """How many elements `op` will make from these operands, for ops whose result is not bounded by
    their operands' sizes; None where it is (or cannot be worked out: the result is checked after)."""
    try:
        if op in ("zeros", "ones", "empty", "full"):
            return _count(args[0] if args else kwargs["shape"])
        if op == "arange":
            nums = [float(a) for a in args[:3]]
            start, stop, step = (0.0, nums[0], 1.0) if len(nums) == 1 else (nums + [1.0])[:3]
            return max(0, math.ceil((stop - start) / step)) if step else 0
        if op == "linspace":
            return int(args[2] if len(args) > 2 else kwargs.get("num", 50))
        if op == "eye":
            n = int(args[0])
            m = args[1] if len(args) > 1 and args[1] is not None else kwargs.get("M") or n
            return n * int(m)
        if op == "tile":
            return _count(_shape(args[0]) or (1,)) * _count(args[1])
        if op == "repeat":
            repeats = args[1] if len(args) > 1 else kwargs["repeats"]
            base = _count(_shape(args[0]) or (1,))
            return base * int(repeats) if np.ndim(repeats) == 0 else int(np.sum(repeats, dtype=np.int64))
        if op == "pad":
            width = np.broadcast_to(np.asarray(args[1], dtype=np.int64), (len(_shape(args[0])), 2))
            return math.prod(d + int(a) + int(b) for d, (a, b) in zip(_shape(args[0]), width))
        if op in ("outer",):
            return _count(_shape(args[0]) or (1,)) * _count(_shape(args[1]) or (1,))
        if op in ("matmul", "dot") and len(args) == 2:
            a, b = _shape(args[0]), _shape(args[1])
            if len(a) < 1 or len(b) < 1:
                return _count(a or b)
            if op == "dot":
                return math.prod(a[:-1]) * math.prod(b[:-2]) * (b[-1] if len(b) > 1 else 1)
            batch = np.broadcast_shapes(a[:-2], b[:-2])
            return math.prod(batch) * (a[-2] if len(a) > 1 else 1) * (b[-1] if len(b) > 1 else 1)
        if op == "einsum" and args and isinstance(args[0], str) and "." not in args[0]:
            inputs, _, output = args[0].replace(" ", "").partition("->")
            sizes = {}
            for letters, operand in zip(inputs.split(","), args[1:]):
                sizes.update(zip(letters, _shape(operand)))
            if not _:
                output = "".join(sorted(c for c in sizes if inputs.count(c) == 1))
            return math.prod(sizes.get(c, 1) for c in output)
        if op == "tensordot" and len(args) >= 2:
            a, b = _shape(args[0]), _shape(args[1])
            axes = args[2] if len(args) > 2 else kwargs.get("axes", 2)
            if isinstance(axes, int):
                return math.prod(a[:len(a) - axes]) * math.prod(b[axes:])
            drop_a, drop_b = ({int(x) for x in np.atleast_1d(ax)} for ax in axes)
            return math.prod(d for k, d in enumerate(a) if k not in drop_a and k - len(a) not in drop_a) * \
                math.prod(d for k, d in enumerate(b) if k not in drop_b and k - len(b) not in drop_b)
        if op in ("concatenate", "stack", "hstack", "vstack", "column_stack", "append"):
            return _arrays_in(args)
        if op == "diag" and np.ndim(args[0]) == 1:
            k = abs(int(args[1] if len(args) > 1 else kwargs.get("k", 0)))
            return (np.size(args[0]) + k) ** 2
        if op == "hist_edges":
            return int(args[2]) + 1
        if op == "broadcast_to":
            return None   # a view: what reads it is checked
        arrays = [_shape(a) for a in [*args, *kwargs.values()] if isinstance(a, (np.ndarray, np.generic))]
        if arrays and (op not in OPS or OPS[op].elementwise):   # ufuncs and allowlisted calls broadcast
            return math.prod(np.broadcast_shapes(*arrays))
    except (TypeError, ValueError, KeyError, IndexError, OverflowError, ZeroDivisionError):
        return None     # the op itself will raise for these operands
    return None
