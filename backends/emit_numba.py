"""Emit the loops marked `numba='kernel'` (graph/passes/kernels.py) as Numba kernels and their calls.

`emit_function` is emit_numpy's, with one change: a marked loop becomes a call of a nopython
kernel — a plain Python function of arrays and scalars (range loops, arithmetic, indexing, `math`
and NumPy scalar functions) whose text sits in the module's preamble — with the Python loop kept
for when the kernel cannot run (backends/numba_kernels.py):

    _kernel_seidel_loop6 = _numba_kernel('seidel_loop6', 'numpy', ('arr:float64:2:9x9',), (), (
        'def seidel_loop6(A):\\n',
        '    for t in range(2):\\n',
        ...), boundscheck=False)

    def seidel(tsteps, A):
        # loop progs.py:6 runs as the Numba kernel seidel_loop6
        try:
            _kernel_seidel_loop6(A)
        except _KernelRefused:
            for t in range(2):
                ...

The kernel is written from the same graph by the same Emitter, except that a NumPy integer result
is wrapped to its dtype (`np.int32(a + b)`: Numba computes in int64, eager NumPy wraps), as the
plan (graph/analysis/kernel_plan.py) says. The plan is recomputed here: a pass after the marking
may have changed the loop, and then it stays a Python loop.
"""

from __future__ import annotations

import logging
from typing import Optional

from ..graph.analysis.kernel_plan import PARAM_INT, KernelPlan, NotKernel, plan_kernel
from ..graph.ir import Graph, Node
from ..graph.literals import Index
from ..graph.ops import OPS, PREC_ATOM
from ..graph.passes.kernels import is_kernel
from .emit_numpy import Emitted, Emitter

log = logging.getLogger("graphjit.vectorize")
RUNTIME_NAMES = ("_numba_kernel", "_KernelRefused")


class KernelText(Emitter):
    """Writes one loop as the source of a kernel function (integer results wrapped per the plan)."""

    free_temporaries = False   # Numba's nopython mode refuses `del`, and manages its arrays itself

    def __init__(self, loop: Node, plan: KernelPlan):
        super().__init__(loop.graph, with_comments=True)
        self.names.used.add("checked_index")   # the kernel file's helper
        self.loop = loop
        self.plan = plan

    def source(self, name: str) -> str:
        params = []
        for p in self.plan.params:
            var = self.names.fresh(p.name or "a")
            self.expr[p.id] = (var, PREC_ATOM)
            params.append(var)
        self.region_for_range(self.loop, "    ", {})
        if self.consts:
            raise NotKernel("a constant that has no kernel spelling")
        users = {u.attrs["index"]: u for u in self.loop.graph.users(self.loop) if u.op == "tuple_get"}
        lines = [f"def {name}({', '.join(params)}):"] + self.lines
        if self.plan.results:
            values = ", ".join(self.value(users[k]) for k, _ in self.plan.results)
            lines.append(f"    return ({values},)")
        return "\n".join(lines) + "\n"

    def expression(self, node: Node):
        text, prec = super().expression(node)
        dtype = self.plan.wraps.get(node.id)
        if dtype is None or node.op == "inplace":
            return text, prec
        return f"np.{dtype}({text})", PREC_ATOM

    def index(self, node: Node, index) -> str:
        """The subscript; an index the plan could not prove in bounds is tested by `checked_index`
        (the kernel file's helper), which raises NumPy's IndexError."""
        if not any((node.id, axis) in self.plan.unchecked for axis in range(len(index))):
            return super().index(node, index)
        base = self.atom(node.operands[0])
        parts = []
        for axis, item in enumerate(index):
            text = super().index(node, Index([item]))
            if (node.id, axis) in self.plan.unchecked:
                text = f"checked_index({text}, {base}.shape[{axis}], {axis})"
            parts.append(text)
        return ", ".join(parts)

    def inplace(self, node: Node, indent: str, uses: dict) -> None:
        dtype = self.plan.wraps.get(node.id)
        if dtype is None:
            super().inplace(node, indent, uses)
            return
        target, value = node.operands
        op = OPS[node.attrs["op"]]
        var = self.names.fresh(node.name or target.name or "t")
        self.lines.append(f"{indent}{var} = np.{dtype}({self.wrap(target, op.prec)} {op.symbol} "
                          f"{self.wrap(value, op.prec + 1)})")
        self.expr[node.id] = (var, PREC_ATOM)


class KernelEmitter(Emitter):
    """emit_numpy's Emitter whose marked loops call Numba kernels, falling back on the loop."""

    def __init__(self, graph: Graph, consts: Optional[list] = None, with_comments: bool = True):
        super().__init__(graph, consts, with_comments)
        self.names.used.update(RUNTIME_NAMES)

    def region_for_range(self, node: Node, indent: str, uses: dict) -> None:
        if not is_kernel(node):
            super().region_for_range(node, indent, uses)
            return
        name = self.kernel_name(node)
        try:
            plan = plan_kernel(node)
            text = KernelText(node, plan).source(name)
        except NotKernel as e:
            log.info("loop at %s: stays a Python loop, not a Numba kernel: %s",
                     node.span.short() if node.span else "?", e)
            super().region_for_range(node, indent, uses)
            return
        handle = self.names.fresh("_kernel_" + name)
        results = ", ".join(repr(r) for _, r in plan.results) + ("," if len(plan.results) == 1 else "")
        body = "".join(f"\n    {line!r}," for line in text.splitlines(keepends=True))
        kinds = [_checked_kind(k, p) for k, p in zip(plan.param_kinds, plan.params)]
        kinds_text = ", ".join(repr(k) for k in kinds) + ("," if len(kinds) == 1 else "")
        unchecked = "" if plan.boundscheck else ", boundscheck=False"
        self.preamble.append(f"{handle} = _numba_kernel({name!r}, {plan.error_model!r}, ({kinds_text}), ({results}), "
                             f"({body}){unchecked})")
        args = ", ".join(self.value(p) for p in plan.params)
        if self.with_comments:
            self.lines.append(f"{indent}# the loop runs as the Numba kernel {name} (above), or in Python without it")
        self.lines.append(f"{indent}try:")
        call_at = len(self.lines)
        self.lines.append("")
        self.lines.append(f"{indent}except _KernelRefused:")
        super().region_for_range(node, indent + "    ", uses)
        users = {u.attrs["index"]: u for u in node.graph.users(node) if u.op == "tuple_get"}
        targets = ", ".join(self.value(users[k]) for k, _ in plan.results)
        call = f"{handle}({args})"
        self.lines[call_at] = f"{indent}    {targets}, = {call}" if targets else f"{indent}    {call}"

    def kernel_name(self, node: Node) -> str:
        base = (self.graph.name or "f").split(".")[-1]
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in base).strip("_") or "f"
        return f"{base}_loop{node.span.line if node.span else ''}"


def _checked_kind(kind: str, param: Node) -> str:
    """What the call checks of an argument: its eager kind, the static shape the kernel's index proofs
    assumed (`arr:float64:2:6x6`), the bound assumed of a Python int (`int:1099511627776`)."""
    if kind.startswith("arr:") and param.type.is_static:
        return f"{kind}:{_shape(param)}"
    if kind == "int" and param.op not in ("dim", "len"):
        return f"int:{PARAM_INT}"
    return kind


def _shape(node: Node) -> str:
    """`6x6`: the static shape the kernel's index proofs assumed (the call checks it)."""
    return "x".join(str(d) for d in node.type.shape)


def emit_function(graph: Graph, name: Optional[str] = None, consts: Optional[list] = None,
                  with_comments: bool = True) -> Emitted:
    """The NumPy source of `graph`, its marked loops calling Numba kernels."""
    return KernelEmitter(graph, consts, with_comments).function(name or graph.name)

