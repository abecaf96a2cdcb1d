"""Reading a table as a relation: Spark does the reading, Arrow carries the rows.

A `TableSource` names a path (a file or a directory of part files, local or
any URL Spark reads), its format ("parquet", "csv" with a header row,
"facts" = Soufflé's delimited rows, tab-separated and without a header unless
`delimiter` and `header` say otherwise (runtime.spark.facts), "json" lines), the
relation it feeds and that relation's columns (`ColumnSpec`: name and kind).
`read_table(spark, source)` returns an Arrow table with exactly the
relation's columns in order (plus `extras` such as a change table's `diff`
and `time`):

- columns map by name when every declared name is a column of the table
  (case-insensitive), else by position when the table has exactly as many
  columns as wanted; anything else is a `LoadError` listing both sides;
- only the mapped columns are selected, so Spark reads no others (projection
  pushdown into the Parquet scan), and `where` -- a Spark SQL predicate over
  the declared names that the caller guarantees drops only rows no reader of
  the relation would keep -- is applied in Spark (filter pushdown) when the
  table's column types match the kinds it compares;
- the result is collected with `DataFrame.toArrow()` (Arrow batches from the
  JVM, no per-row Python); casting and encoding happen in runtime.spark.arrow.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa

from runtime.spark.arrow import LoadError, encode_column

FORMATS = ("parquet", "csv", "facts", "json")
_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".facts": "facts", ".tsv": "facts", ".json": "json", ".jsonl": "json"}


@dataclass(frozen=True)
class ColumnSpec:
    name: str
    kind: str  # "int", "unsigned", "float", "str"


@dataclass(frozen=True)
class TableSource:
    path: str
    relation: str
    columns: tuple[ColumnSpec, ...]
    format: str | None = None  # None: from the path (detect_format)
    extras: tuple[ColumnSpec, ...] = ()  # extra columns taken by name, else after the relation's
    optional_extras: tuple[str, ...] = ()  # extras that may be missing
    where: str | None = None
    infer_types: bool = False  # CSV: let Spark infer column types (else every column is text)
    delimiter: str = "\t"  # facts: the field separator (Soufflé's `.input r(delimiter=...)`)
    header: bool = False  # facts: the first line names the columns (Soufflé's `headers=true`)
    quoted: bool = False  # facts: fields may be in double quotes, as RFC 4180 says (Soufflé's `rfc4180=true`)


def is_local(path: str) -> bool:
    return "://" not in path or path.startswith("file://")


def local_path(path: str) -> str:
    """A local path or `file://` URI as a file system path."""
    return path[len("file://"):] if path.startswith("file://") else path


def detect_format(path: str) -> str:
    """The format of a path by its suffix, or for a directory by its data files' suffixes."""
    p = Path(local_path(path))
    fmt = _SUFFIXES.get(p.suffix.lower())
    if fmt is None and is_local(path) and p.is_dir():
        found = {_SUFFIXES.get(f.suffix.lower()) for f in p.rglob("*") if f.is_file() and not f.name.startswith((".", "_"))}
        found.discard(None)
        if len(found) == 1:
            fmt = found.pop()
    if fmt is None:
        raise LoadError(f"{path}: cannot tell the format (name files .parquet, .csv, .facts or .jsonl, or give format)")
    return fmt


def read_dataframe(spark, source: TableSource):
    """The Spark DataFrame of `source`'s relation columns (plus extras), filtered where allowed."""
    path = source.path
    where = f"'{source.relation}': {path}"
    if is_local(path):
        local = local_path(path)
        if not os.path.exists(local):
            raise LoadError(f"{where}: no such file or directory")
        path = os.path.abspath(local)
    fmt = source.format or detect_format(path)
    reader = spark.read
    try:
        if fmt == "parquet":
            df = reader.parquet(path)
        elif fmt == "csv":
            df = reader.options(header=True, mode="FAILFAST", emptyValue="", inferSchema=source.infer_types).csv(path)
        elif fmt == "facts":
            quote = '"' if source.quoted else "\u0000"
            df = reader.options(sep=source.delimiter, header=source.header, quote=quote, escape=quote, multiLine=source.quoted,
                                mode="FAILFAST", emptyValue="").csv(path)
        elif fmt == "json":
            df = reader.options(mode="FAILFAST").json(path)
        else:
            raise LoadError(f"{where}: unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    except Exception as e:  # AnalysisException and friends: one line, not the JVM stack
        if isinstance(e, LoadError):
            raise
        raise read_failure(source, fmt, e, f"Spark cannot read it as {fmt}") from None
    if fmt == "facts":
        df = _souffle_facts(df, source)
    return _select(df, source, fmt, where)


def _souffle_facts(df, source: TableSource):
    """A fact file as Soufflé reads it: Spark reads an empty field as null (it is the empty
    symbol) and an empty file as no columns at all (it is an empty relation)."""
    from pyspark.sql import functions as F

    if not df.columns:
        names = [c.name for c in source.columns + source.extras]
        return df.sparkSession.createDataFrame([], ", ".join(f"`{n}` string" for n in names))
    return df.select([F.coalesce(F.col(f"`{c}`"), F.lit("")).alias(c) for c in df.columns])


def map_columns(names: list[str], source: TableSource, fmt: str, where: str) -> tuple[list[str], list[str]]:
    """(table columns to take, the names they get): by name, else by position; LoadError otherwise."""
    lower = {n.lower(): n for n in names}
    wanted = [c.name for c in source.columns]
    extras = [c.name for c in source.extras]
    optional = [e for e in extras if e in source.optional_extras]
    if (fmt != "facts" or source.header) and all(w.lower() in lower for w in wanted):
        present = [e for e in extras if e.lower() in lower]
        missing = [e for e in extras if e.lower() not in lower and e not in optional]
        if missing:
            raise LoadError(f"{where}: no column {', '.join(repr(m) for m in missing)} (columns: {', '.join(names)})")
        # A change table's columns are all meaningful: one that is none of them (`tme` for `time`)
        # would be dropped, and its rows land at the wrong time or with the wrong count.
        known = {c.lower() for c in wanted + extras}
        unknown = [n for n in names if n.lower() not in known] if extras else []
        if unknown:
            raise LoadError(f"{where}: unknown column {', '.join(repr(u) for u in unknown)}"
                            f" (a change table has the columns {', '.join(wanted)}, diff and optionally time)")
        return [lower[w.lower()] for w in wanted + present], wanted + present
    present = [e for e in extras if e not in optional]
    # By position, a header's diff or time must be where that column goes: elsewhere, another
    # column would be read as it (a weight as the diff, the diff as the time).
    misplaced = [e for i, e in enumerate(extras) if e.lower() in lower and names.index(lower[e.lower()]) != len(wanted) + i]
    if misplaced:
        maybe = f" ({', '.join(optional)} optional)" if optional else ""
        place = len(wanted) + extras.index(misplaced[0]) + 1
        raise LoadError(f"{where}: columns ({', '.join(names)}) do not match: wanted {', '.join(wanted + extras)}{maybe}"
                        f" by name, or by position with {misplaced[0]} in place {place}")
    n_required = len(wanted) + len(present)
    if optional and len(names) == n_required + len(optional):
        present = extras
    elif len(names) != n_required:
        need = ", ".join(wanted + present)
        raise LoadError(
            f"{where}: columns ({', '.join(names)}) do not match: wanted {need}"
            f" (by name, or exactly {n_required} columns by position)"
        )
    return names[: len(wanted) + len(present)], wanted + present


def local_columns(source: TableSource) -> list[str] | None:
    """The column names of a local Parquet or CSV table, read without Spark (None: unknown)."""
    path = local_path(source.path)
    if not is_local(source.path) or not os.path.exists(path):
        return None
    try:
        fmt = source.format or detect_format(path)
    except LoadError:
        return None
    files = [path] if os.path.isfile(path) else sorted(
        str(f) for f in Path(path).rglob("*") if f.is_file() and not f.name.startswith((".", "_")) and f.suffix.lower() in _SUFFIXES
    )
    if not files:
        return None
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return list(pq.read_schema(files[0]).names)
        if fmt == "csv":
            with open(files[0], encoding="utf-8") as f:
                import csv

                return next(csv.reader([f.readline()]), None) or None  # an empty file: no columns yet
    except Exception:
        return None
    return None


def check_source(source: TableSource) -> None:
    """Fail early, before Spark starts, on a missing local path or columns that cannot map."""
    where = f"'{source.relation}': {source.path}"
    if is_local(source.path):
        local = local_path(source.path)
        if not os.path.exists(local):
            raise LoadError(f"{where}: no such file or directory")
    names = local_columns(source)
    if names is not None:
        map_columns(names, source, source.format or detect_format(source.path), where)


def _select(df, source: TableSource, fmt: str, where: str):
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if not any(df.columns):  # an empty file: no columns to map (CSV's reader names one ""), no rows; as read_arrow
        names = [c.name for c in source.columns]
        return df.sparkSession.createDataFrame([], T.StructType([T.StructField(n, T.StringType()) for n in names]))

    picked, out_names = map_columns(list(df.columns), source, fmt, where)
    df = df.select([F.col(f"`{p}`").alias(o) for p, o in zip(picked, out_names)])
    if source.where and _comparable(df, source.columns):
        df = df.filter(source.where)
    return df


def _comparable(df, columns) -> bool:
    """Whether the table's column types let a predicate written for `columns` run as is."""
    types = {f.name: f.dataType.typeName() for f in df.schema.fields}
    integral = {"byte", "short", "integer", "long"}
    for c in columns:
        t = types.get(c.name)
        ok = t in integral if c.kind in ("int", "unsigned") else t in integral | {"float", "double"} if c.kind == "float" else t == "string"
        if not ok:
            return False
    return True


def read_arrow(source: TableSource) -> pa.Table:
    """A local `source` in any format read by pyarrow, without Spark: the same column
    mapping, values and errors as `read_table` (a malformed line is reported by file and line,
    as `read_failure` reports it for Spark), no filter (the plan filters anyway). The fast
    path for tables on this machine: Arrow's columnar readers, no JVM row-to-Arrow conversion.

    As Spark reads them: CSV has a header row and, unless `infer_types`, text columns; JSON
    lines are objects whose fields are columns; blank lines are skipped and an empty unquoted
    field is null. .facts files are read as Soufflé reads them (runtime.spark.facts). A
    directory is read file by file in name order (hidden and _-files skipped)."""
    where = f"'{source.relation}': {source.path}"
    check_source(source)
    path = local_path(source.path)
    fmt = source.format or detect_format(path)
    if fmt not in FORMATS:
        raise LoadError(f"{where}: unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    if fmt == "facts":
        from runtime.spark.facts import read_facts  # facts builds on this module

        return read_facts(source)
    try:
        if fmt == "parquet":
            import pyarrow.dataset as ds

            dataset = ds.dataset(path, format="parquet", exclude_invalid_files=True)
            picked, out_names = map_columns(list(dataset.schema.names), source, fmt, where)
            return dataset.to_table(columns=picked, use_threads=True).rename_columns(out_names)
        tables = [t for t in (_read_text_file(f, fmt, source) for f in _data_files(path)) if t is not None]
        table = pa.concat_tables(tables, promote_options="permissive") if tables else pa.table({})
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError, UnicodeDecodeError) as e:
        raise LoadError(malformed_text(source, fmt) or f"{where}: cannot read it as {fmt}: {_first_line(e)}") from None
    if table.num_columns == 0:  # no rows at all (Spark sees no columns either): the relation's columns, empty
        return pa.table({c.name: pa.array([], pa.string()) for c in source.columns})
    picked, out_names = map_columns(table.column_names, source, fmt, where)
    return table.select(picked).rename_columns(out_names)


def _data_files(path: str) -> list[str]:
    if os.path.isfile(path):
        return [path]
    return sorted(str(f) for f in Path(path).rglob("*") if f.is_file() and not f.name.startswith((".", "_")) and not f.name.endswith(".crc"))


def _read_text_file(file: str, fmt: str, source: TableSource) -> pa.Table | None:
    """One CSV or JSON-lines file as an Arrow table (None: no rows and no header)."""
    if os.path.getsize(file) == 0:
        return None
    if fmt == "json":
        import pyarrow.json as pajson

        return pajson.read_json(file)
    import pyarrow.csv as pacsv

    with open(file, encoding="utf-8", newline="") as f:
        import csv

        header = next(csv.reader([f.readline()]), None)
    if not header:
        return None
    types = {} if source.infer_types else dict.fromkeys(header, pa.string())
    return pacsv.read_csv(file, convert_options=pacsv.ConvertOptions(column_types=types, **_NULLS))


# An empty unquoted field is null (and so refused), as Spark reads it; "" quoted is the empty string.
_NULLS = dict(null_values=[""], strings_can_be_null=True, quoted_strings_can_be_null=False)


def read_table(spark, source: TableSource) -> pa.Table:
    """`source` read by Spark and collected as one Arrow table (relation columns, then extras),
    in the table's row order."""
    df = read_dataframe(spark, source)
    try:
        return df.toArrow()
    except Exception as e:
        raise read_failure(source, source.format or detect_format(source.path), e, "Spark failed reading it") from None


def dataframe_batches(df) -> Iterator[pa.RecordBatch]:
    """The Arrow record batches of a Spark DataFrame as the JVM sends them.

    This is the stream `DataFrame.toArrow()` reads (`collectAsArrowToPython`: each
    partition converted to Arrow by its task, written to a local socket as the task
    finishes), handed over batch by batch instead of collected into one table first,
    so the caller can encode early partitions while Spark still converts later ones.
    Batches come in task completion order, not the DataFrame's row order (a relation
    is a multiset; `read_table` keeps the order). Without a JVM DataFrame (Spark
    Connect) it falls back to `toArrow()`. Abandoning the generator closes the socket
    and waits for Spark's sending thread to end.
    """
    jdf = getattr(df, "_jdf", None)
    if jdf is None or getattr(df, "_sc", None) is None:
        yield from df.toArrow().to_batches()
        return
    from pyspark.errors.exceptions.captured import unwrap_spark_exception
    from pyspark.sql.pandas.serializers import ArrowCollectSerializer
    from pyspark.traceback_utils import SCCallSiteSync
    from pyspark.util import _create_local_socket

    with SCCallSiteSync(df._sc):
        port, secret, server = jdf.collectAsArrowToPython()
    stream = _create_local_socket((port, secret))
    complete = False
    try:
        for item in ArrowCollectSerializer().load_stream(stream):
            if isinstance(item, pa.RecordBatch):  # the last item is the batches' row order
                yield item
        complete = True
    finally:
        stream.close()
        try:
            with unwrap_spark_exception():
                server.getResult()  # the sending thread's failure, if any
        except Exception:
            if complete:
                raise  # a consumer that stopped early caused the broken pipe itself


def read_encoded(spark, source: TableSource, symbols, on_rows=None, timings: dict | None = None) -> list[tuple[np.ndarray, dict]]:
    """`source` read by Spark and encoded as its batches arrive: `encode_dataframe` of
    `read_dataframe`. All or nothing: a value that does not fit raises `LoadError` before
    the caller inserted anything; its message names the row as `read_table` would (the
    table is then read again, in order, to find it). `timings` as for `encode_dataframe`
    ("spark" includes planning the read)."""
    began = time.perf_counter()
    df = read_dataframe(spark, source)
    if timings is not None:
        timings["spark"] = timings.get("spark", 0.0) + time.perf_counter() - began
    try:
        return encode_dataframe(df, source, symbols, on_rows, timings)
    except LoadError:
        list(encode_source(read_table(spark, source), source, symbols))  # raises with the row in table order
        raise


def encode_dataframe(df, source: TableSource, symbols, on_rows=None, timings: dict | None = None) -> list[tuple[np.ndarray, dict]]:
    """The (block, extras) list `encode_source` gives for the DataFrame `df` (columns as
    `read_dataframe` selects them), each batch encoded as it arrives from the JVM
    (`dataframe_batches`), so encoding overlaps Spark converting later partitions.
    `timings`, if given, gets "spark" (seconds waiting for Spark's batches: the job, the
    conversion to Arrow, the socket) and "encode" (seconds encoding) added. A Spark
    failure is a `LoadError`."""
    clock = time.perf_counter
    began = clock()
    batches = dataframe_batches(df)
    waited = 0.0

    def timed():
        nonlocal waited
        while True:
            t = clock()
            try:
                batch = next(batches)
            except StopIteration:
                waited += clock() - t
                return
            waited += clock() - t
            yield batch

    try:
        blocks = list(encode_source(timed(), source, symbols, on_rows=on_rows))
    except LoadError:
        batches.close()
        raise
    except Exception as e:
        batches.close()
        raise read_failure(source, source.format or detect_format(source.path), e, "Spark failed reading it") from None
    if timings is not None:
        timings["spark"] = timings.get("spark", 0.0) + waited
        timings["encode"] = timings.get("encode", 0.0) + (clock() - began - waited)
    return blocks


def encode_source(table, source: TableSource, symbols, chunk_rows: int = 1 << 20, on_rows=None):
    """Yield (block, extras) for `table` (an Arrow table, or an iterable of record batches
    with its columns): the (arity, n) int64 relation block and a dict of the extras' int64
    arrays, one block per group of consecutive batches of at least `chunk_rows` rows (a
    batch is never split). Each column is copied once, from the batch's Arrow buffer into
    its block row; blocks of 1,000,000 rows (16 MB for two columns) are large enough for
    numpy to ask for huge pages, so filling fresh memory takes 512x fewer page faults.
    `on_rows(n)` is called after each block. An empty table gives one empty block."""
    kinds = [c.kind for c in source.columns]
    arity = len(kinds)
    prefix = f"'{source.relation}': {source.path}: "
    batches = table.to_batches() if isinstance(table, pa.Table) else table
    group: list[pa.RecordBatch] = []
    rows = 0
    first_row = 0  # of the group, in the stream's order (the table's for a table)
    names = None
    for batch in batches:
        if names is None:
            names = batch.schema.names
        if batch.num_rows == 0:
            continue
        group.append(batch)
        rows += batch.num_rows
        if rows >= chunk_rows:
            yield _encode_group(group, rows, names, kinds, symbols, prefix, first_row)
            if on_rows is not None:
                on_rows(rows)
            first_row += rows
            group, rows = [], 0
    if group or first_row == 0:
        if names is None:
            names = table.schema.names if isinstance(table, pa.Table) else [c.name for c in source.columns + source.extras]
        yield _encode_group(group, rows, names, kinds, symbols, prefix, first_row)
        if on_rows is not None:
            on_rows(rows)


def _encode_group(group, n, names, kinds, symbols, prefix, first_row):
    arity = len(kinds)
    block = np.empty((arity, n), dtype=np.int64)
    extras = {name: np.empty(n, dtype=np.int64) for name in names[arity:]}
    at = first_row
    offset = 0
    for batch in group:
        end = offset + batch.num_rows
        for j, kind in enumerate(kinds):
            block[j, offset:end] = encode_column(batch.column(j), kind, symbols, f"{prefix}column '{names[j]}'", at)
        for i, name in enumerate(names[arity:]):
            extras[name][offset:end] = encode_column(batch.column(arity + i), "int", symbols, f"{prefix}column '{name}'", at)
        offset = end
        at += batch.num_rows
    return block, extras


def _first_line(e: Exception) -> str:
    text = str(e).strip().splitlines()
    text = [t for t in text if t.strip()]
    line = text[0] if text else type(e).__name__
    return line[:300]


def read_failure(source: TableSource, fmt: str, e: Exception, doing: str) -> LoadError:
    """A failed Spark read as one LoadError. Spark names neither the line nor what is wrong
    with it, so a local text table is read here to find its first malformed line; failing
    that, the message is Spark's own cause."""
    return LoadError(malformed_text(source, fmt) or f"'{source.relation}': {source.path}: {doing}: {spark_cause(e)}")


def malformed_text(source: TableSource, fmt: str) -> str | None:
    """"'rel': PATH: line N: what" for a local CSV, .facts or JSON-lines table with a
    malformed line, else None."""
    if not (is_local(source.path) and fmt in ("csv", "facts", "json")):
        return None
    local = local_path(source.path)
    try:
        bad = first_malformed_line(local, fmt, source.delimiter)
    except (OSError, UnicodeDecodeError) as err:
        bad = f"cannot read it as UTF-8 text: {err}"
    return f"'{source.relation}': {source.path}: {bad}" if bad else None


def spark_cause(e: Exception) -> str:
    """The informative line of a Spark failure. A Py4J error opens with the failed call
    ("An error occurred while calling o109.getResult."); the cause is the first line with
    Spark's error class ("[MALFORMED_RECORD_IN_PARSING] ..."), else the first exception line,
    without the Java class name and the SQLSTATE."""
    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
    if not lines:
        return type(e).__name__
    cause = next((line for line in lines if _ERROR_CLASS.search(line)), None) \
        or next((line for line in lines[1:] if _JAVA_EXCEPTION.match(line)), lines[0])
    cause = _JAVA_EXCEPTION.sub("", cause)
    return re.sub(r"\s*SQLSTATE: \w+\s*$", "", cause)[:300]


_ERROR_CLASS = re.compile(r"\[[A-Z][A-Z_]*(\.[A-Z_]+)?\]")
_JAVA_EXCEPTION = re.compile(r"^(: |Caused by: )?([\w$]+\.)+[\w$]*(Exception|Error): ")


def first_malformed_line(path: str, fmt: str, delimiter: str = "\t") -> str | None:
    """Where the local text table at `path` (a file or a directory of part files) first
    breaks its format, as "FILE: line N: what"; None when every line parses. CSV records
    must have the header's number of fields, .facts rows the first row's number of
    fields separated by `delimiter`, and JSON lines must each be one object; blank lines are skipped,
    as Spark skips them."""
    import csv
    import json

    files = [path] if os.path.isfile(path) else sorted(
        str(f) for f in Path(path).rglob("*") if f.is_file() and not f.name.startswith((".", "_")))
    for file in files:
        name = file if len(files) > 1 else ""
        at = f"{name}: line" if name else "line"
        with open(file, encoding="utf-8", newline="") as fh:
            if fmt == "csv":
                reader = csv.reader(fh)
                header = next(reader, None)
                for record in reader:
                    if record and len(record) != len(header):
                        return f"{at} {reader.line_num}: {_fields(len(record))}, the header has {len(header)}"
            elif fmt == "facts":
                width = first = None
                for number, line in enumerate(fh, 1):
                    line = line.rstrip("\r\n")
                    if not line.strip():
                        continue
                    fields = line.count(delimiter) + 1
                    if width is None:
                        width, first = fields, number
                    elif fields != width:
                        separated = "tab-separated" if delimiter == "\t" else f"separated by {delimiter!r}"
                        return f"{at} {number}: {_fields(fields)} ({separated}), line {first} has {width}"
            else:
                for number, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    try:
                        value = json.loads(line.rstrip("\r\n"))
                    except ValueError as err:
                        return f"{at} {number}: not valid JSON ({err.msg}, column {err.colno})"
                    if not isinstance(value, dict):
                        return f"{at} {number}: a JSON {type(value).__name__}, not an object"
    return None


def _fields(n: int) -> str:
    return f"{n} field" if n == 1 else f"{n} fields"


__all__ = [
    "ColumnSpec", "TableSource", "FORMATS", "check_source", "dataframe_batches", "detect_format", "map_columns",
    "read_arrow", "read_dataframe", "read_encoded", "encode_dataframe", "read_table", "encode_source", "is_local",
    "first_malformed_line", "local_path", "malformed_text", "read_failure", "spark_cause",
]
