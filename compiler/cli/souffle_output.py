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
Without these options an output is written as the command's --format says.
"""

from __future__ import annotations

import os

from compiler.cli.common import UserError


_FACT_FILE_OPTIONS = frozenset({"filename", "delimiter", "headers", "rfc4180"})


def directives(program, name: str) -> tuple[dict, ...]:
    """The options of each `.output` of `name` (one without options for a relation shown without
    one, or a change log such as "r.changes")."""
    return getattr(program.relations.get(name), "outputs", ()) or ({},)


def printed(options: dict) -> bool:
    """Whether an `.output` prints its relation whatever the format (`IO=stdout`)."""
    return options.get("IO") == "stdout"


def to_fact_file(options: dict) -> bool:
    """Whether an `.output` writes a Soufflé fact file (not a table in the command's --format)."""
    return bool(_FACT_FILE_OPTIONS & options.keys()) or options.get("IO") == "file"


def write_fact_file(program, name: str, options: dict, result, output_dir: str) -> str:
    """Write the output `name` (a compiler.results.Result) as the fact file `options` ask for,
    and return its path."""
    from runtime.spark.facts import write_facts
    from runtime.spark.read import is_local, local_path

    filename = options.get("filename", f"{name}.csv")
    if not is_local(output_dir):
        raise UserError(f"'{name}': .output to the fact file {filename} is written on this machine, not to {output_dir}")
    path = os.path.join(local_path(output_dir), filename)
    info = program.relations[name]
    header = tuple(info.attribute_names) if options.get("headers") == "true" else None
    if options.get("rfc4180") == "true":
        rows = ([_csv_field(value, kind) for value, kind in zip(row, info.kinds)] for row in result.fetchall())
        delimiter = options.get("delimiter", ",")
    else:
        table = result.arrow(records_as_text=True)
        rows = zip(*(table.column(i).to_pylist() for i in range(table.num_columns))) if table.num_columns else ()
        delimiter = options.get("delimiter", "\t")
    try:
        write_facts(path, rows, delimiter, header)
    except OSError as err:
        raise UserError(f"'{name}': cannot write {path}: {err.strerror}") from None
    return path


def _csv_field(value, kind) -> str:
    """One field of an rfc4180 output: a symbol, or a record or ADT value's text with its symbols
    quoted, in double quotes; a number as it is."""
    from compiler.datalog.types import is_structured
    from compiler.values import to_text

    if kind == "symbol" or is_structured(kind):
        text = value if kind == "symbol" else to_text(value, kind, quote_symbols=True)
        return '"' + text.replace('"', '""') + '"'
    return str(value)
