"""The command line: `graphjit transpile FILE`, `graphjit check FILE`, `graphjit cache info|clear`.

Neither runs the user's file: it is parsed with LibCST and resolved statically
(`transpiler.static_module`). Errors are one clear line each on stderr with a non-zero exit
status; never a traceback from graphjit itself. How `check` prints what it finds (text, JSON,
SARIF, gcc) lives beside it, in `cli/diagnostic_formats.py`.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

import click

from .. import __version__

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2
# Diagnostics about a value only running the file would give (transpiler/static_pure.py): notes in `check`.
UNKNOWN_CAUSES = frozenset({"UnknownValueError", "NotComputed"})


class UsageError(Exception):
    """Bad command line or unreadable input: exit status 2."""


class InputProblem(Exception):
    """A readable input with a problem (a Python syntax error, nothing to transpile): exit status 1."""


@dataclass
class TranspileResult:
    module_text: str
    graphs: list = field(default_factory=list)      # (name, Graph)
    diagnostics: list = field(default_factory=list)  # GraphjitError
    targets: int = 0


def parse_inputs(specs: tuple) -> dict:
    """`x=f32[64,1,28,28]` (an array of that type) or `n=3` (a compile-time value)."""
    from ..graph.literals import parse_literal
    from ..graph.types import ArrayType, parse_type
    from ..transpiler.lower import AbstractArray
    out = {}
    for spec in specs:
        name, eq, text = spec.partition("=")
        if not eq or not name.strip().isidentifier():
            raise UsageError(f"--input {spec!r}: expected NAME=TYPE, e.g. x=f32[64,1,28,28] or n=3")
        try:
            t = parse_type(text)
            if isinstance(t, ArrayType):
                out[name.strip()] = AbstractArray(t)
                continue
        except ValueError:
            pass
        try:
            out[name.strip()] = parse_literal(text)
        except ValueError:
            raise UsageError(f"--input {spec!r}: {text!r} is neither a type like f32[3,4] nor a literal") from None
    return out


def read_source(path: str) -> str:
    """The file's text (PEP 263 encodings honoured); UsageError when it cannot be read or decoded."""
    import errno

    from ..transpiler.source import read_text
    try:
        return read_text(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: error: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: error: is a directory") from None
    except OSError as e:
        why = e.strerror or str(e)
        if e.errno == errno.ELOOP:
            why = f"{why} (a symbolic link loop)"
        raise UsageError(f"{path}: error: cannot read: {why}") from None
    except (UnicodeDecodeError, SyntaxError, LookupError) as e:
        raise UsageError(f"{path}: error: cannot decode: {_decode_problem(e)}") from None


def _decode_problem(error: Exception) -> str:
    if isinstance(error, UnicodeDecodeError):
        return f"not valid {error.encoding} at byte {error.start} (declare the encoding with a `# -*- coding: ... -*-` line)"
    return str(getattr(error, "msg", "") or error)


def load_module(path: str, extra_targets: tuple = ()):
    """The file read (never run) and resolved statically; InputProblem on a Python syntax error."""
    import linecache

    from ..transpiler.deep_stack import ResourceLimitError
    from ..transpiler.source import PythonSyntaxError
    from ..transpiler.static_module import StaticModule
    text = read_source(path)
    linecache.cache[path] = (len(text), None, text.splitlines(True), path)
    try:
        return StaticModule(path, text, extra_targets)
    except (PythonSyntaxError, ResourceLimitError) as e:
        raise InputProblem(f"{e.span}: error: {e.message}") from None


def target_function(target):
    """The plain function a target compiles (a Cell's `construct`)."""
    fn = target.obj if target.kind == "function" else target.obj.construct
    return getattr(fn, "__graphjit_fn__", fn)


def target_arguments(target, fn, inputs: dict) -> tuple:
    """(args, kwargs, unknown) to compile `fn` with: `--input` values, defaults, else any array.

    `unknown` is True when some argument's value is not known (then a problem that depends on the
    argument's type is a note, not an error). `*args` and `**kwargs` receive nothing; a default only running
    the file would compute (an `Unresolved` one) is an unknown argument.
    """
    import inspect

    from ..graph.diagnostics import GraphjitError, UnsupportedSyntaxError
    from ..graph.types import ANY_ARRAY
    from ..transpiler.lower import AbstractArray
    from ..transpiler.lower.control import NeedsStatic
    from ..transpiler.static_pure import not_computed
    args, kwargs, unknown = [], {}, False
    params = list(inspect.signature(fn).parameters.values())
    if target.kind == "cell":
        try:
            instance = target.obj()
        except (UnsupportedSyntaxError, NeedsStatic) as e:   # past what the static view computes
            raise not_computed(f"`{target.name}()`", f"its __init__ needs what graphjit computes only by running "
                               f"it: {e.message}", e.span) from None
        except GraphjitError as e:
            raise e.add_context(f"while building {target.name}() from its __init__")
        except TypeError as e:
            raise GraphjitError(f"cannot build {target.name}() without arguments ({e}); it is "
                                "compiled where a Cell that builds it is", target.span) from None
        args.append(instance)
        params = params[1:]
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            unknown = True
            continue
        if p.name in inputs:
            value = inputs[p.name]
        elif p.default is not p.empty and not getattr(type(p.default), "__graphjit_unresolved__", False):
            value = p.default
        else:
            value, unknown = AbstractArray(ANY_ARRAY), True
        if p.kind == p.KEYWORD_ONLY:
            kwargs[p.name] = value
        else:
            args.append(value)
    return tuple(args), kwargs, unknown


def target_parameters(module) -> set:
    """Every parameter name of the file's targets (what `--input NAME=...` may name)."""
    import inspect
    names = set()
    for target in module.targets:
        params = list(inspect.signature(target_function(target)).parameters)
        names.update(params[1:] if target.kind == "cell" else params)
    return names


def lower_target(target, inputs: dict, level: str, notes: bool = True, jit_level: str = "O0"):
    """(graph name, Lowered or None, diagnostics) for one target, as `jit` would compile it.

    With `notes` (graphjit check), when some argument is unknown, a problem that only some argument
    types or values would have is a note, not an error (`depends_on_arguments`); so is one about
    a module value known only when the file runs. `transpile` must emit code: those stay errors.
    """
    import dataclasses

    from ..graph.diagnostics import Diagnostic, GraphjitError
    from ..graph.autodiff.pending import prepare as prepare_gradients
    from ..transpiler.lower import lower_function
    from ..transpiler.rules import hint_at
    fn = target_function(target)
    name = target.name if target.kind == "function" else f"{target.name}_construct"
    unknown = False
    try:
        args, kwargs, unknown = target_arguments(target, fn, inputs)
        lowered = lower_function(fn, args, kwargs, name=name, level=level, collect=True)
        prepare_gradients(lowered.graph, jit_level)     # gradients asked for inside: built (and checked) here
    except GraphjitError as e:
        diagnostic = Diagnostic.from_error(e, target.name, level)
        diagnostic = dataclasses.replace(diagnostic, hint=hint_at(level, diagnostic.hint))
        if notes and ((unknown and depends_on_arguments(diagnostic)) or diagnostic.cause in UNKNOWN_CAUSES):
            diagnostic = _as_note(diagnostic)
        return name, None, [diagnostic]
    diagnostics = [_as_note(d) if notes and d.severity == "error" and (
        unknown and depends_on_arguments(d) or d.cause in UNKNOWN_CAUSES) else d for d in lowered.diagnostics]
    return name, lowered, diagnostics


def depends_on_arguments(diagnostic) -> bool:
    """Whether a problem may exist for some argument types or values and not for others.

    Lowering errors (a type or a length not known, a value that must be known at compile time)
    and the rule-table rows about run-time values do; a construct the level rejects, or a name
    defined nowhere, does not.
    """
    from ..transpiler.rules import BY_CODE, VALUE_DEPENDENT
    if diagnostic.cause in UNKNOWN_CAUSES:
        return True
    row = BY_CODE.get(diagnostic.code)
    if row is not None:
        return row.key in VALUE_DEPENDENT
    return diagnostic.code == "GJ001" and diagnostic.cause != "UndefinedNameError"


def _as_note(diagnostic):
    import dataclasses
    if diagnostic.cause in UNKNOWN_CAUSES:   # its hint says what to do already
        return dataclasses.replace(diagnostic, severity="note")
    return dataclasses.replace(diagnostic, severity="note", hint=_join_hints(
        diagnostic.hint, "whether this is a problem depends on the arguments' types or values, which "
        "graphjit check does not know"))


def _join_hints(first: str, second: str) -> str:
    return f"{first}; {second}" if first else second


@contextlib.contextmanager
def _no_cycle_collection():
    """Python's cyclic GC off while a file is checked.

    A large file's syntax tree is hundreds of thousands of live objects that every full collection
    walks again, which made checking superlinear (half the time for 3 000 functions). The tree is
    freed by reference counting when the check ends; the collector's state is restored.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextlib.contextmanager
def _collect_new_objects_only():
    """Inside `_no_cycle_collection`, while the targets are lowered: the cyclic GC on again, with every
    object made so far (the file's syntax tree) frozen out of its sight.

    Lowering a function leaves cyclic garbage (a graph and its nodes point at each other), 28 KB a
    function: 1.8 GB for a file of 64 000 functions, with the collector off. Frozen objects are
    never walked, so collecting costs what lowering made, not what the file is.
    """
    gc.freeze()
    gc.enable()
    try:
        yield
    finally:
        gc.disable()
        gc.unfreeze()


def check_file(path: str, level: str, extra_targets: tuple = ()) -> list:
    """Diagnostics for every jitted function and Cell in the file at `level` (the file is not run).

    A Python syntax error is one diagnostic. `extra_targets` names top-level functions checked as if
    decorated with `jit`. UsageError when the file cannot be read.
    """
    from ..graph.diagnostics import Diagnostic
    from ..graph.spans import SourceSpan
    from ..transpiler.deep_stack import ResourceLimitError, run_deep
    from ..transpiler.source import forget_file
    with _no_cycle_collection():
        try:
            return run_deep(_check_file, path, level, extra_targets, where=SourceSpan(path, 1, 1),
                            what=f"checking {path}")
        except ResourceLimitError as e:   # too deep or too big where no statement catches it
            return [Diagnostic("GJ000", "error", e.message, e.span, "", e.hint, level)]
        finally:
            forget_file(path)   # checking many files keeps one syntax tree at a time


def _check_file(path: str, level: str, extra_targets: tuple) -> list:
    from ..graph.diagnostics import Diagnostic
    from ..transpiler.deep_stack import ResourceLimitError
    from ..transpiler.source import PythonSyntaxError
    from ..transpiler.static_module import StaticModule
    import linecache
    text = read_source(path)
    if not text.strip():
        return []
    linecache.cache[path] = (len(text), None, text.splitlines(True), path)
    try:
        module = StaticModule(path, text, extra_targets)
    except (PythonSyntaxError, ResourceLimitError) as e:
        return [Diagnostic("GJ000", "error", e.message, e.span, "", e.hint, level)]
    diagnostics = [_as_note(found) if found.cause in UNKNOWN_CAUSES else found
                   for found in (Diagnostic.from_error(d, "", level) for d in module.diagnostics)]
    with _collect_new_objects_only():
        for target in module.targets:
            diagnostics.extend(lower_target(target, {}, level)[2])
            module.parsed.release()   # the trees parsed to check it (a class's stays: see StaticModule)
    return diagnostics


def transpile_file(path: str, inputs: dict, jit_level: str = "O1", emit: str = "numpy",
                   level: str = "LAX", dump_passes: Optional[str] = None) -> TranspileResult:
    """Build the generated module (graph text, or DOT) for every jitted function and Cell in `path`.

    `level` is the jit_syntax_level; `dump_passes`: a directory receiving, per graph, its text before
    the pipeline and after every pass that changed it (`000-input.txt`, `001-fold-constants.txt`,
    ...) and the emitted source.
    """
    from ..transpiler.deep_stack import run_deep
    from ..graph.spans import SourceSpan
    return run_deep(_transpile_file, path, inputs, jit_level, emit, level, dump_passes,
                    where=SourceSpan(path, 1, 1), what=f"transpiling {path}")


def _transpile_file(path: str, inputs: dict, jit_level: str, emit: str, level: str,
                    dump_passes: Optional[str]) -> TranspileResult:
    from .. import __version__
    from ..backends.emit_numpy import emit_function
    from ..backends.module_text import ModuleText
    from ..graph.diagnostics import Diagnostic, GraphjitError
    from ..graph.passes.manager import DirectoryDump, format_report, run_pipeline

    module = load_module(path)
    if not module.parsed.text.strip():
        raise InputProblem(f"{path}: error: the file is empty")
    result = TranspileResult("", diagnostics=[Diagnostic.from_error(d, "", level) for d in module.diagnostics])
    if not module.targets:
        if result.diagnostics:
            return result
        raise InputProblem(f"{path}: error: nothing to transpile: no function decorated with jit and no nn.Cell "
                           "subclass")
    unknown_inputs = sorted(set(inputs) - target_parameters(module))
    if unknown_inputs:
        known = ", ".join(sorted(target_parameters(module))) or "none"
        raise UsageError(f"--input {unknown_inputs[0]}=...: `{unknown_inputs[0]}` is not a parameter of any "
                         f"jitted function or Cell in {path} (parameters: {known})")

    assembled = ModuleText(path, module.namespace)
    for target in module.targets:
        result.targets += 1
        fn = target_function(target)
        if assembled.alias(fn, target.name):  # `run_with_jit = ms.jit(run)` where run is emitted already
            continue
        name, lowered, diagnostics = lower_target(target, inputs, level, notes=False, jit_level=jit_level)
        result.diagnostics.extend(diagnostics)
        if lowered is None or any(d.severity == "error" for d in diagnostics):
            continue
        try:
            dump = DirectoryDump(dump_passes, name) if dump_passes else None
            report = run_pipeline(lowered.graph, jit_level, dump=dump)
            if dump is not None:
                dump.write("emitted.py", emit_function(lowered.graph, name, consts=list(lowered.consts)).source)
                dump.write("passes.txt", format_report(report, jit_level))
        except GraphjitError as e:
            result.diagnostics.append(Diagnostic.from_error(e, target.name, level))
            continue
        result.graphs.append((name, lowered.graph))
        if emit != "numpy":
            continue
        try:
            problem = assembled.add(fn, name, lowered.graph, lowered.consts, lowered.recipes,
                                    alias=target.name if target.kind == "function" else None)
        except ValueError as e:   # a compile-time object the module cannot rebuild from code
            problem = f"{target.name}: {e}"
        if problem is not None:
            result.diagnostics.append(Diagnostic("GJ002", "error", problem, target.span, target.name))

    if emit == "none":   # graphjit check: the diagnostics are all it needs
        return result
    if emit == "graph":
        result.module_text = "\n".join(str(g) for _, g in result.graphs)
        return result
    if emit == "dot":
        from ..graph.dot import to_dot
        result.module_text = "\n".join(to_dot(g) for _, g in result.graphs)
        return result
    result.module_text = assembled.text(__version__, jit_level, inputs)
    return result


def _print_diagnostics(diagnostics: list) -> None:
    from .diagnostic_formats import render, use_color
    if diagnostics:
        click.echo(render(diagnostics, "text", color=use_color(sys.stderr)), err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="graphjit")
def main() -> None:
    """graphjit: static graph mode (jit) for Python + NumPy."""


@main.command()
@click.argument("file")
@click.option("--input", "inputs", multiple=True, metavar="NAME=TYPE",
              help="Specialize an argument: x=f32[64,1,28,28] (array type) or n=3 (value). Repeatable.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the result to this file.")
@click.option("--emit", type=click.Choice(["numpy", "graph", "dot"]), default="numpy", show_default=True,
              help="Generated NumPy module, the optimized graph text, or Graphviz DOT of it.")
@click.option("--jit-level", type=click.Choice(["O0", "O1", "O2"]), default="O1", show_default=True,
              help="Optimization level: the pass pipeline (docs/passes.md).")
@click.option("--level", "syntax_level", type=click.Choice(["strict", "compatible", "lax"], case_sensitive=False),
              default="lax", show_default=True, help="jit_syntax_level to compile at.")
@click.option("--dump-passes", "dump_passes", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Write each graph before the pipeline and after every pass that changed it, and the "
                   "emitted source, numbered in order, into DIR/<name>/.")
def transpile(file: str, inputs: tuple, output: Optional[str], emit: str, jit_level: str, syntax_level: str,
              dump_passes: Optional[str]) -> None:
    """Print the NumPy code graphjit generates for FILE's jitted functions and Cells.

    FILE is read, never run.
    """
    try:
        result = transpile_file(file, parse_inputs(inputs), jit_level, emit, syntax_level.upper(), dump_passes)
    except (UsageError, InputProblem) as e:
        _echo_problem(e, file)
        sys.exit(EXIT_USAGE if isinstance(e, UsageError) else EXIT_ERRORS)
    except Exception as e:  # graphjit's own bug: still one line, never a traceback
        from ..graph.diagnostics import GraphjitError
        if isinstance(e, GraphjitError):
            click.echo(str(e), err=True)
        else:
            click.echo(f"graphjit: internal error: {type(e).__name__}: {e} (please report it)", err=True)
        sys.exit(EXIT_ERRORS)
    _print_diagnostics(result.diagnostics)
    if result.module_text.strip():
        if output:
            with open(output, "w", encoding="utf-8") as f:
                f.write(result.module_text)
        else:
            click.echo(result.module_text, nl=False)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    sys.exit(EXIT_ERRORS if errors else EXIT_OK)


def _echo_problem(error: Exception, path: str) -> None:
    """One line on stderr: `path: error: ...` (or `graphjit: error: ...` when it is not about a file)."""
    text = str(error)
    click.echo(text if text.startswith(path) else f"graphjit: error: {text}", err=True)


def check_files(paths: tuple, level: str) -> list:
    """Diagnostics for every jitted function and Cell in the files, at `level` (files are not run)."""
    diagnostics = []
    for path in paths:
        diagnostics.extend(check_file(path, level))
    return diagnostics


@main.command()
@click.argument("files", nargs=-1, required=True)
@click.option("--level", "syntax_level", type=click.Choice(["strict", "compatible", "lax"], case_sensitive=False),
              default="lax", show_default=True, help="jit_syntax_level to check against.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "gcc"]), default="text",
              show_default=True)
def check(files: tuple, syntax_level: str, fmt: str) -> None:
    """Report every construct in FILES that the syntax level does not compile (files are not run).

    Every readable file is checked and reported, even when another cannot be read (that one gets a
    line on stderr). Exit status: 2 if any file could not be read or decoded, else 1 if any error
    was found (a Python syntax error counts), else 0. Notes and warnings do not change it.
    """
    from .diagnostic_formats import render, use_color
    from .. import __version__
    diagnostics, unreadable = [], 0
    for path in files:
        try:
            diagnostics.extend(check_file(path, syntax_level.upper()))
        except UsageError as e:
            _echo_problem(e, path)
            unreadable += 1
    if diagnostics or not unreadable or fmt != "text":   # never "no problems found" after an unreadable file
        click.echo(render(diagnostics, fmt, color=fmt == "text" and use_color(sys.stdout), tool_version=__version__))
    if unreadable:
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_ERRORS if any(d.severity == "error" for d in diagnostics) else EXIT_OK)


@main.group()
def cache() -> None:
    """The on-disk compilation cache ($GRAPHJIT_CACHE_DIR, default: the user cache directory)."""


def _store():
    from ..backends import disk_cache
    return disk_cache.DiskCache(disk_cache.default_dir())


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


@cache.command()
@click.option("-v", "--verbose", is_flag=True, help="List every entry (least recently used last).")
def info(verbose: bool) -> None:
    """Entries, size, and the hit/miss counts recorded by the processes that used the cache."""
    import time
    from ..backends import disk_cache
    data = _store().info()
    state = "on" if disk_cache.enabled_by_env() else "off (GRAPHJIT_CACHE=0)"
    click.echo(f"directory: {data['directory']}")
    click.echo(f"disk cache: {state}")
    if data["refused"]:
        click.echo(f"not used (memory only): {data['refused']}")
    click.echo(f"entries: {data['entries']} ({data['functions']} keys)")
    click.echo(f"size: {_size(data['bytes'])} of {_size(data['cap'])} (GRAPHJIT_CACHE_SIZE)")
    click.echo(f"recorded: {data['hits']} hits, {data['misses']} misses, {data['writes']} writes, "
               f"{data['evictions']} evictions, {data['corrupt']} corrupt entries rebuilt")
    if verbose:
        for path, size, mtime in sorted(data["files"], key=lambda f: -f[2]):
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(mtime))
            click.echo(f"  {when}  {_size(size):>9}  {os.path.relpath(path, data['directory'])}")


@cache.command()
def clear() -> None:
    """Remove every entry graphjit wrote (other files are left alone)."""
    from ..backends.cache_trust import Untrusted
    store = _store()
    try:
        n, left = store.clear()
    except Untrusted as e:
        click.echo(f"graphjit: not clearing {store.root}: {e}", err=True)
        sys.exit(EXIT_ERRORS)
    click.echo(f"removed {n} entr{'y' if n == 1 else 'ies'} from {store.root}")
    if left:
        click.echo(f"left {left} file{'' if left == 1 else 's'} graphjit cannot verify as its own entries")
    old = os.path.join(store.root, "v1")
    if os.path.isdir(old):
        click.echo(f"{old} (the format before entries were signed) is left alone: delete it yourself")


if __name__ == "__main__":
    main()
