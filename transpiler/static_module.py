"""A user's file read without running it: what `graphjit transpile` and `graphjit check` compile.

Nothing of the file runs. Its imports bind only the modules static_pure's table lists (NumPy's own,
math, graphjit's library); any other import (the OS, the file's neighbours) binds an `Unresolved`
value and imports nothing. Its functions are real function objects with the signature, name and
line of each `def`, whose code is a trap: called for real (by a dunder, a callback, a library), they
raise `NotComputed` and never run the body (the compiler reads the body from the source). Classes
are built from those functions and statically evaluated constants; a Cell's `__init__` is
interpreted statically (static_evaluator.py), so sub-cells come from the constructor calls in it.
Module-level values are computed by the same evaluator, which calls only static_pure's pure
functions on literal data. Anything else is `Unresolved`: using it in compiled code gives a
diagnostic that says where it comes from (`it comes from a call to os.system (m.py:3:5)`).
"""

from __future__ import annotations

import ast
import builtins
import types
from dataclasses import dataclass, field
from typing import Any, Optional

import libcst as cst

from ..graph.diagnostics import GraphjitError, UnsupportedSyntaxError
from ..graph.spans import SourceSpan
from .cst_queries import target_names
from .module_bindings import declared_globals, dotted, names_bound_in
from .lower import Frame
from .source import ParsedFile, parse_file, read_text
from .static_evaluator import StaticEvaluator, Unresolved
from .static_pure import (CLASS_LINE_BUILTINS, DROPPED_METHODS, PLAIN_BASES, WRAPPERS, StaticNamespace,
                          describe_callable, import_known, is_library_class, module_attribute, not_computed)
from .trap_functions import trap_function
from .unknown_values import calls_in, source_of, unknown_detail, unknown_origin
from .values import Seq, Static, is_static, static_value

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
        self._class_why = ""
        self.filename = filename
        self.parsed: ParsedFile = parse_file(filename, text)
        self.namespace: dict[str, Any] = StaticNamespace(__name__="__graphjit_static__", __file__=filename)
        self.targets: list[Target] = []
        self.diagnostics: list[GraphjitError] = []
        self.jit = import_known("graphjit").jit
        self.extra_targets = set(extra_targets)
        for chunk, head in enumerate(self.parsed.heads):
            if head is not None and self.plain_def(head):
                continue
            for stmt in self.parsed.statements(chunk):   # a file LibCST cannot read is one error
                try:
                    self.top_level(stmt)
                except GraphjitError as e:
                    self.diagnostics.append(e)
            if self.parsed.keep[chunk]:
                self.parsed.pin(chunk)
            else:
                self.parsed.release(chunk)   # a function's tree is parsed again when it is compiled
        self.bind_globals_set_in_functions()

    def span(self, node) -> Optional[SourceSpan]:
        return self.parsed.span(node)

    # --- module level ----------------------------------------------------------------------
    def top_level(self, stmt) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        self.do_import(dotted(alias.name), alias, small)
                elif isinstance(small, cst.ImportFrom):
                    self.do_import_from(small)
                elif isinstance(small, (cst.Assign, cst.AnnAssign)):
                    self.assign(small)
                elif isinstance(small, cst.AugAssign):
                    self.bind_unresolved(small.target, small, "is changed by module code")
        elif isinstance(stmt, cst.FunctionDef):
            fn = self.make_function(stmt, self.namespace)
            self.namespace[stmt.name.value] = fn
            if any(self.is_jit_decorator(d.decorator) for d in stmt.decorators):   # a jitted function
                for decorator in stmt.decorators:
                    if not self.is_jit_decorator(decorator.decorator):
                        self.note_dropped_decorator(stmt, decorator, stmt.name.value)
            if stmt.name.value in self.extra_targets or any(self.is_jit_decorator(d.decorator)
                                                            for d in stmt.decorators):
                self.targets.append(Target("function", stmt.name.value, fn, self.span(stmt)))
        elif isinstance(stmt, cst.ClassDef):
            cls = self.make_class(stmt)
            if cls is not None:
                self.namespace[stmt.name.value] = cls
                if getattr(cls, "__graphjit_cell__", False):
                    self.targets.append(Target("cell", stmt.name.value, cls, self.span(stmt)))
                    for decorator in stmt.decorators:   # a Cell is checked as written
                        self.note_dropped_decorator(stmt, decorator, stmt.name.value)
            else:
                self.namespace[stmt.name.value] = Unresolved(stmt.name.value, self.span(stmt), self._class_why)
        else:   # if / for / while / with / try at module level: what they bind is known only when the file runs
            kind = type(stmt).__name__.lower()
            for name in names_bound_in(stmt):
                self.namespace[name] = Unresolved(name, self.span(stmt), f"is bound by a module-level `{kind}`")

    def plain_def(self, head: ast.AST) -> bool:
        """A top-level `def` without defaults whose decorators are all jit or all something else, made
        from Python's tree without LibCST's: what `top_level` makes of it (True), or nothing (False)."""
        args = head.args
        if args.defaults or any(d is not None for d in args.kw_defaults):
            return False
        if not all(isinstance(d.func if isinstance(d, ast.Call) else d, (ast.Name, ast.Attribute))
                   for d in head.decorator_list):
            return False
        try:
            span = self.parsed.def_span(head)
            fn = trap_function(self.filename, head, {}, span, head.name, self.namespace)
        except GraphjitError:
            return False
        self.namespace[head.name] = fn   # bound before its decorators are resolved, as `top_level` does
        jitted = []
        for decorator in head.decorator_list:
            call = isinstance(decorator, ast.Call)
            value = self.resolve_python(decorator.func if call else decorator)
            jitted.append(value is self.jit or (not call and isinstance(value, JitDecorator)))
        if any(jitted) and not all(jitted):
            return False   # the other decorators get a note, placed by LibCST's tree: `top_level` makes it again
        if head.name in self.extra_targets or any(jitted):
            self.targets.append(Target("function", head.name, fn, span))
        return True

    def resolve_python(self, expr) -> Any:
        """`resolve` for a name or attribute of Python's tree."""
        if isinstance(expr, ast.Name):
            if expr.id in self.namespace:
                return self.namespace[expr.id]
            return getattr(builtins, expr.id, None) if expr.id in CLASS_LINE_BUILTINS else None
        if isinstance(expr, ast.Attribute):
            base = self.resolve_python(expr.value)
            if base is None or isinstance(base, Unresolved):
                return None
            try:
                return module_attribute(base, expr.attr) if isinstance(base, types.ModuleType) else \
                    _class_attribute(base, expr.attr)
            except AttributeError:
                return None
        return None

    def note_dropped_decorator(self, stmt, decorator, qualname: str) -> None:
        """A decorator graphjit does not run: the function is compiled as written, which the note says."""
        self.diagnostics.append(not_computed(
            f"what `@{source_of(decorator.decorator)}` makes of `{qualname}`", "graphjit does not run decorators "
            "other than jit; it is checked as written", self.span(decorator)))

    def bind_unresolved(self, target, stmt, why: str) -> None:
        for name in target_names(target):
            self.namespace[name] = Unresolved(name, self.span(stmt), why)

    def bind_globals_set_in_functions(self) -> None:
        """`global n` in a function: `n` exists once that function has run (known only at run time)."""
        if "global" not in self.parsed.text:
            return
        for chunk in range(len(self.parsed.starts)):
            if "global" not in self.parsed.chunk_text(chunk):
                continue
            for name, node in declared_globals(self.parsed.chunk_module(chunk)):
                if name not in self.namespace:
                    self.namespace[name] = Unresolved(name, self.span(node), "is assigned by a function's `global` "
                                                                             "statement")
            if not self.parsed.keep[chunk]:
                self.parsed.release(chunk)

    def do_import(self, module_name: str, alias, stmt) -> None:
        bind = alias.asname.name.value if alias.asname else module_name.split(".")[0]
        root = module_name.split(".")[0]
        module = import_known(module_name)
        if module is not None and not alias.asname:
            module = import_known(root)
        self.namespace[bind] = module if module is not None else Unresolved(
            bind, self.span(stmt), f"is imported from `{module_name}`, which graphjit does not import")

    def do_import_from(self, stmt: cst.ImportFrom) -> None:
        module_name = ("." * len(stmt.relative)) + (dotted(stmt.module) if stmt.module else "")
        module = None if stmt.relative else import_known(module_name)
        if isinstance(stmt.names, cst.ImportStar):
            return
        for alias in stmt.names:
            name = dotted(alias.name)
            bind = alias.asname.name.value if alias.asname else name
            try:
                if module is None:
                    raise AttributeError(name)
                self.namespace[bind] = module_attribute(module, name)
            except AttributeError:
                self.namespace[bind] = Unresolved(bind, self.span(stmt), f"is imported from `{module_name}`, "
                                                  "which graphjit does not import" if module is None else
                                                  f"is imported from `{module_name}`, which has no `{name}` "
                                                  "graphjit reads")

    def assign(self, stmt) -> None:
        targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
        value = stmt.value
        if value is None:
            return
        if isinstance(value, cst.Call) and self.jit_maker(value) is not None:
            self.assign_jit(stmt, targets, value)
            return
        why, where, detail = "is computed by module code", None, ""
        try:
            result = self.evaluate(value)
            known = True
        except GraphjitError as e:
            result, known = None, False
            why, where, detail = self.why_unknown(value, e)
        for target in targets:
            self.bind_target(target, result, known and result is not None, stmt, why, where, detail)

    def bind_target(self, target, value, known: bool, stmt, why: str = "is computed by module code",
                    where=None, detail: str = "") -> None:
        """Bind `target` (a name, or a tuple/list of targets) to `value`, or to Unresolved names."""
        if isinstance(target, cst.Name):
            self.namespace[target.value] = value if known else Unresolved(target.value, where or self.span(stmt),
                                                                          why, detail)
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
        for name in target_names(target):
            self.namespace[name] = Unresolved(name, where or self.span(stmt), why, detail)

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
            self.namespace[name] = Unresolved(name, self.span(stmt), "is made by module code")

    def evaluate(self, expr) -> Optional[Any]:
        """A module-level expression built from constants only (`N = 28 * 28`), else None."""
        evaluator = StaticEvaluator(self)
        frame = Frame(self.parsed, "<module>", {}, self.namespace, {})
        try:
            value = evaluator.lower_expr(expr, frame)
        except RecursionError:   # calls nested past Python's own limit (`def f(n): return f(n + 1)`)
            raise not_computed("this value", "it calls functions nested too deeply to follow without running "
                               "the file", self.span(expr)) from None
        return static_value(value) if is_static(value) else None

    def why_unknown(self, expr, error: GraphjitError) -> tuple:
        """(`comes from a call to os.system`, its span, the detail): the call in `expr` the error is
        about (the innermost call holding the error's place, or the outermost call when the error is
        elsewhere, inside a helper), else the error's own reason and place."""
        span = getattr(error, "span", None)
        here = span is not None and span.file == self.filename
        best = None
        for call in calls_in(expr):
            where = self.span(call)
            if where is None:
                continue
            if not here:
                best = best or (call, where)
            elif (where.line, where.col) <= (span.line, span.col) and (
                    (span.end_line, span.end_col) <= (where.end_line, where.end_col) or not span.end_line):
                best = (call, where)
        if best is not None:
            return f"comes from a call to {source_of(best[0].func)}", best[1], unknown_detail(error)
        return unknown_origin(error), span or self.span(expr), ""

    # --- decorators ------------------------------------------------------------------------
    def resolve(self, expr) -> Any:
        if isinstance(expr, cst.Name):
            if expr.value in self.namespace:
                return self.namespace[expr.value]
            return getattr(builtins, expr.value, None) if expr.value in CLASS_LINE_BUILTINS else None
        if isinstance(expr, cst.Attribute):
            base = self.resolve(expr.value)
            if base is None or isinstance(base, Unresolved):
                return None
            try:
                return module_attribute(base, expr.attr.value) if isinstance(base, types.ModuleType) else \
                    _class_attribute(base, expr.attr.value)
            except AttributeError:
                return None
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
        """A real function object for a `def`: its signature, name, file and line, with trap code.

        Decorators and annotations are dropped and defaults are evaluated statically (an unknown
        default is `Unresolved`). The code object is compiled from the `def` with its body replaced
        by a `raise NotComputed`: the compiler reads the body from the source; anything that calls
        the function for real (a dunder, a callback, a library) gets the error, never the user's
        code. Nothing is `exec`uted: the function is made by a factory whose code is ours.
        """
        defaults: dict = {}
        qualname = f"{owner}.{node.name.value}" if owner else node.name.value

        def default_name(param: cst.Param) -> Optional[ast.expr]:
            if param.default is None:
                return None
            key = f"__graphjit_default_{len(defaults)}"
            try:
                value = self.evaluate(param.default)
                defaults[key] = value if value is not None or _is_none(param.default) else Unresolved(
                    param.name.value, self.span(param.default), "is a default computed by code")
            except GraphjitError as e:
                why, where, detail = self.why_unknown(param.default, e)
                defaults[key] = Unresolved(param.name.value, where, why, detail)
            return ast.Name(key, ast.Load())

        params = node.params
        positional = [default_name(p) for p in list(params.posonly_params) + list(params.params)]
        keyword = [default_name(p) for p in params.kwonly_params]
        return trap_function(self.filename, self.python_def(node), defaults, self.span(node), qualname, namespace,
                                  [d for d in positional if d is not None], keyword)

    def python_def(self, node: cst.FunctionDef) -> ast.FunctionDef:
        """The `ast` node of a `def` of this file, as `source.python_defs` keeps it: by name and line, else the
        first of its name after LibCST's line (which can precede Python's: a leading line continuation)."""
        defs, name, line = self.parsed.python_defs, node.name.value, self.parsed.positions[node].start.line
        if (name, line) in defs:
            return defs[(name, line)]
        same = sorted(((at, d) for (n, at), d in defs.items() if n == name), key=lambda pair: pair[0])
        return next((d for at, d in same if at >= line), same[-1][1])

    def make_class(self, node: cst.ClassDef):
        """The class of a `class` statement, or None (then `self._class_why` says why).

        Its bases must be the file's own classes, graphjit's library classes or plain builtins (a
        NumPy or other class could run code when subclassed or built); class keywords (`metaclass=`)
        run code, so such a class is known only when the file runs. Methods are trap functions,
        `__init__` is interpreted statically, simple `name = value` lines are evaluated statically.
        """
        bases = []
        for arg in node.bases:
            source = cst.Module(body=[]).code_for_node(arg.value)
            if arg.star:
                return self._refuse_class(node, f"its bases `{arg.star}{source}` are known only when the file runs")
            base = self.resolve(arg.value)
            if base is None or isinstance(base, Unresolved) or not isinstance(base, type):
                return self._refuse_class(node, f"its base `{source}` is known only when the file runs")
            if not (getattr(base, "__graphjit_static_class__", False) or is_library_class(base)
                    or base in PLAIN_BASES):
                return self._refuse_class(node, f"its base `{source}` ({describe_callable(base)}) is a class "
                                          "graphjit does not subclass while it reads a file")
            bases.append(base)
        if node.keywords:
            keyword = node.keywords[0]
            return self._refuse_class(node, f"its class keyword `{keyword.keyword.value}=` runs code when the "
                                      "class is made")
        body: dict[str, Any] = {"__module__": "__graphjit_static__", "__qualname__": node.name.value,
                                "__graphjit_static_class__": True}
        init_node = None
        for stmt in node.body.body:
            if isinstance(stmt, cst.FunctionDef):
                if stmt.name.value == "__init__":
                    init_node = stmt
                    continue
                if stmt.name.value in DROPPED_METHODS:
                    continue
                fn = self.make_function(stmt, self.namespace, owner=node.name.value)
                if any(self.is_jit_decorator(d.decorator) for d in stmt.decorators):
                    fn = self.jit(fn)
                for decorator in reversed(stmt.decorators):
                    wrapper = self.resolve(decorator.decorator)
                    if wrapper in WRAPPERS:
                        fn = wrapper(fn)
                    elif not self.is_jit_decorator(decorator.decorator):
                        self.note_dropped_decorator(stmt, decorator, f"{node.name.value}.{stmt.name.value}")
                body[stmt.name.value] = fn
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                            isinstance(small.targets[0].target, cst.Name):
                        try:
                            value = self.evaluate(small.value)
                        except GraphjitError:
                            value = None
                        if value is not None and not small.targets[0].target.value.startswith("__graphjit"):
                            body[small.targets[0].target.value] = value
        try:
            cls = type(node.name.value, tuple(bases), body)
        except (GraphjitError, RuntimeError) as e:   # a base's `__init_subclass__`, a `__set_name__`: the file's code
            cause = e if isinstance(e, GraphjitError) else e.__cause__
            if not isinstance(cause, GraphjitError):
                raise
            return self._refuse_class(node, unknown_origin(cause))
        except (TypeError, ValueError) as e:
            return self._refuse_class(node, f"Python cannot make it from what graphjit reads ({e})")
        if init_node is not None:
            cls.__init__ = self.static_init(cls, init_node)
        return cls

    def _refuse_class(self, node: cst.ClassDef, why: str):
        """A class known only when the file runs: a note where it is defined, None for `make_class`."""
        self._class_why = f"is a class graphjit cannot make without running the file: {why}"
        self.diagnostics.append(not_computed(f"class `{node.name.value}`", why, self.span(node)))
        return None

    def static_init(self, cls, init_node: cst.FunctionDef):
        """`__init__` interpreted statically: constructor calls and constants only."""
        module = self
        signature_fn = self.make_function(init_node, self.namespace, owner=cls.__name__)

        def __init__(obj, *args, **kwargs):
            evaluator = StaticEvaluator(module, cls=cls)
            frame = Frame(module.parsed, f"{cls.__name__}.__init__", {}, module.namespace, {})
            try:
                evaluator.bind_params(init_node.params, frame, [Static(obj)] + [Static(a) for a in args],
                                      {k: Static(v) for k, v in kwargs.items()}, signature_fn, module.span(init_node))
                evaluator.statements(list(init_node.body.body), frame)
            except RecursionError:
                raise not_computed(f"`{cls.__name__}()`", "its __init__ calls functions nested too deeply to follow "
                                   "without running the file", module.span(init_node)) from None

        __init__.__qualname__ = f"{cls.__name__}.__init__"
        return __init__



def _is_none(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _class_attribute(cls, name: str):
    """`cls.name` for a base or decorator: only from the class's own namespace chain (no descriptor runs)."""
    if not isinstance(cls, type):
        raise AttributeError(name)
    for klass in cls.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    raise AttributeError(name)



def load(filename: str) -> StaticModule:
    """Read and statically resolve a file; raises `UnsupportedSyntaxError` on a Python syntax error."""
    text = read_text(filename)
    import linecache
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    return StaticModule(filename, text)


__all__ = ["StaticModule", "Target", "Unresolved", "load", "UnsupportedSyntaxError", "Seq"]
