"""Plan expressions as vectorised functions over the runtime's int64 column blocks.

The runtime stores every value as int64 (compiler.lowering.dataflow maps
number, unsigned and record to its "int" columns, float to "float", symbol to
"str"). A compiled expression takes a block `data` of shape (arity, n) and a
`layout` saying which row of the block holds each plan column, decodes the
columns it reads to natural arrays (floats from their order-preserving image,
unsigned as uint64, symbols stay ids), applies the ops of compiler.plan.ops,
and the caller encodes results back. Symbol constants are interned in the
dataflow's table when the function is built, so comparing a column with a
string constant compares ids.
"""

from __future__ import annotations

import numpy as np

from runtime.symbols import decode_floats, encode_floats

from compiler.plan.expr import Call, Col, Const, Expr
from compiler.plan.ops import FLOAT, NATURAL_DTYPE, NUMBER, SYMBOL, UNSIGNED, apply

RUNTIME_TYPES = {"number": "int", "unsigned": "int", "float": "float", "symbol": "str", "record": "int"}
# How a table's column is read for a column of each type (runtime.spark.ColumnSpec kinds); a
# record column reaches the reader already encoded as record ids (compiler.values).
COLUMN_KINDS = {"number": "int", "unsigned": "unsigned", "float": "float", "symbol": "str", "record": "int"}


def runtime_types(types) -> tuple[str, ...]:
    return tuple(RUNTIME_TYPES[t] for t in types)


def decode(column: np.ndarray, t: str) -> np.ndarray:
    if t == FLOAT:
        return decode_floats(column)
    if t == UNSIGNED:
        return column.view(np.uint64)
    return column


def encode(values: np.ndarray, t: str) -> np.ndarray:
    if t == FLOAT:
        return encode_floats(np.asarray(values, dtype=np.float64))
    if t == UNSIGNED:
        return np.asarray(values, dtype=np.uint64).view(np.int64)
    return np.asarray(values, dtype=np.int64)


def compile_expr(expr: Expr, layout, symbols):
    """fn(data) -> the natural array of `expr` for each of the block's n rows."""
    if isinstance(expr, Col):
        row, t = layout[expr.index], expr.type
        return lambda data: decode(data[row], t)
    if isinstance(expr, Const):
        value = _constant(expr, symbols)
        return lambda data: np.full(data.shape[1], value)
    assert isinstance(expr, Call)
    direct = _direct(expr)
    if direct is not None:
        left, right = (_operand(a, layout, symbols) for a in expr.args)
        return lambda data: direct(left(data), right(data))
    args = [compile_expr(a, layout, symbols) for a in expr.args]
    op, types = expr.op, tuple(a.type for a in expr.args)
    if not args:  # (a user functor of no arguments) one value for every row
        return lambda data: np.repeat(apply(op, (), [], symbols), data.shape[1])
    return lambda data: apply(op, types, [f(data) for f in args], symbols)


# Ops that are one numpy ufunc on integers (wrapping as compiler.plan.ops does, and never
# warning on arrays), and equality on any type but floats: called straight, with a constant
# operand as a scalar. A filter or a `x + 1` on the few rows of a loop's round spent most of
# its time in `apply`'s dispatch and in filling constants out to arrays.
_UFUNCS = {"+": np.add, "-": np.subtract, "*": np.multiply, "band": np.bitwise_and, "bor": np.bitwise_or,
           "bxor": np.bitwise_xor, "=": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
           ">": np.greater, ">=": np.greater_equal}


def _direct(expr: Call):
    """The ufunc computing `expr`, when it is one (see _UFUNCS); else None."""
    if len(expr.args) != 2 or all(isinstance(a, Const) for a in expr.args):
        return None
    types = {a.type for a in expr.args}
    if len(types) != 1:
        return None
    (t,) = types
    if t in (NUMBER, UNSIGNED) or (t == SYMBOL and expr.op in ("=", "!=")):
        return _UFUNCS.get(expr.op)
    return None


def _operand(expr: Expr, layout, symbols):
    """compile_expr, but a constant as one numpy scalar of its natural type."""
    if isinstance(expr, Const):
        value = _constant(expr, symbols)
        return lambda data: value
    return compile_expr(expr, layout, symbols)


def _constant(expr: Const, symbols):
    """A constant's natural value as a numpy scalar (a symbol interned: its id)."""
    return NATURAL_DTYPE[expr.type](symbols.intern(expr.value) if expr.type == SYMBOL else expr.value)


def predicate(expr: Expr, layout, symbols):
    """fn(data) -> bool mask of the rows where the predicate holds."""
    fn = compile_expr(expr, layout, symbols)
    return lambda data: np.asarray(fn(data), dtype=bool)


def projection(exprs, layout, symbols):
    """fn(data) -> the (len(exprs), n) int64 block of the expressions' encoded values."""
    if all(isinstance(e, Col) for e in exprs):
        rows = np.array([layout[e.index] for e in exprs], dtype=np.intp)
        return lambda data: data[rows]
    fns = [(compile_expr(e, layout, symbols), e.type) for e in exprs]

    def project(data):
        out = np.empty((len(fns), data.shape[1]), dtype=np.int64)
        for i, (fn, t) in enumerate(fns):
            out[i] = encode(fn(data), t)
        return out

    return project
