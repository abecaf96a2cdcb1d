"""Spark I/O: tables in and out of a running dataflow, through PySpark and Arrow.

Spark is deltalog's data pipeline (DESIGN.md §4). This package reads input
tables (Parquet, CSV with a header, Soufflé `.facts`) with Spark, hands them
to the runtime as Arrow columns encoded in bulk to the runtime's int64
columns (no per-row Python), writes relations and change logs back through
Spark, and follows a directory of change files with Structured Streaming.

- `session`: the embedded Spark session, started lazily and quietly.
- `class_archive`: the JVM's classes archived once (Class Data Sharing), so
  later Spark starts and first jobs take seconds less.
- `read`: a table as a Spark DataFrame with the relation's columns, mapped by
  name or position, filtered where the caller allows, collected as Arrow; or a
  local table read by pyarrow alone, with the same rows and errors.
- `arrow`: Arrow arrays cast to declared column kinds and encoded to int64.
- `write`: Arrow tables to Parquet, CSV, JSON lines (through Spark, or by
  pyarrow for local directories), or a text table.
- `stream`: a Structured Streaming file source driving a callback per
  micro-batch, with the batch's files recorded for exactly-once replay.

Column kinds are the runtime's: "int", "unsigned" (int64 bits), "float", "str".
The package never imports the compiler.
"""

from runtime.spark.arrow import LoadError, encode_table
from runtime.spark.read import ColumnSpec, TableSource, detect_format, read_table
from runtime.spark.session import SparkProvider

__all__ = ["ColumnSpec", "LoadError", "SparkProvider", "TableSource", "detect_format", "encode_table", "read_table"]
