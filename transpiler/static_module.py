"""A user's file read without running it: what `graphjit transpile` and `graphjit check` compile.

The module's imports of NumPy, math and graphjit are real; its functions and classes are real
function and class objects built from their `def`s alone (no decorator, default expression or
module code runs); a Cell's `__init__` is interpreted statically, so sub-cells come from the
constant constructor calls in it. Anything else at module level is `Unresolved`: using it in
compiled code gives a diagnostic naming the line that would have to run.
"""

from __future__ import annotations

import ast
import importlib
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Optional

import libcst as cst

from ..graph.diagnostics import GraphjitError, LoweringError, UnsupportedSyntaxError
from ..graph.spans import SourceSpan
from .cst_queries import target_names
from .lower import Frame
from .source import ParsedFile, parse_file, read_text
from .static_evaluator import StaticEvaluator, Unresolved
from .values import Seq, Static, is_static, static_value

SAFE_IMPORTS = ("numpy", "math", "graphjit")


def safe_to_import(module_name: str) -> bool:
    """NumPy, graphjit and the standard library are imported for real; the user's own modules never."""
    root = module_name.split(".")[0]
    return root in SAFE_IMPORTS or root in getattr(sys, "stdlib_module_names", ()) and not root.startswith("_")


@dataclass
class Target:
    """Something to compile: a jitted function or a Cell subclass."""

    kind: str               # function | cell
    name: str               # the name the generated code gets
    obj: Any                # the function, or the class
    span: Optional[SourceSpan]
    aliases: list = field(default_factory=list)


@dataclass(frozen=True)
class JitDecorator:
    """`deco = jit(jit_config=...)` at module level: `@deco` and `deco(fn)` make jitted functions."""

    name: str


class StaticModule:
    """A user's file resolved without running it: its namespace and the targets to compile."""

    def __init__(self, filename: str, text: str, extra_targets: tuple = ()):
        """`extra_targets`: names of top-level functions compiled as if decorated with `jit`."""
        self.filename = filename
        self.parsed: ParsedFile = parse_file(filename, text)
        self.namespace: dict[str, Any] = {"__name__": "__graphjit_static__", "__file__": filename}
        self.targets: list[Target] = []
        self.diagnostics: list[GraphjitError] = []
        self.jit = importlib.import_module("graphjit").jit
        self.extra_targets = set(extra_targets)
        self._python_defs: Optional[dict] = None
        for stmt in self.parsed.module.body:
            try:
                self.top_level(stmt)
            except GraphjitError as e:
                self.diagnostics.append(e)
        self.bind_globals_set_in_functions()

    def span(self, node) -> Optional[SourceSpan]:
        return self.parsed.span(node)

    # --- module level ----------------------------------------------------------------------
    def top_level(self, stmt) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        self.do_import(_dotted(alias.name), alias, small)
                elif isinstance(small, cst.ImportFrom):
                    self.do_import_from(small)
                elif isinstance(small, (cst.Assign, cst.AnnAssign)):
                    self.assign(small)
                elif isinstance(small, cst.AugAssign):
                    self.bind_unresolved(small.target, small, "changed by module code")
        elif isinstance(stmt, cst.FunctionDef):
            fn = self.make_function(stmt, self.namespace)
            self.namespace[stmt.name.value] = fn
            if stmt.name.value in self.extra_targets or any(self.is_jit_decorator(d.decorator)
                                                            for d in stmt.decorators):
                self.targets.append(Target("function", stmt.name.value, fn, self.span(stmt)))
        elif isinstance(stmt, cst.ClassDef):
            cls = self.make_class(stmt)
            if cls is not None:
                self.namespace[stmt.name.value] = cls
                if getattr(cls, "__graphjit_cell__", False):
                    self.targets.append(Target("cell", stmt.name.value, cls, self.span(stmt)))
            else:
                self.namespace[stmt.name.value] = Unresolved(stmt.name.value, self.span(stmt),
                                                             "a class whose bases are known only when the file runs")
        else:   # if / for / while / with / try at module level: what they bind is known only when the file runs
            for name in _names_bound_in(stmt):
                self.namespace[name] = Unresolved(name, self.span(stmt), "bound by module code")

    def bind_unresolved(self, target, stmt, why: str) -> None:
        for name in target_names(target):
            self.namespace[name] = Unresolved(name, self.span(stmt), why)

    def bind_globals_set_in_functions(self) -> None:
        """`global n` in a function: `n` exists once that function has run (known only at run time)."""
        if "global" not in self.parsed.text:
            return
        for name, node in _declared_globals(self.parsed.module):
            if name not in self.namespace:
                self.namespace[name] = Unresolved(name, self.span(node), "assigned by a function's `global` statement")

    def do_import(self, module_name: str, alias, stmt) -> None:
        bind = alias.asname.name.value if alias.asname else module_name.split(".")[0]
        root = module_name.split(".")[0]
        if safe_to_import(module_name):
            try:
                self.namespace[bind] = importlib.import_module(module_name if alias.asname else root)
            except ImportError:
                self.namespace[bind] = Unresolved(bind, self.span(stmt), f"imported from `{module_name}`")
        else:
            self.namespace[bind] = Unresolved(bind, self.span(stmt), f"imported from `{module_name}`")

    def do_import_from(self, stmt: cst.ImportFrom) -> None:
        module_name = ("." * len(stmt.relative)) + (_dotted(stmt.module) if stmt.module else "")
        safe = not stmt.relative and safe_to_import(module_name)
        if isinstance(stmt.names, cst.ImportStar):
            return
        for alias in stmt.names:
            name = _dotted(alias.name)
            bind = alias.asname.name.value if alias.asname else name
            if safe:
                try:
                    module = importlib.import_module(module_name)
                except ImportError:
                    self.namespace[bind] = Unresolved(bind, self.span(stmt), f"imported from `{module_name}`")
                    continue
                if hasattr(module, name):
                    self.namespace[bind] = getattr(module, name)
                    continue
                try:
                    self.namespace[bind] = importlib.import_module(f"{module_name}.{name}")
                    continue
                except ImportError:
                    pass
            self.namespace[bind] = Unresolved(bind, self.span(stmt), f"imported from `{module_name}`")

    def assign(self, stmt) -> None:
        targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
        value = stmt.value
        if value is None:
            return
        if isinstance(value, cst.Call) and self.jit_maker(value) is not None:
            self.assign_jit(stmt, targets, value)
            return
        try:
            result = self.evaluate(value)
            known = True
        except GraphjitError:
            result, known = None, False
        for target in targets:
            self.bind_target(target, result, known and result is not None, stmt)

    def bind_target(self, target, value, known: bool, stmt) -> None:
        """Bind `target` (a name, or a tuple/list of targets) to `value`, or to Unresolved names."""
        if isinstance(target, cst.Name):
            self.namespace[target.value] = value if known else Unresolved(target.value, self.span(stmt),
                                                                          "computed by module code")
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            elements = [e.value for e in target.elements]
            starred = any(isinstance(e, cst.StarredElement) for e in target.elements)
            parts = None
            if known and not starred:
                try:
                    parts = list(value)
                except TypeError:
                    parts = None
            if parts is not None and len(parts) == len(elements):
                for element, part in zip(elements, parts):
                    self.bind_target(element, part, True, stmt)
                return
        self.bind_unresolved(target, stmt, "computed by module code")

    def jit_maker(self, call: cst.Call):
        """`jit(...)` or `deco(...)` with `deco = jit(...)`: the call that makes jitted functions, else None."""
        callee = self.resolve(call.func)
        if callee is self.jit or isinstance(callee, JitDecorator):
            return callee
        return None

    def assign_jit(self, stmt, targets, call: cst.Call) -> None:
        """`run_jit = jit(run)` / `deco(run)` (a target), or `deco = jit(jit_config=...)` (a decorator)."""
        names = [t.value for t in targets if isinstance(t, cst.Name)]
        positional = [a for a in call.args if a.keyword is None and a.star == ""]
        if not positional:
            if self.jit_maker(call) is self.jit:
                for name in names:
                    self.namespace[name] = JitDecorator(name)
            return
        inner = self.resolve(positional[0].value)
        if isinstance(inner, types.FunctionType):
            for name in names:
                self.namespace[name] = inner
                self.targets.append(Target("function", name, inner, self.span(stmt)))
            return
        for name in names:
            self.namespace[name] = Unresolved(name, self.span(stmt), "made by module code")

    def evaluate(self, expr) -> Optional[Any]:
        """A module-level expression built from constants only (`N = 28 * 28`), else None."""
        evaluator = StaticEvaluator(self)
        frame = Frame(self.parsed, "<module>", {}, self.namespace, {})
        value = evaluator.lower_expr(expr, frame)
        return static_value(value) if is_static(value) else None

    # --- decorators ------------------------------------------------------------------------
    def resolve(self, expr) -> Any:
        if isinstance(expr, cst.Name):
            return self.namespace.get(expr.value)
        if isinstance(expr, cst.Attribute):
            base = self.resolve(expr.value)
            return getattr(base, expr.attr.value, None) if base is not None and not isinstance(
                base, Unresolved) else None
        return None

    def is_jit_call(self, expr) -> bool:
        return self.resolve(expr) is self.jit

    def is_jit_decorator(self, expr) -> bool:
        """`@jit`, `@jit(...)`, `@graphjit.jit`, or `@deco` where `deco = jit(...)`."""
        if isinstance(expr, cst.Call):
            return self.is_jit_call(expr.func)
        return self.is_jit_call(expr) or isinstance(self.resolve(expr), JitDecorator)

    # --- functions and classes built from their definitions ----------------------------------
    def make_function(self, node: cst.FunctionDef, namespace: dict, owner: Optional[str] = None):
        """A real function object from the `def` alone: decorators, annotations, defaults stripped.

        Built from Python's own syntax tree of the file (parsed once), so no source is regenerated.
        """
        defaults: dict = {}

        def default_name(param: cst.Param) -> Optional[ast.expr]:
            if param.default is None:
                return None
            key = f"__graphjit_default_{len(defaults)}"
            try:
                defaults[key] = self.evaluate(param.default)
            except GraphjitError:
                defaults[key] = None
            return ast.Name(key, ast.Load())

        params = node.params
        positional = [default_name(p) for p in list(params.posonly_params) + list(params.params)]
        keyword = [default_name(p) for p in params.kwonly_params]
        tree = self.python_def(node)
        args = tree.args
        bare_args = ast.arguments(
            posonlyargs=[_bare_arg(a) for a in args.posonlyargs], args=[_bare_arg(a) for a in args.args],
            vararg=_bare_arg(args.vararg) if args.vararg else None,
            kwonlyargs=[_bare_arg(a) for a in args.kwonlyargs], kw_defaults=keyword,
            kwarg=_bare_arg(args.kwarg) if args.kwarg else None, defaults=[d for d in positional if d is not None])
        bare = type(tree)(name=tree.name, args=bare_args, body=tree.body, decorator_list=[], returns=None,
                          type_comment=None)   # a FunctionDef, or an AsyncFunctionDef
        ast.copy_location(bare, tree)
        bare.end_lineno, bare.end_col_offset = tree.end_lineno, tree.end_col_offset
        module = ast.Module([ast.fix_missing_locations(bare)], [])
        env = dict(defaults)   # only the stripped defaults are read when `def` runs; globals are rebound below
        exec(compile(module, self.filename, "exec"), env)  # defines the function; runs none of its code
        fn = env[node.name.value]
        if owner:
            fn.__qualname__ = f"{owner}.{node.name.value}"
        return _rebind_globals(fn, namespace)

    def python_def(self, node: cst.FunctionDef) -> ast.FunctionDef:
        """The `ast` node of a `def` of this file (by name and line)."""
        if self._python_defs is None:
            index = {}
            pending = list(ast.parse(self.parsed.text, self.filename).body)
            while pending:   # statements only: a `def` is never inside an expression
                item = pending.pop()
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    index[(item.name, item.lineno)] = item
                for block in ("body", "orelse", "handlers", "finalbody", "cases"):
                    inner = getattr(item, block, None)
                    if isinstance(inner, list):
                        pending.extend(inner)
            self._python_defs = index
        return self._python_defs[(node.name.value, self.parsed.positions[node].start.line)]

    def make_class(self, node: cst.ClassDef):
        bases = []
        for arg in node.bases:
            base = self.resolve(arg.value)
            if base is None or isinstance(base, Unresolved) or not isinstance(base, type):
                self.diagnostics.append(LoweringError(
                    f"class {node.name.value}: base `{cst.Module(body=[]).code_for_node(arg.value)}` cannot be "
                    "resolved without running the file", self.span(node)))
                return None
            bases.append(base)
        body: dict[str, Any] = {"__module__": "__graphjit_static__", "__qualname__": node.name.value}
        init_node = None
        for stmt in node.body.body:
            if isinstance(stmt, cst.FunctionDef):
                if stmt.name.value == "__init__":
                    init_node = stmt
                    continue
                fn = self.make_function(stmt, self.namespace, owner=node.name.value)
                if any(self.is_jit_decorator(d.decorator) for d in stmt.decorators):
                    fn = self.jit(fn)
                body[stmt.name.value] = fn
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                            isinstance(small.targets[0].target, cst.Name):
                        try:
                            value = self.evaluate(small.value)
                        except GraphjitError:
                            value = None
                        if value is not None:
                            body[small.targets[0].target.value] = value
        cls = type(node.name.value, tuple(bases), body)
        if init_node is not None:
            cls.__init__ = self.static_init(cls, init_node)
        return cls

    def static_init(self, cls, init_node: cst.FunctionDef):
        """`__init__` interpreted statically: constructor calls and constants only."""
        module = self
        signature_fn = self.make_function(init_node, self.namespace, owner=cls.__name__)

        def __init__(obj, *args, **kwargs):
            evaluator = StaticEvaluator(module, cls=cls)
            frame = Frame(module.parsed, f"{cls.__name__}.__init__", {}, module.namespace, {})
            evaluator.bind_params(init_node.params, frame, [Static(obj)] + [Static(a) for a in args],
                                  {k: Static(v) for k, v in kwargs.items()}, signature_fn, module.span(init_node))
            evaluator.statements(list(init_node.body.body), frame)

        __init__.__qualname__ = f"{cls.__name__}.__init__"
        return __init__


def _rebind_globals(fn, namespace: dict):
    """Give `fn` the module namespace itself as globals, so later definitions are visible."""
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__) \
        if fn.__globals__ is not namespace else fn


def _bare_arg(arg: ast.arg) -> ast.arg:
    bare = ast.arg(arg.arg, None, None)
    return ast.copy_location(bare, arg)


class _Binders(cst.CSTVisitor):
    """Names a module-level compound statement binds (not descending into functions or classes)."""

    def __init__(self) -> None:
        self.names: list = []

    def visit_FunctionDef(self, node) -> bool:
        self.names.append(node.name.value)
        return False

    def visit_ClassDef(self, node) -> bool:
        self.names.append(node.name.value)
        return False

    def visit_AssignTarget(self, node) -> None:
        self.names.extend(target_names(node.target))

    def visit_AnnAssign(self, node) -> None:
        self.names.extend(target_names(node.target))

    def visit_AugAssign(self, node) -> None:
        self.names.extend(target_names(node.target))

    def visit_For(self, node) -> None:
        self.names.extend(target_names(node.target))

    def visit_AsName(self, node) -> None:
        self.names.extend(target_names(node.name))

    def visit_ImportAlias(self, node) -> None:
        if node.asname is None:
            self.names.append(_dotted(node.name).split(".")[0])

    def visit_NamedExpr(self, node) -> None:
        self.names.extend(target_names(node.target))


def _names_bound_in(stmt) -> list:
    binders = _Binders()
    stmt.visit(binders)
    return binders.names


def _declared_globals(module) -> list:
    """(name, statement) of every `global name` in the file."""
    class Globals(cst.CSTVisitor):
        def __init__(self) -> None:
            self.names: list = []

        def visit_Global(self, node) -> None:
            self.names.extend((n.name.value, node) for n in node.names)

    found = Globals()
    module.visit(found)
    return found.names


def _dotted(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def load(filename: str) -> StaticModule:
    """Read and statically resolve a file; raises `UnsupportedSyntaxError` on a Python syntax error."""
    text = read_text(filename)
    import linecache
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    return StaticModule(filename, text)


__all__ = ["StaticModule", "Target", "Unresolved", "load", "UnsupportedSyntaxError", "Seq"]
