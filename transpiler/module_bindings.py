"""Which names a module's statements bind, read from the CST: what the static reader (static_module.py)
marks unknown when it cannot compute a compound statement, and the `global` names functions set."""

from __future__ import annotations

import libcst as cst

from .cst_queries import target_names


class Binders(cst.CSTVisitor):
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
            self.names.append(dotted(node.name).split(".")[0])

    def visit_NamedExpr(self, node) -> None:
        self.names.extend(target_names(node.target))


def names_bound_in(stmt) -> list:
    binders = Binders()
    stmt.visit(binders)
    return binders.names


def declared_globals(module) -> list:
    """(name, statement) of every `global name` in the file."""
    class Globals(cst.CSTVisitor):
        def __init__(self) -> None:
            self.names: list = []

        def visit_Global(self, node) -> None:
            self.names.extend((n.name.value, node) for n in node.names)

    found = Globals()
    module.visit(found)
    return found.names


def dotted(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{dotted(node.value)}.{node.attr.value}"
    return ""
