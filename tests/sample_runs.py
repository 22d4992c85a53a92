"""Running a training sample as a script (`runpy`, `__main__`) at small sizes, in GRAPH mode (its
`@ms.jit` step compiled) or PYNATIVE (`GRAPHJIT_DISABLE=1`), in a temporary directory (the quickstart
writes model.ckpt there). Each run is made once per session and shared by the tests that read it."""

import atexit
import contextlib
import dataclasses
import functools
import io
import os
import re
import runpy
import shutil
import sys
import tempfile
import warnings

import pytest

from locations import SAMPLES

# small sizes: (--samples, --batch-size, --epochs); every batch's loss is logged
SIZES = {
    "quickstart": ["--samples", "96", "--batch-size", "16", "--epochs", "2"],
    "train_tutorial": ["--samples", "96", "--batch-size", "16", "--epochs", "2"],
    "lenet": ["--samples", "64", "--batch-size", "16", "--epochs", "4", "--lr", "0.1"],
}


@dataclasses.dataclass
class SampleRun:
    """What one run left: the script's globals, its output, the logged losses, the graphjit warnings
    it raised, and the directory it ran in."""
    namespace: dict
    out: str
    losses: list
    warnings: list
    directory: str


@functools.lru_cache(maxsize=None)
def run_sample(name: str, eager: bool) -> SampleRun:
    import graphjit as ms
    directory = tempfile.mkdtemp(prefix=f"graphjit-sample-{name}-")
    atexit.register(shutil.rmtree, directory, True)
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ms.GraphjitWarning)
        if eager:
            mp.setenv("GRAPHJIT_DISABLE", "1")
        else:
            mp.delenv("GRAPHJIT_DISABLE", raising=False)
        mp.chdir(directory)
        mp.setattr(sys, "argv", [name] + (SIZES[name] + ["--log-every", "1"] if name in SIZES else []))
        namespace = runpy.run_path(str(SAMPLES / f"{name}.py"), run_name="__main__")
    text = out.getvalue()
    losses = [float(v) for v in re.findall(r"^loss: +([0-9.]+)", text, re.M)]
    return SampleRun(namespace, text, losses, [w for w in caught if issubclass(w.category, ms.GraphjitWarning)],
                     directory)


def accuracies(out: str) -> list:
    return [float(a) for a in re.findall(r"Accuracy: ([0-9.]+)%", out)]


def files_in(run: SampleRun) -> list:
    return sorted(os.listdir(run.directory))
