"""Where an output goes, as its `.output` directive's Soufflé options say.

`.output r(IO=stdout)` prints `r` even when the other outputs are written to
`--output-dir`. `.output r(filename="r.csv", delimiter=",", headers=true)`
writes `r` as a Soufflé fact file (runtime.spark.facts) at that path,
relative to `--output-dir` (Soufflé's -D), instead of the directory
`--output-dir/r/` in `--format`. Without these options an output is
written as the command's --format says.
"""

from __future__ import annotations

import os

from compiler.cli.common import UserError


def _options(program, name: str) -> dict:
    info = program.relations.get(name)  # None for a change log such as "r.changes"
    return getattr(info, "output_options", {}) if info is not None else {}


def printed(program, name: str) -> bool:
    """Whether the output `name` is printed whatever the format (`IO=stdout`)."""
    return _options(program, name).get("IO") == "stdout"


def write_fact_file(program, name: str, table, output_dir: str) -> bool:
    """Write the output `name` (an Arrow table) where its `filename=` says; False if it has none."""
    from runtime.spark.facts import write_facts
    from runtime.spark.read import is_local, local_path

    options = _options(program, name)
    if "filename" not in options:
        return False
    if not is_local(output_dir):
        raise UserError(f"'{name}': .output filename={options['filename']} is written on this machine, not to {output_dir}")
    path = os.path.join(local_path(output_dir), options["filename"])
    header = tuple(program.relations[name].attribute_names) if options.get("headers") == "true" else None
    rows = zip(*(table.column(i).to_pylist() for i in range(table.num_columns))) if table.num_columns else ()
    try:
        write_facts(path, rows, options.get("delimiter", "\t"), header)
    except OSError as err:
        raise UserError(f"'{name}': cannot write {path}: {err.strerror}") from None
    return True
