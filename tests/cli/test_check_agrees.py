"""`graphjit check` and `jit` are one front end: check reports an error iff compiling raises.

For every program of the syntax corpus (tests/syntax_corpus.py), tests/programs.py and samples/,
at STRICT, COMPATIBLE and LAX:

- told the arguments (what `graphjit transpile --input` does), check reports an error exactly
  when compiling with those arguments raises;
- not told them (plain `graphjit check FILE`), an error is still a problem for the arguments the
  tests call with (never an error on code that compiles), and nothing that raises goes unreported:
  a problem that exists only for some argument types or values is a note.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import io
import pathlib
import warnings

import numpy as np
import pytest

import graphjit as gj
from graphjit.compiler import compile_for
from graphjit.cli import lower_target
from graphjit.transpiler import rules
from graphjit.transpiler.static_module import StaticModule
from graphjit.transpiler.source import read_text

import programs
import syntax_corpus
from syntax_corpus import CORPUS
from locations import REPO as ROOT, RUN_ONLY_SAMPLES

LEVELS = rules.LEVELS
SAMPLES = sorted(p for p in (ROOT / "samples").glob("*.py") if p.stem not in RUN_ONLY_SAMPLES)
SAMPLE_INPUT = np.ones([64, 1, 28, 28], dtype=np.float32)

_MODULES: dict = {}


def static_module(path: str, names: tuple, level: str) -> StaticModule:
    """The file as `graphjit check` reads it, `names` checked as if decorated with jit (one per level)."""
    key = (path, names, level)
    if key not in _MODULES:
        _MODULES[key] = StaticModule(path, read_text(path), names)
    return _MODULES[key]


def check_target(path: str, names: tuple, name: str, level: str, inputs: dict) -> list:
    module = static_module(path, names, level)
    target = next(t for t in module.targets if t.name == name)
    return lower_target(target, inputs, level)[2]


def compile_raises(fn, args: tuple, level: str) -> bool:
    config = gj.JitConfig(jit_syntax_level=level)
    syntax_corpus.reset()
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            compile_for(fn, args, config)
        except Exception:
            return True
    return False


def named_inputs(fn, args: tuple) -> dict:
    return dict(zip(inspect.signature(fn).parameters, args))


def agree(path: str, names: tuple, name: str, fn, args: tuple, level: str, skip_self: bool = False) -> None:
    raises = compile_raises(fn, args, level)
    inputs = named_inputs(fn, args[1:] if skip_self else args)
    if skip_self:
        inputs = dict(zip(list(inspect.signature(fn).parameters)[1:], args[1:]))
    told = check_target(path, names, name, level, inputs)
    errors = [d for d in told if d.severity == "error"]
    assert bool(errors) == raises, f"{name} at {level}: told the arguments, check says {errors}, compiling " \
                                   f"{'raises' if raises else 'succeeds'}"
    blind = check_target(path, names, name, level, {})
    errors = [d for d in blind if d.severity == "error"]
    notes = [d for d in blind if d.severity == "note"]
    if errors:
        assert raises, f"{name} at {level}: check reports {errors} but compiling succeeds"
    if raises:
        assert errors or notes, f"{name} at {level}: compiling raises but check reports nothing"


CORPUS_NAMES = tuple(n for n, e in CORPUS.items() if e.fn.__module__ == "syntax_corpus")


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_syntax_corpus(name, level):
    entry = CORPUS[name]
    args = entry.make_args(np.random.default_rng(0), 0)
    agree(syntax_corpus.__file__, CORPUS_NAMES, name, entry.fn, args, level)


# check compiles module-level functions; a closure made by module code (`use_closure = make_closure()`)
# exists only when the file runs
PROGRAM_NAMES = tuple(sorted(n for n, (fn, _) in programs.CASES.items() if fn.__qualname__ == fn.__name__))


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", PROGRAM_NAMES)
def test_programs(name, level):
    fn, make_args = programs.CASES[name]
    args = make_args(np.random.default_rng(0))
    names = tuple(programs.CASES[n][0].__name__ for n in PROGRAM_NAMES)
    agree(programs.__file__, names, fn.__name__, fn, args, level)


def load_sample(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(f"agree_sample_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    with contextlib.redirect_stdout(io.StringIO()):
        spec.loader.exec_module(module)
    return module


def sample_cases():
    for path in SAMPLES:
        module = StaticModule(str(path), read_text(str(path)))
        for target in module.targets:
            yield pytest.param(path, target.name, target.kind, id=f"{path.stem}.{target.name}")


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("path,name,kind", list(sample_cases()))
def test_samples(path, name, kind, level):
    module = load_sample(path)
    obj = getattr(module, name)
    if kind == "cell":
        fn = obj.construct
        fn = getattr(fn, "__graphjit_fn__", fn)
        args = (obj(), SAMPLE_INPUT)
        agree(str(path), (), name, fn, args, level, skip_self=True)
    else:
        fn = getattr(obj, "__graphjit_fn__", obj)
        agree(str(path), (), name, fn, (SAMPLE_INPUT,), level)


# --- the reproducers of issue 10 ---------------------------------------------------------------------

REPRODUCERS = {
    "keyword_only": ("def f(x, *, scale=2.0):\n    return x * scale\n", (np.ones(3),)),
    "var_keyword": ("def f(x, **kwargs):\n    return x + 1\n", (np.ones(3),)),
    "unpack_tuple_argument": ("def f(x, t):\n    a, b = t\n    return x * a + b\n", (np.ones(3), (1.0, 2.0))),
    "module_tuple_unpacking": ("PAIR = 1.0, 2.0\nLO, HI = PAIR\n\n\ndef f(x):\n    return x * LO + HI\n",
                               (np.ones(3),)),
    "strict_problem": ("def f(x):\n    try:\n        y = x + 1\n    except ValueError:\n        y = x\n    return y\n",
                       (np.ones(3),)),
}
DECORATIONS = {
    "decorator": "@ms.jit\n{def}",
    "decorator_in_variable": "deco = ms.jit(jit_config=ms.JitConfig(jit_level='O1'))\n\n\n@deco\n{def}",
    "assignment": "{def}\n\nf_jit = ms.jit(f)\n",
    "assignment_through_variable": "deco = ms.jit(jit_level='O2')\n\n\n{def}\n\nf_jit = deco(f)\n",
}


def write_program(tmp_path, body: str, decoration: str) -> pathlib.Path:
    lines = body.split("\n")
    split = next(k for k, line in enumerate(lines) if line.startswith("def "))
    prelude, definition = "\n".join(lines[:split]), "\n".join(lines[split:])
    path = tmp_path / "program.py"
    path.write_text("import numpy as np\nimport graphjit as ms\n\n" + prelude + "\n\n" +
                    decoration.format(**{"def": definition}))
    return path


@pytest.mark.parametrize("decoration", sorted(DECORATIONS))
@pytest.mark.parametrize("program", sorted(REPRODUCERS))
@pytest.mark.parametrize("level", LEVELS)
def test_reproducers(tmp_path, program, decoration, level):
    from graphjit.cli import check_file
    body, args = REPRODUCERS[program]
    path = write_program(tmp_path, body, DECORATIONS[decoration])
    spec = importlib.util.spec_from_file_location(f"repro_{program}_{decoration}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    raises = compile_raises(getattr(module.f, "__graphjit_fn__", module.f), args, level)
    found = check_file(str(path), level)
    assert found or not raises, "check must find the jitted function"
    errors = [d for d in found if d.severity == "error"]
    assert bool(errors) == raises, (found, raises)
    assert raises == (program == "strict_problem" and level != "LAX")


def test_cell_subclasses_are_found(tmp_path):
    from graphjit.cli import check_file, transpile_file
    path = tmp_path / "cells.py"
    path.write_text("import graphjit as ms\nfrom graphjit import nn\n\n\nclass Base(nn.Cell):\n"
                    "    def construct(self, x):\n        return x + 1\n\n\nclass Child(Base):\n"
                    "    def construct(self, x):\n        del x\n        return 0\n")
    found = check_file(str(path), "STRICT")
    assert [(d.code, d.severity, d.span.line) for d in found] == [("GJ303", "error", 12)]
    assert transpile_file(str(path), {}, level="LAX").targets == 2
