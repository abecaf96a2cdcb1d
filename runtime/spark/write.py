"""Writing relations and change logs: Parquet, CSV, JSON lines through Spark, or a text table.

`arrow_table(rows, columns)` builds an Arrow table from decoded rows (tuples
of int, float, str) with one typed column per `ColumnSpec` (a change log adds
`time` and `diff` int columns). `write_table(spark, table, path, fmt)` writes
it through Spark as a directory of part files (`path/part-*.parquet`, ...),
as `write_dataframe(df, path, fmt)` does for a Spark DataFrame (the Spark
engine's outputs);
for local paths the directory is written beside the target and renamed into
place, so a reader never sees half a table and writing the same table again
(a replayed micro-batch) leaves one copy. `format_text(name, table)` is the
readable rendering for a terminal.
"""

from __future__ import annotations

import os
import shutil
import uuid

import pyarrow as pa

from runtime.spark.read import ColumnSpec, is_local

WRITE_FORMATS = ("parquet", "csv", "jsonl")
_ARROW = {"int": pa.int64(), "unsigned": pa.uint64(), "float": pa.float64(), "str": pa.string(), "bool": pa.bool_()}


def arrow_table(rows: list[tuple], columns) -> pa.Table:
    columns = list(columns)
    values = list(zip(*rows)) if rows else [() for _ in columns]
    arrays = [pa.array(list(v), type=_ARROW[c.kind]) for v, c in zip(values, columns)]
    return pa.Table.from_arrays(arrays, names=[c.name for c in columns])


def change_columns(columns) -> tuple[ColumnSpec, ...]:
    return tuple(columns) + (ColumnSpec("time", "int"), ColumnSpec("diff", "int"))


def write_table(spark, table: pa.Table, path: str, fmt: str) -> None:
    """Write `table` to `path` (a directory) as `fmt`, replacing what was there."""
    df = spark.createDataFrame(table) if table.num_rows else spark.createDataFrame([], _spark_schema(table))
    write_dataframe(df.coalesce(1), path, fmt)


def write_dataframe(df, path: str, fmt: str) -> None:
    """Write a Spark DataFrame to `path` (a directory of part files) as `fmt`, replacing what was there."""
    if fmt not in WRITE_FORMATS:
        raise ValueError(f"unknown output format {fmt!r} (one of {', '.join(WRITE_FORMATS)})")
    writer = df.write.mode("overwrite")
    if not is_local(path):
        _save(writer, path, fmt)
        return
    path = os.path.abspath(path)
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    staging = os.path.join(parent, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    _save(writer, staging, fmt)
    if os.path.exists(path):
        old = staging + ".old"
        os.rename(path, old)
        os.rename(staging, path)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(staging, path)


def _save(writer, path: str, fmt: str) -> None:
    if fmt == "parquet":
        writer.parquet(path)
    elif fmt == "csv":
        writer.option("header", True).csv(path)
    else:
        writer.json(path)


def _spark_schema(table: pa.Table):
    from pyspark.sql import types as T

    kinds = {pa.int64(): T.LongType(), pa.uint64(): T.DecimalType(20, 0), pa.float64(): T.DoubleType(), pa.string(): T.StringType(),
             pa.bool_(): T.BooleanType()}
    return T.StructType([T.StructField(f.name, kinds[f.type], True) for f in table.schema])


def format_text(name: str, table: pa.Table, limit: int | None = None) -> str:
    """`name` and the table's rows as aligned text columns (numbers right-aligned)."""
    header = table.column_names
    rows = table.to_pylist()
    shown = rows if limit is None else rows[:limit]
    cells = [[_cell(r[h]) for h in header] for r in shown]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(header)]
    numeric = [pa.types.is_integer(t) or pa.types.is_floating(t) for t in table.schema.types]
    fmt = lambda values: "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)).rstrip()
    lines = [f"{name} ({len(rows)} rows)", fmt(header), fmt(["-" * w for w in widths])]
    lines += [fmt(row) for row in cells]
    if len(shown) < len(rows):
        lines.append(f"... {len(rows) - len(shown)} more rows")
    return "\n".join(lines)


def _cell(v) -> str:
    return repr(v) if isinstance(v, float) else str(v)
