"""Running a whole plan on Spark: inputs in, steps in order, outputs out.

`run_plan(plan, spark, inputs)` lowers a Plan's steps in order: a Binding
becomes a (lazy) DataFrame (compiler.spark_engine.relations), a Fixpoint a
loop of Spark jobs whose results are materialized
(compiler.spark_engine.fixpoint; a bag recursion linear in its bindings,
SQL's UNION ALL, compiler.spark_engine.bags). Stratified negation and aggregation need
nothing more: the plan already orders the strata, so every Antijoin or
Aggregate over an earlier stratum reads its finished relation. It returns
{output name: DataFrame} with columns c0, c1, ... ; `run(program, spark,
inputs)` does the same for a compiled Program, taking and giving the
relations' attribute names.

Inputs are DataFrames keyed by input relation name; a missing input is an
empty relation. A table's columns are matched to the relation's by name
when it has them all, else by position, and cast to the relation's types
(number: bigint, float: double, symbol: string).

Spark's ANSI mode (the default in Spark 4) turns integer overflow into an
error; the in-process runtime wraps at 64 bits. The DataFrames are therefore
built with `spark.sql.ansi.enabled=false`, which is restored afterwards (the
built expressions keep the mode they were analysed with).

Loops run with Spark's constraint propagation off: a checkpoint of a union
of checkpoints can carry constraints over attributes it does not output, and
planning a union of it then fails (`NoSuchElementException: key not found`
in Union.rewriteConstraints; seen with SQL plans' NULL flag columns on Spark
4.0). A checkpoint made with it off carries none, so later plans over the
results are safe.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from compiler.plan import Fixpoint, Plan

from compiler.spark_engine.errors import SparkEngineError, SparkEngineUnsupported
from compiler.spark_engine.expressions import spark_type, sql_type
from compiler.spark_engine.bags import linear_bodies, run_bag_fixpoint
from compiler.spark_engine.fixpoint import run_fixpoint
from compiler.spark_engine.relations import Relations, schema


class SparkRun:
    """The result of running a plan: outputs, and the loop statistics of each fixpoint."""

    def __init__(self, outputs: dict, loops: list):
        self.outputs = outputs
        self.loops = loops


def run_plan(plan: Plan, spark, inputs: dict | None = None, attribute_names: dict | None = None,
             checkpoint_every: int = 4, max_iterations: int | None = None) -> SparkRun:
    """Evaluate `plan` on Spark; `inputs` maps input names to DataFrames."""
    inputs = dict(inputs or {})
    unknown = sorted(set(inputs) - set(plan.inputs))
    if unknown:
        raise SparkEngineError(f"unknown input {unknown[0]!r} (the program's inputs: {', '.join(plan.inputs) or 'none'})")
    for name, types in plan.inputs.items():
        for t in types:
            spark_type(t, f"column of input {name!r}")
    ansi = spark.conf.get("spark.sql.ansi.enabled", "false")
    spark.conf.set("spark.sql.ansi.enabled", "false")
    propagation = spark.conf.get("spark.sql.constraintPropagation.enabled", "true")
    top = None
    try:
        scans = _Scans(lambda name: _input(spark, name, plan.inputs[name], inputs.get(name), (attribute_names or {}).get(name)))
        for name in inputs:  # a table of the wrong shape is an error even if nothing reads it
            scans[name]
        top = Relations(spark, scans, {})
        loops = []
        for step in plan.steps:
            if isinstance(step, Fixpoint):
                parts = linear_bodies(step)  # bag recursion (SQL's UNION ALL): by deltas
                spark.conf.set("spark.sql.constraintPropagation.enabled", "false")
                try:
                    if parts is not None:
                        results, stats = run_bag_fixpoint(step, top, parts, max_iterations)
                    else:
                        results, stats = run_fixpoint(step, top, checkpoint_every, max_iterations)
                finally:
                    spark.conf.set("spark.sql.constraintPropagation.enabled", propagation)
                top.refs.update(results)
                loops.append(stats)
            else:
                top.refs[step.name] = top.df(step.body)
        outputs = {name: top.refs[name] if name in top.refs else scans[name] for name in plan.outputs}
        for df in outputs.values():
            df.schema  # analysed now, under ANSI off
        return SparkRun(outputs, loops)
    finally:
        if top is not None:
            top.drop_views()
        spark.conf.set("spark.sql.ansi.enabled", ansi)


class _Scans(dict):
    """Input name -> DataFrame (columns c0, ...), each made when first read (`make(name)`)."""

    def __init__(self, make):
        super().__init__()
        self.make = make

    def __missing__(self, name):
        done = self[name] = self.make(name)
        return done


def _input(spark, name: str, types, df: DataFrame | None, attributes) -> DataFrame:
    if df is None:
        return spark.createDataFrame([], schema(types))
    columns = df.columns
    if attributes and all(a in columns for a in attributes):
        picked = list(attributes)
    elif len(columns) == len(types):
        picked = list(columns)
    else:
        raise SparkEngineError(
            f"input {name!r}: the table has columns {columns}, but {name!r} has {len(types)} columns"
            + (f" ({', '.join(attributes)})" if attributes else "")
        )
    # SQL text: a Py4J call per column, not per column and operator (see relations.py)
    return df.selectExpr(*[f"CAST(`{c.replace('`', '``')}` AS {sql_type(t)}) AS c{i}" for i, (c, t) in enumerate(zip(picked, types))])


def run(program, spark, inputs: dict | None = None, **options) -> dict[str, DataFrame]:
    """{output name: DataFrame} of a compiled Program evaluated on Spark, columns named
    as the relation's attributes (see run_plan for `inputs` and options); an SQL
    program's in and out as SQL columns with NULLs (compiler.spark_engine.sql)."""
    from compiler.sql.program import SQLProgram

    if isinstance(program, SQLProgram):
        from compiler.spark_engine.sql import run_sql

        return run_sql(program, spark, inputs, **options)
    attributes = {name: tuple(info.attribute_names) for name, info in program.relations.items()}
    result = run_plan(program.plan, spark, inputs, attributes, **options)
    return {
        name: df.toDF(*attributes[name]) if len(set(attributes[name])) == len(attributes[name]) else df
        for name, df in result.outputs.items()
    }


__all__ = ["run", "run_plan", "SparkRun"]
