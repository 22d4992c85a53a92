"""A scratch graph the vectorizer builds into, spliced into the real graph only on success.

Values of the enclosing graph enter the scratch graph as arguments (`ext`); on success
`splice` re-creates the live scratch nodes before the loop (or in a region) with those
arguments mapped back. Building goes through small constructors that keep the emitted NumPy
idiomatic: transposes fold into each other and into `einsum` subscripts, and a two-operand
`einsum` that is a matrix product becomes `@` / `np.dot`:

    einsum('ik,jk->ij', a, transpose(b))  ->  matmul(a, b)
"""

from __future__ import annotations

import string
from typing import Any, Optional, Sequence

from ..ir import Graph, Node
from ..literals import Index
from ..spans import SourceSpan
import numpy as np

from ..types import OBJECT, ArrayType, TupleType, type_of_value

LETTERS = string.ascii_lowercase


class Scratch:
    """Nodes built for one loop, in the order they run once vectorized."""

    def __init__(self, span: Optional[SourceSpan]):
        self.g = Graph("vectorized")
        self.span = span
        self.ext_arg: dict[int, Node] = {}     # outer node id -> scratch arg
        self.ext_of: dict[int, Node] = {}      # scratch arg id -> outer node
        self.pos: dict[int, int] = {}          # scratch node id -> position in program order
        self.clock = 0
        self.consts: dict[tuple, Node] = {}
        self.contractions: dict[int, tuple] = {}   # node id -> (inputs, output, operands) it computes
        self.reads: dict[tuple, Node] = {}     # CSE of array reads between writes

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    # --- leaves ------------------------------------------------------------------------------
    def ext(self, outer: Node) -> Node:
        arg = self.ext_arg.get(outer.id)
        if arg is None:
            arg = self.g.add_arg(outer.name or "v", outer.type)
            self.ext_arg[outer.id] = arg
            self.ext_of[arg.id] = outer
            self.pos[arg.id] = 0
        return arg

    def outer(self, node: Node) -> Optional[Node]:
        return self.ext_of.get(node.id)

    def const(self, value: Any) -> Node:
        key = (type(value), repr(value))
        node = self.consts.get(key)
        if node is None:
            node = self.g.add("const", (), {"value": value}, type_of_value(value), self.span)
            self.consts[key] = node
            self.pos[node.id] = 0
        return node

    # --- operations --------------------------------------------------------------------------
    def op(self, op: str, operands: Sequence[Node], attrs: Optional[dict] = None, name: str = "",
           type=None) -> Node:
        node = self.g.add(op, list(operands), attrs or {}, type, self.span, name)
        self.pos[node.id] = self.tick()
        return node

    def choose(self, cond: Node, a: Node, b: Node) -> Node:
        """`a if cond else b`, with each value keeping its own type (a Python float stays one)."""
        regions = []
        for label, pick in (("then", 0), ("else", 1)):
            region = Graph(f"choose.{label}", label=label)
            args = [region.add_arg("a", a.type, self.span), region.add_arg("b", b.type, self.span)]
            region.set_outputs([args[pick]])
            regions.append(region)
        node = self.g.add("if", [cond, a, b], {}, TupleType((OBJECT,)), self.span, regions=regions)
        self.pos[node.id] = self.tick()
        return self.op("tuple_get", [node], {"index": 0}, type=OBJECT)

    def getitem(self, base: Node, items: list, operands: Sequence[Node] = (), name: str = "",
                cse: bool = True) -> Node:
        """`base[items]`; items may hold `OperandRef(k)` for operands[k - 1]."""
        if all(isinstance(it, slice) and it == slice(None) for it in items):
            return base
        index = Index(items)
        key = ("getitem", base.id, repr(index), tuple(o.id for o in operands))
        if cse and key in self.reads:
            return self.reads[key]
        node = self.op("getitem", [base, *operands], {"index": index}, name)
        if cse:
            self.reads[key] = node
        return node

    def forget_reads(self) -> None:
        """After a write, an earlier read may be stale: stop reusing reads."""
        self.reads.clear()

    def transpose(self, x: Node, axes: Sequence[int]) -> Node:
        axes = tuple(axes)
        if axes == tuple(range(len(axes))):
            return x
        if x.op in ("transpose", "T") and len(x.operands) == 1:
            inner = x.attrs.get("axes") if x.op == "transpose" else None
            inner = tuple(inner) if inner is not None else tuple(reversed(range(len(axes))))
            return self.transpose(x.operands[0], tuple(inner[a] for a in axes))
        if len(axes) == 2:
            return self.op("T", [x], name=x.name)
        return self.op("transpose", [x], {"axes": axes}, name=x.name)

    def moveaxis_to_front(self, x: Node, axis: int, rank: int) -> Node:
        if axis == 0:
            return x
        return self.transpose(x, (axis,) + tuple(a for a in range(rank) if a != axis))

    def moveaxis_from_front(self, x: Node, axis: int, rank: int) -> Node:
        if axis == 0:
            return x
        order = list(range(1, rank))
        order.insert(axis, 0)
        return self.transpose(x, tuple(order))

    def expand(self, x: Node, after_first: int, count: int) -> Node:
        """Insert `count` new axes after the first `after_first` axes: x[:, None, None]."""
        if count <= 0:
            return x
        items = [slice(None)] * after_first + [None] * count
        return self.getitem(x, items, cse=False)

    def einsum(self, inputs: list[str], output: str, operands: list[Node], name: str = "") -> Node:
        """`np.einsum`, with transposed operands folded in and matrix products spelled `@`."""
        inputs, operands = list(inputs), list(operands)
        for k, x in enumerate(operands):  # fold transposes into the subscripts
            while x.op in ("transpose", "T") and len(x.operands) == 1:
                axes = x.attrs.get("axes") if x.op == "transpose" else None
                sub = inputs[k]
                axes = tuple(axes) if axes is not None else tuple(reversed(range(len(sub))))
                new = [""] * len(sub)
                for out_pos, in_axis in enumerate(axes):
                    new[in_axis] = sub[out_pos]
                inputs[k] = "".join(new)
                x = x.operands[0]
            operands[k] = x
        if len(operands) == 2:
            corr = self._as_correlate(inputs, output, operands, name)
            if corr is not None:
                return corr
            product = self._as_matmul(inputs, output, operands, name)
            if product is not None:
                self.contractions[product.id] = (inputs, output, operands)
                return product
        order = {}
        for ch in output + "".join(inputs):   # relabel: output letters first, alphabetically
            order.setdefault(ch, LETTERS[len(order)])
        inputs = ["".join(order[ch] for ch in sub) for sub in inputs]
        output = "".join(order[ch] for ch in output)
        spec = ",".join(inputs) + "->" + output
        node = self.op("einsum", [self.const(spec), *operands], self._einsum_options(inputs, output), name,
                       type=_einsum_type(inputs, output, operands))
        self.contractions[node.id] = (inputs, output, operands)
        return node

    @staticmethod
    def _einsum_options(inputs: list, output: str) -> dict:
        """optimize=True pays for its path search when the contraction can become a BLAS call:
        three or more operands, or two with no shared (batch) letter and a window operand."""
        if len(inputs) > 2:
            return {"optimize": True}
        shared = set(inputs[0]) & set(inputs[1]) & set(output)
        if not shared and max(len(sub) for sub in inputs) >= 3:
            return {"optimize": True}
        return {}

    def _as_correlate(self, inputs: list, output: str, operands: list, name: str) -> Optional[Node]:
        """sum_k w[k] * x[i + k] over a window view of a 1-D x: `np.correlate(x, w, mode='valid')`."""
        for (sw, sv), (win, vec) in (((inputs[0], inputs[1]), (operands[0], operands[1])),
                                     ((inputs[1], inputs[0]), (operands[1], operands[0]))):
            if len(sw) != 2 or len(sv) != 1 or output != sw[0] or sv != sw[1]:
                continue
            start, stop = 0, None
            view = win
            if view.op == "getitem" and len(view.operands) == 1:
                index = view.attrs["index"]
                if len(index) != 1 or not isinstance(index[0], slice) or index[0].step is not None:
                    continue
                start, stop = index[0].start or 0, index[0].stop
                view = view.operands[0]
            if view.op != "sliding_window_view" or view.attrs.get("axis", 0) not in (0, -1):
                continue
            x = view.operands[0]
            length = view.attrs.get("window_shape")
            tx, tv = x.type, vec.type
            if not (isinstance(tx, ArrayType) and isinstance(tv, ArrayType) and tx.is_static and tv.is_static):
                continue
            if len(tx.shape) != 1 or tv.shape != (length,) or tx.dtype != tv.dtype or \
                    np.dtype(tx.dtype).kind != "f":
                continue
            n_windows = tx.shape[0] - length + 1
            stop = n_windows if stop is None else stop
            if not (isinstance(start, int) and isinstance(stop, int)) or not 0 <= start <= stop <= n_windows:
                continue
            if start or stop != n_windows:
                x = self.getitem(x, [slice(start or None, stop + length - 1)], cse=False)
            return self.op("correlate", [x, vec], {"mode": "valid"}, name,
                           type=ArrayType(tx.dtype, (stop - start,)))
        return None

    def contract_leading(self, node: Node) -> Optional[Node]:
        """`np.sum(einsum(...->i...), axis=0)` is one einsum that also contracts i."""
        spec = self.contractions.get(node.id)
        if spec is None or self.g.users(node) or not spec[1]:
            return None
        inputs, output, operands = spec
        self.g.erase(node)
        return self.einsum(list(inputs), output[1:], list(operands), node.name)

    def _as_matmul(self, inputs: list[str], output: str, operands: list[Node], name: str) -> Optional[Node]:
        (sx, sy), (x, y) = inputs, operands
        if len(set(sx)) != len(sx) or len(set(sy)) != len(sy) or len(set(output)) != len(output):
            return None
        contracted = [c for c in sx if c in sy and c not in output]
        if len(contracted) != 1 or any(c not in output for c in (set(sx) ^ set(sy))):
            return None
        c = contracted[0]
        batch = [b for b in output if b in sx and b in sy]
        fx = [f for f in sx if f not in sy]
        fy = [f for f in sy if f not in sx]
        if len(fx) > 1 or len(fy) > 1 or (batch and (not fx or not fy)):
            return None
        if not batch and not fx and not fy:
            if len(sx) == 1 and len(sy) == 1 and output == "":
                return self.op("dot", [x, y], name=name)
            return None
        forms = [(x, sx, y, sy, fx, fy), (y, sy, x, sx, fy, fx)]
        if not fx and fy:
            forms.reverse()   # matrix @ vector reads better than vector @ matrix.T
        for a, sa, b, sb, fa, fb in forms:
            if output == "".join(batch + fa + fb):
                break
        else:
            return None
        left = self._arrange(a, sa, batch + fa + [c])
        right = self._arrange(b, sb, batch + [c] + fb)
        return self.op("matmul", [left, right], name=name)

    def _arrange(self, x: Node, sub: str, order: list) -> Node:
        return self.transpose(x, tuple(sub.index(ch) for ch in order))


def _einsum_type(inputs: list, output: str, operands: list):
    sizes: dict = {}
    dtypes = []
    for sub, x in zip(inputs, operands):
        t = x.type
        if not isinstance(t, ArrayType) or t.shape is None or t.dtype is None or len(t.shape) != len(sub):
            return None
        dtypes.append(t.dtype)
        for ch, d in zip(sub, t.shape):
            if d is not None and d != 1:
                sizes[ch] = d
            else:
                sizes.setdefault(ch, d)
    return ArrayType(np.result_type(*dtypes).name, tuple(sizes.get(ch) for ch in output))


def splice(scratch: Scratch, target: Graph, before: Optional[Node], mapping: dict, keep: set) -> dict:
    """Re-create the scratch nodes in `keep` in `target` (before `before`); return id -> new node.

    `mapping` maps scratch argument ids to nodes of `target`.
    """
    out = dict(mapping)
    for node in scratch.g.nodes:
        if node.id not in keep:
            continue
        operands = [out[o.id] for o in node.operands]
        new = target.add(node.op, operands, node.attrs, node.type, node.span, node.name,
                         regions=node.regions, before=before)
        out[node.id] = new
    return out


def _ancestors(scratch: Scratch, start: Sequence[Node]) -> set:
    """Ids of `start` and of the scratch nodes they are computed from (arguments excluded)."""
    seen: set = set()
    stack = [n for n in start if n.graph is scratch.g]
    while stack:
        node = stack.pop()
        if node.id in seen or node.op == "arg":
            continue
        seen.add(node.id)
        stack.extend(o for o in node.operands if o.graph is scratch.g)
    return seen


def live_nodes(scratch: Scratch, roots: Sequence[Node]) -> set:
    """Scratch nodes needed by `roots` and by every effect (writes, notes)."""
    return _ancestors(scratch, [*roots, *(n for n in scratch.g.nodes if not n.is_pure)])


def check_inputs(scratch: Scratch, roots: Sequence[Node]) -> list:
    """`roots` and the scratch nodes they are computed from, in program order (arguments excluded)."""
    seen = _ancestors(scratch, roots)
    return [n for n in scratch.g.nodes if n.id in seen]
