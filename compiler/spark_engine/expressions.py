"""Plan expressions as Spark Columns, with the meaning compiler.plan.ops gives them.

`to_column(expr, columns)` translates a plan expression over the columns of
a node's input (`columns[i]` is the Spark Column holding plan column i) into
one Spark Column. Every op keeps the in-process meaning: integer arithmetic
wraps at 64 bits (the engine builds its DataFrames with ANSI mode off, see
compiler.spark_engine.engine), integer `/` and `%` truncate toward zero and
give 0 for a zero divisor, float `/` and `%` by zero give IEEE inf/nan (Spark
would give NULL), shifts clamp their amount to 0..63, `to_int` rounds half to
even and gives 0 when the value does not fit.

Ops whose Spark counterpart differs in edge cases (Java vs Python regexes in
`match`, Unicode case mapping in `lower`/`upper`, the integer syntax of
`to_number`, Python's float repr in `to_string`, wrapping integer `^`) run as
Python UDFs over compiler.plan.ops' own scalar definitions, so they are
exact, only slower. Unsigned columns have no Spark type with the same
wrapping and ordering and raise SparkEngineUnsupported.

Known difference left: Spark compares floats with NaN = NaN and -0.0 = 0.0
(numpy: NaN != NaN; the runtime's join keys tell -0.0 from 0.0).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from compiler.plan.expr import Call, Col, Const, Expr
from compiler.plan.ops import BOOL, FLOAT, NUMBER, SYMBOL, UNSIGNED, _string_scalar

from compiler.spark_engine.errors import SparkEngineUnsupported

SPARK_TYPES = {NUMBER: T.LongType(), FLOAT: T.DoubleType(), SYMBOL: T.StringType(), BOOL: T.BooleanType()}


def spark_type(t: str, where: str = "a column"):
    if t == UNSIGNED:
        raise SparkEngineUnsupported(f"unsigned {where}", "Spark has no 64-bit unsigned type with the same wrap-around and order")
    return SPARK_TYPES[t]


def to_column(expr: Expr, columns: list[Column]) -> Column:
    """The Spark Column computing `expr`, where plan column i is `columns[i]`."""
    if isinstance(expr, Col):
        spark_type(expr.type)
        return columns[expr.index]
    if isinstance(expr, Const):
        return F.lit(expr.value).cast(spark_type(expr.type, "constant"))
    assert isinstance(expr, Call)
    spark_type(expr.type, f"result of {expr.op}")
    for a in expr.args:
        spark_type(a.type, f"argument of {expr.op}")
    args = [to_column(a, columns) for a in expr.args]
    return _call(expr.op, tuple(a.type for a in expr.args), args)


def _long(c: Column) -> Column:
    return c.cast(T.LongType())


def _call(op: str, types: tuple[str, ...], args: list[Column]) -> Column:
    a = args[0]
    b = args[1] if len(args) > 1 else None
    t = types[0] if types else None
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "neg":
        return -a
    if op in ("/", "%"):
        if t == FLOAT:
            inf = F.lit(float("inf"))
            nan = F.lit(float("nan"))
            by_zero = F.when(a > 0, inf).when(a < 0, -inf).otherwise(nan) if op == "/" else nan
            return F.when(b == 0, by_zero).otherwise(a / b if op == "/" else a % b)
        quotient = F.call_function("div", a, b) if op == "/" else a % b
        return F.when(b == 0, F.lit(0).cast(T.LongType())).otherwise(_long(quotient))
    if op == "^":
        if t == FLOAT:
            return F.pow(a, b)
        return _udf(_int_power, T.LongType())(a, b)
    if op in ("band", "bor", "bxor"):
        return {"band": a.bitwiseAND, "bor": a.bitwiseOR, "bxor": a.bitwiseXOR}[op](b)
    if op in ("bshl", "bshr", "bshru"):
        shift = F.least(F.greatest(b, F.lit(0)), F.lit(63)).cast(T.IntegerType())
        name = {"bshl": "shiftleft", "bshr": "shiftright", "bshru": "shiftrightunsigned"}[op]
        return F.call_function(name, a, shift)
    if op == "bnot":
        return F.bitwise_not(a)
    if op in ("land", "lor", "lxor", "lnot"):
        x = a != 0
        y = None if b is None else b != 0
        out = {"land": lambda: x & y, "lor": lambda: x | y, "lxor": lambda: x != y, "lnot": lambda: ~x}[op]()
        return _long(out)
    if op in ("min", "max"):
        if len(args) == 1:
            return a
        return F.least(*args) if op == "min" else F.greatest(*args)
    if op in ("=", "!=", "<", "<=", ">", ">="):
        return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    if op in ("and", "or"):
        out = a
        for other in args[1:]:
            out = (out & other) if op == "and" else (out | other)
        return out
    if op == "not":
        return ~a
    if op == "if":
        return F.when(a, b).otherwise(args[2])
    if op == "to_float":
        return a.cast(T.DoubleType())
    if op == "to_int":
        if t != FLOAT:
            return a
        r = F.bround(a, 0)
        fits = ~F.isnan(r) & (F.abs(r) < F.lit(2.0**63))
        return F.when(fits, r.cast(T.LongType())).otherwise(F.lit(0).cast(T.LongType()))
    if op == "cat":
        return F.concat(*args)
    if op == "strlen":
        return _long(F.length(a))
    if op == "substr":
        start, length = args[1], args[2]
        outside = (start < 0) | (length < 0) | (start > F.length(a))
        taken = a.substr((start + 1).cast(T.IntegerType()), F.least(length, F.lit(2**31 - 1)).cast(T.IntegerType()))
        return F.when(outside, F.lit("")).otherwise(taken)
    if op == "contains":  # contains(needle, haystack)
        return b.contains(a)
    if op == "to_string" and t == NUMBER:
        return a.cast(T.StringType())
    if op in ("to_string", "to_number", "is_number", "lower", "upper", "match"):
        out = {"to_string": T.StringType(), "to_number": T.LongType(), "is_number": T.BooleanType(),
               "lower": T.StringType(), "upper": T.StringType(), "match": T.BooleanType()}[op]  # fmt: skip
        return _udf(_scalar(op, types), out)(*args)
    raise SparkEngineUnsupported(f"op {op!r}", "no Spark translation")


def _scalar(op: str, types):
    def fn(*row):
        return _string_scalar(op, types, row)

    return fn


def _int_power(a: int, b: int) -> int:
    """number ^ number as compiler.plan.ops computes it: wraps at 64 bits, 0 for a negative exponent."""
    if b < 0:
        return 0
    v = pow(a, b, 2**64)
    return v - 2**64 if v >= 2**63 else v


def _udf(fn, return_type):
    return F.udf(fn, return_type, useArrow=False)


__all__ = ["to_column", "spark_type", "SPARK_TYPES"]
