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
    # a topic an earlier test in this process enabled through GRAPHJIT_LOG is switched off now, not at
    # this test's first compile (which would undo its own caplog.at_level): tests run in any order
    from graphjit import log
    log.refresh()
    # Numba kernels (O2) are tested where a test asks for them (tests/backends/test_numba_*.py): each
    # costs 0.1-1.5 s to compile. GRAPHJIT_TEST_NUMBA=1 runs the whole suite with them.
    monkeypatch.setenv("GRAPHJIT_NUMBA", "1" if os.environ.get("GRAPHJIT_TEST_NUMBA") == "1" else "0")
    # Ahead-of-time kernels compile Numba's runtime once per cache directory (5-15 s): the tests of
    # tests/backends/test_numba_aot.py turn them on, with one runtime for the session.
    monkeypatch.setenv("GRAPHJIT_NUMBA_AOT", "0")


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
    import graphjit.compiler as compiler
    original = compiler.compile_for

    def checked(fn, args, config, **options):
        entry = original(fn, args, config, **options)
        from graphjit.graph import parse, verify
        text = str(entry.graph)
        again = parse(text)
        verify(again)
        assert str(again) == text, f"graph text does not round-trip:\n{text}\n---\n{again}"
        return entry

    monkeypatch.setattr(compiler, "compile_for", checked)


def _register_hypothesis_profiles():
    """Profiles for tests/test_program_generator.py, chosen by GRAPHJIT_HYPOTHESIS_PROFILE (ci / long / shrink)."""
    from hypothesis import HealthCheck, Phase, settings
    no_shrink = [Phase.explicit, Phase.reuse, Phase.generate]   # a failure prints its program; shrinking is slow
    quiet = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large,
             HealthCheck.filter_too_much]
    settings.register_profile("graphjit-ci", max_examples=30, derandomize=True, database=None, deadline=None,
                              suppress_health_check=quiet, phases=no_shrink, print_blob=True)
    settings.register_profile("graphjit-long", max_examples=2000, database=None, deadline=None,
                              suppress_health_check=quiet, phases=no_shrink, print_blob=True)
    settings.register_profile("graphjit-shrink", max_examples=40, derandomize=True, database=None, deadline=None,
                              suppress_health_check=quiet, print_blob=True)


_register_hypothesis_profiles()
