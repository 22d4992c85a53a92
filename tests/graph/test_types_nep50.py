"""graph/types.py and graph/promotion.py: where a Python number and a NumPy scalar meet, and what ops give.

Type text in, type text out. A merge (`join`) of number types is their union (`f32[]|float`): at run
time the value is one of them. An op on a union is typed member by member, each by NumPy itself on
stand-ins (NEP 50: a Python number is weak, a NumPy scalar strong), and the results are joined: one
type where every member agrees (`f32[]|float` plus `f32[]` is `f32[]`), a union or a coarser type
where they do not.
"""

import pytest

from graphjit.graph.ir import Graph
from graphjit.graph.types import (MAX_UNION_MEMBERS, OBJECT, TupleType, UnionType, join, members, parse_type,
                                  union)


@pytest.mark.parametrize("a,b,joined", [
    ("float", "f32[]", "f32[]|float"),             # s = 0.0 before a loop adding float32 elements
    ("int", "i32[]", "i32[]|int"),
    ("f32[]|float", "f32[]", "f32[]|float"),       # a member joins to the union itself
    ("f32[]|float", "float", "f32[]|float"),
    ("int", "float", "float|int"),                 # mixed int/float branches
    ("bool", "bool[]", "bool|bool[]"),
    ("complex", "c64[]", "c64[]|complex"),
    ("f32[]", "f64[]", "f32[]|f64[]"),
    ("f16[]|float", "i8[]|int", "f16[]|float|i8[]|int"),
    ("f32[]", "f32[3]", "f32[*]"),                 # a scalar and an array: an array of unknown rank
    ("float", "f32[3]", "object"),                 # a Python number and an array: anything
    ("float", "none", "object"),
    ("f32[]|float", "object", "object"),
    ("?[]", "float", "object"),                    # a NumPy scalar of unknown dtype is no member
    ("tuple(float, int)", "tuple(f64[], int)", "tuple(f64[]|float, int)"),
])
def test_join(a, b, joined):
    assert str(join(parse_type(a), parse_type(b))) == joined
    assert str(join(parse_type(b), parse_type(a))) == joined


def test_a_union_of_too_many_members_is_object():
    kinds = ["f32[]", "float", "i8[]", "int", "bool", "complex"]
    assert str(union(parse_type(k) for k in kinds[:MAX_UNION_MEMBERS])) == "f32[]|float|i8[]|int"
    assert union(parse_type(k) for k in kinds) == OBJECT


@pytest.mark.parametrize("text", ["f32[]|float", "c128[]|complex|float", "tuple(i32[]|int, f64[])",
                                  "tuple(tuple(bool|bool[]), int)"])
def test_union_text_round_trips(text):
    t = parse_type(text)
    assert str(t) == text and parse_type(str(t)) == t


def test_union_members():
    t = parse_type("f32[]|float")
    assert isinstance(t, UnionType) and [str(m) for m in members(t)] == ["f32[]", "float"]
    assert members(parse_type("float")) == (parse_type("float"),)
    assert isinstance(parse_type("tuple(f32[]|float)"), TupleType)


def typed(op_name: str, *operands, **attrs) -> str:
    """The type `op` infers for operands given as type text (`"f32[]|float"`) or Python constants."""
    g = Graph("t")
    nodes = [g.add_arg(f"a{k}", parse_type(o)) if isinstance(o, str) else g.const(o) for k, o in enumerate(operands)]
    return str(g.add(op_name, nodes, attrs).type)


@pytest.mark.parametrize("op,operands,result", [
    ("add", ("f32[]|float", "f32[]"), "f32[]"),          # python float + np.float32 -> np.float32 (NEP 50)
    ("mul", ("f32[]|float", 2.0), "f32[]|float"),         # each member keeps its own type
    ("add", ("i32[]|int", "i32[]"), "i32[]"),             # python int + np.int32 -> np.int32
    ("add", ("i32[]|int", 1), "i32[]|int"),
    ("truediv", ("i32[]|int", 2), "f64[]|float"),
    ("lt", ("f32[]|float", 0.0), "bool|bool[]"),
    ("sub", ("f32[4]", "f32[]|float"), "f32[4]"),          # a float32 array with either: float32
    ("add", ("f16[3]", "f32[]|float"), "?[3]"),            # np.float32 is strong, 0.5 weak: they disagree
    ("sqrt", ("f32[]|float",), "f32[]|f64[]"),
    ("mul", ("f64[]", "f32[]"), "f64[]"),                  # np.float64(c) * v
    ("mul", ("float", "f64[]"), "f64[]"),
    ("add", ("complex", "f64[]"), "complex"),              # np.float64 subclasses float: Python's complex add
    ("add", ("complex", "f32[]"), "c64[]"),
    ("add", ("int", "bool[]"), "i64[]"),
    ("add", ("bool", "bool[]"), "bool[]"),
    ("py_max", (0.0, "f32[]"), "f32[]|float"),            # max(0.0, x[i]) is whichever is larger
    ("py_min", ("int", "i8[]", "int"), "i8[]|int"),
])
def test_ops_on_unions_are_typed_member_by_member(op, operands, result):
    assert typed(op, *operands) == result


@pytest.mark.parametrize("target,value,result", [
    ("f32[]|float", "f32[]", "f32[]"),
    ("f32[]", "f32[]", "f32[]"),
    ("f32[]", "f64[]", "f32[]|f64[]"),     # a 0-d array keeps float32 in place; a NumPy scalar becomes float64
    ("f32[3]", "f64[]", "f32[3]"),         # an array is updated in place
    ("int", "i8[]", "i8[]"),
])
def test_augmented_assignment(target, value, result):
    assert typed("inplace", target, value, op="add") == result
