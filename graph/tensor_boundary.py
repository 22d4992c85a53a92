"""Tensor arguments in, Tensor results out: compiled code computes on plain arrays in between.

A `graphjit.Tensor` (tensor.py) makes every NumPy result computed from it a Tensor, through Python
hooks that would cost microseconds per op in compiled code. So after lowering (and differentiation),
before the passes, `mark_tensor_boundary` views each Tensor argument as a plain array on entry
(`as_ndarray`) and, at the return, views as Tensors the parts of the result that eager execution
gives as Tensors (`as_tensor`). Which parts those are is a forward data-flow question over the
graph, answered as NumPy answers it:

    an array result is a Tensor when an array operand is one (ufuncs, methods, indexing, np.where,
    np.concatenate, reductions: NumPy's `__array_ufunc__` / `__array_function__` dispatch), and
    `Tensor(...)` makes one; `np.array`, `np.asarray`, `np.full` and `np.arange` never dispatch,
    so they give plain arrays, and a scalar (`float(x)`, `x.shape[0]`) is never a Tensor.

Values through regions follow their operands and yields; where that depends on the run (a branch or
a loop iteration changes which values are Tensors), the region runs on real Tensors instead. Opaque
calls (a fallback block, a Python call left as is) receive their Tensor operands as Tensors again.
A "mask" is True or False for one value, or a tuple of masks for a tuple (a list, a dict's values).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ..tensor import any_tensor
from .ir import Graph, Node
from .types import ArrayType, TupleType

MAKES_TENSOR = frozenset({"tensor"})
# NumPy functions that never dispatch to an operand's class: their results are plain arrays
PLAIN_RESULT = frozenset({"array", "asarray", "full", "arange", "as_ndarray"})
OPAQUE = frozenset({"fallback", "pycall", "call"})
SEQUENCES = frozenset({"tuple", "list", "dict"})     # a mask per item (a dict's: per value)


def mark_tensor_boundary(graph: Graph, arg_masks: Sequence[Any]) -> bool:
    """Insert the entry and exit views for arguments with these masks (one per graph argument, missing:
    False). Returns whether anything is a Tensor (nothing changes otherwise)."""
    if not any(any_tensor(m) for m in arg_masks) and not any(n.op in MAKES_TENSOR for n in graph.all_nodes()):
        return False
    masks: dict = {}
    for arg, mask in zip(graph.args, arg_masks):
        masks[arg] = mask
    flow(graph, masks)
    for node in [n for n in graph.all_nodes() if n.op in OPAQUE]:
        rewrap_operands(node, masks)
    outputs = list(graph.outputs)
    for arg, mask in zip(list(graph.args), arg_masks):
        if mask is True and isinstance(arg.type, ArrayType):
            first = graph.nodes[0] if graph.nodes else None
            view = graph.add("as_ndarray", [arg], type=arg.type, name=arg.name, before=first)
            masks[view] = True
            for user in graph.users(arg):
                if user is not view:
                    graph.set_operands(user, [view if o is arg else o for o in user.operands])
            outputs = [view if o is arg else o for o in outputs]
    outputs = [wrap_result(graph, out, masks) for out in outputs]
    graph.set_outputs(outputs)
    return True


def flow(graph: Graph, masks: dict) -> None:
    """Masks of every node of `graph` (and its regions), given its arguments' masks in `masks`."""
    for node in list(graph.nodes):     # (rewrapping inserts nodes)
        if node.regions:
            masks[node] = region_mask(node, masks)
        else:
            masks[node] = node_mask(node, masks)


def node_mask(node: Node, masks: dict) -> Any:
    if node.op in MAKES_TENSOR:
        return True
    if node.op in PLAIN_RESULT:
        return False
    if node.op in SEQUENCES:
        return tuple(masks.get(o, False) for o in node.operands)
    if node.op == "tuple_get":
        whole = masks.get(node.operands[0], False)
        return whole[node.attrs["index"]] if isinstance(whole, tuple) else shaped(whole, node.type)
    tensor = any(any_tensor(masks.get(o, False)) for o in node.operands)
    return shaped(tensor, node.type)


def shaped(tensor: bool, type_: Any) -> Any:
    """`tensor` for each array (0-d included) in a value of this type; False for anything else."""
    if isinstance(type_, TupleType):
        return tuple(shaped(tensor, t) for t in type_.items)
    return tensor and isinstance(type_, ArrayType)


def region_mask(node: Node, masks: dict) -> Any:
    """An `if`, `for_range` or `while`: region arguments take the trailing operands' masks; the result
    is what the regions yield when every region yields the same masks and a loop carries its masks
    through unchanged. When not (`x, y = y, x` on a Tensor and an array; a Tensor from one branch
    only), which values are Tensors depends on the run: the node then runs on real Tensors, as eager
    code does (NumPy's own dispatch decides), and its results need no view on exit (mask False)."""
    operands = [masks.get(o, False) for o in node.operands]
    carried = node.attrs.get("carried", 0)
    yields = []
    for region in node.regions:
        k = len(region.args)
        for arg, mask in zip(region.args, operands[len(operands) - k:] if k else []):
            masks[arg] = mask
        flow(region, masks)
        if region.label in ("then", "else", "body"):
            yields.append(tuple(masks.get(o, False) for o in region.outputs))
    result = yields[0] if yields else ()
    stable = all(y == result for y in yields)
    if carried:
        stable = stable and result == tuple(operands[len(operands) - carried:])
    if not stable:
        rewrap_operands(node, masks)
        return shaped(False, node.type)
    return shaped_like(result, node.type)


def shaped_like(mask: Any, type_: Any) -> Any:
    if isinstance(type_, TupleType) and isinstance(mask, tuple):
        return tuple(shaped_like(m, t) for m, t in zip(mask, type_.items))
    return shaped(any_tensor(mask), type_)


def rewrap_operands(node: Node, masks: dict) -> None:
    """Python code the graph does not see into gets its Tensors as Tensors."""
    graph = node.graph
    operands = []
    for o in node.operands:
        mask = masks.get(o, False)
        if any_tensor(mask):
            o = graph.add("as_tensor", [o], {"mask": mask} if mask is not True else {}, type=o.type,
                          span=node.span, before=node)
            masks[o] = mask
        operands.append(o)
    graph.set_operands(node, operands)


def wrap_result(graph: Graph, out: Node, masks: dict, before: Optional[Node] = None) -> Node:
    """`out` with its Tensor parts viewed as Tensors (a returned tuple, list or dict item by item),
    computed before `before` (None: at the end)."""
    mask = masks.get(out, False)
    if not any_tensor(mask):
        return out
    if out.op == "as_ndarray":    # an argument returned as it is: the caller's own Tensor
        return out.operands[0]
    if out.op in SEQUENCES:
        graph.set_operands(out, [wrap_result(graph, o, masks, out) for o in out.operands])
        return out
    return graph.add("as_tensor", [out], {"mask": mask} if mask is not True else {}, type=out.type,
                     span=out.span, name=out.name, before=before)
