"""The command line: `graphjit transpile FILE`, `graphjit check FILE`, `graphjit cache info|clear`.

Neither runs the user's file: it is parsed with LibCST and resolved statically
(`transpiler.static_module`). Errors are one clear line each on stderr with a non-zero exit
status; never a traceback from graphjit itself.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Optional

import click

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad command line or unreadable input: exit status 2."""


@dataclass
class TranspileResult:
    module_text: str
    graphs: list = field(default_factory=list)      # (name, Graph)
    diagnostics: list = field(default_factory=list)  # GraphjitError
    targets: int = 0


def parse_inputs(specs: tuple) -> dict:
    """`x=f32[64,1,28,28]` (an array of that type) or `n=3` (a compile-time value)."""
    from .graph.literals import parse_literal
    from .graph.types import ArrayType, parse_type
    from .transpiler.lower import AbstractArray
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
    if not os.path.exists(path):
        raise UsageError(f"{path}: error: no such file")
    if os.path.isdir(path):
        raise UsageError(f"{path}: error: is a directory")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{path}: error: cannot read: {e}") from None


def transpile_file(path: str, inputs: dict, jit_level: str = "O1", emit: str = "numpy",
                   level: str = "LAX", dump_passes: Optional[str] = None) -> TranspileResult:
    """Build the generated module (graph text, or DOT) for every jitted function and Cell in `path`.

    `level` is the jit_syntax_level; `dump_passes`: a directory receiving, per graph, its text before
    the pipeline and after every pass that changed it (`000-input.txt`, `001-fold-constants.txt`,
    ...) and the emitted source.
    """
    import linecache

    from . import __version__
    from .backends.emit_numpy import emit_function
    from .graph.diagnostics import Diagnostic, GraphjitError
    from .graph.passes.manager import DirectoryDump, format_report, run_pipeline
    from .graph.types import ANY_ARRAY
    from .transpiler.lower import AbstractArray, lower_function
    from .transpiler.source import PythonSyntaxError
    from .transpiler.static_module import StaticModule

    text = read_source(path)
    if not text.strip():
        raise UsageError(f"{path}: error: the file is empty")
    linecache.cache[path] = (len(text), None, text.splitlines(True), path)
    try:
        module = StaticModule(path, text)
    except PythonSyntaxError as e:
        raise UsageError(f"{e.span}: error: {e.message}") from None
    result = TranspileResult("", diagnostics=[Diagnostic.from_error(d, "", level) for d in module.diagnostics])
    if not module.targets:
        if result.diagnostics:
            return result
        raise UsageError(f"{path}: error: nothing to transpile: no function decorated with jit and no nn.Cell subclass")

    import inspect
    pieces, const_lines, needs_user, aliases = [], [], False, []
    emitted_names: dict[int, str] = {}
    for target in module.targets:
        result.targets += 1
        fn = target.obj if target.kind == "function" else target.obj.construct
        fn = getattr(fn, "__graphjit_fn__", fn)
        if id(fn) in emitted_names:  # `run_with_jit = ms.jit(run)` where run is emitted already
            aliases.append(f"{target.name} = {emitted_names[id(fn)]}")
            continue
        try:
            args = []
            params = list(inspect.signature(fn).parameters.values())
            if target.kind == "cell":
                try:
                    instance = target.obj()
                except GraphjitError as e:
                    raise e.add_context(f"while building {target.name}() from its __init__")
                except TypeError as e:
                    raise GraphjitError(f"cannot build {target.name}() without arguments ({e}); it is "
                                        "compiled where a Cell that builds it is", target.span) from None
                args.append(instance)
                params = params[1:]
            for p in params:
                if p.name in inputs:
                    args.append(inputs[p.name])
                elif p.default is not p.empty:
                    args.append(p.default)
                else:
                    args.append(AbstractArray(ANY_ARRAY))
            name = target.name if target.kind == "function" else f"{target.name}_construct"
            lowered = lower_function(fn, tuple(args), {}, name=name, level=level, collect=True)
            result.diagnostics.extend(lowered.diagnostics)
            if any(d.severity == "error" for d in lowered.diagnostics):
                continue
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
        consts_name = f"_k_{name}"
        emitted = emit_function(lowered.graph, name, consts=lowered.consts, consts_name=consts_name)
        if lowered.consts:
            needs_user = True
            const_lines.append(f"{consts_name} = [")
            built: dict[int, str] = {}
            for k, obj in enumerate(emitted.consts):
                recipe = lowered.recipes.get(k)
                if recipe is None:
                    if isinstance(obj, dict) and obj is module.namespace:
                        const_lines.append("    _g,")
                        continue
                    result.diagnostics.append(Diagnostic(
                        "GJ002", "error", f"{name}: a compile-time {type(obj).__name__} cannot be rebuilt by the "
                        "generated module", target.span, target.name))
                    break
                const_lines.append(f"    {_recipe_code(recipe, built, module.namespace)},")
                built[id(obj)] = f"{consts_name}[{k}]"
            const_lines.append("]")
        if "_g[" in emitted.source or "_make_fallback(" in emitted.source:
            needs_user = True
        pieces.append(emitted.source)
        emitted_names[id(fn)] = emitted.name
        if target.kind == "function" and emitted.name != target.name:
            aliases.append(f"{target.name} = {emitted.name}")

    if emit == "none":   # graphjit check: the diagnostics are all it needs
        return result
    if emit == "graph":
        result.module_text = "\n".join(str(g) for _, g in result.graphs)
        return result
    if emit == "dot":
        from .graph.dot import to_dot
        result.module_text = "\n".join(to_dot(g) for _, g in result.graphs)
        return result
    shape_note = ", ".join(f"{k}={getattr(v, 'type', v)}" for k, v in inputs.items()) or "none (shape-generic)"
    header = [f'"""NumPy code generated by graphjit {__version__} from {os.path.basename(path)} '
              f"(jit_level {jit_level}); do not edit.", "", f"Example inputs: {shape_note}.", '"""', "",
              "import math", "import operator", "", "import numpy as np", ""]
    if any("_select(" in piece for piece in pieces):
        header += ["from graphjit.graph.blend import select as _select", ""]
    if needs_user:
        header += ["import graphjit",
                   "from graphjit.backends.fallback_runtime import make_fallback as _make_fallback", "", "",
                   "def _load_user_module():",
                   "    # the transpiled file, for its classes and globals (runs its module code)",
                   "    import importlib.util",
                   f"    spec = importlib.util.spec_from_file_location('graphjit_user_module', {os.path.abspath(path)!r})",
                   "    module = importlib.util.module_from_spec(spec)",
                   "    spec.loader.exec_module(module)",
                   "    return module", "", "",
                   "_user = _load_user_module()", "_g = _user.__dict__"]
        header += const_lines
    result.module_text = "\n".join(header) + "\n\n\n" + "\n\n".join(pieces) + (
        "\n\n" + "\n".join(aliases) + "\n" if aliases else "")
    return result


def _recipe_code(recipe: tuple, built: dict, namespace: dict) -> str:
    from .graph.literals import format_literal, is_literal
    cls, args, kwargs = recipe

    def value(v):
        if id(v) in built:
            return built[id(v)]
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, tuple):
            return "(" + ", ".join(value(x) for x in v) + ("," if len(v) == 1 else "") + ")"
        if is_literal(v):
            return format_literal(v)
        raise ValueError(f"cannot write {type(v).__name__} as code")

    if namespace.get(cls.__name__) is cls and cls.__module__ == "__graphjit_static__":
        callee = f"_user.{cls.__name__}"
    elif cls.__module__.startswith("graphjit"):
        callee = f"graphjit.{cls.__module__.split('.', 1)[1]}.{cls.__qualname__}" if "." in cls.__module__ \
            else f"graphjit.{cls.__qualname__}"
    else:
        callee = f"_user.{cls.__name__}"
    parts = [value(a) for a in args] + [f"{k}={value(v)}" for k, v in kwargs.items()]
    return f"{callee}({', '.join(parts)})"


def _print_diagnostics(diagnostics: list) -> None:
    from .diagnostic_formats import render, use_color
    if diagnostics:
        click.echo(render(diagnostics, "text", color=use_color(sys.stderr)), err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="graphjit")
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
    except UsageError as e:
        click.echo(f"{e}" if str(e).startswith(file) else f"graphjit: error: {e}", err=True)
        sys.exit(EXIT_USAGE if "no such file" in str(e) or "is a directory" in str(e) else EXIT_ERRORS)
    except Exception as e:  # graphjit's own bug: still one line, never a traceback
        from .graph.diagnostics import GraphjitError
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


def check_files(paths: tuple, level: str) -> list:
    """Diagnostics for every jitted function and Cell in the files, at `level` (files are not run)."""
    from .graph.diagnostics import Diagnostic
    diagnostics = []
    for path in paths:
        result = transpile_file(path, {}, "O0", "none", level)
        diagnostics.extend(result.diagnostics)
    return diagnostics


@main.command()
@click.argument("files", nargs=-1, required=True)
@click.option("--level", "syntax_level", type=click.Choice(["strict", "compatible", "lax"], case_sensitive=False),
              default="lax", show_default=True, help="jit_syntax_level to check against.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "gcc"]), default="text",
              show_default=True)
def check(files: tuple, syntax_level: str, fmt: str) -> None:
    """Report every construct in FILES that the syntax level does not compile (files are not run).

    Exit status: 0 clean, 1 errors at that level, 2 usage or input error.
    """
    from .diagnostic_formats import render, use_color
    from . import __version__
    diagnostics = []
    for path in files:
        try:
            diagnostics.extend(check_files((path,), syntax_level.upper()))
        except UsageError as e:
            text = str(e)
            if "nothing to transpile" in text:
                continue  # a file without jitted code is clean
            click.echo(text if text.startswith(path) else f"graphjit: error: {text}", err=True)
            sys.exit(EXIT_USAGE)
    out = render(diagnostics, fmt, color=fmt == "text" and use_color(sys.stdout), tool_version=__version__)
    click.echo(out)
    sys.exit(EXIT_ERRORS if any(d.severity == "error" for d in diagnostics) else EXIT_OK)


@main.group()
def cache() -> None:
    """The on-disk compilation cache ($GRAPHJIT_CACHE_DIR, default: the user cache directory)."""


def _store():
    from .backends import disk_cache
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
    from .backends import disk_cache
    data = _store().info()
    state = "on" if disk_cache.enabled_by_env() else "off (GRAPHJIT_CACHE=0)"
    click.echo(f"directory: {data['directory']}")
    click.echo(f"disk cache: {state}")
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
    """Remove every entry."""
    store = _store()
    n = store.clear()
    click.echo(f"removed {n} entr{'y' if n == 1 else 'ies'} from {store.root}")


if __name__ == "__main__":
    main()
