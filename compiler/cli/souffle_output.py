"""Where an output goes, as its `.output` directive's Soufflé options say.

`.output r(IO=stdout)` prints `r` even when the other outputs are written to
`--output-dir`. `.output r(filename="r.csv", delimiter=",", headers=true)`
writes `r` as a Soufflé fact file (runtime.spark.facts) at that path,
relative to `--output-dir` (Soufflé's -D), instead of the directory
`--output-dir/r/` in `--format`; with `IO=file`, `delimiter` or `headers` but
no `filename`, at `r.csv`, as Soufflé names it. Without these options an output
is written as the command's --format says.
"""

from __future__ import annotations

import os

from compiler.cli.common import UserError


_FACT_FILE_OPTIONS = frozenset({"filename", "delimiter", "headers"})


def _options(program, name: str) -> dict:
    info = program.relations.get(name)  # None for a change log such as "r.changes"
    return getattr(info, "output_options", {}) if info is not None else {}


def printed(program, name: str) -> bool:
    """Whether the output `name` is printed whatever the format (`IO=stdout`)."""
    return _options(program, name).get("IO") == "stdout"


def write_fact_file(program, name: str, table, output_dir: str) -> str | None:
    """Write the output `name` (an Arrow table) as the fact file its options ask for, and
    return its path; None if they ask for none."""
    from runtime.spark.facts import write_facts
    from runtime.spark.read import is_local, local_path

    options = _options(program, name)
    if not (_FACT_FILE_OPTIONS & options.keys() or options.get("IO") == "file"):
        return None
    filename = options.get("filename", f"{name}.csv")
    if not is_local(output_dir):
        raise UserError(f"'{name}': .output to the fact file {filename} is written on this machine, not to {output_dir}")
    path = os.path.join(local_path(output_dir), filename)
    header = tuple(program.relations[name].attribute_names) if options.get("headers") == "true" else None
    rows = zip(*(table.column(i).to_pylist() for i in range(table.num_columns))) if table.num_columns else ()
    try:
        write_facts(path, rows, options.get("delimiter", "\t"), header)
    except OSError as err:
        raise UserError(f"'{name}': cannot write {path}: {err.strerror}") from None
    return path
