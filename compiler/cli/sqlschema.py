"""The schema of a SQL program, read from its input tables.

SQL needs every table's columns and types before it compiles (the Datalog
front end declares or infers them instead). `sql_schema([(name, path)])`
reads them from the tables themselves, without Spark for local files:
Parquet and JSON lines from their Arrow schema, CSV with a header from the
types Arrow infers from the first rows. Soufflé `.facts` files carry neither
names nor types and cannot define a SQL table.
"""

from __future__ import annotations

import os
from pathlib import Path

from compiler.cli.common import UserError

_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json", ".facts": "facts"}


def sql_schema(tables) -> dict[str, dict[str, str]]:
    return {name: table_columns(name, path) for name, path in tables}


def table_columns(name: str, path: str) -> dict[str, str]:
    import pyarrow as pa

    from runtime.spark.read import first_malformed_line, is_local, local_path

    if not is_local(path):
        raise UserError(f"'{name}': {path}: a SQL program's tables must be local files (their schema is read to compile it)")
    local = local_path(path)
    if not os.path.exists(local):
        raise UserError(f"'{name}': {path}: no such file or directory")
    files = [Path(local)] if os.path.isfile(local) else sorted(
        f for f in Path(local).rglob("*") if f.is_file() and not f.name.startswith((".", "_")) and f.suffix.lower() in _SUFFIXES
    )
    if not files:
        raise UserError(f"'{name}': {path}: no data files")
    fmt = _SUFFIXES.get(files[0].suffix.lower())
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            schema = pq.read_schema(files[0])
        elif fmt == "csv":
            import pyarrow.csv as pcsv

            schema = pcsv.open_csv(files[0]).schema
        elif fmt == "json":
            import pyarrow.json as pjson

            schema = pjson.read_json(files[0]).schema
        else:
            raise UserError(f"'{name}': {path}: a SQL table needs column names and types (Parquet, CSV with a header, or JSON lines)")
    except (pa.ArrowInvalid, OSError) as e:
        try:
            bad = first_malformed_line(local, fmt) if fmt in ("csv", "json") else None
        except (OSError, UnicodeDecodeError):
            bad = None
        raise UserError(f"'{name}': {path}: {bad or 'cannot read its schema: ' + str(e).splitlines()[0]}") from None
    columns = {}
    for field in schema:
        t = field.type
        if pa.types.is_boolean(t):
            sql = "boolean"
        elif pa.types.is_integer(t):
            sql = "bigint"
        elif pa.types.is_floating(t) or pa.types.is_decimal(t):
            sql = "double"
        elif pa.types.is_string(t) or pa.types.is_large_string(t):
            sql = "text"
        elif pa.types.is_null(t):
            raise UserError(f"'{name}': {path}: column '{field.name}' has no values to take its type from (SQL reads a CSV or JSON"
                            f" table's column types from its rows): give the table at least one row, or as Parquet, whose columns are typed")
        else:
            raise UserError(f"'{name}': {path}: column '{field.name}' has type {t}, which SQL tables here cannot hold")
        columns[field.name] = sql if field.nullable else sql + " not null"  # compile_sql matches names by case-folded keys
    return columns
