"""The Spark engine: a compiled program's logical plan evaluated as Spark jobs.

For data that outgrows one machine, the same optimized plan the in-process
runtime runs is lowered to PySpark DataFrame operations instead: non-recursive
steps become joins, aggregations and set operations
(compiler.spark_engine.relations, expressions), each recursive Fixpoint a
semi-naive loop of Spark jobs (compiler.spark_engine.fixpoint), and the steps
run in plan order (compiler.spark_engine.engine), which gives stratified
negation and aggregation. It is a batch evaluation of the inputs as they are:
no times, no incremental maintenance (that stays with the in-process
runtime). What it cannot translate raises SparkEngineUnsupported naming it.

    outputs = compiler.spark_engine.run(program, spark, {"edge": edge_df})
    outputs = program.run_on_spark(spark, inputs={"edge": edge_df})   # the same
"""

from compiler.spark_engine.engine import SparkRun, run, run_plan
from compiler.spark_engine.errors import SparkEngineError, SparkEngineUnsupported

__all__ = ["run", "run_plan", "SparkRun", "SparkEngineUnsupported", "SparkEngineError"]
