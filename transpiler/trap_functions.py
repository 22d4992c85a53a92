"""The function objects `static_module` makes for a file's `def`s: the signature, name, file and line of the `def`, trap code.

The code object is compiled from the `def` with its body replaced by a `raise NotComputed`: the
compiler reads the body from the source; anything that calls the function for real (a dunder, a
callback, a library) gets the error, never the user's code. Nothing is `exec`uted: the function is
made by a factory whose code is ours.
"""

from __future__ import annotations

import ast
import functools
import types

from .static_pure import NotComputed, not_computed

_TRAP = "__graphjit_code_not_run__"


def trap_function(filename: str, tree, defaults: dict, span, qualname: str, namespace: dict, positional=(),
                  keyword=None):
    """The trap function of a `def` from its `ast` node: `defaults` maps the names in `positional` and `keyword`
    (the defaults' `ast.Name`s, None where there is none) to their values."""
    args = tree.args
    keyword = [None] * len(args.kwonlyargs) if keyword is None else keyword
    bare_args = ast.arguments(
        posonlyargs=[_bare_arg(a) for a in args.posonlyargs], args=[_bare_arg(a) for a in args.args],
        vararg=_bare_arg(args.vararg) if args.vararg else None,
        kwonlyargs=[_bare_arg(a) for a in args.kwonlyargs], kw_defaults=keyword,
        kwarg=_bare_arg(args.kwarg) if args.kwarg else None, defaults=list(positional))
    trap = ast.Raise(exc=ast.Call(ast.Name(_TRAP, ast.Load()), [], []), cause=None)
    bare = type(tree)(name=tree.name, args=bare_args, body=[ast.copy_location(trap, tree)], decorator_list=[],
                      returns=None, type_comment=None)   # a FunctionDef, or an AsyncFunctionDef
    ast.copy_location(bare, tree)
    bare.end_lineno, bare.end_col_offset = tree.end_lineno, tree.end_col_offset
    factory_args = ast.arguments(posonlyargs=[], args=[ast.arg(_TRAP)] + [ast.arg(k) for k in defaults],
                                 vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    factory = ast.FunctionDef(name="__graphjit_factory__", args=factory_args,
                              body=[bare, ast.Return(ast.Name(tree.name, ast.Load()))], decorator_list=[],
                              returns=None, type_comment=None)
    ast.copy_location(factory, tree)
    module = ast.fix_missing_locations(ast.Module([factory], []))
    code = compile(module, filename, "exec")
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    make = types.FunctionType(factory_code, namespace)   # our code: `def` the trap, return it
    error = functools.partial(_code_not_run, qualname, span)
    fn = make(error, *defaults.values())
    fn.__qualname__ = qualname
    return fn


def _code_not_run(qualname: str, span) -> NotComputed:
    """The error a trap function raises when something calls it for real while the file is read."""
    return not_computed(f"the result of `{qualname}`", f"it is code of the file ({span}), which graphjit reads "
                        "but never runs", span)


def _bare_arg(arg: ast.arg) -> ast.arg:
    bare = ast.arg(arg.arg, None, None)
    return ast.copy_location(bare, arg)
