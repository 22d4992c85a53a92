"""The product users read: the emitted NumPy code for every construct program and every sample.

Source in, generated module out, compared with tests/golden/emitted/ (GRAPHJIT_UPDATE_GOLDEN=1
rewrites them after a deliberate change; a missing file fails). That the code runs and equals
eager Python is tested elsewhere (test_constructs.py, test_samples.py); here a change to what
users see cannot slip through unseen.
"""

import numpy as np
import pytest

import graphjit
from graphjit.cli import transpile_file

from golden_files import check_golden
from locations import GOLDEN, RUN_ONLY_SAMPLES, SAMPLES
from programs import CASES

EMITTED = GOLDEN / "emitted"
SAMPLE_INPUTS = {"x": "f32[64,1,28,28]"}
LEVELS = ["O1", "O2"]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_emitted_program(name, level):
    fn, make_args = CASES[name]
    source = graphjit.jit(fn, jit_level=level).source(*make_args(np.random.default_rng(1234)))
    check_golden(EMITTED / f"{name}.{level}.py", source, "emitted code")


NOT_TRANSPILED = {"unsupported"} | RUN_ONLY_SAMPLES


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("sample", sorted(p.stem for p in SAMPLES.glob("*.py") if p.stem not in NOT_TRANSPILED))
def test_emitted_sample(sample, level):
    from graphjit.cli import parse_inputs
    inputs = parse_inputs(tuple(f"{k}={v}" for k, v in SAMPLE_INPUTS.items()))
    result = transpile_file(str(SAMPLES / f"{sample}.py"), inputs, jit_level=level)
    text = result.module_text.replace(str(SAMPLES.resolve()), "<samples>")  # the same in any checkout
    check_golden(EMITTED / f"sample_{sample}.{level}.py", text, "transpiled module")
