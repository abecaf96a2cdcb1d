"""Binding a program's relations to tables, and loading tables into a session.

`columns(program, rel)` gives a relation's columns as Spark I/O sees them
(declared attribute names, runtime kinds). `pushdown(program)` finds, for
each input relation, a Spark SQL predicate that every reader of the relation
applies anyway: when every Scan of the input in the optimized plan sits
directly under a Filter, the disjunction over those Filters of their simple
conjuncts (column compared with a number or string constant) drops only rows
no reader keeps, so Spark can skip them at the scan. The plan still applies
its filters; the pushed predicate only saves transfer.

`Loader` reads `TableSource`s with Spark (started on first use), or local
ones with pyarrow alone (`reader="arrow"`: runtime.spark.read.read_arrow), and feeds
the session the encoded columns in bulk (`Session.update_columns`), with a
progress bar on a terminal for large tables, and keeps the time spent in
Spark and in the transfer to the runtime. Soufflé fact files on this machine
are read as Soufflé reads them (runtime.spark.facts), whatever the reader,
with the `delimiter` and `headers` of the relation's `.input`: a `.facts`
file, and the file an `.input r(filename=...)` names.
"""

from __future__ import annotations

import os
import sys
import time as clock
from pathlib import Path

from compiler.lowering.columns import COLUMN_KINDS as KIND
from compiler.plan.expr import Call, Col, Const
from compiler.plan.nodes import Filter, Scan
from compiler.plan.program import Fixpoint
from compiler.cli.common import UserError, is_sql

_SQL_OPS = {"=": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
PROGRESS_ROWS = 1_000_000  # tables at least this large get a progress bar on a terminal


SQL_KIND = {"int": "int", "float": "float", "text": "str", "bool": "bool"}


def columns(program, relation: str):
    from runtime.spark import ColumnSpec

    info = program.relations[relation]
    if not hasattr(info, "types"):  # a SQL relation
        return tuple(ColumnSpec(n, SQL_KIND[t]) for n, t in zip(info.attribute_names, info.sql_types))
    return tuple(ColumnSpec(n, KIND[t]) for n, t in zip(info.attribute_names, info.types))


def text_columns(program, relation: str, rows: list[tuple]) -> tuple[tuple, list[tuple]]:
    """The relation's columns and `rows` (with anything after its columns) for writing as a
    table: records and ADT values as Soufflé's text (string columns)."""
    specs = columns(program, relation)
    kinds = getattr(program.relations[relation], "kinds", ())
    text = [j for j, kind in enumerate(kinds) if not isinstance(kind, str)]
    if not text:
        return specs, rows
    from compiler.values import to_text
    from runtime.spark import ColumnSpec

    specs = tuple(ColumnSpec(c.name, "str") if j in text else c for j, c in enumerate(specs))
    return specs, [tuple(to_text(v, kinds[j]) if j in text else v for j, v in enumerate(row)) for row in rows]


def input_relation(program, name: str) -> str:
    info = program.relations.get(name)
    if info is None or not info.is_input:
        known = ", ".join(program.inputs) or "none"
        what = "is not an input relation: rules of the program define it" if info is not None else "is not a relation of the program"
        raise UserError(f"'{name}' {what} (inputs: {known})")
    return name


# ---- filter pushdown ----


def pushdown(program) -> dict[str, str]:
    """{input: Spark SQL predicate over its declared column names} where one is safe."""
    if is_sql(program):
        return {}  # SQL plans keep values and NULL flags in separate columns
    uses: dict[str, list] = {}
    seen: set[int] = set()

    def visit(node, parent):
        if isinstance(node, Scan):
            uses.setdefault(node.name, []).append(parent.predicate if isinstance(parent, Filter) else None)
            return
        if id(node) in seen:
            return
        seen.add(id(node))
        for child in node.children():
            visit(child, node)

    plan = program.plan
    for step in plan.steps:
        for b in step.bindings if isinstance(step, Fixpoint) else (step,):
            visit(b.body, None)
    pushed = {}
    for name, predicates in uses.items():
        info = program.relations.get(name)
        if info is None or info.is_output or None in predicates:
            continue
        parts = [_conjuncts_sql(p, info.attribute_names) for p in predicates]
        if all(parts):
            alternatives = list(dict.fromkeys(parts))
            pushed[name] = alternatives[0] if len(alternatives) == 1 else " OR ".join(f"({a})" for a in alternatives)
    return pushed


def _conjuncts_sql(predicate, names) -> str | None:
    parts = []
    stack = [predicate]
    while stack:
        p = stack.pop()
        if isinstance(p, Call) and p.op == "and":
            stack.extend(reversed(p.args))
            continue
        sql = _comparison_sql(p, names)
        if sql is not None:
            parts.append(sql)
    return " AND ".join(parts) if parts else None


def _comparison_sql(p, names) -> str | None:
    if not (isinstance(p, Call) and p.op in _SQL_OPS and len(p.args) == 2):
        return None
    a, b = p.args
    op = p.op
    if isinstance(a, Const) and isinstance(b, Col):
        a, b = b, a
        op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op)
    if not (isinstance(a, Col) and isinstance(b, Const)) or a.type not in ("number", "symbol") or a.type != b.type:
        return None
    if a.type == "symbol":
        literal = "'" + b.value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    else:
        literal = str(int(b.value))
    return f"`{names[a.index]}` {_SQL_OPS[op]} {literal}"


# ---- loading ----


class Loader:
    """Reads tables with Spark and feeds them to a session; keeps timings."""

    def __init__(self, session, spark, pushed: dict[str, str] | None = None, progress: bool | None = None, reader: str = "spark"):
        self.session = session
        self.reader = reader  # "spark", or "arrow": local tables read by pyarrow, no Spark
        self.spark = spark  # a runtime.spark.SparkProvider
        self.pushed = pushed or {}
        self.progress = sys.stderr.isatty() if progress is None else progress
        self.on_rows = None  # if set, called with the rows of each block read (instead of the bars)
        self.spark_seconds = 0.0
        self.transfer_seconds = 0.0
        self.rows = 0

    def source(self, relation: str, path: str, fmt: str | None = None, changes: bool = False):
        return make_source(self.session.program, relation, path, fmt, changes, self.pushed)

    def read(self, source):
        """The Arrow table of `source` (Spark's part of a load)."""
        from runtime.spark import LoadError, read_table

        from runtime.spark.read import check_source, read_arrow

        try:
            check_source(source)  # a missing file or unmappable columns fail before Spark starts
        except LoadError as e:
            raise UserError(str(e)) from None
        began = clock.perf_counter()
        if _local_facts(source) or self._arrow_local(source):
            try:
                table = read_arrow(source)
            except LoadError as e:
                raise UserError(str(e)) from None
            self.spark_seconds += clock.perf_counter() - began
            return table
        spark = self._spark()
        try:
            table = read_table(spark, source)
        except LoadError as e:
            raise UserError(str(e)) from None
        self.spark_seconds += clock.perf_counter() - began
        return table

    def feed(self, source, table, time=None, diff=1) -> int:
        """Encode `table` and add it to the session (diff and time columns override the defaults)."""
        from compiler.program import encode_records
        from runtime.spark import LoadError
        from runtime.spark.read import encode_source

        began = clock.perf_counter()
        symbols = self.session.dataflow.symbols
        n = table.num_rows
        if is_sql(self.session.program):
            self._feed_rows(source, table, time, diff)
            self.transfer_seconds += clock.perf_counter() - began
            self.rows += n
            return n
        bar = _Progress(f"loading {source.relation}", n) if self.progress and not self.on_rows and n >= PROGRESS_ROWS else None
        try:  # every block encoded before any is inserted: a bad value inserts nothing
            if _has_records(self.session.program, source.relation):
                table = encode_records(table, self.session.program.relations[source.relation], symbols, f"'{source.relation}': {source.path}")
            blocks = list(encode_source(table, source, symbols, on_rows=self.on_rows or (bar.advance if bar else None)))
        except LoadError as e:
            raise UserError(str(e)) from None
        finally:
            if bar:
                bar.close()
        self._insert_all(source, blocks, diff, time)
        self.transfer_seconds += clock.perf_counter() - began
        self.rows += n
        return n

    def _feed_rows(self, source, table, time, diff) -> None:
        """SQL inputs: rows as Python values (NULLs as None), through the SQL session's checks."""
        from compiler.program import SessionError
        from runtime.spark import LoadError
        from runtime.spark.arrow import encode_column

        arity = len(source.columns)
        names = table.column_names
        rows = list(zip(*(table.column(i).to_pylist() for i in range(arity)))) if arity else []
        try:  # one submission: a bad row, a closed time or a removal of what is not there refuses all
            diffs, times = (encode_column(table.column(name), "int", None, f"'{source.relation}': {source.path}: column '{name}'")
                            if name in names else default for name, default in (("diff", diff), ("time", time)))
            block = self.session.encode_rows(source.relation, rows)
            self.session.update_columns(source.relation, block, diffs, times)
        except SessionError as e:
            raise UserError(located(source, e)) from None
        except LoadError as e:
            raise UserError(str(e)) from None

    def load(self, relation: str, path: str, fmt: str | None = None, time=None, diff=1) -> int:
        source = self.source(relation, path, fmt)
        if self._arrow_local(source) or _local_facts(source) or is_sql(self.session.program) or _has_records(self.session.program, relation):
            return self.feed(source, self.read(source), time=time, diff=diff)
        return self._stream(source, time, diff)

    def _spark(self):
        """The Spark session, started on first use. Without a usable Java that is
        SparkUnavailable (its message says how to get one); other failures are one line."""
        from runtime.spark.session import SparkUnavailable

        try:
            return self.spark.get()
        except SparkUnavailable:
            raise
        except Exception as e:
            raise UserError(f"cannot start Spark ({type(e).__name__}): {str(e).strip().splitlines()[0] if str(e).strip() else ''}") from None

    def _arrow_local(self, source) -> bool:
        from runtime.spark.read import is_local

        return self.reader == "arrow" and is_local(source.path)

    def _stream(self, source, time, diff) -> int:
        """Spark reads `source`; its Arrow batches are encoded as they arrive (while Spark
        converts later partitions), then inserted at once (nothing on an error)."""
        from runtime.spark import LoadError
        from runtime.spark.read import check_source, read_encoded

        try:
            check_source(source)  # a missing file or unmappable columns fail before Spark starts
        except LoadError as e:
            raise UserError(str(e)) from None
        spark = self._spark()
        bar = _LazyProgress(f"loading {source.relation}") if self.progress and not self.on_rows else None
        timings: dict[str, float] = {}
        try:
            blocks = read_encoded(spark, source, self.session.dataflow.symbols, on_rows=self.on_rows or (bar.advance if bar else None), timings=timings)
        except LoadError as e:
            raise UserError(str(e)) from None
        finally:
            if bar:
                bar.close()
        began = clock.perf_counter()
        n = self._insert_all(source, blocks, diff, time)
        self.spark_seconds += timings.get("spark", 0.0)
        self.transfer_seconds += timings.get("encode", 0.0) + clock.perf_counter() - began
        self.rows += n
        return n

    def _insert_all(self, source, blocks, diff, time) -> int:
        """Insert encoded (block, extras) pairs; a table's diff and time columns override `diff`, `time`.

        A change table (removals, or its own times) goes in as one submission, so a closed
        time or a removal of what is not there anywhere in it refuses all of it; a plain
        load goes in block by block (each block's check cannot fail), without a copy."""
        import numpy as np

        from compiler.program import SessionError

        blocks = [(block, extras) for block, extras in blocks if block.shape[1]]
        if len(blocks) > 1 and (diff < 0 or any("diff" in extras or "time" in extras for _, extras in blocks)):
            default_time = self.session.time if time is None else time
            blocks = [(np.concatenate([block for block, _ in blocks], axis=1), {
                "diff": np.concatenate([np.broadcast_to(extras.get("diff", diff), block.shape[1]) for block, extras in blocks]),
                "time": np.concatenate([np.broadcast_to(extras.get("time", default_time), block.shape[1]) for block, extras in blocks]),
            })]
        n = 0
        try:
            for block, extras in blocks:
                if block.shape[1]:
                    self.session.update_columns(source.relation, block, extras.get("diff", diff), extras.get("time", time))
                    n += block.shape[1]
        except SessionError as e:
            raise UserError(located(source, e)) from None
        return n


def _has_records(program, relation: str) -> bool:
    """Whether a Datalog relation has record or ADT columns: they are read whole and then
    encoded by the compiler (compiler.program.encode_records), not streamed."""
    return "record" in getattr(program.relations[relation], "types", ())


def located(source, error: Exception) -> str:
    """A session's complaint about rows of `source`, with the file it read them from."""
    message = str(error)
    own = f"'{source.relation}': "
    return f"{own}{source.path}: {message[len(own):] if message.startswith(own) else message}"


def _local_facts(source) -> bool:
    from runtime.spark.read import is_local

    return source.format == "facts" and is_local(source.path)


def make_source(program, relation: str, path: str, fmt: str | None = None, changes: bool = False, pushed=None):
    """The TableSource reading `path` as `relation` (a change table: plus `diff` and optional `time`)."""
    from compiler.program import facts_options
    from runtime.spark import ColumnSpec, TableSource

    extras = (ColumnSpec("diff", "int"), ColumnSpec("time", "int")) if changes else ()
    info = program.relations[relation]
    named = getattr(info, "input_options", {}).get("filename")  # a SQL relation has no .input options
    named = named is not None and Path(path).name == Path(named).name
    if fmt is None and (path.endswith(".facts") or named):
        fmt = "facts"
    return TableSource(
        path=path,
        relation=relation,
        columns=columns(program, relation),
        format=fmt,
        extras=extras,
        optional_extras=("time",) if changes else (),
        where=(pushed or {}).get(relation),
        infer_types=is_sql(program),
        **facts_options(info),
    )


def precheck(program, inputs, changes=()) -> None:
    """Check paths and column mappings of all tables before building a session or starting Spark."""
    from runtime.spark import LoadError
    from runtime.spark.read import check_source

    try:
        for rel, path in inputs:
            check_source(make_source(program, rel, path))
        for rel, path in changes:
            check_source(make_source(program, rel, path, changes=True))
    except LoadError as e:
        raise UserError(str(e)) from None


class _LazyProgress:
    """A progress bar of unknown total, shown once PROGRESS_ROWS rows have arrived."""

    def __init__(self, label: str):
        self.label = label
        self.rows = 0
        self.bar = None

    def advance(self, n: int) -> None:
        self.rows += n
        if self.bar is None and self.rows >= PROGRESS_ROWS:
            self.bar = _Progress(self.label, None)
            n = self.rows
        if self.bar is not None:
            self.bar.advance(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class _Progress:
    def __init__(self, label: str, total: int | None):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=Console(stderr=True), transient=True,
        )
        self.progress.start()
        self.task = self.progress.add_task(label, total=total)

    def advance(self, n: int) -> None:
        self.progress.advance(self.task, n)

    def close(self) -> None:
        self.progress.stop()


def facts_inputs(program, directory: str) -> list[tuple[str, str]]:
    """(relation, path) of `<rel>.facts` (or the .input's filename=) in `directory` for each
    `.input` relation (as Soufflé's -F reads: a relation without `.input` is not read)."""
    from compiler.program import facts_file

    found = []
    for name in program.required_inputs:
        path = facts_file(directory, program.relations[name])
        if path.is_file():
            found.append((name, str(path)))
    return found


def dir_candidates(program, name: str) -> list[str]:
    """The names `--input-dir` tries for relation `name`, in order: the file its .input's
    filename= names, and only that (as Soufflé reads it: another file of the relation's
    name is not what the program asked for), else `<rel>.parquet`, `<rel>.csv`,
    `<rel>.jsonl`, `<rel>.facts`, `<rel>/`."""
    named = getattr(program.relations[name], "input_options", {}).get("filename")  # a SQL relation has no .input options
    if named:
        return [named]
    return [f"{name}.parquet", f"{name}.csv", f"{name}.jsonl", f"{name}.facts", name]


def dir_inputs(program, directory: str) -> list[tuple[str, str]]:
    """(relation, path) for each input with a table in `directory` (`dir_candidates`)."""
    found = []
    for name in program.inputs:
        for candidate in dir_candidates(program, name):
            path = os.path.join(directory, candidate)
            if os.path.exists(path):
                found.append((name, path))
                break
    return found

