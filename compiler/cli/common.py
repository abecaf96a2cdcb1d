"""What every command shares: loading the program, user errors, Spark settings.

`UserError` is a mistake in what the user gave (a file, a column, a value, a
program): the command prints its one line and exits 1. `UsageError` is a bad
command line: exit 2. A program file is compiled by its suffix: `.dl` with
the Datalog front end, `.sql` with the SQL front end (`compiler.compile_sql`,
imported only when needed).
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path


class UserError(Exception):
    """A user mistake, reported as one line, exit code 1."""


class UsageError(Exception):
    """A bad command line, exit code 2."""


_SQL_OPTIONS: dict = {}  # compile_sql's options from the command line (set by `compile_options`)


@contextmanager
def compile_options(**sql_options):
    """While a command runs: the options `load_program` compiles SQL with (the command
    line's --recursion-limit), so each command module need not pass them along."""
    before = dict(_SQL_OPTIONS)
    _SQL_OPTIONS.update(sql_options)
    try:
        yield
    finally:
        _SQL_OPTIONS.clear()
        _SQL_OPTIONS.update(before)


def load_program(path: str, tables=(), join_plan: str = "auto", include_dirs=(), untyped=None):
    """The compiled program at `path` (.dl or .sql); raises CompileError or UserError.

    A Datalog program's `#include` files are searched next to the including file, then
    in `include_dirs` (the commands' -I).

    A SQL program's schema comes from its tables: `tables` is [(name, path)] and each
    table's column names and types are read from the file (compiler.cli.sqlschema);
    `untyped` (name -> path) are .facts files found beside them, which cannot be SQL tables:
    a table the program asks for that is one of them is an error saying so.
    `join_plan` (auto, binary or delta) is the planner's choice for multiway joins."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as err:
        raise UserError(f"cannot read {path}: {err.strerror}") from None
    if p.suffix.lower() == ".sql":
        try:
            from compiler import compile_sql
        except ImportError:
            raise UserError(f"{path}: SQL programs are not supported by this build (no compiler.compile_sql)") from None
        from compiler.cli.sqlschema import sql_schema
        from compiler.errors import UnknownRelationError

        try:
            return compile_sql(text, schema=sql_schema(tables), source_name=str(path), join_plan=join_plan, **_SQL_OPTIONS)
        except UnknownRelationError as err:
            wanted = re.match(r"unknown table '([^']*)'", err.message)
            untyped = untyped or {}
            if wanted and wanted.group(1) in untyped:
                raise UserError(f"'{wanted.group(1)}': {untyped[wanted.group(1)]}: a .facts file has no column names or types,"
                                " which a SQL program's table needs (give it as Parquet, CSV with a header, or JSON lines)") from None
            raise
    from compiler.program import compile_datalog

    return compile_datalog(text, source_name=str(path), include_dirs=include_dirs, join_plan=join_plan)


def parse_assignments(values, what: str) -> list[tuple[str, str]]:
    """`name=value` pairs from repeated options, in order."""
    pairs = []
    for item in values or ():
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise UsageError(f"{what} takes NAME=VALUE, not {item!r}")
        pairs.append((name.strip(), value.strip()))
    return pairs


def spark_provider(args):
    from runtime.spark import SparkProvider

    conf = dict(parse_assignments(getattr(args, "conf", None), "--conf"))
    return SparkProvider(master=getattr(args, "master", None), conf=conf)


def shown_outputs(program) -> list[str]:
    """The outputs whose rows a command prints or writes: all but those named only by
    `.printsize` (whose size alone is printed, as Soufflé does)."""
    return [r for r in program.outputs if r not in program.printsizes or program.relations[r].is_output]


def print_sizes(program, size_of) -> None:
    """Soufflé's `.printsize` lines, `relation<TAB>size`, for `size_of(relation)` rows."""
    for rel in program.printsizes:
        print(f"{rel}\t{size_of(rel)}")


def is_sql(program) -> bool:
    """SQL programs keep SQL rows (NULLs, bags): they take the per-row input path."""
    return not all(hasattr(info, "types") for info in program.relations.values())
