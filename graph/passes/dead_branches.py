"""Inline the taken branch of an `if` whose condition is a constant, and drop loops that never run."""

from __future__ import annotations

from ..ir import Graph, Node


def run(graph: Graph) -> bool:
    """Decide region nodes whose control is known at compile time (after constant folding).

    Before:
      graph f(%x: f64[3]) -> f64[3]
        %0 = if(True, %x) : tuple(f64[3])
          then(%x.1: f64[3]) {
            %y = mul(%x.1, 2) : f64[3]
            yield %y
          }
          else(%x.2: f64[3]) {
            %y.1 = neg(%x.2) : f64[3]
            yield %y.1
          }
        %y.2 = tuple_get(%0) {index=0} : f64[3]
        return %y.2
    After:
      graph f(%x: f64[3]) -> f64[3]
        %y = mul(%x, 2) : f64[3]
        return %y

    A `for_range` with constant bounds that runs zero times, and a `while` whose condition is the
    constant False, yield their initial values. The taken region's nodes (and their spans) move
    into the enclosing graph, its arguments replaced by what the region node passed in.
    """
    changed = False
    for node in list(graph.nodes):
        for region in node.regions:
            changed |= run(region)
        if node.op == "if" and _const_truth(node.operands[0]) is not None:
            region = node.regions[0] if _const_truth(node.operands[0]) else node.regions[1]
            results = inline_region(graph, node, region, list(node.operands[1:]))
            _replace_results(graph, node, results)
            changed = True
        elif node.op == "for_range" and all(o.op == "const" for o in node.operands[:3]):
            start, stop, step = (o.value for o in node.operands[:3])
            if _ints(start, stop, step) and step != 0 and len(range(start, stop, step)) == 0:
                n = node.attrs.get("carried", 0)
                _replace_results(graph, node, list(node.operands[3:3 + n]))
                changed = True
        elif node.op == "while":
            cond = node.regions[0]
            if len(cond.outputs) == 1 and _const_truth(cond.outputs[0]) is False \
                    and all(n.removable for n in cond.nodes):  # nothing in the test may raise
                n = node.attrs.get("carried", 0)
                _replace_results(graph, node, list(node.operands[:n]))
                changed = True
    return changed


def _const_truth(node: Node):
    if node.op != "const":
        return None
    try:
        return bool(node.value)
    except Exception:
        return None


def _ints(*values) -> bool:
    import numbers
    return all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in values)


def inline_region(graph: Graph, anchor: Node, region: Graph, values: list) -> list:
    """Copy `region`'s nodes into `graph` before `anchor`, its args bound to `values`; its outputs."""
    mapping = {arg.id: value for arg, value in zip(region.args, values)}
    for node in region.nodes:
        operands = [mapping.get(o.id, o) for o in node.operands]
        moved = Node(node.op, operands, node.attrs, node.type, node.span, node.name, node.regions)
        graph.add_node(moved, before=anchor)
        mapping[node.id] = moved
    return [mapping.get(o.id, o) for o in region.outputs]


def _replace_results(graph: Graph, node: Node, results: list) -> None:
    """Point every `tuple_get` of region node `node` at the matching result; erase the node."""
    for user in graph.users(node):
        if user.op == "tuple_get":
            graph.replace_all_uses(user, results[user.attrs["index"]])
            graph.erase(user)
    if not graph.users(node) and not graph.is_output(node):
        graph.erase(node)
    else:  # an unusual user of the whole tuple: build the tuple in the graph instead
        tup = graph.add("tuple", results, {}, node.type, node.span, before=node)
        graph.replace_all_uses(node, tup)
        graph.erase(node)

