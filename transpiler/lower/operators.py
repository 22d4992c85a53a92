"""The operator tables: which graph op (and which Python function, to fold) each LibCST operator is."""

from __future__ import annotations

import operator

import libcst as cst

BINARY = {
    cst.Add: ("add", operator.add), cst.Subtract: ("sub", operator.sub), cst.Multiply: ("mul", operator.mul),
    cst.Divide: ("truediv", operator.truediv), cst.FloorDivide: ("floordiv", operator.floordiv),
    cst.Modulo: ("mod", operator.mod), cst.Power: ("pow", operator.pow),
    cst.MatrixMultiply: ("matmul", operator.matmul), cst.LeftShift: ("lshift", operator.lshift),
    cst.RightShift: ("rshift", operator.rshift), cst.BitAnd: ("bitand", operator.and_),
    cst.BitOr: ("bitor", operator.or_), cst.BitXor: ("bitxor", operator.xor),
}
COMPARE = {
    cst.Equal: ("eq", operator.eq), cst.NotEqual: ("ne", operator.ne), cst.LessThan: ("lt", operator.lt),
    cst.LessThanEqual: ("le", operator.le), cst.GreaterThan: ("gt", operator.gt),
    cst.GreaterThanEqual: ("ge", operator.ge),
}
STATIC_ONLY_COMPARE = {
    cst.Is: operator.is_, cst.IsNot: operator.is_not,
    cst.In: lambda a, b: a in b, cst.NotIn: lambda a, b: a not in b,
}
UNARY = {cst.Minus: ("neg", operator.neg), cst.Plus: ("pos", operator.pos), cst.BitInvert: ("invert", operator.invert)}

# The ops of Python's operators: on an object (a CSRTensor passed in), the object's own operator runs at
# call time and gives a Python object the graph cannot look into (typed `object`)
OPERATOR_OPS = frozenset(op for op, _ in [*BINARY.values(), *UNARY.values()])
