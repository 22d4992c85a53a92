"""Which function lowers each LibCST node: one table for statements, one for expressions.

What each construct may be at each `jit_syntax_level` is the other table, transpiler/rules.py; a
node class missing here is reported through that table's row for it. `CONSTRUCTS` is what a
`LoweringState` is made with: these tables and the operations constructs reach through the state.
"""

from __future__ import annotations

import libcst as cst

from .access import attribute, lower_attribute, lower_subscript
from .assign import assign_target, lower_annotated_assign, lower_assign, lower_augmented_assign
from .blocks import block, statements
from .branches import lower_if
from .call_nodes import op_call
from .calls import call, lower_call
from .expressions import (lower_binary_operation, lower_boolean_operation, lower_comparison,
                          lower_conditional_expression, lower_dict, lower_dict_comprehension, lower_ellipsis,
                          lower_fstring, lower_generator_expression, lower_lambda, lower_list, lower_list_comprehension,
                          lower_literal, lower_tuple, lower_unary_operation)
from .for_loops import lower_for
from .inline import bind_params
from .names import lookup, lower_name
from .simple import (lower_assert, lower_break, lower_continue, lower_def, lower_expression_statement, lower_global,
                     lower_pass, lower_raise, lower_return)
from .state import Constructs
from .while_loops import lower_while

STATEMENTS = {
    cst.Expr: lower_expression_statement,
    cst.Pass: lower_pass,
    cst.Return: lower_return,
    cst.Break: lower_break,
    cst.Continue: lower_continue,
    cst.Raise: lower_raise,
    cst.Assert: lower_assert,
    cst.Global: lower_global,
    cst.FunctionDef: lower_def,
    cst.Assign: lower_assign,
    cst.AnnAssign: lower_annotated_assign,
    cst.AugAssign: lower_augmented_assign,
    cst.If: lower_if,
    cst.For: lower_for,
    cst.While: lower_while,
}

EXPRESSIONS = {
    cst.Name: lower_name,
    cst.Integer: lower_literal,
    cst.Float: lower_literal,
    cst.Imaginary: lower_literal,
    cst.SimpleString: lower_literal,
    cst.ConcatenatedString: lower_literal,
    cst.Ellipsis: lower_ellipsis,
    cst.Tuple: lower_tuple,
    cst.List: lower_list,
    cst.Dict: lower_dict,
    cst.BinaryOperation: lower_binary_operation,
    cst.UnaryOperation: lower_unary_operation,
    cst.Comparison: lower_comparison,
    cst.BooleanOperation: lower_boolean_operation,
    cst.IfExp: lower_conditional_expression,
    cst.DictComp: lower_dict_comprehension,
    cst.ListComp: lower_list_comprehension,
    cst.GeneratorExp: lower_generator_expression,
    cst.FormattedString: lower_fstring,
    cst.Lambda: lower_lambda,
    cst.Attribute: lower_attribute,
    cst.Subscript: lower_subscript,
    cst.Call: lower_call,
}

CONSTRUCTS = Constructs(statements=STATEMENTS, expressions=EXPRESSIONS, run_statements=statements,
                        run_block=block, call=call, lookup=lookup, attribute=attribute,
                        op_call=op_call, assign_target=assign_target, bind_params=bind_params)
