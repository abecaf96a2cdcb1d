"""`deltalog run --engine spark`: the program evaluated as Spark jobs.

The same inputs as the in-process run (`--input`, `--input-dir`,
`--facts-dir`; Parquet, CSV, .facts, JSON lines; the plan's filters pushed
into the reads) become Spark DataFrames that never leave the JVM: each
column is cast to its declared type with the in-process loader's rules, one
validation job per input refuses what that loader refuses (an empty value, a
value that is not of the column's type) naming the relation, column and
value, and compiler.spark_engine evaluates the plan. An SQL program's tables
go in as read (SQL columns, NULLs where the schema allows them: the engine
maps them to the plan's columns and casts them). The outputs are written by
Spark (`OUTPUT_DIR/<rel>/`, one directory of part files each) or, with
`--format table`, collected and printed in the in-process run's order.
Change tables are refused: the Spark engine evaluates the tables as they
are, and keeping answers up to date stays with the in-process runtime.
What the engine refuses by the program's types alone (unsigned columns) is
refused before Spark starts.
"""

from __future__ import annotations

import os
import sys
import time as clock

from compiler.cli.common import UserError, is_sql, print_sizes, shown_outputs, spark_provider
from compiler.cli.inputs import columns, make_source, precheck, pushdown

_WORDS = {"int": "an integer", "float": "a number", "str": "a string"}
_INTEGER = r"^[+-]?[0-9]+$"


def run_spark_engine(args, program, fmt: str, initial_inputs) -> int:
    from compiler.program import SessionError
    from compiler.spark_engine import SparkEngineError, SparkEngineUnsupported
    from compiler.spark_engine import run as run_on_spark
    from runtime.spark import LoadError
    from runtime.spark.read import read_dataframe
    from runtime.worker import RoundLimitError
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    inputs = initial_inputs(args, program)
    precheck(program, inputs)
    try:
        refuse_types(program)
    except SparkEngineUnsupported as e:
        raise UserError(str(e)) from None
    provider = spark_provider(args)
    try:
        began = clock.perf_counter()
        spark = provider.get()
        pushed = {} if args.no_pushdown else pushdown(program)
        frames = {}
        try:
            for rel, path in inputs:
                source = make_source(program, rel, path, pushed=pushed)
                df = read_dataframe(spark, source)
                frames[rel] = df if is_sql(program) else typed_frame(df, source)
            outputs = run_on_spark(program, spark, frames)
            written = clock.perf_counter()
            write_outputs(program, outputs, args.output_dir, fmt)
        except (LoadError, SparkEngineUnsupported, SparkEngineError, SessionError) as e:  # SQLRuntimeError too
            raise UserError(str(e)) from None
        except RoundLimitError as e:  # a recursion's guard, as a session reports it
            raise UserError(str(program.round_limit_error(e))) from None
        except (Py4JError, PySparkException) as e:  # a job failed: a malformed table read late, or Spark itself
            raise UserError(spark_job_failure(program, inputs, pushed, e)) from None
        if args.timings:
            print(f"timings: spark start {provider.startup_seconds or 0:.2f}s, read and evaluate"
                  f" {written - began - (provider.startup_seconds or 0):.2f}s, write {clock.perf_counter() - written:.2f}s",
                  file=sys.stderr)
    finally:
        provider.stop()
    return 0


def spark_job_failure(program, inputs, pushed, e: Exception) -> str:
    """What to tell about a failed Spark job: the first malformed line of a local text
    input if there is one (Spark names neither file nor line), else Spark's cause."""
    from runtime.spark.read import detect_format, malformed_text, spark_cause

    for rel, path in inputs:
        source = make_source(program, rel, path, pushed=pushed)
        found = malformed_text(source, source.format or detect_format(source.path))
        if found:
            return found
    return f"Spark failed: {spark_cause(e)}"


def refuse_types(program) -> None:
    """SparkEngineUnsupported for a column type the engine has no Spark type for, as
    compiler.spark_engine would raise it once Spark had started."""
    from compiler.plan import Fixpoint, walk
    from compiler.spark_engine.expressions import spark_type

    plan = getattr(program, "plan", None)
    if plan is None:
        return
    for name, types in plan.inputs.items():
        for t in types:
            spark_type(t, f"column of input {name!r}")
    for step in plan.steps:
        for binding in step.bindings if isinstance(step, Fixpoint) else (step,):
            for node in walk(binding.body):
                for t in node.types:
                    spark_type(t, f"column of {binding.name!r}")


def typed_frame(df, source):
    """`df`'s relation columns cast to their Spark types; LoadError on a value the
    in-process loader would refuse (checked by one Spark job)."""
    from pyspark.sql import functions as F

    from runtime.spark import LoadError

    casts, bad = [], []
    for spec, field in zip(source.columns, df.schema.fields):
        column = F.col(f"`{field.name}`")
        cast, wrong = _cast(column, field.dataType.typeName(), spec.kind, source)
        casts.append(cast.alias(spec.name))
        bad.append(column.isNull() | cast.isNull() | wrong)
    if not casts:
        return df
    flags = [F.when(b, F.lit(i)).otherwise(F.lit(None)) for i, b in enumerate(bad)]
    first = df.select(*[F.col(f"`{f.name}`") for f in df.schema.fields[: len(casts)]], F.coalesce(*flags).alias("__bad"))
    try:
        found = first.where(F.col("__bad").isNotNull()).limit(1).collect()
    except Exception as e:  # the first job to read the table: a malformed file fails here
        from runtime.spark.read import detect_format, read_failure

        raise read_failure(source, source.format or detect_format(source.path), e, "Spark failed reading it") from None
    if found:
        row = found[0]
        j = row["__bad"]
        spec = source.columns[j]
        value = row[j]
        what = f"'{source.relation}': {source.path}: column '{spec.name}'"
        if value is None:
            raise LoadError(f"{what}: an empty (null) value")
        raise LoadError(f"{what}: {value!r} is not {_WORDS.get(spec.kind, spec.kind)}")
    return df.select(*casts)


def _cast(column, spark_type: str, kind: str, source):
    """(the column cast to `kind`, a condition true where the value does not fit it)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from compiler.spark_engine import SparkEngineUnsupported

    integral = spark_type in ("byte", "short", "integer", "long")
    fractional = spark_type in ("float", "double") or spark_type.startswith("decimal")
    never = F.lit(False)
    if kind == "int":
        if integral:
            return column.cast(T.LongType()), never
        if fractional:  # an integer-valued number within 64 bits, as Arrow's safe cast
            cast = column.try_cast(T.LongType())
            return cast, (F.isnan(column.cast(T.DoubleType())) | (column != F.floor(column)) | (cast != column))
        if spark_type == "string":
            text = F.trim(column)
            return text.try_cast(T.LongType()), ~text.rlike(_INTEGER)
        return F.lit(None).cast(T.LongType()), F.lit(True)
    if kind == "float":
        if integral or fractional:
            return column.cast(T.DoubleType()), never
        if spark_type == "string":
            return F.trim(column).try_cast(T.DoubleType()), never
        return F.lit(None).cast(T.DoubleType()), F.lit(True)
    if kind == "str":
        if spark_type == "string" or integral or fractional:
            return column.cast(T.StringType()), never
        return F.lit(None).cast(T.StringType()), F.lit(True)
    raise SparkEngineUnsupported(f"{kind} column of input '{source.relation}'", "the Spark engine runs number, float and symbol columns")


def reading_order(program, rel: str, rows: list[tuple]) -> list[tuple]:
    """`rows` in the order the in-process session reads them: sorted; an SQL output's in its
    ORDER BY order, then by the plan's row (each value, NULL as the type's zero, next to its flag)."""
    if not is_sql(program):
        return sorted(rows)
    from compiler.spark_engine.sql import hides_order_keys
    from compiler.sql.topk import sort_rows
    from compiler.sql.values import BOOL, FLOAT, INT, TEXT

    zero = {INT: 0, FLOAT: 0.0, TEXT: "", BOOL: 0}
    info = program.relations[rel]
    if hides_order_keys(info):  # sorted by Spark (compiler.spark_engine.sql.sql_frame): its keys are gone
        return rows
    width = 1 + max((i for _, _, v, n in info.columns for i in (v, n) if i is not None), default=-1)
    keyed = {}
    for row in rows:
        plan = [0] * width
        for value, (_, ty, v, n) in zip(row, info.columns):
            plan[v] = zero[ty] if value is None else int(value) if ty == BOOL else value
            if n is not None:
                plan[n] = int(value is None)
        keyed.setdefault(tuple(plan), []).append(row)
    return [row for plan in sort_rows(list(keyed), info.order) for row in keyed[plan]]


def write_outputs(program, outputs: dict, output_dir: str | None, fmt: str) -> None:
    from runtime.spark.write import arrow_table, format_text, write_dataframe

    blocks = []
    shown = shown_outputs(program)
    for rel in shown:
        cols = columns(program, rel)
        df = outputs[rel].toDF(*[c.name for c in cols])
        if fmt == "table":
            rows = reading_order(program, rel, [tuple(r) for r in df.collect()])
            blocks.append(format_text(rel, arrow_table(rows, cols)))
        else:
            write_dataframe(df, os.path.join(output_dir, rel), fmt)
    if fmt == "table" and blocks:
        print("\n\n".join(blocks))
    elif shown and fmt != "table":
        print(f"wrote {', '.join(shown)} to {output_dir} ({fmt}, Spark engine)")
    print_sizes(program, lambda rel: outputs[rel].count())
