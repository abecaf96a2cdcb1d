"""Where an output goes, as its `.output` directive's Soufflé options say.

`.output r(IO=stdout)` prints `r` even when the other outputs are written to
`--output-dir`. `.output r(filename="r.csv", delimiter=",", headers=true)`
writes `r` as a Soufflé fact file (runtime.spark.facts) at that path,
relative to `--output-dir` (Soufflé's -D), instead of the directory
`--output-dir/r/` in `--format`; with `IO=file`, `delimiter` or `headers` but
no `filename`, at `r.csv`, as Soufflé names it. With `rfc4180=true` the file is
CSV as RFC 4180 says and as Soufflé writes it: a comma between fields unless
`delimiter` says otherwise, every symbol in double quotes (a quote written twice),
and a record or ADT value, its symbols quoted, in double quotes as one field.
`IO=json` prints the relation as JSON, `IO=jsonfile` writes it to `filename` (`r.json`
without one), as Soufflé does: an array of rows, each an array of its values (with
`format=object`, an object by attribute names), a record an array of its fields (an
object by field names) and `nil` null; an ADT value is its text in a string.
Without these options an output is written as the command's --format says.
"""

from __future__ import annotations

import json
import os

from compiler.cli.common import UserError


_FACT_FILE_OPTIONS = frozenset({"filename", "delimiter", "headers", "rfc4180"})


def directives(program, name: str) -> tuple[dict, ...]:
    """The options of each `.output` of `name` (one without options for a relation shown without
    one, or a change log such as "r.changes")."""
    return getattr(program.relations.get(name), "outputs", ()) or ({},)


def printed(options: dict) -> bool:
    """Whether an `.output` prints its relation whatever the format (`IO=stdout`, `IO=json`)."""
    return options.get("IO") in ("stdout", "json")


def to_fact_file(options: dict) -> bool:
    """Whether an `.output` writes a Soufflé fact file (not a table in the command's --format)."""
    return bool(_FACT_FILE_OPTIONS & options.keys()) or options.get("IO") in ("file", "jsonfile")


def printed_text(program, name: str, options: dict, result) -> str:
    """What an `.output` that prints shows: JSON for `IO=json`, else an aligned table."""
    from runtime.spark.write import format_text

    if options.get("IO") == "json":
        return json_text(program, name, options, result)
    return format_text(name, result.arrow(records_as_text=True))


def json_text(program, name: str, options: dict, result) -> str:
    """The relation as Soufflé's JSON writers write it (see the module)."""
    info = program.relations[name]
    objects = options.get("format") == "object"
    rows = []
    for row in result.fetchall():
        values = [_json_value(v, k, objects) for v, k in zip(row, info.kinds)]
        if objects:
            rows.append("{" + ", ".join(f"{json.dumps(a)}: {v}" for a, v in zip(info.attribute_names, values)) + "}")
        else:
            rows.append("[" + ", ".join(values) + "]")
    return "[" + ",\n".join(rows) + "]"


def _json_value(value, kind, objects: bool) -> str:
    from compiler.datalog.types import ADTType, RecordType
    from compiler.values import to_text

    if isinstance(kind, RecordType):
        if value is None:
            return "null"
        fields = [(f, _json_value(v, k, objects)) for v, (f, k) in zip(value, kind.fields)]
        if objects:
            return "{" + ", ".join(f"{json.dumps(f)}: {v}" for f, v in fields) + "}"
        return "[" + ", ".join(v for _, v in fields) + "]"
    if isinstance(kind, ADTType):
        return json.dumps(to_text(value, kind))
    return json.dumps(value)


def write_fact_file(program, name: str, options: dict, result, output_dir: str) -> str:
    """Write the output `name` (a compiler.results.Result) as the fact file `options` ask for,
    and return its path."""
    from runtime.spark.read import is_local, local_path

    filename = options.get("filename", f"{name}.json" if options.get("IO") == "jsonfile" else f"{name}.csv")
    if not is_local(output_dir):
        raise UserError(f"'{name}': .output to the fact file {filename} is written on this machine, not to {output_dir}")
    path = os.path.join(local_path(output_dir), filename)
    try:
        if options.get("IO") == "jsonfile":
            _write_text(path, json_text(program, name, options, result) + "\n")
        else:
            _write_fact_rows(path, program.relations[name], options, result)
    except OSError as err:
        raise UserError(f"'{name}': cannot write {path}: {err.strerror}") from None
    return path


def _write_text(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def _write_fact_rows(path: str, info, options: dict, result) -> None:
    """The rows as delimited text: as Soufflé writes with rfc4180=true, else fields as they are."""
    from runtime.spark.facts import write_facts

    header = tuple(info.attribute_names) if options.get("headers") == "true" else None
    if options.get("rfc4180") == "true":
        rows = ([_csv_field(value, kind) for value, kind in zip(row, info.kinds)] for row in result.fetchall())
        delimiter = options.get("delimiter", ",")
    else:
        table = result.arrow(records_as_text=True)
        rows = zip(*(table.column(i).to_pylist() for i in range(table.num_columns))) if table.num_columns else ()
        delimiter = options.get("delimiter", "\t")
    write_facts(path, rows, delimiter, header)


def _csv_field(value, kind) -> str:
    """One field of an rfc4180 output: a symbol, or a record or ADT value's text with its symbols
    quoted, in double quotes; a number as it is."""
    from compiler.datalog.types import is_structured
    from compiler.values import to_text

    if kind == "symbol" or is_structured(kind):
        text = value if kind == "symbol" else to_text(value, kind, quote_symbols=True)
        return '"' + text.replace('"', '""') + '"'
    return str(value)
