"""Loop unswitching: a loop that branches on a value it does not change becomes a branch
between two copies of the loop, each without the test, so the vectorizer can take each."""

from __future__ import annotations

from ..ir import Graph, Node, clone_region
from ..ops import OPS
from ..types import ArrayType, ScalarType, TupleType
from . import dead_branches, vectorize

ATTR = "unswitched"     # on a loop copy: how many copies of the original loop there are
MAX_COPIES = 4          # at most two conditions of one loop are unswitched (four copies)
# Loops other passes made or decided about: the tile pass's loops, the loop kept as the fallback
# of a vectorized one, loops already running on Python floats.
_LEAVE = ("tile", "scalar")


def run(graph: Graph) -> bool:
    """Hoist a loop-invariant `if` at the top of a `for_range` body out of the loop.

    Before:
      graph f(%x: f64[4], %out: f64[4], %up: bool) -> f64[4]
        %0 = for_range(0, 4, 1, %x, %out, %up) {carried=0} : tuple()
          body(%i: int, %x.1: f64[4], %out.1: f64[4], %up.1: bool) {
            %1 = getitem(%x.1, %i) {index=[$1]} : f64[]
            %2 = if(%up.1, %1) : tuple(f64[])
              then(%a: f64[]) { %3 = mul(%a, 2.0) : f64[]; yield %3 }
              else(%b: f64[]) { yield %b }
            %4 = tuple_get(%2) {index=0} : f64[]
            %5 = setitem(%out.1, %4, %i) {index=[$2]} : none
            yield
          }
        return %out
    After:
        %0 = if(%up, %x, %out, %up) : tuple()
          then(...) { for_range(0, 4, 1, ...) {unswitched=2}  <- body: out[i] = x[i] * 2.0 }
          else(...) { for_range(0, 4, 1, ...) {unswitched=2}  <- body: out[i] = x[i] }

    The condition is a loop argument (defined before the loop, so every iteration sees the same
    value) of a scalar type, whose truth cannot raise or have effects: testing it once before the
    loop, even a loop that runs zero times, is what the loop's first test would have done.
    """
    changed = False
    for node in list(graph.nodes):
        if node.graph is not graph:
            continue
        for region in node.regions:
            changed |= run(region)
        if node.op != "for_range" or any(a in node.attrs for a in _LEAVE) \
                or node.attrs.get(vectorize.ATTR) == vectorize.KEPT \
                or node.attrs.get(ATTR, 1) * 2 > MAX_COPIES:
            continue
        branch = _invariant_branch(node)
        if branch is not None:
            _unswitch(graph, node, branch)
            changed = True
    return changed


def _invariant_branch(loop: Node):
    """The first `if` of the body whose condition is a loop-invariant scalar argument."""
    body = loop.regions[0]
    first_capture = 1 + loop.attrs.get("carried", 0)
    for node in body.nodes:
        if node.op != "if" or "guard" in node.attrs:
            continue
        cond = node.operands[0]
        if cond.op == "arg" and cond.graph is body and cond.attrs["index"] >= first_capture \
                and _immutable_scalar(loop.operands[2 + cond.attrs["index"]]):
            return node
    return None


def _immutable_scalar(value: Node) -> bool:
    """A value no write can change, whose truth cannot raise: a Python number, or a NumPy scalar
    made by an elementwise op or read out of an array by integers (a 0-d *array*, such as an
    argument, could be written by the loop; the graph types both as `bool[]`)."""
    t = value.type
    if isinstance(t, ScalarType):
        return t.kind in ("bool", "int", "float")
    if not (isinstance(t, ArrayType) and t.shape == () and t.dtype is not None
            and t.dtype.startswith(("bool", "int", "uint", "float"))):
        return False
    if value.op == "getitem":
        return all(not isinstance(item, (slice, type(None), type(Ellipsis))) for item in value.attrs["index"])
    opdef = OPS.get(value.op)
    return opdef is not None and opdef.elementwise and value.op not in ("where", "select", "clip")


def _unswitch(graph: Graph, loop: Node, branch: Node) -> None:
    body = loop.regions[0]
    position = body.nodes.index(branch)
    outer_cond = loop.operands[2 + branch.operands[0].attrs["index"]]
    needed: list[Node] = []
    for o in loop.operands:
        if o.op != "const" and all(o is not n for n in needed):
            needed.append(o)
    copies = loop.attrs.get(ATTR, 1) * 2
    regions = []
    for truth, label in ((True, "then"), (False, "else")):
        region = Graph(f"{graph.name}.{label}", label=label)
        inside = {o.id: region.add_arg(o.name or "v", o.type, o.span) for o in needed}
        operands = [region.const(o.value, o.span) if o.op == "const" else inside[o.id] for o in loop.operands]
        copy = clone_region(body)
        taken = copy.nodes[position]
        known = copy.add("const", (), {"value": truth}, ScalarType("bool"), taken.span, before=taken)
        copy.set_operands(taken, [known, *taken.operands[1:]])
        dead_branches.run(copy)
        attrs = {k: v for k, v in loop.attrs.items() if k != vectorize.ATTR}   # the vectorizer decides anew
        new = region.add("for_range", operands, {**attrs, ATTR: copies}, loop.type, loop.span, loop.name,
                         regions=[copy])
        region.set_outputs([region.add("tuple_get", [new], {"index": k}, t, loop.span)
                            for k, t in enumerate(loop.type.items)])
        regions.append(region)
    node = graph.add("if", [outer_cond, *needed], {}, TupleType(tuple(loop.type.items)), loop.span,
                     regions=regions, before=loop)
    graph.replace_all_uses(loop, node)
    graph.erase(loop)
