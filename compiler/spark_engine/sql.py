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
compiler.sql.program.SQLRuntimeError as the session does (SQLProgram.check_error).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from compiler.spark_engine.errors import SparkEngineError
from compiler.spark_engine.expressions import sql_literal
from compiler.sql.values import BOOL, FLOAT, INT, PLAN_TYPE, TEXT


def run_sql(program, spark, inputs: dict | None = None, **options) -> dict[str, DataFrame]:
    """{output name: DataFrame of SQL columns} of an SQLProgram evaluated on Spark."""
    from compiler.spark_engine.engine import run_plan

    inputs = dict(inputs or {})
    unknown = sorted(set(inputs) - set(program.tables))
    if unknown:
        raise SparkEngineError(f"unknown table {unknown[0]!r} (the program's tables: {', '.join(program.tables) or 'none'})")
    ansi = spark.conf.get("spark.sql.ansi.enabled", "false")
    spark.conf.set("spark.sql.ansi.enabled", "false")  # casts of the inputs as the engine's (see engine.py)
    try:
        frames, not_null = {}, {}
        for name, df in inputs.items():
            frames[name], missing = plan_frame(name, program.tables[name], df)
            if missing is not None:
                not_null[name] = missing
        if not_null:  # one job for every table with NOT NULL columns
            found = _found(not_null)
            if found:
                name = min(found)
                columns = [c for c, _, nullable in program.tables[name].columns if not nullable]
                raise SparkEngineError(f"table {name!r}: a NULL in a NOT NULL column ({', '.join(columns)})")
        result = run_plan(program.plan, spark, frames, **options)
        if program.checks:  # one job for every check: the rows of those with a row
            found = _found({name: result.outputs[name] for name in program.checks}, values=True)
            for name in program.checks:
                if name in found:
                    raise program.check_error(name, found[name])
        return {name: sql_frame(result.outputs[name], program.relations[name]) for name in program.outputs}
    finally:
        spark.conf.set("spark.sql.ansi.enabled", ansi)


def _found(frames: dict, values: bool = False) -> dict:
    """{name: [(value,), ...]} of the DataFrames that have a row, by one Spark job: with
    `values`, the distinct values of each one's first column (a check's rows), else one."""
    names = list(frames)
    union = None
    for i, n in enumerate(names):
        df = frames[n]
        part = df.selectExpr(f"{i} AS found", f"{df.columns[0]} AS value").distinct() if values else df.limit(1).selectExpr(f"{i} AS found", "0 AS value")
        union = part if union is None else union.unionAll(part)
    found: dict = {}
    for i, value in union.collect():
        found.setdefault(names[i], []).append((value,))
    return found


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def plan_frame(name: str, table, df: DataFrame):
    """A table's DataFrame (SQL columns) as the plan's input columns c0, c1, ... (each value as
    SQLSession.insert encodes it: a NULL is the type's zero, and 1 in its flag column), and a
    DataFrame with a row if a NOT NULL column holds a NULL (None if there is none)."""
    wanted = [c for c, _, _ in table.columns]
    lower = {c.lower(): c for c in df.columns}  # schema names keep their case; match them ignoring it
    if all(w.lower() in lower for w in wanted):
        picked = [lower[w.lower()] for w in wanted]
    elif len(df.columns) == len(wanted):
        picked = list(df.columns)
    else:
        raise SparkEngineError(f"table {name!r}: the DataFrame has columns {list(df.columns)}, but {name!r} has {', '.join(wanted)}")
    out = [None] * len(table.plan_types)
    nulls = []
    for (column, ty, nullable), (v, n), source in zip(table.columns, table.layout, picked):
        source = _quoted(source)
        value = f"CAST({source} AS {_SQL[ty]})"
        if ty == BOOL:
            value = f"CASE WHEN {value} THEN 1 ELSE 0 END"
        out[v] = f"CAST(coalesce({value}, {sql_literal(_ZERO[ty], PLAN_TYPE[ty])}) AS {_SQL[PLAN_TYPE[ty]]})"
        if n is not None:
            out[n] = f"CAST(CASE WHEN {source} IS NULL THEN 1 ELSE 0 END AS BIGINT)"
        else:
            nulls.append(f"{source} IS NULL")
    # SQL text: one Py4J call per column (see compiler.spark_engine.relations)
    frame = df.selectExpr(*[f"{e} AS c{i}" for i, e in enumerate(out)])
    return frame, (df.where(" OR ".join(nulls)) if nulls else None)


def sql_frame(df: DataFrame, relation) -> DataFrame:
    """An output's plan columns as its SQL columns (NULL where the flag is set).

    Where its ORDER BY reads plan columns no SQL column shows (keys the select
    list lacks), the rows come sorted as the in-process session reads them, since
    after this projection nothing could sort them again."""
    if hides_order_keys(relation):
        order = [F.col(f"c{c}").desc() if desc else F.col(f"c{c}").asc() for c, desc in relation.order]
        df = df.orderBy(*order, *[F.col(c).asc() for c in df.columns])
    columns = []
    for name, ty, v, n in relation.columns:
        value = f"(c{v} != 0)" if ty == BOOL else f"c{v}"
        if n is not None:
            value = f"CASE WHEN c{n} != 0 THEN CAST(NULL AS {_SQL[ty]}) ELSE {value} END"
        columns.append(f"{value} AS {_quoted(name)}")
    return df.selectExpr(*columns)


def hides_order_keys(relation) -> bool:
    """Whether an SQL output is ordered by plan columns that none of its SQL columns holds."""
    shown = {i for _, _, v, n in relation.columns for i in (v, n) if i is not None}
    return any(c not in shown for c, _ in relation.order)


_SQL = {INT: "BIGINT", FLOAT: "DOUBLE", TEXT: "STRING", BOOL: "BOOLEAN", "number": "BIGINT", "float": "DOUBLE", "symbol": "STRING"}
_ZERO = {INT: 0, FLOAT: 0.0, TEXT: "", BOOL: 0}


__all__ = ["run_sql", "plan_frame", "sql_frame"]
