"""Plan expressions as Spark SQL text, with the meaning compiler.plan.ops gives them.

`to_sql(expr, columns)` translates a plan expression over the columns of a
node's input (`columns[i]` names plan column i) into one Spark SQL
expression. The engine lowers plans as SQL text: one parse and analysis per
DataFrame, where building Columns cost a Py4J round trip per column and
operator. Every op keeps the in-process meaning: integer arithmetic
wraps at 64 bits (the engine builds its DataFrames with ANSI mode off, see
compiler.spark_engine.engine), integer `/` and `%` truncate toward zero and
give 0 for a zero divisor, float `/` and `%` by zero give IEEE inf/nan (Spark
would give NULL), shifts clamp their amount to 0..63, `to_int` rounds half to
even and gives 0 when the value does not fit.

Ops whose Spark counterpart differs in edge cases (Java regexes vs Soufflé's in
`match`, Unicode case mapping in `lower`/`upper`, the integer syntax of
`to_number`, Python's float repr in `to_string`, wrapping integer `^`) run as
Python UDFs over compiler.plan.ops' own scalar definitions, registered on
the session under names of their own (`register_udfs`), so they are exact,
only slower. Unsigned columns have no Spark type with the same
wrapping and ordering and raise SparkEngineUnsupported.

Known difference left: Spark compares floats with NaN = NaN and -0.0 = 0.0
(numpy: NaN != NaN; the runtime's join keys tell -0.0 from 0.0).
"""

from __future__ import annotations

from pyspark.sql import functions as F
from pyspark.sql import types as T

from compiler.plan.expr import Call, Col, Const, Expr
from compiler.plan.ops import RECORD, BOOL, FLOAT, NUMBER, SYMBOL, UNSIGNED, _string_scalar

from compiler.spark_engine.errors import SparkEngineUnsupported

SPARK_TYPES = {NUMBER: T.LongType(), FLOAT: T.DoubleType(), SYMBOL: T.StringType(), BOOL: T.BooleanType()}


def spark_type(t: str, where: str = "a column"):
    if t == UNSIGNED:
        raise SparkEngineUnsupported(f"unsigned {where}", "Spark has no 64-bit unsigned type with the same wrap-around and order")
    if t == RECORD:
        raise SparkEngineUnsupported(f"records or ADT values in {where}", "they are ids of the in-process runtime's record table")
    return SPARK_TYPES[t]


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


_SQL_TYPES = {NUMBER: "BIGINT", FLOAT: "DOUBLE", SYMBOL: "STRING", BOOL: "BOOLEAN"}
_UDF_OUT = {"to_string": "STRING", "to_string_c": "STRING", "to_number": "BIGINT", "is_number": "BOOLEAN", "lower": "STRING", "upper": "STRING",
            "match": "BOOLEAN", "not_match": "BOOLEAN", "^": "BIGINT", "parse_float": "DOUBLE", "is_float": "BOOLEAN"}  # fmt: skip


def sql_type(t: str, where: str = "a column") -> str:
    spark_type(t, where)
    return _SQL_TYPES[t]


def sql_literal(value, t: str) -> str:
    """Spark SQL text of a constant of plan type `t`, exactly that value."""
    if t == BOOL:
        return "TRUE" if value else "FALSE"
    if t == NUMBER:
        return f"CAST('{int(value)}' AS BIGINT)"
    if t == FLOAT:
        v = float(value)
        text = "NaN" if v != v else "Infinity" if v == float("inf") else "-Infinity" if v == float("-inf") else repr(v)
        return f"CAST('{text}' AS DOUBLE)"
    if t == SYMBOL:
        return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"
    spark_type(t, "constant")
    raise AssertionError(t)


def udf_name(op: str, types) -> str:
    return "deltalog_" + {"^": "power"}.get(op, op) + "_" + "_".join(types)


def to_sql(expr: Expr, columns: list[str], udfs: set | None = None) -> str:
    """Spark SQL text computing `expr`, where plan column i is named `columns[i]`; the names
    of the UDFs it calls are added to `udfs` (see register_udfs)."""
    if isinstance(expr, Col):
        spark_type(expr.type)
        return columns[expr.index]
    if isinstance(expr, Const):
        return sql_literal(expr.value, expr.type)
    assert isinstance(expr, Call)
    spark_type(expr.type, f"result of {expr.op}")
    for a in expr.args:
        spark_type(a.type, f"argument of {expr.op}")
    args = [to_sql(a, columns, udfs) for a in expr.args]
    return _sql_call(expr.op, tuple(a.type for a in expr.args), args, udfs)


def _sql_call(op: str, types: tuple[str, ...], args: list[str], udfs) -> str:
    a = args[0]
    b = args[1] if len(args) > 1 else None
    t = types[0] if types else None
    zero = "CAST(0 AS BIGINT)"
    if op in ("+", "-", "*"):
        return f"({a} {op} {b})"
    if op == "neg":
        return f"(- {a})"
    if op in ("/", "%"):
        if t == FLOAT:
            nan, inf = "CAST('NaN' AS DOUBLE)", "CAST('Infinity' AS DOUBLE)"
            by_zero = f"CASE WHEN {a} > 0 THEN {inf} WHEN {a} < 0 THEN (- {inf}) ELSE {nan} END" if op == "/" else nan
            return f"CASE WHEN {b} = 0 THEN {by_zero} ELSE ({a} {op} {b}) END"
        quotient = f"div({a}, {b})" if op == "/" else f"({a} % {b})"
        return f"CASE WHEN {b} = 0 THEN {zero} ELSE CAST({quotient} AS BIGINT) END"
    if op == "^" and t == FLOAT:
        return f"power({a}, {b})"
    if op in ("band", "bor", "bxor"):
        return f"({a} {dict(band='&', bor='|', bxor='^')[op]} {b})"
    if op in ("bshl", "bshr", "bshru"):
        name = {"bshl": "shiftleft", "bshr": "shiftright", "bshru": "shiftrightunsigned"}[op]
        return f"{name}({a}, CAST(least(greatest({b}, 0), 63) AS INT))"
    if op == "bnot":
        return f"(~ {a})"
    if op in ("land", "lor", "lxor", "lnot"):
        x = f"({a} != 0)"
        y = None if b is None else f"({b} != 0)"
        out = {"land": lambda: f"({x} AND {y})", "lor": lambda: f"({x} OR {y})", "lxor": lambda: f"({x} != {y})",
               "lnot": lambda: f"(NOT {x})"}[op]()  # fmt: skip
        return f"CAST({out} AS BIGINT)"
    if op in ("min", "max"):
        if len(args) == 1:
            return a
        return f"{'least' if op == 'min' else 'greatest'}({', '.join(args)})"
    if op in ("=", "!=", "<", "<=", ">", ">="):
        return f"({a} {op} {b})"
    if op in ("and", "or"):
        return "(" + f" {op.upper()} ".join(args) + ")"
    if op == "not":
        return f"(NOT {a})"
    if op == "if":
        return f"CASE WHEN {a} THEN {b} ELSE {args[2]} END"
    if op == "to_float":
        return f"CAST({a} AS DOUBLE)"
    if op == "to_int":
        if t != FLOAT:
            return a
        r = f"bround({a}, 0)"
        return f"CASE WHEN (NOT isnan({r})) AND (abs({r}) < {sql_literal(2.0**63, FLOAT)}) THEN CAST({r} AS BIGINT) ELSE {zero} END"
    if op in ("floor", "ceil"):  # Spark's are BIGINT: floats from 2**52 up are whole already
        return f"CASE WHEN isnan({a}) OR abs({a}) >= {sql_literal(2.0**52, FLOAT)} THEN {a} ELSE CAST({op}({a}) AS DOUBLE) END"
    if op == "round":  # HALF_UP: halves away from zero, of the double's shortest text (2.675: 2.68, not 2.67)
        return f"round({a}, CAST({b} AS INT))"
    if op == "cat":
        return f"concat({', '.join(args)})"
    if op == "strlen":
        return f"CAST(length({a}) AS BIGINT)"
    if op in ("substr", "substr_c"):  # substr_c: a negative length takes the rest (compiler.plan.ops)
        start, length = args[1], args[2]
        outside = f"(({start} < 0) OR ({start} > length({a}))" + (")" if op == "substr_c" else f" OR ({length} < 0))")
        count = f"CASE WHEN {length} < 0 THEN 2147483647 ELSE least({length}, 2147483647) END" if op == "substr_c" else f"least({length}, 2147483647)"
        taken = f"substr({a}, CAST(({start} + 1) AS INT), CAST({count} AS INT))"
        return f"CASE WHEN {outside} THEN '' ELSE {taken} END"
    if op == "contains":  # contains(needle, haystack)
        return f"contains({b}, {a})"
    if op == "to_number" and t != SYMBOL:  # Soufflé's numeric conversion (a float truncated)
        if t == NUMBER:
            return a
        raise SparkEngineUnsupported(f"op {op!r} of {t}", "no Spark translation")
    if op in ("to_string", "to_string_c") and t == NUMBER:
        return f"CAST({a} AS STRING)"
    if op in _UDF_OUT:
        name = udf_name(op, types)
        if udfs is not None:
            udfs.add((name, op, types))
        return f"{name}({', '.join(args)})"
    raise SparkEngineUnsupported(f"op {op!r}", "no Spark translation")


def register_udfs(spark, udfs) -> None:
    """Register (once per session) the UDFs `to_sql` named, each over compiler.plan.ops' own definition."""
    done = spark.__dict__.setdefault("_deltalog_udfs", set())
    for name, op, types in udfs:
        if name in done:
            continue
        fn = _int_power if op == "^" else _scalar(op, types)
        spark.udf.register(name, _udf(fn, {"STRING": T.StringType(), "BIGINT": T.LongType(), "BOOLEAN": T.BooleanType(), "DOUBLE": T.DoubleType()}[_UDF_OUT[op]]))
        done.add(name)


__all__ = ["to_sql", "sql_literal", "sql_type", "register_udfs", "spark_type", "SPARK_TYPES"]
