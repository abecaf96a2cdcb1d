"""Writing relations and change logs: Parquet, CSV, JSON lines, through Spark or Arrow, or a text table.

Outputs arrive as Arrow tables (a session's results are columns:
compiler.results). `write_table(spark, table, path, fmt)` writes one through
Spark as Arrow-backed DataFrames of at most 64 MB each (the driver's heap holds
one at a time) -- a directory of part files (`path/part-*.parquet`, ...), one
per partition unless `single_file` asks for one per slice -- as
`write_dataframe(df, path, fmt)` does for any Spark
DataFrame (the Spark engine's outputs). `write_arrow(table, path, fmt)`
writes a local directory without Spark: one part file written by pyarrow
(Parquet and CSV by Arrow's writers, JSON lines built column by column with
every distinct string escaped once). Either way, a local directory is
written beside the target and renamed into place, so a reader never sees
half a table and writing the same table again (a replayed micro-batch) leaves
one copy. `arrow_table(rows, columns)` builds a table from decoded rows
(tuples of int, float, str), for the few writers that have rows;
`format_text(name, table)` is the readable rendering for a terminal.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid

import numpy as np
import pyarrow as pa

from runtime.spark.read import ColumnSpec, is_local, local_path

WRITE_FORMATS = ("parquet", "csv", "jsonl")
_ARROW = {"int": pa.int64(), "unsigned": pa.uint64(), "float": pa.float64(), "str": pa.string(), "bool": pa.bool_()}


def arrow_table(rows: list[tuple], columns) -> pa.Table:
    columns = list(columns)
    values = list(zip(*rows)) if rows else [() for _ in columns]
    arrays = [pa.array(list(v), type=_ARROW[c.kind]) for v, c in zip(values, columns)]
    return pa.Table.from_arrays(arrays, names=[c.name for c in columns])


def change_columns(columns) -> tuple[ColumnSpec, ...]:
    return tuple(columns) + (ColumnSpec("time", "int"), ColumnSpec("diff", "int"))


def write_table(spark, table: pa.Table, path: str, fmt: str, single_file: bool = True) -> None:
    """Write `table` to `path` (a directory) as `fmt` through Spark, replacing what was there:
    one part file, or with `single_file=False` one per core (Spark slices an Arrow table into
    batch-sized partitions; dozens of small write tasks cost more than a few large ones).

    Spark's driver holds a DataFrame made from Arrow in its heap (1 GB by default): a table
    of more than `_SLICE_BYTES` goes to Spark in slices, one DataFrame and one write each
    (appended), so any size of table is written -- one part file (or one per core) per slice."""
    _check_format(fmt)
    tasks = 1 if single_file else spark.sparkContext.defaultParallelism
    if not table.num_rows:
        frames = [spark.createDataFrame([], _spark_schema(table))]
    else:
        rows = max(1, _SLICE_BYTES * table.num_rows // max(1, table.nbytes))
        frames = (spark.createDataFrame(table.slice(start, rows)) for start in range(0, table.num_rows, rows))

    def save(target: str) -> None:
        for i, df in enumerate(frames):
            _save(df.coalesce(tasks).write.mode("overwrite" if i == 0 else "append"), target, fmt)

    _write(path, save)


_SLICE_BYTES = 64 << 20  # Arrow bytes per DataFrame handed to Spark's driver at once


def write_dataframe(df, path: str, fmt: str) -> None:
    """Write a Spark DataFrame to `path` (a directory of part files) as `fmt`, replacing what was there."""
    _check_format(fmt)
    _write(path, lambda target: _save(df.write.mode("overwrite"), target, fmt))


def _write(path: str, save) -> None:
    """`save(target)` into `path`: straight there when it is not local, else through a staging
    directory renamed into place."""
    if not is_local(path):
        save(path)
        return
    _replace(path, save)


def write_arrow(table: pa.Table, path: str, fmt: str) -> None:
    """Write `table` to the local directory `path` as `fmt` with pyarrow (no Spark), replacing what was there."""
    _check_format(fmt)

    def save(staging: str) -> None:
        os.makedirs(staging)
        part = os.path.join(staging, f"part-00000.{fmt}")
        if fmt == "parquet":
            import pyarrow.parquet as pq

            pq.write_table(table, part)
        elif fmt == "csv":
            import pyarrow.csv as pacsv

            pacsv.write_csv(table, part, pacsv.WriteOptions(include_header=True, quoting_style="needed"))
        else:
            with open(part, "wb") as f:
                write_json_lines(table, f)
        open(os.path.join(staging, "_SUCCESS"), "wb").close()

    _replace(local_path(path), save)


def write_json_lines(table: pa.Table, f) -> None:
    """Write the table to the binary file `f` as JSON lines, one object per row, built column by
    column: numbers as Arrow prints them (non-finite floats as the strings "NaN", "Infinity",
    "-Infinity", as Spark writes them), strings escaped by `json.dumps` once per distinct
    value, NULL as null. The lines are one Arrow string array, written from its data buffer."""
    import pyarrow.compute as pc

    for start in range(0, table.num_rows, _JSON_ROWS):
        part = table.slice(start, _JSON_ROWS)
        pieces = []
        for i, (name, column) in enumerate(zip(part.column_names, part.columns)):
            pieces.append(("{" if i == 0 else ",") + json.dumps(name) + ":")
            pieces.append(pc.fill_null(_json_values(column.combine_chunks()), "null"))
        lines = pc.binary_join_element_wise(*pieces, "}\n", "")
        _, offsets, data = lines.buffers()
        bounds = np.frombuffer(offsets, dtype=np.int32)[lines.offset: lines.offset + len(lines) + 1]
        f.write(memoryview(data)[bounds[0]: bounds[-1]])


_JSON_ROWS = 1 << 20  # rows per slice: one slice's text stays far below Arrow's 2 GB string limit


def _json_values(column: pa.Array) -> pa.Array:
    import pyarrow.compute as pc

    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        encoded = pc.dictionary_encode(column)
        quoted = pa.array([json.dumps(s, ensure_ascii=False) for s in encoded.dictionary.to_pylist()], pa.string())
        return quoted.take(encoded.indices)
    if pa.types.is_boolean(column.type):
        return pc.if_else(column, "true", "false")
    text = pc.cast(column, pa.string())
    if pa.types.is_floating(column.type):
        finite = pc.is_finite(column)
        words = pc.if_else(pc.is_nan(column), '"NaN"', pc.if_else(pc.greater(column, 0), '"Infinity"', '"-Infinity"'))
        text = pc.if_else(pc.or_kleene(finite, pc.is_null(column)), text, words)
    return text


def _check_format(fmt: str) -> None:
    if fmt not in WRITE_FORMATS:
        raise ValueError(f"unknown output format {fmt!r} (one of {', '.join(WRITE_FORMATS)})")


def _replace(path: str, save) -> None:
    """`save(staging)` writes a directory beside `path`, which then replaces `path` by renames."""
    path = os.path.abspath(path)
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    staging = os.path.join(parent, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    save(staging)
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
