"""Shared fixtures: graphs are verified after every pass in tests; inputs are seeded."""

import os

import numpy as np
import pytest

os.environ["GRAPHJIT_VERIFY"] = "1"


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path, monkeypatch):
    """Every test gets an empty on-disk cache of its own; the real ~/.cache is never touched."""
    monkeypatch.setenv("GRAPHJIT_CACHE_DIR", str(tmp_path / "graphjit-cache"))
    monkeypatch.delenv("GRAPHJIT_CACHE", raising=False)
    monkeypatch.delenv("GRAPHJIT_LOG", raising=False)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(autouse=True)
def _pynative_mode():
    import graphjit
    graphjit.set_context(mode=graphjit.PYNATIVE_MODE)
    yield
    graphjit.set_context(mode=graphjit.PYNATIVE_MODE)


@pytest.fixture(autouse=True)
def _every_graph_round_trips(monkeypatch):
    """Every graph any test compiles prints, parses back and prints identically, and verifies."""
    import graphjit.api as api
    original = api.compile_for

    def checked(fn, args, config, **options):
        entry = original(fn, args, config, **options)
        from graphjit.graph import parse, verify
        text = str(entry.graph)
        again = parse(text)
        verify(again)
        assert str(again) == text, f"graph text does not round-trip:\n{text}\n---\n{again}"
        return entry

    monkeypatch.setattr(api, "compile_for", checked)
