"""Soufflé's fact files, read and written as Soufflé does, without Spark.

A fact file is delimited text: one row per line, fields separated by the
delimiter (a tab unless `.input r(delimiter=",")` says otherwise; any string, as
Soufflé takes it), no quoting
and no escapes, so a field is exactly the text between delimiters. Hence an
empty field is the empty symbol (not a missing value), and an empty file (or
one of blank lines only) is an empty relation. With `headers=true` the first
line names the columns; the relation's columns then map by name when every
declared name is there, else by position, as for other tables
(`runtime.spark.read.map_columns`). With `rfc4180=true` (`TableSource.quoted`) a
field may be in double quotes, as RFC 4180 says: it may then hold the delimiter
and line breaks, and a quote is written twice. Every value is read as text and
converted when encoded (`runtime.spark.arrow.encode_column`), so the same
file gives the same rows through the CLI (either reader) and through
`Session.load_facts`. Spark reads fact files only at paths this machine cannot
open (`runtime.spark.read.read_dataframe`, with the same options).
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv

from runtime.spark.arrow import LoadError
from runtime.spark.read import TableSource, first_malformed_line, local_path, map_columns


def read_facts(source: TableSource) -> pa.Table:
    """The local fact file (or directory of part files) of `source` as an Arrow table of
    text columns: the relation's columns, then its extras; LoadError if a line does not fit."""
    where = f"'{source.relation}': {source.path}"
    path = local_path(source.path)
    if not os.path.exists(path):
        raise LoadError(f"{where}: no such file or directory")
    files = [path] if os.path.isfile(path) else sorted(
        str(f) for f in Path(path).rglob("*") if f.is_file() and not f.name.startswith((".", "_")))
    parts = [part for file in files if (part := _read_file(file, source, where)) is not None]
    wanted = [c.name for c in source.columns + source.extras]
    if not parts:
        return pa.table({name: pa.array([], pa.string()) for name in wanted})
    return pa.concat_tables(parts)


def _read_file(file: str, source: TableSource, where: str) -> pa.Table | None:
    """One fact file's rows as text columns named as `source` wants them; None when it has no rows."""
    if source.quoted:
        table = _read_quoted(file, source, where)
    else:
        with open(file, encoding="utf-8", newline="") as fh:
            number, first = next(((n, line) for n, line in enumerate(fh, 1) if line.strip("\r\n")), (0, None))
        if first is None:
            return None
        fields = first.rstrip("\r\n").split(source.delimiter)
        _check_width(fields, number, file, source, where)
        names = fields if source.header else [f"_{i}" for i in range(len(fields))]
        table = (_split_lines if len(source.delimiter) > 1 else _read_by_arrow)(file, source, names, where)
    if table is None:
        return None
    picked, out_names = map_columns(table.column_names, source, "csv" if source.header else "facts", where)
    return table.select(picked).rename_columns(out_names)


def _check_width(fields: list[str], number: int, file: str, source: TableSource, where: str) -> None:
    """The first row of a file without a header has one field per column (the optional extras may be missing)."""
    arity = len(source.columns) + len(source.extras)
    if not source.header and len(fields) != arity and len(fields) != arity - len(source.optional_extras):
        raise LoadError(f"{where}: {_at(file, source)} {number}: {len(fields)} fields, but '{source.relation}' has {len(source.columns)} columns")


def _at(file: str, source: TableSource) -> str:
    return f"{file}: line" if file != local_path(source.path) else "line"


def _read_quoted(file: str, source: TableSource, where: str) -> pa.Table | None:
    """A fact file of RFC 4180 fields, read by Python's csv module (Arrow's reader cannot say
    on which line a quoted field breaks the file); None when it has no rows."""
    import csv

    records, ends = [], []
    with open(file, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter=source.delimiter, quotechar='"', doublequote=True, strict=True)
        try:
            for record in reader:
                if record:  # (a blank line)
                    records.append(record)
                    ends.append(reader.line_num)
        except csv.Error as err:
            raise LoadError(f"{where}: {_at(file, source)} {reader.line_num}: {err}") from None
    if not records:
        return None
    _check_width(records[0], ends[0], file, source, where)
    names = records[0] if source.header else [f"_{i}" for i in range(len(records[0]))]
    body = zip(records[1:], ends[1:]) if source.header else zip(records, ends)
    rows = []
    for record, end in body:
        if len(record) != len(names):
            raise LoadError(f"{where}: {_at(file, source)} {end}: {len(record)} fields, but the first row has {len(names)}")
        rows.append(record)
    return pa.table({name: pa.array([row[i] for row in rows], pa.string()) for i, name in enumerate(names)})


def _read_by_arrow(file: str, source: TableSource, names: list[str], where: str) -> pa.Table:
    """A fact file with a one-character delimiter, split by Arrow's reader."""
    try:
        return pacsv.read_csv(
            file,
            read_options=pacsv.ReadOptions(column_names=None if source.header else names),
            parse_options=pacsv.ParseOptions(delimiter=source.delimiter, quote_char=False, escape_char=False),
            convert_options=pacsv.ConvertOptions(
                column_types={name: pa.string() for name in names}, strings_can_be_null=False, null_values=[]),
        )
    except pa.ArrowInvalid as err:
        bad = first_malformed_line(file, "facts", source.delimiter)
        raise LoadError(f"{where}: {bad or str(err).splitlines()[0]}") from None


def _split_lines(file: str, source: TableSource, names: list[str], where: str) -> pa.Table:
    """A fact file whose delimiter is several characters (Soufflé takes any string; Arrow's
    reader one character): its lines split here, the same rows Arrow gives for one character."""
    bad = first_malformed_line(file, "facts", source.delimiter)
    if bad is not None:
        raise LoadError(f"{where}: {bad}")
    with open(file, encoding="utf-8", newline="") as fh:
        rows = [line.rstrip("\r\n").split(source.delimiter) for line in fh if line.strip("\r\n")]
    rows = rows[1:] if source.header else rows
    return pa.table({name: pa.array([row[i] for row in rows], pa.string()) for i, name in enumerate(names)})


def write_facts(path: str, rows, delimiter: str = "\t", header: tuple[str, ...] | None = None) -> None:
    """Write rows as a Soufflé fact file at the local `path` (a header line first if given)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        if header is not None:
            fh.write(delimiter.join(header) + "\n")
        for row in rows:
            fh.write(delimiter.join(str(value) for value in row) + "\n")


__all__ = ["read_facts", "write_facts"]
