"""SQL programs on the Spark engine: SQL rows in, the plan's columns through, SQL rows out.

The SQL front end's plan carries each nullable SQL column as two plan
columns, a value (the type's zero for NULL) and a NULL flag (1 for NULL), and
booleans as numbers 0/1 (compiler.sql.translator). A table's DataFrame, with
one nullable Spark column per SQL column (by name, else by position), is
mapped to that layout exactly as `SQLSession.insert` encodes rows; the plan
runs as any other (compiler.spark_engine.engine) with the SQL nodes
translated in compiler.spark_engine.relations; and each output's plan
columns are mapped back to one nullable Spark column per SQL column. Outputs
are bags, like the session's (ORDER BY orders reading; a DataFrame has no
order, so it is not applied -- ORDER BY ... LIMIT is, as TopK). The plan's
checks (a scalar subquery with several rows, a UNION ALL recursion past its
limit) are bindings that must stay empty: a row in one raises
compiler.sql.program.SQLRuntimeError with the session's message.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from compiler.spark_engine.errors import SparkEngineError

_SPARK = {"int": T.LongType(), "float": T.DoubleType(), "text": T.StringType(), "bool": T.BooleanType()}
_ZERO = {"int": 0, "float": 0.0, "text": "", "bool": 0}


def run_sql(program, spark, inputs: dict | None = None, **options) -> dict[str, DataFrame]:
    """{output name: DataFrame of SQL columns} of an SQLProgram evaluated on Spark."""
    from compiler.spark_engine.engine import run_plan
    from compiler.sql.program import SQLRuntimeError

    inputs = dict(inputs or {})
    unknown = sorted(set(inputs) - set(program.tables))
    if unknown:
        raise SparkEngineError(f"unknown table {unknown[0]!r} (the program's tables: {', '.join(program.tables) or 'none'})")
    frames = {name: plan_frame(name, program.tables[name], df) for name, df in inputs.items()}
    result = run_plan(program.plan, spark, frames, **options)
    for name, message in program.checks.items():
        if result.outputs[name].limit(1).count():
            raise SQLRuntimeError(message, name)
    return {name: sql_frame(result.outputs[name], program.relations[name]) for name in program.outputs}


def plan_frame(name: str, table, df: DataFrame) -> DataFrame:
    """A table's DataFrame (SQL columns) as the plan's input columns c0, c1, ..."""
    wanted = [c for c, _, _ in table.columns]
    lower = {c.lower(): c for c in df.columns}
    if all(w in lower for w in wanted):
        picked = [lower[w] for w in wanted]
    elif len(df.columns) == len(wanted):
        picked = list(df.columns)
    else:
        raise SparkEngineError(f"table {name!r}: the DataFrame has columns {df.columns}, but {name!r} has {', '.join(wanted)}")
    out = [None] * len(table.plan_types)
    for (column, ty, nullable), (v, n), source in zip(table.columns, table.layout, picked):
        value = F.col(f"`{source}`").cast(_SPARK[ty])
        if ty == "bool":
            value = F.when(value, F.lit(1)).otherwise(F.lit(0)).cast(T.LongType())
        out[v] = F.coalesce(value, F.lit(_ZERO[ty]).cast(T.LongType() if ty == "bool" else _SPARK[ty]))
        if n is not None:
            out[n] = F.when(F.col(f"`{source}`").isNull(), F.lit(1)).otherwise(F.lit(0)).cast(T.LongType())
    not_null = [F.col(f"`{s}`").isNull() for (c, _, nullable), s in zip(table.columns, picked) if not nullable]
    if not_null:
        condition = not_null[0]
        for c in not_null[1:]:
            condition = condition | c
        if df.where(condition).limit(1).count():
            names = [c for c, _, nullable in table.columns if not nullable]
            raise SparkEngineError(f"table {name!r}: a NULL in a NOT NULL column ({', '.join(names)})")
    return df.select(*[c.alias(f"c{i}") for i, c in enumerate(out)])


def sql_frame(df: DataFrame, relation) -> DataFrame:
    """An output's plan columns as its SQL columns (NULL where the flag is set)."""
    columns = []
    for name, ty, v, n in relation.columns:
        value = F.col(f"c{v}")
        value = (value != 0) if ty == "bool" else value.cast(_SPARK[ty])
        if n is not None:
            value = F.when(F.col(f"c{n}") != 0, F.lit(None).cast(_SPARK[ty])).otherwise(value)
        columns.append(value.alias(name))
    return df.select(*columns)


__all__ = ["run_sql", "plan_frame", "sql_frame"]
