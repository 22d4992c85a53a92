"""graph/paths.Roots: the one map from an access path's root to its object, and following paths."""

import types

import numpy as np
import pytest

from graphjit.graph.paths import MISSING, Path, Roots, closure_of, parse_path, resolve_shared

WEIGHT = np.ones(3)


def make_closure():
    net = types.SimpleNamespace(w=np.zeros(2))

    def inner():
        return net
    return inner, net


def test_every_root_kind_names_its_object():
    inner, net = make_closure()
    built = types.SimpleNamespace(scale=2.0)
    roots = Roots.of_function(inner, ["x"], (5,), consts=[built])
    roots.bound["fc_weight"] = WEIGHT
    assert roots("arg", "x") == 5
    assert roots("closure", "net") is net
    assert roots("closure_cell", "net").cell_contents is net
    assert roots("const", 0) is built
    assert roots("module", "numpy") is np
    assert roots("bound", "fc_weight") is WEIGHT
    assert Roots(globals_dict=globals())("globals", "WEIGHT") is WEIGHT
    with pytest.raises(KeyError):
        roots("elsewhere", "x")


def test_paths_resolve_through_the_roots():
    inner, net = make_closure()
    roots = Roots.of_function(inner, ["self"], (types.SimpleNamespace(layers=[net]),))
    assert parse_path("self.layers[0].w").resolve(roots) is net.w
    assert parse_path("closure['net'].w").resolve(roots) is net.w
    with pytest.raises(AttributeError):
        parse_path("self.nothing").resolve(roots)


def test_with_args_keeps_the_other_roots():
    inner, net = make_closure()
    roots = Roots.of_function(inner, ["x"], (1,)).with_args({"x": 2})
    assert roots("arg", "x") == 2 and roots("closure", "net") is net


def test_resolve_shared_reads_each_prefix_once_and_marks_what_is_missing():
    reads = []

    class Counting:
        def __getattr__(self, name):
            reads.append(name)
            if name == "gone":
                raise AttributeError(name)
            return self

    obj = Counting()
    roots = Roots({"m": obj})
    seen: dict = {}
    assert resolve_shared(Path("arg", "m").attr("a").attr("b"), roots, seen) is obj
    assert resolve_shared(Path("arg", "m").attr("a").attr("c"), roots, seen) is obj
    assert reads == ["a", "b", "c"]
    assert resolve_shared(Path("arg", "m").attr("gone").attr("b"), roots, seen) is MISSING
    assert resolve_shared(Path("globals", "nope"), roots, seen) is MISSING


def test_closure_of_anything_else_is_empty():
    inner, net = make_closure()
    assert list(closure_of(inner)) == ["net"]
    assert closure_of(len) == {} and closure_of(object()) == {}
