"""Which function lowers each LibCST node: one table for statements, one for expressions.

What each construct may be at each `jit_syntax_level` is the other table, transpiler/rules.py; a
node class missing here is reported through that table's row for it.
"""

from __future__ import annotations

import libcst as cst

from .access import AccessLowering
from .assign import AssignLowering
from .branches import BranchLowering
from .calls import CallLowering
from .expressions import ExpressionLowering
from .for_loops import ForLowering
from .names import NameLowering
from .simple import SimpleStatementLowering
from .while_loops import WhileLowering

STATEMENTS = {
    cst.Expr: SimpleStatementLowering.lower_expression_statement,
    cst.Pass: SimpleStatementLowering.lower_pass,
    cst.Return: SimpleStatementLowering.lower_return,
    cst.Break: SimpleStatementLowering.lower_break,
    cst.Continue: SimpleStatementLowering.lower_continue,
    cst.Raise: SimpleStatementLowering.lower_raise,
    cst.Assert: SimpleStatementLowering.lower_assert,
    cst.Global: SimpleStatementLowering.lower_global,
    cst.FunctionDef: SimpleStatementLowering.lower_def,
    cst.Assign: AssignLowering.lower_assign,
    cst.AnnAssign: AssignLowering.lower_annotated_assign,
    cst.AugAssign: AssignLowering.lower_augmented_assign,
    cst.If: BranchLowering.lower_if,
    cst.For: ForLowering.lower_for,
    cst.While: WhileLowering.lower_while,
}

EXPRESSIONS = {
    cst.Name: NameLowering.lower_name,
    cst.Integer: ExpressionLowering.lower_literal,
    cst.Float: ExpressionLowering.lower_literal,
    cst.Imaginary: ExpressionLowering.lower_literal,
    cst.SimpleString: ExpressionLowering.lower_literal,
    cst.ConcatenatedString: ExpressionLowering.lower_literal,
    cst.Ellipsis: ExpressionLowering.lower_ellipsis,
    cst.Tuple: ExpressionLowering.lower_tuple,
    cst.List: ExpressionLowering.lower_list,
    cst.Dict: ExpressionLowering.lower_dict,
    cst.BinaryOperation: ExpressionLowering.lower_binary_operation,
    cst.UnaryOperation: ExpressionLowering.lower_unary_operation,
    cst.Comparison: ExpressionLowering.lower_comparison,
    cst.BooleanOperation: ExpressionLowering.lower_boolean_operation,
    cst.IfExp: ExpressionLowering.lower_conditional_expression,
    cst.DictComp: ExpressionLowering.lower_dict_comprehension,
    cst.ListComp: ExpressionLowering.lower_list_comprehension,
    cst.GeneratorExp: ExpressionLowering.lower_generator_expression,
    cst.FormattedString: ExpressionLowering.lower_fstring,
    cst.Lambda: ExpressionLowering.lower_lambda,
    cst.Attribute: AccessLowering.lower_attribute,
    cst.Subscript: AccessLowering.lower_subscript,
    cst.Call: CallLowering.lower_call,
}
