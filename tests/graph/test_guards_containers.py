"""Guards on containers (graph/guards.py): dicts and sets of literals are guarded by value (a dict's keys
in order), other dicts' and sets' iterated keys by a `keys` guard; both survive the disk cache's JSON
form and fail when the container changes in place."""

import json

import numpy as np

from graphjit.graph.guards import Guard, GuardRecorder, GuardSet
from graphjit.graph.paths import Path


def roots_of(namespace: dict):
    return lambda kind, root: namespace[root] if kind == "globals" else None


def recorded(read) -> GuardSet:
    recorder = GuardRecorder()
    read(recorder)
    return recorder.result()


def round_trip(guards: GuardSet) -> GuardSet:
    return GuardSet.from_json(json.loads(json.dumps(guards.to_json())))


def test_a_literal_dict_is_guarded_by_value_in_order_and_survives_json():
    ns = {"T": {"a": 1.0, 2: (3, "x")}}
    guards = recorded(lambda r: r.read(Path("globals", "T"), ns["T"]))
    assert [(g.kind, g.per_call) for g in guards.guards] == [("value", True)]
    loaded = round_trip(guards)
    assert guards.check(roots_of(ns)) is None and loaded.bind(roots_of(ns))[0] is None
    ns["T"]["a"] = 1.0
    assert guards.check(roots_of(ns)) is None
    ns["T"]["a"] = ns["T"].pop("a")      # same items, another order
    assert "changed" in guards.check(roots_of(ns)) and "changed" in loaded.bind(roots_of(ns))[0]


def test_a_literal_set_is_guarded_by_value():
    ns = {"S": {"relu", 3}}
    guards = recorded(lambda r: r.read(Path("globals", "S"), ns["S"]))
    loaded = round_trip(guards)
    assert loaded.bind(roots_of(ns))[0] is None
    ns["S"].add("gelu")
    assert "changed" in guards.check(roots_of(ns)) and "changed" in loaded.bind(roots_of(ns))[0]


def test_the_keys_of_a_dict_of_arrays_are_guarded_in_order():
    ns = {"W": {"a": np.ones(2), "b": np.ones(2)}}
    guards = recorded(lambda r: r.keys(Path("globals", "W"), ns["W"]))
    assert [g.kind for g in guards.guards] == ["keys"]
    assert isinstance(guards.guards[0], Guard) and guards.guards[0].expected == ("a", "b")
    loaded = round_trip(guards)
    ns["W"]["a"] = np.zeros(5)           # values are not what this guard is about
    assert guards.check(roots_of(ns)) is None and loaded.bind(roots_of(ns))[0] is None
    ns["W"]["c"] = ns["W"].pop("b")      # same length, another key
    assert "keys" in guards.check(roots_of(ns)) and "keys" in loaded.bind(roots_of(ns))[0]


def test_a_container_read_at_call_time_is_guarded_by_identity_only():
    ns = {"COUNTS": {"n": 0}}
    recorder = GuardRecorder()
    recorder.read_at_call_time = {id(ns["COUNTS"])}
    recorder.read(Path("globals", "COUNTS"), ns["COUNTS"])
    guards = recorder.result()
    assert [g.kind for g in guards.guards] == ["obj"]
    ns["COUNTS"]["n"] += 1
    assert guards.check(roots_of(ns)) is None
