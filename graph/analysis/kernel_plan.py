"""May a loop that stays a loop run as a Numba kernel with eager Python's results? (`plan_kernel`)

Read by the O2 pass graph/passes/kernels.py (which marks the loops) and by the backend
backends/emit_numba.py (which writes the kernel). The loop body is walked with, for every value,
its *eager kinds* — the Python or NumPy type eager Python would hold there (`float`, `int`,
`np.float64`, `np.int32`, a float64 array of rank 2), found by running the op on stand-in values
of those types, so NumPy's own NEP 50 rules decide — and, for integers, an interval. Loop-carried
values are iterated to a fixed point. A loop qualifies when every op is in the kernel column of
the op table (graph/kernel_ops.py) and:

- floats are float64 (Python `float` and `np.float64` are the same IEEE double in Numba); complex
  values are complex128 NumPy scalars and arrays, with only the ops of the `complex` column
  (arithmetic other than division, `@`, indexing, in-place updates);
- a Python int stays within ±2**62 (Numba's int64 never overflows where Python's int would grow);
  a Python int passed in (an outer loop's index, an argument) is assumed within ±2**40, which the
  call checks (`int:<bound>`: another value runs the Python loop);
  a NumPy integer result is wrapped to its dtype in the kernel (`np.int32(a + b)`), so it wraps
  exactly as eager NumPy does (without NumPy's overflow warning);
- divisions are all between Python numbers (Numba's `python` error model: ZeroDivisionError) or
  all involve a NumPy value (the `numpy` model: inf/nan), or divide by a non-zero constant;
- `math` functions are only those that never raise (KERNEL_CALLS); NumPy ufuncs on floats;
- `min`/`max` compare operands of one type, or floats (Numba's `max` keeps Python's NaN behaviour;
  the result may then be a Python float or an np.float64, which matters only where it is divided
  or returned after the loop);
- indices are integers, slices, or a 1-D integer array reading a 1-D array (a gather); an integer
  index that does not provably stay within the static shape (its interval) is tested in the kernel
  (`checked_index`: NumPy's IndexError and message, at the same iteration), a gather by Numba
  (`boundscheck=True`); the call checks the static shapes the proofs assumed;
- loop-carried values are scalars, and each result has one eager type after the loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from typing import Optional

import numpy as np

from ..ir import Graph, Node
from ..kernel_ops import KERNEL_CALLS, kernel_op
from ..literals import OperandRef
from ..ops import OPS
from ..types import ArrayType, ScalarType
from .int_bounds import NoBound, counter_step, interval_of

LIMIT = 2 ** 62                 # a Python int beyond this could overflow Numba's int64
DIM_BOUND = 2 ** 48             # an array dimension
PARAM_INT = 2 ** 40             # a Python int argument: the call checks |v| <= this (else the Python loop runs)
INT64 = (-2 ** 63, 2 ** 63 - 1)
ARRAY_DTYPES = {"float64", "complex128", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "bool"}
INEXACT = ("float64", "complex128")   # the dtypes of array arithmetic in a kernel
ROUNDS = 6                      # fixed-point rounds for carried values before widening
ATTRS = {"inplace": {"op"}, "getitem": {"index"}, "setitem": {"index"}, "const": {"value"}, "note": {"text"},
         "tuple_get": {"index"}, "for_range": {"carried", "vectorize", "numba", "scalar", "unswitched"}, "if": set(),
         "dim": {"axis"}}
PY = {"float": float, "int": int, "bool": bool}


class NotKernel(Exception):
    """Why a loop stays a Python loop (one line)."""


@dataclass(frozen=True)
class Value:
    """Eager kinds of one value (`float`, `int`, `bool`, `np.float64`, `arr:float64:2`) and, for integers,
    the interval that holds every value it takes."""

    kinds: frozenset
    lo: float = -np.inf
    hi: float = np.inf

    def join(self, other: "Value") -> "Value":
        return Value(self.kinds | other.kinds, min(self.lo, other.lo), max(self.hi, other.hi))


@dataclass
class KernelPlan:
    """What the backend needs to write the kernel and its call.

    `params`: the outer nodes passed in, in order. `error_model`: Numba's (`python`/`numpy`).
    `wraps`: node id -> NumPy integer dtype its result is wrapped to. `results`: per loop result
    used after the loop, (index, NumPy dtype name to convert the returned value to, or None).
    """

    params: list
    error_model: str = "numpy"
    wraps: dict = field(default_factory=dict)
    results: list = field(default_factory=list)
    divisions: set = field(default_factory=set)
    param_kinds: list = field(default_factory=list)   # the eager kind of each param (checked at each call)
    boundscheck: bool = True   # Numba's own checks (only for gathers `x[idx]`: its message differs from NumPy's)
    unchecked: set = field(default_factory=set)   # (node id, axis): an index the kernel tests (`checked_index`)


def plan_kernel(loop: Node) -> KernelPlan:
    """The plan for sending `loop` (a `for_range`) to Numba; raises NotKernel with the reason."""
    walker = _Walker()
    outer = {}
    n = loop.attrs.get("carried", 0)
    params = []
    for o in loop.operands:
        if o.op == "const":
            walker.const(o)
            continue
        if o.id not in outer:
            outer[o.id] = walker.outside(o)
            params.append(o)
    walker.env.update(outer)
    exits = walker.loop(loop)
    plan = KernelPlan(params, wraps=walker.wraps, divisions=walker.divisions,
                      param_kinds=[next(iter(outer[p.id].kinds)) for p in params], boundscheck=walker.checked,
                      unchecked=walker.unchecked)
    if {"python", "numpy"} <= walker.divisions:
        raise NotKernel("it divides both Python numbers (ZeroDivisionError) and NumPy ones (inf)")
    plan.error_model = "python" if "python" in walker.divisions else "numpy"
    users = {u.attrs["index"]: u for u in loop.graph.users(loop) if u.op == "tuple_get"}
    for k in range(n):
        if k not in users:
            continue
        kinds = exits[k]
        if len(kinds) != 1:
            raise NotKernel(f"loop result {k} may be {' or '.join(sorted(kinds))} after the loop")
        kind = next(iter(kinds))
        if kind.startswith("arr:"):
            raise NotKernel("an array is loop-carried")
        plan.results.append((k, kind[3:] if kind.startswith("np.") else None))
    return plan


def _kind_of_type(t) -> str:
    if isinstance(t, ScalarType) and t.kind in PY:
        return t.kind
    if isinstance(t, ArrayType) and t.dtype in ARRAY_DTYPES and t.shape is not None:
        return f"np.{t.dtype}" if t.shape == () else f"arr:{t.dtype}:{len(t.shape)}"
    raise NotKernel(f"a value of type {t} cannot be passed to a kernel")


def _stand_in(kind: str):
    if kind == "float":
        return 1.5
    if kind == "int":
        return 3
    if kind == "bool":
        return True
    return np.dtype(kind[3:]).type(3)


def _kind_of_value(v) -> str:
    if isinstance(v, np.generic):
        if v.dtype.name in ARRAY_DTYPES:
            return f"np.{v.dtype.name}"
    elif isinstance(v, bool):
        return "bool"
    elif isinstance(v, (int, float)):
        return type(v).__name__
    raise NotKernel(f"a value of type {type(v).__name__} in the loop")


def _is_int(kind: str) -> bool:
    return kind == "int" or (kind.startswith("np.") and np.dtype(kind[3:]).kind in "iu")


def _is_complex(kind: str) -> bool:
    return kind in ("np.complex128", "complex") or kind.startswith("arr:complex")


def _dtype_range(kind: str) -> tuple:
    info = np.iinfo(kind[3:])
    return int(info.min), int(info.max)


class _Walker:
    """One walk of a loop nest: the Value of every node, the wraps and the kinds of divisions."""

    def __init__(self):
        self.env: dict = {}
        self.wraps: dict = {}
        self.divisions: set = set()
        self.checked = False         # a gather: Numba checks bounds (boundscheck=True)
        self.unchecked: set = set()  # (node id, axis) of integer indices not provably in bounds
        self.fresh: set = set()      # ids of arrays the kernel created (results of array arithmetic)

    # --- values from outside ----------------------------------------------------------------
    def outside(self, node: Node) -> Value:
        kind = _kind_of_type(node.type)
        if kind == "bool":
            return Value(frozenset([kind]), 0, 1)
        if kind == "int":
            bound = (0, DIM_BOUND) if node.op in ("dim", "len") else (-PARAM_INT, PARAM_INT)
            return Value(frozenset([kind]), *bound)
        if _is_int(kind):
            return Value(frozenset([kind]), *_dtype_range(kind))
        return Value(frozenset([kind]))

    def const(self, node: Node) -> Value:
        v = node.value
        if not isinstance(v, (bool, int, float, np.generic)):
            raise NotKernel(f"the constant {v!r} has no kernel spelling")
        if isinstance(v, (float, np.floating)) and not np.isfinite(v):
            raise NotKernel(f"the constant {v!r}")
        kind = _kind_of_value(v)
        value = Value(frozenset([kind]), int(v), int(v)) if _is_int(kind) or kind in ("bool", "np.bool") else \
            Value(frozenset([kind]))
        self.env[node.id] = value
        return value

    # --- regions ----------------------------------------------------------------------------
    def loop(self, loop: Node) -> list:
        """Walk a for_range to a fixed point; the kinds of its results after it."""
        n = loop.attrs.get("carried", 0)
        start, stop, step = (self.value(o) for o in loop.operands[:3])
        for b in (start, stop, step):
            if not all(_is_int(k) for k in b.kinds):
                raise NotKernel("a range bound is not an integer")
        if loop.operands[2].op != "const" or loop.operands[2].value == 0:
            raise NotKernel("the range step is not a non-zero constant")
        body = loop.regions[0]
        if loop.operands[2].value > 0:   # the values i takes: start <= i < stop, or stop < i <= start
            index = Value(frozenset(["int"]), start.lo, max(start.lo, stop.hi - 1))
        else:
            index = Value(frozenset(["int"]), min(start.hi, stop.lo + 1), start.hi)
        inits = [self.value(o) for o in loop.operands[3:3 + n]]
        for v in inits:
            if any(k.startswith("arr:") for k in v.kinds):
                raise NotKernel("an array is loop-carried")
        captures = [self.value(o) for o in loop.operands[3 + n:]]
        carried = list(inits)
        trips = index.hi - index.lo + 1
        counters = {}
        for k in range(n):
            step = counter_step(body.outputs[k], body.args[1 + k])
            if step is not None and trips < INT64[1] and "int" in inits[k].kinds:
                counters[k] = (inits[k].lo - trips * step, inits[k].hi + trips * step)
                carried[k] = Value(inits[k].kinds, *counters[k])
        produced = None   # every value a yield gives: the loop's result when it ran at least once
        for round_ in range(ROUNDS + 1):
            if round_ == ROUNDS:
                carried = [Value(c.kinds, *INT64) if any(_is_int(k) for k in c.kinds) else c for c in carried]
            yields = self.region(body, [index] + carried + captures)
            produced = yields if produced is None else [p.join(y) for p, y in zip(produced, yields)]
            joined = [c.join(y) for c, y in zip(carried, yields)]
            for k, bounds in counters.items():   # proved by the counter's form, not by iterating
                joined[k] = Value(joined[k].kinds, *bounds)
            if joined == carried:
                break
            if round_ == ROUNDS:
                raise NotKernel("a loop-carried integer is not bounded")
            carried = joined
        trip = _trip(loop)
        exits = []
        for k in range(n):
            exits.append(inits[k].kinds if trip == 0 else produced[k].kinds if trip else carried[k].kinds)
            self.env[(loop.id, k)] = carried[k]
        return exits

    def region(self, g: Graph, args: list) -> list:
        for a, v in zip(g.args, args):
            self.env[a.id] = v
        for node in g.nodes:
            self.node(node)
        return [self.value(o) for o in g.outputs]

    def value(self, node: Node) -> Value:
        if node.id not in self.env:
            if node.op == "const":
                return self.const(node)
            raise NotKernel(f"internal: {node.op} used before it was walked")
        return self.env[node.id]

    # --- nodes ------------------------------------------------------------------------------
    def node(self, node: Node) -> None:
        op = node.op
        spec = kernel_op(op)
        if op == "call":
            if node.attrs.get("fn") not in KERNEL_CALLS or "kw" in node.attrs:
                raise NotKernel(f"the call {node.attrs.get('fn')} may raise where Numba does not, or has "
                                f"no kernel spelling")
            args = [self.value(o) for o in node.operands]
            if not all(k in ("float", "int", "np.float64") for a in args for k in a.kinds):
                raise NotKernel(f"{node.attrs['fn']} of a non-float")
            self.env[node.id] = Value(frozenset(["float"]))
            return
        if spec is None:
            raise NotKernel(f"`{op}` has no kernel spelling")
        extra = set(node.attrs) - ATTRS.get(op, set())
        if extra:
            raise NotKernel(f"`{op}` with {', '.join(sorted(extra))}")
        if op in ("const",):
            self.const(node)
            return
        if op == "note":
            return
        if op == "for_range":
            exits = self.loop(node)
            self.env[node.id] = Value(frozenset(["tuple"]))
            for k, kinds in enumerate(exits):
                self.env[(node.id, "exit", k)] = Value(kinds, self.env[(node.id, k)].lo, self.env[(node.id, k)].hi)
            return
        if op == "if":
            self.branch(node)
            return
        if op == "tuple_get":
            src = node.operands[0]
            key = (src.id, "exit", node.attrs["index"])
            if key not in self.env:
                raise NotKernel("a tuple value")
            self.env[node.id] = self.env[key]
            return
        if op in ("getitem", "setitem"):
            self.env[node.id] = self.index(node)
            return
        if op in ("dim", "len"):
            self.env[node.id] = Value(frozenset(["int"]), 0, DIM_BOUND)
            return
        args = [self.value(o) for o in node.operands]
        name = node.attrs["op"] if op == "inplace" else op
        if any(_is_complex(k) for a in args for k in a.kinds) and not getattr(kernel_op(name), "complex", False):
            raise NotKernel(f"`{name}` on complex values has no kernel spelling")
        if any(k.startswith("arr:") for a in args for k in a.kinds):
            self.env[node.id] = self.array_op(node, args, spec)
            return
        spec = kernel_op(name)
        if spec is None or not spec.scalars:
            raise NotKernel(f"`{name}` on scalars has no kernel spelling")
        if not spec.ints and any(_is_int(k) for a in args for k in a.kinds):
            raise NotKernel(f"`{name}` on integers has no kernel spelling")
        self.env[node.id] = self.scalar_op(node, name, args)

    def branch(self, node: Node) -> None:
        cond = self.value(node.operands[0])
        if any(k.startswith("arr:") for k in cond.kinds):
            raise NotKernel("the truth value of an array")
        captures = [self.value(o) for o in node.operands[1:]]
        outs = None
        for region in node.regions:
            ys = self.region(region, captures)
            outs = ys if outs is None else [a.join(b) for a, b in zip(outs, ys)]
        for k, v in enumerate(outs or []):
            if any(x.startswith("arr:") for x in v.kinds):
                raise NotKernel("a branch yields an array")
            self.env[(node.id, "exit", k)] = v
        self.env[node.id] = Value(frozenset(["tuple"]))

    def index(self, node: Node) -> Value:
        base = self.value(node.operands[0])
        kind = next(iter(base.kinds))
        if len(base.kinds) != 1 or not kind.startswith("arr:"):
            raise NotKernel("indexing something that is not an array")
        dtype, rank = kind.split(":")[1], int(kind.split(":")[2])
        items = node.attrs["index"]
        if len(items) > rank:
            raise NotKernel("more indices than dimensions")
        left = rank
        shape = getattr(node.operands[0].type, "shape", None)
        for axis, item in enumerate(items):
            if isinstance(item, OperandRef):
                v = self.value(node.operands[item.index])
                dim = shape[axis] if shape is not None and len(shape) == rank else None
                gather = len(v.kinds) == 1 and next(iter(v.kinds)).startswith("arr:")
                if not gather and (dim is None or not (-dim <= v.lo and v.hi < dim)):
                    self.unchecked.add((node.id, axis))   # not provably in bounds: the kernel tests it
                if gather:   # x[idx] with idx a 1-D integer array, on a 1-D array: Numba checks its bounds
                    self.checked = True
                    _, idtype, irank = next(iter(v.kinds)).split(":")
                    if np.dtype(idtype).kind not in "iu" or irank != "1" or rank != 1 or len(items) != 1 \
                            or node.op == "setitem":
                        raise NotKernel("an array index other than a 1-D integer array reading a 1-D array")
                    return Value(frozenset([f"arr:{dtype}:1"]))
                if not all(_is_int(k) for k in v.kinds):
                    raise NotKernel("an index that is not an integer")
                left -= 1
            elif isinstance(item, slice):
                for p in (item.start, item.stop, item.step):
                    if isinstance(p, OperandRef):
                        if not all(_is_int(k) for k in self.value(node.operands[p.index]).kinds):
                            raise NotKernel("a slice bound that is not an integer")
                    elif p is not None and not isinstance(p, int):
                        raise NotKernel("a slice bound that is not an integer")
                if item.step == 0:
                    raise NotKernel("a zero slice step")
            else:
                raise NotKernel(f"the index item {item!r}")
        if node.op == "setitem":
            self.store(node, dtype, left)
            return Value(frozenset(["none"]))
        if left == 0:
            v = Value(frozenset([f"np.{dtype}"]))
            return Value(v.kinds, *_dtype_range(f"np.{dtype}")) if _is_int(f"np.{dtype}") else v
        return Value(frozenset([f"arr:{dtype}:{left}"]))   # arithmetic on it must be float64 (array_op)

    def store(self, node: Node, dtype: str, left: int) -> None:
        v = self.value(node.operands[1])
        for k in v.kinds:
            if k.startswith("arr:"):
                if (k.split(":")[1], dtype) not in (("float64", "float64"), ("complex128", "complex128"),
                                                    ("float64", "complex128")):
                    raise NotKernel("an array store other than float64 or complex128")
                continue
            target = np.dtype(dtype)
            if _is_complex(k) and target.kind != "c":
                raise NotKernel(f"a complex value stored into a {dtype} array")
            if target.kind in "fc":
                continue
            if target.kind == "b" and k not in ("bool", "np.bool"):
                raise NotKernel("a number stored into a bool array")
            if target.kind in "iu":
                if not _is_int(k) and k not in ("bool", "np.bool"):
                    raise NotKernel("a non-integer stored into an integer array")
                if k == "int" and not (_dtype_range(f"np.{dtype}")[0] <= v.lo and v.hi <= _dtype_range(f"np.{dtype}")[1]):
                    raise NotKernel(f"a Python int that may not fit {dtype} is stored (eager raises OverflowError)")
                if k.startswith("np.") and k != f"np.{dtype}" and _is_int(k):
                    lo, hi = _dtype_range(k)
                    tlo, thi = _dtype_range(f"np.{dtype}")
                    if lo < tlo or hi > thi:
                        raise NotKernel(f"a {k[3:]} stored into a {dtype} array")

    def array_op(self, node: Node, args: list, spec) -> Value:
        op = node.op
        name = node.attrs["op"] if op == "inplace" else op
        s = kernel_op(name)
        if s is None or not s.arrays or not spec.arrays:
            raise NotKernel(f"`{name}` on arrays has no kernel spelling")
        ranks, dtypes = [], set()
        for a in args:
            for k in a.kinds:
                if k.startswith("arr:"):
                    if k.split(":")[1] not in INEXACT:
                        raise NotKernel("array arithmetic on an array other than float64 or complex128")
                    ranks.append(int(k.split(":")[2]))
                    dtypes.add(k.split(":")[1])
                elif k not in ("float", "int", "np.float64", "np.complex128"):
                    raise NotKernel(f"array arithmetic with a {k}")
                elif k == "np.complex128":
                    dtypes.add("complex128")
        dtype = "complex128" if "complex128" in dtypes else "float64"
        if name in ("dot", "matmul"):
            if len(args) != 2 or len(ranks) != 2 or not all(r in (1, 2) for r in ranks):
                raise NotKernel(f"`{name}` of operands other than two 1-D or 2-D arrays")
            if len(dtypes) != 1:
                raise NotKernel(f"`{name}` of a float64 and a complex128 array")
            rank = sum(ranks) - 2
            self.fresh.add(node.id)
            return Value(frozenset([f"np.{dtype}" if rank == 0 else f"arr:{dtype}:{rank}"]))
        if name == "truediv":
            self.divisions.add("numpy")
        if name not in ("add", "sub", "mul", "truediv", "neg", "pos") and not (s.arrays and not s.ints):
            raise NotKernel(f"`{name}` on arrays has no kernel spelling")
        if op == "inplace":
            if not any(k.startswith("arr:") for k in args[0].kinds):
                raise NotKernel("a scalar updated in place by an array")
            target, value = node.operands
            if any(k.startswith("arr:") for k in args[1].kinds) and target.id not in self.fresh \
                    and value.id not in self.fresh:
                # NumPy buffers `a += b` when b overlaps a; Numba's loop would read what it wrote
                raise NotKernel("an array updated in place by an array that may overlap it")
            if target.id in self.fresh:
                self.fresh.add(node.id)
            if dtype == "complex128" and not any(k.startswith("arr:complex128") for k in args[0].kinds):
                raise NotKernel("a float64 array updated in place by a complex value")
        elif name != "flip":
            self.fresh.add(node.id)   # a new array: it overlaps nothing
        return Value(frozenset([f"arr:{dtype}:{max(ranks)}"]))

    def scalar_op(self, node: Node, name: str, args: list) -> Value:
        op = OPS[name]
        kinds = set()
        for combo in product(*[sorted(a.kinds) for a in args]):
            if name in ("py_min", "py_max") and len(set(combo)) > 1:
                if not set(combo) <= {"float", "np.float64"}:
                    raise NotKernel(f"`{op.symbol}` of a {combo[0]} and a {combo[1]} (the result type depends on "
                                    f"the values)")
                kinds.update(combo)   # either one: the same float64 in the kernel
                continue
            try:
                result = op(*[_stand_in(k) for k in combo])
            except Exception as e:
                raise NotKernel(f"`{name}` on {', '.join(combo)}: {type(e).__name__}") from None
            kinds.add(_kind_of_value(result))
            self.check(node, name, combo, args)
        out = Value(frozenset(kinds))
        ints = [k for k in kinds if _is_int(k)]
        if ints:
            if len(kinds) != 1:
                raise NotKernel(f"`{name}` gives {' or '.join(sorted(kinds))}")
            kind = ints[0]
            if kind == "int":
                try:
                    lo, hi = interval_of(node, name, args)
                except NoBound as e:
                    raise NotKernel(str(e)) from None
                if lo < -LIMIT or hi > LIMIT:
                    raise NotKernel(f"a Python int (`{op.symbol or name}`) may exceed 2**62")
                out = Value(out.kinds, lo, hi)
            else:
                if name not in ("float", "bool") and not name.startswith("py_m"):
                    self.wraps[node.id] = kind[3:]
                out = Value(out.kinds, *_dtype_range(kind))
        elif kinds <= {"bool", "np.bool"}:
            out = Value(out.kinds, 0, 1)
        return out

    def check(self, node: Node, name: str, combo: tuple, args: list) -> None:
        floats = [k for k in combo if not _is_int(k) and k not in ("bool", "np.bool")]
        if name in ("pow",):
            b = node.operands[1]
            if not (b.op == "const" and b.value == 2 and floats and combo[0] in ("float", "np.float64")):
                raise NotKernel("`**` other than float ** 2")
        if name in ("floordiv", "mod", "lshift", "rshift"):
            b = node.operands[1]
            if floats or b.op != "const" or not isinstance(b.value, int) or b.value <= 0 and name in ("floordiv", "mod") \
                    or b.value < 0 or b.value >= 63 and name.endswith("shift"):
                raise NotKernel(f"`{OPS[name].symbol}` other than of integers by a constant in range")
            if name == "lshift" and combo[0] != "int":
                self.wraps[node.id] = combo[0][3:]
        if name == "truediv":
            b = node.operands[1]
            if not (b.op == "const" and b.value != 0):
                self.divisions.add("python" if all(k in PY for k in combo) else "numpy")
        for k, a in zip(combo, args):
            if k == "int" and any(x.startswith("np.") and _is_int(x) for x in combo):
                target = next(x for x in combo if x.startswith("np.") and _is_int(x))
                lo, hi = _dtype_range(target)
                if a.lo < lo or a.hi > hi:
                    raise NotKernel(f"a Python int that may not fit {target[3:]} meets a {target[3:]} "
                                    f"(eager NumPy raises OverflowError)")
            if k == "np.uint64":
                raise NotKernel("uint64 arithmetic (NumPy and Numba promote it differently)")


def _trip(loop: Node) -> Optional[int]:
    start, stop, step = loop.operands[:3]
    if all(o.op == "const" and isinstance(o.value, int) for o in (start, stop, step)):
        return len(range(start.value, stop.value, step.value))
    return None
