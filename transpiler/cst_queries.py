"""Questions the front end asks of LibCST syntax trees, answered in one place (no lowering here).

`target_names(target)`: the names an assignment target binds. The lowering, the fallback blocks
and `graphjit check`'s module reader all ask it.
"""

from __future__ import annotations

import libcst as cst


def target_names(target) -> list:
    """The names an assignment target binds (`a`, `a, (b, *c)`); none for `x.attr` or `x[i]`."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []


def if_body(stmt: cst.If) -> list:
    return list(stmt.body.body)


def else_body(stmt: cst.If) -> list:
    if stmt.orelse is None:
        return []
    if isinstance(stmt.orelse, cst.If):  # elif
        return [stmt.orelse]
    return list(stmt.orelse.body.body)


class Finder(cst.CSTVisitor):
    """Finds a node of `kinds` outside nested functions and classes (and, with `stop_at_loops`, inner loops)."""

    def __init__(self, kinds, stop_at_loops: bool):
        self.kinds = kinds
        self.found = False
        self.stop_at_loops = stop_at_loops

    def on_visit(self, node) -> bool:
        if isinstance(node, self.kinds):
            self.found = True
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if self.stop_at_loops and isinstance(node, (cst.For, cst.While)):
            return False
        return not self.found


def contains(body, kinds) -> bool:
    """Does a loop body hold `break`/`continue` of this loop, or a `return` anywhere?"""
    stmts = body.body if hasattr(body, "body") else body
    own = Finder(tuple(k for k in kinds if k is not cst.Return), stop_at_loops=True)
    ret = Finder((cst.Return,), stop_at_loops=False)
    for stmt in stmts:
        if own.kinds:
            stmt.visit(own)
        if cst.Return in kinds:
            stmt.visit(ret)
    return own.found or ret.found


_RETURNS: dict = {}


def clear_caches() -> None:
    """Forget the answers kept about statements (they hold the statements, and so their trees, alive)."""
    _RETURNS.clear()
    _OUTSIDE_CACHE.clear()


def contains_return(stmt) -> bool:
    """Does the statement end some path (`return`, or `raise`, which ends it too)?"""
    cached = _RETURNS.get(id(stmt))
    if cached is not None and cached[0] is stmt:  # asked again each time its function is inlined
        return cached[1]
    finder = Finder((cst.Return, cst.Raise), stop_at_loops=False)
    stmt.visit(finder)
    _RETURNS[id(stmt)] = (stmt, finder.found)
    return finder.found


class AssignedNames(cst.CSTVisitor):
    """The names statements assign (targets, `for` targets, `def` names), in order, outside nested functions."""

    def __init__(self):
        self.names: list[str] = []

    def _add(self, target) -> None:
        for n in target_names(target):
            if n not in self.names:
                self.names.append(n)

    def visit_AssignTarget(self, node) -> None:
        self._add(node.target)

    def visit_AnnAssign(self, node) -> None:
        self._add(node.target)

    def visit_AugAssign(self, node) -> None:
        self._add(node.target)

    def visit_For(self, node) -> None:
        self._add(node.target)

    def visit_FunctionDef(self, node) -> bool:
        self._add(node.name)
        return False

    def visit_Lambda(self, node) -> bool:
        return False


def assigned_names(body: list) -> list:
    visitor = AssignedNames()
    for stmt in body:
        stmt.visit(visitor)
    return visitor.names


def has_loop_control(body: list) -> bool:
    return contains(body, (cst.Break, cst.Continue, cst.Return))


_OUTSIDE_CACHE: dict = {}


def used_outside(stmt, frame, names: list) -> list:
    """Those of `names` that the function holding `stmt` mentions outside it (read after a loop, say)."""
    key = (id(frame.parsed), id(stmt))
    cached = _OUTSIDE_CACHE.get(key)
    if cached is None or cached[0] is not stmt:
        where = frame.parsed.positions.get(stmt)
        best, best_size = None, None
        chunk = frame.parsed.chunk_of(where.start.line) if where is not None else -1
        for fn_node, _ in (frame.parsed.functions(chunk) if chunk >= 0 else ()):   # the def holding it is in its chunk
            pos = frame.parsed.positions.get(fn_node)
            if pos is None or where is None:
                continue
            if (pos.start.line, pos.start.column) <= (where.start.line, where.start.column) and \
                    (pos.end.line, pos.end.column) >= (where.end.line, where.end.column):
                size = pos.end.line - pos.start.line
                if best is None or size < best_size:
                    best, best_size = fn_node, size
        mentioned: set = set()
        if best is None:
            mentioned = None  # not found: assume every name is used
        else:
            class Names(cst.CSTVisitor):
                def on_visit(self, node) -> bool:
                    if node is stmt:
                        return False
                    if isinstance(node, cst.Name):
                        mentioned.add(node.value)
                    return True

            best.body.visit(Names())
        cached = (stmt, mentioned)
        _OUTSIDE_CACHE[key] = cached
    mentioned = cached[1]
    return list(names) if mentioned is None else [n for n in names if n in mentioned]


def first_yield(node):
    """The first `yield` of the function itself (not of nested functions), or None."""
    class Finder(cst.CSTVisitor):
        found = None

        def visit_Yield(self, n) -> None:
            if Finder.found is None:
                Finder.found = n

        def visit_FunctionDef(self, n) -> bool:
            return n is node

        def visit_Lambda(self, n) -> bool:
            return False

        def visit_ClassDef(self, n) -> bool:
            return False

    node.visit(Finder())
    return Finder.found


class _Names(cst.CSTVisitor):
    """Every name a statement mentions (the base of an attribute, not its attribute name), in order."""

    def __init__(self):
        self.names: list = []

    def visit_Name(self, node) -> None:
        if node.value not in self.names:
            self.names.append(node.value)

    def visit_Attribute(self, node) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node) -> bool:
        node.value.visit(self)
        return False


def names_used(stmt) -> list:
    visitor = _Names()
    stmt.visit(visitor)
    return visitor.names


class _Bound(cst.CSTVisitor):
    """Names a statement binds that are not plain assignment targets (with/except/import/del...)."""

    def __init__(self):
        self.names: list = []

    def _add(self, target) -> None:
        self.names.extend(n for n in target_names(target) if n not in self.names)

    def visit_AsName(self, node) -> None:
        self._add(node.name)

    def visit_ImportAlias(self, node) -> None:
        if node.asname is None:
            name = node.name
            while isinstance(name, cst.Attribute):
                name = name.value
            self._add(name)

    def visit_NamedExpr(self, node) -> None:
        self._add(node.target)

    def visit_ClassDef(self, node) -> bool:
        self._add(node.name)
        return False

    def visit_Del(self, node) -> None:
        self._add(node.target)


def deleted_or_bound_names(stmt) -> list:
    visitor = _Bound()
    stmt.visit(visitor)
    return visitor.names


def surely_binds(stmts: list) -> set:
    """Names bound on every path through the statements that completes (no exception, no return)."""
    sure: set = set()
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        sure.update(target_names(t.target))
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)) and \
                        (not isinstance(small, cst.AnnAssign) or small.value is not None):
                    sure.update(target_names(small.target))
                elif isinstance(small, (cst.Import, cst.ImportFrom)):
                    sure.update(deleted_or_bound_names(small))
                elif isinstance(small, cst.Del):
                    sure.difference_update(target_names(small.target))
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            sure.add(stmt.name.value)
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                if item.asname is not None:
                    sure.update(target_names(item.asname.name))
            sure |= surely_binds(list(stmt.body.body))
        elif isinstance(stmt, cst.If):
            orelse = [] if stmt.orelse is None else [stmt.orelse] if isinstance(stmt.orelse, cst.If) \
                else list(stmt.orelse.body.body)
            sure |= surely_binds(list(stmt.body.body)) & surely_binds(orelse) if stmt.orelse is not None \
                else set()
        elif isinstance(stmt, cst.Try):
            paths = surely_binds(list(stmt.body.body) + (list(stmt.orelse.body.body) if stmt.orelse else []))
            for handler in stmt.handlers:
                paths &= surely_binds(list(handler.body.body))
            sure |= paths
            if stmt.finalbody is not None:
                sure |= surely_binds(list(stmt.finalbody.body.body))
    return sure


def deleted_names(stmt) -> list:
    """Names a `del` in the statement unbinds (`del y`, not `del y[0]`)."""
    out = []

    class Dels(cst.CSTVisitor):
        def visit_Del(self, node) -> None:
            out.extend(n for n in target_names(node.target) if n not in out)

        def visit_FunctionDef(self, node) -> bool:
            return False

    stmt.visit(Dels())
    return out


def bound_only_names(stmt) -> list:
    """Names bound by with/except/import/class/walrus (not by `del`)."""
    deleted = set(deleted_names(stmt))
    visitor = _Bound()
    stmt.visit(visitor)
    return [n for n in visitor.names if n not in deleted]


def has_own(stmt, kind) -> bool:
    """Does the statement hold `kind` outside nested functions and classes?"""
    found = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            if isinstance(node, kind):
                found.append(node)
            return not isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef))

    stmt.visit(Finder())
    return bool(found)


def nonlocal_names(node) -> list:
    """Names a nested def (or the defs inside it) declares `nonlocal`."""
    out = []

    class Finder(cst.CSTVisitor):
        def visit_Nonlocal(self, n) -> None:
            out.extend(item.name.value for item in n.names)

    node.visit(Finder())
    return out


_DYNAMIC_SCOPE = {"eval", "exec", "locals", "vars"}


def uses_dynamic_scope(stmt) -> bool:
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node) -> None:
            if isinstance(node.func, cst.Name) and node.func.value in _DYNAMIC_SCOPE:
                found.append(node)

    stmt.visit(Finder())
    return bool(found)


class _LoopControl(cst.CSTVisitor):
    """Finds a `break`/`continue` that leaves the statement: one of a loop around it."""

    def __init__(self):
        self.depth = 0
        self.outer = False

    def on_visit(self, node) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if isinstance(node, (cst.For, cst.While)):
            self.depth += 1
        if isinstance(node, (cst.Break, cst.Continue)) and self.depth == 0:
            self.outer = True
        return True

    def on_leave(self, node) -> None:
        if isinstance(node, (cst.For, cst.While)):
            self.depth -= 1


def has_outer_loop_control(stmt) -> bool:
    visitor = _LoopControl()
    stmt.visit(visitor)
    return visitor.outer
