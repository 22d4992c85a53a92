"""Shared fixtures: graphs are verified after every pass in tests; inputs are seeded."""

import os

import numpy as np
import pytest

os.environ["GRAPHJIT_VERIFY"] = "1"


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(autouse=True)
def _pynative_mode():
    import graphjit
    graphjit.set_context(mode=graphjit.PYNATIVE_MODE)
    yield
    graphjit.set_context(mode=graphjit.PYNATIVE_MODE)
