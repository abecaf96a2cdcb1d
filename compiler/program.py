"""Programs and sessions: the Python API over compiled Datalog.

A `Program` is a compiled program: checked, planned and optimized, but not
running. `program.session()` builds a fresh runtime dataflow for it; a
`Session` feeds that dataflow rows and reads its relations back:

    program = compiler.compile_datalog(text)            # or compile_file("reach.dl")
    session = program.session()
    session.insert("edge", [(1, 2), (2, 3)])
    changes = session.commit()     # {"reach": [((1, 2), 1), ...]}: changes at the closed time
    session.read("reach")          # sorted rows of any relation
    session.arrow("reach")         # the same as a pyarrow.Table (session.df: pandas)

Time. A session has an open time, `session.time`, starting at 0. `insert`
and `remove` add rows at the open time (or at a later `time=`). `commit()`
closes the open time -- runs the dataflow until every change at that time is
known -- returns the output relations' changes at that time (only outputs
that changed; rows sorted), and opens the next time. `advance_to(t)` closes
every time before `t` at once (for updates submitted with `time=`), and
`change_log(rel)` lists a relation's changes at closed times with their
times. `read(rel)` is the relation's contents as of the last closed time.
Facts written in the program are at time 0, so the first commit has them.

Results are columns (compiler.results). `table(rel)` and `changes(rel)` are
the contents and the change log as `Result`s: `.arrow()` is a pyarrow.Table
(the relation's columns; a change log adds `time` and `diff`), `.df()` the
same in pandas, and the Result is also the list of tuples `read` and
`change_log` return, decoded from those columns only when asked for.
`arrow(rel)` and `df(rel)` are shorthands. `commit()`'s changes are Results
too, so a large commit costs no Python tuples unless someone reads them.
Inputs take, besides rows, columns: a pyarrow Table or RecordBatch, a pandas
DataFrame, or a dict of numpy arrays (or lists), matched to the relation's
columns by name, else by position.

Inputs are multisets: a row inserted twice is there until removed twice. A
relation holds the rows with a positive count. Removing a row that is not
there (more times than it was inserted, as of the removal's time) raises
`SessionError` and applies nothing of that call: each input's counts are kept
in a ledger (runtime.ledger) for this check.

Inputs. Any relation that no rule defines takes rows: relations only
declared, relations with facts only (the rows join the facts), and `.input`
relations, whose rules (if any) add to the rows fed. Rows for a relation
that rules define and no `.input` names are refused.

Errors. Misuse of a session -- an unknown relation, rows for a relation that
rules define, a row of the wrong arity or with a value of the
wrong type, a time already closed -- raises `SessionError`, naming the
relation and the problem. Every row is checked before any is buffered, so a
failed call leaves the session as it was.
"""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np

from compiler.datalog.builder import HONOURED_PRAGMAS, IGNORED_PRAGMAS
from compiler.datalog.checks import CheckedProgram, RelationInfo, check_datalog
from compiler.lowering.columns import COLUMN_KINDS, runtime_types
from compiler.lowering.dataflow import build_dataflow
from compiler.lowering.datalog import plan_datalog
from compiler.plan import Plan, explain
from compiler.plan.rewrites import optimize as optimize_plan
from compiler.results import CHANGES, LOG, Layout, Result
from compiler.table_input import encode_columns, is_columns
from compiler.values import BadValue, encode, fits, from_arrow
from runtime.batch import Batch, per_row
from runtime.ledger import CountLedger, NegativeCount
from runtime.worker import RoundLimitError



class SessionError(Exception):
    """Misuse of a Session: unknown relation, bad rows, a closed time. `relation` names it (or None)."""

    def __init__(self, message: str, relation: str | None = None):
        super().__init__(message)
        self.relation = relation


def compile_datalog(text: str, source_name: str = "<string>", include_dirs=(), functors=None, **planner_options) -> "Program":
    """Compile Datalog source text; raises a compiler.CompileError subclass if it is not a valid program.

    The C preprocessor runs first when the text has a directive (`#include`, `#define`,
    `#if`..., Soufflé's `.include`); `include_dirs` are searched for included files after
    the including file's directory. `functors` maps the name of each `.functor` the
    program declares to the Python callable implementing it (called with ints, floats
    and strs, once per distinct argument tuple; it must be a function of its arguments).
    Planner options: `join_order="greedy"` (default) or `"source"`; `optimize=False`
    skips the optimizer (for testing it).
    """
    # Compiling allocates many small acyclic objects; the cycle collector's passes over a
    # large heap (a test run, a notebook) would cost more than the compiling itself.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return Program(check_datalog(text, source_name, include_dirs, functors), **planner_options)
    finally:
        if collecting:
            gc.enable()


def compile_file(path, include_dirs=(), functors=None, **planner_options) -> "Program":
    """Compile the Datalog file at `path` (the file's path names it in errors); `#include`
    looks next to it, then in `include_dirs`; `functors` as for compile_datalog."""
    path = Path(path)
    return compile_datalog(path.read_text(encoding="utf-8"), str(path), include_dirs, functors, **planner_options)


class Program:
    """A compiled Datalog program; `session()` runs it."""

    printsizes: tuple[str, ...] = ()  # outputs whose size the CLI prints (.printsize)
    required_inputs: tuple[str, ...] = ()  # inputs a run must have a table for (.input)

    def __init__(self, checked: CheckedProgram, optimize: bool = True, **planner_options):
        self.checked = checked
        self.relations: dict[str, RelationInfo] = checked.relations
        self.outputs: tuple[str, ...] = checked.outputs
        self.printsizes: tuple[str, ...] = checked.printsizes
        self.required_inputs: tuple[str, ...] = checked.required_inputs
        self.inputs: tuple[str, ...] = tuple(n for n, info in checked.relations.items() if info.is_input)
        plan = plan_datalog(checked)
        self.plan: Plan = optimize_plan(plan, **planner_options) if optimize else plan

    def readable(self) -> list[str]:
        """The relations a session can read: all but eqrel relations no output names, whose
        pairs are never materialised (compiler.lowering.eqrel)."""
        bound = {b.name for b in self.plan.bindings()}
        return [name for name, info in self.relations.items()
                if name in bound or (name in self.plan.inputs and not getattr(info, "eqrel", False))]

    def explain(self) -> str:
        """The optimized plan as text (compiler.plan.explain), after a line per `.pragma`
        (applied, with what it changed, or ignored) and per `.plan` (ignored)."""
        lines = []
        for p in self.checked.pragmas:
            written = f'.pragma "{p.key}"' + (f' "{p.value}"' if p.value is not None else "")
            if p.key == "magic-transform":
                done = ", ".join(self.checked.magic) or "no relation"
                lines.append(f"applied: {written}: {done} evaluated on demand (magic sets)")
            elif p.key in HONOURED_PRAGMAS:
                lines.append(f"applied: {written}: {HONOURED_PRAGMAS[p.key]}")
            else:
                lines.append(f"ignored: {written}: {IGNORED_PRAGMAS.get(p.key, 'an unknown key')}")
        for hint in self.checked.plans:
            lines.append(f"ignored: {hint} (line {hint.span.line}): a join order for the rule before it (deltalog plans by itself)")
        return "\n".join([*lines, explain(self.plan)])

    def session(self, capture: str = "all") -> "Session":
        """A new in-process session; capture="outputs" keeps only outputs readable (less memory)."""
        return Session(self, capture)

    def round_limit_error(self, error: RoundLimitError) -> SessionError:
        """What a recursion stopped by its plan Fixpoint's round limit means to the user."""
        return SessionError(f"the recursion of {', '.join(sorted(error.label))} did not settle within {error.limit} iterations")

    def run_on_spark(self, spark, inputs=None, **options) -> dict:
        """{output: DataFrame}: the program evaluated as Spark jobs (compiler.spark_engine)."""
        from compiler.spark_engine import run

        return run(self, spark, inputs, **options)


class Session:
    def __init__(self, program: Program, capture: str = "all"):
        if capture not in ("all", "outputs"):
            raise SessionError(f"capture must be 'all' or 'outputs', not {capture!r}")
        self.program = program
        names = program.readable() if capture == "all" else program.outputs
        self._built = build_dataflow(program.plan, names)
        self._time = 0
        self._constants_open = True
        self._ledgers: dict[str, CountLedger] = {}
        self._layouts: dict[str, Layout] = {}
        self._stopped: SessionError | None = None  # the error a commit stopped at, mid-step

    @property
    def time(self) -> int:
        """The open time: the time `insert` and `remove` use by default."""
        return self._time

    # ---- input ----

    def insert(self, relation: str, rows, time: int | None = None) -> None:
        """Add rows -- tuples, or columns (a pyarrow Table, a pandas DataFrame, a dict of arrays) -- at the open time (or `time`)."""
        self._update(relation, rows, 1, time)

    def remove(self, relation: str, rows, time: int | None = None) -> None:
        """Remove rows (as `insert` takes them) at the open time (or `time`)."""
        self._update(relation, rows, -1, time)

    def load_facts(self, directory, delimiter: str | None = None) -> dict[str, int]:
        """Insert the Soufflé fact file in `directory` (`facts_file`) of every `.input` relation
        that has one, read as Soufflé reads it (runtime.spark.facts: the .input's `delimiter`,
        unless `delimiter` is given, and `headers`), as the CLI's --facts-dir does; {name: rows}.
        As with Soufflé's -F, a relation without `.input` is not read, whatever files there are.
        A file that does not fit raises SessionError and inserts nothing of it."""
        from runtime.spark import LoadError

        loaded = {}
        for name in self.program.required_inputs:
            info = self.program.relations[name]
            path = facts_file(directory, info)
            if not path.is_file():
                continue
            try:
                blocks = read_fact_blocks(info, str(path), self.dataflow.symbols, delimiter)
            except LoadError as e:
                raise SessionError(str(e), name) from None
            for block, _ in blocks:
                self.update_columns(name, block)
            loaded[name] = sum(block.shape[1] for block, _ in blocks)
        return loaded

    def update_columns(self, relation: str, data, diff=1, time=None) -> None:
        """Bulk input: `data` is the (arity, n) int64 block of encoded rows (runtime.symbols;
        strings interned in `session.dataflow.symbols`, unsigned as int64 bits); `diff` and
        `time` are scalars or one value per row (default: the open time)."""
        handle = self._input(relation)
        times = np.asarray(self._time if time is None else time, dtype=np.int64)
        if times.size and int(times.min()) < self._time:
            raise SessionError(f"time {int(times.min())} is already closed (the open time is {self._time})", relation)
        width = len(self._layout(relation).plan_types)  # a SQL table's block also has its NULL flags
        wanted = f"'{relation}': update_columns takes the ({width}, n) block of its encoded rows as integers (rows go to insert/remove)"
        try:
            data = np.asarray(data)
        except ValueError:  # ragged nested lists
            raise SessionError(f"{wanted}, not columns of different lengths", relation) from None
        if data.ndim != 2 or data.shape[0] != width or not np.issubdtype(data.dtype, np.integer):
            raise SessionError(f"{wanted}, not an array of shape {data.shape} and type {data.dtype}", relation)
        self._submit(relation, handle, data, diff, times)

    def encode_columns(self, relation: str, columns) -> np.ndarray:
        """The block `update_columns` takes for columns of an input relation (compiler.table_input)."""
        self._input(relation)
        return encode_columns(columns, relation, self._layout(relation), self._built.dataflow.symbols)

    def encode_rows(self, relation: str, rows) -> np.ndarray:
        """The (arity, n) int64 block `update_columns` takes for Python rows of an input
        relation, each row checked first (SessionError naming the row)."""
        self._input(relation)
        info = self.program.relations[relation]
        rows = row_list(rows, relation)
        if info.types != info.kinds:  # records or ADT values among the columns
            return self._structured_block(rows, info)
        data = _integer_block(rows, info)
        if data is None:  # the general path: check value by value, then encode
            for row in rows:
                _check_row(row, info)
            rows = [tuple(r) for r in rows]
            if "unsigned" in info.types:  # stored as the int64 with the same bits
                rows = [_to_int64(r, info.types) for r in rows]
            data = self._built.dataflow.codec.encode_rows(rows, runtime_types(info.types))
        return data

    def _structured_block(self, rows: list, info: RelationInfo) -> np.ndarray:
        """Rows with records or ADT values (compiler.values: tuples, None for nil, Branch)
        encoded column by column; a SessionError names the first row that does not fit."""
        name, symbols = info.name, self._built.dataflow.symbols
        for row in rows:
            if not isinstance(row, (tuple, list)) or len(row) != info.arity:
                _check_row(row, info)  # says what is wrong with its shape
        data = np.empty((info.arity, len(rows)), dtype=np.int64)
        for j, (kind, column) in enumerate(zip(info.kinds, info.attribute_names)):
            values = [row[j] for row in rows]
            try:
                data[j] = encode(values, kind, symbols)
            except BadValue:
                for row in rows:  # the first bad row, for the message
                    try:
                        encode([row[j]], kind, symbols)
                    except BadValue as e:
                        raise SessionError(f"'{name}': row {tuple(row)!r}: column '{column}': {e}", name) from None
        return data

    def _update(self, relation: str, rows, diff: int, time) -> None:
        handle = self._input(relation)
        when = self._check_time(time, relation)
        data = self.encode_columns(relation, rows) if is_columns(rows) else self.encode_rows(relation, rows)
        self._submit(relation, handle, data, diff, when)

    def _submit(self, relation: str, handle, data: np.ndarray, diff, time) -> None:
        """Hand encoded rows to the input, after the relation's count ledger has checked that
        no row is removed more often than it is there (runtime.ledger)."""
        n = data.shape[1]
        diffs, times = per_row(diff, n), per_row(time, n)
        ledger = self._ledgers.get(relation)
        if ledger is None:
            ledger = self._ledgers[relation] = CountLedger(data.shape[0])
        try:
            ledger.submit(data, diffs, times, self._time)
        except NegativeCount as e:
            one = Batch(e.row.reshape(-1, 1), np.zeros((1, 1), dtype=np.int64), np.ones(1, dtype=np.int64))
            row = Result(one, self._layout(relation), self._built.dataflow.symbols)[0]
            raise SessionError(
                f"'{relation}': cannot remove {row} at time {e.time}: it is not there (its count would be {e.count})",
                relation) from None
        handle.update_columns(data, diff, time)  # (scalars stay scalars: the handle's checks are cheaper)

    def _input(self, relation: str):
        self._check_going()
        info = self.program.relations.get(relation)
        if info is None:
            known = ", ".join(self.program.relations) or "none"
            raise SessionError(f"unknown relation '{relation}' (the program's relations: {known})", relation)
        if not info.is_input:
            inputs = ", ".join(self.program.inputs) or "none"
            raise SessionError(
                f"'{relation}' is not an input relation: rules of the program define it"
                f" (rows can be fed to relations that no rule defines, or that .input names; inputs: {inputs})",
                relation,
            )
        return self._built.inputs[relation]

    def _check_time(self, time, relation: str | None = None) -> int:
        if time is None:
            return self._time
        if isinstance(time, bool) or not isinstance(time, (int, np.integer)):
            raise SessionError(f"time must be an integer, not {time!r}", relation)
        if time < self._time:
            raise SessionError(f"time {time} is already closed (the open time is {self._time})", relation)
        return int(time)

    # ---- time ----

    def commit(self) -> dict[str, Result]:
        """Close the open time; the outputs' changes at it, {name: [(row, diff), ...]} (each a
        Result: `.arrow()` gives the columns with `time` and `diff`)."""
        return self._advance(self._time + 1)

    def advance_to(self, time: int) -> None:
        """Close every time before `time` (which becomes the open time)."""
        self._advance(self._check_time(time))

    def _advance(self, time: int) -> dict[str, Result]:
        """Close the times before `time`; the outputs' changes at the newly closed times."""
        self._check_going()
        for handle in self._built.inputs.values():
            handle.advance_to(time)
        if self._constants_open:
            for handle in self._built.constants:
                handle.close()
            self._constants_open = False
        try:
            self._built.dataflow.step()
        except RoundLimitError as e:  # the dataflow stopped mid-step: nothing can follow
            self._stopped = self.program.round_limit_error(e)
            raise self._stopped from None
        self._time = time
        changes = {}
        for name in self.program.outputs:
            batch = self._built.captures[name].drain(time)
            if batch is not None:
                result = Result(batch, self._layout(name), self._built.dataflow.symbols, CHANGES)
                if len(result):  # changes of hidden ORDER BY keys alone change nothing read
                    changes[name] = result
        return changes

    # ---- output ----

    def table(self, relation: str) -> Result:
        """The contents of `relation` (any relation) as of the last closed time, as a Result."""
        capture = self._capture(relation)
        symbols = self._built.dataflow.symbols
        if self._time == 0:
            return Result.empty(self._layout(relation), symbols)
        return Result(capture.contents_batch(self._time - 1), self._layout(relation), symbols)

    def changes(self, relation: str) -> Result:
        """Every change of `relation` at a closed time, as a Result: tuples (row, time, diff) in time order."""
        batch = self._capture(relation).change_batch(until=self._time)
        return Result(batch, self._layout(relation), self._built.dataflow.symbols, LOG)

    def read(self, relation: str) -> list[tuple]:
        """The rows of `relation` (any relation) as of the last closed time, sorted."""
        return self.table(relation).fetchall()

    def change_log(self, relation: str) -> list[tuple[tuple, int, int]]:
        """Every change of `relation` at a closed time: [(row, time, diff), ...] in time order."""
        return self.changes(relation).fetchall()

    def arrow(self, relation: str):
        """`table(relation).arrow()`: the contents as a pyarrow.Table."""
        return self.table(relation).arrow()

    def df(self, relation: str):
        """`table(relation).df()`: the contents as a pandas DataFrame."""
        return self.table(relation).df()

    def _layout(self, relation: str) -> Layout:
        """How the relation's plan rows read as a table (compiler.results)."""
        layout = self._layouts.get(relation)
        if layout is None:
            layout = self._layouts[relation] = self._make_layout(self.program.relations[relation])
        return layout

    def _make_layout(self, info) -> Layout:
        return Layout.of_relation(info.attribute_names, info.types, info.kinds)

    def _check_going(self) -> None:
        if self._stopped is not None:
            raise SessionError(f"this session stopped at an error and cannot go on: {self._stopped}")

    def _capture(self, relation: str):
        self._check_going()
        capture = self._built.captures.get(relation)
        if capture is None:
            if relation in self.program.relations and relation not in self.program.readable():
                raise SessionError(
                    f"'{relation}' is an eqrel relation that no output names: deltalog keeps its classes, not its pairs"
                    f" (make it an .output to read them)", relation)
            if relation in self.program.relations:
                raise SessionError(f"'{relation}' is not captured: this session was made with capture='outputs'", relation)
            known = ", ".join(self.program.relations) or "none"
            raise SessionError(f"unknown relation '{relation}' (the program's relations: {known})", relation)
        return capture

    def output_updates(self) -> int:
        """How many updates the captured relations have received so far (for progress displays)."""
        return sum(capture.op.received for capture in self._built.captures.values())

    @property
    def dataflow(self):
        """The underlying runtime.Dataflow (for inspection and benchmarks)."""
        return self._built.dataflow


_TYPE_WORDS = {"number": "an integer", "unsigned": "a non-negative integer", "float": "a number", "symbol": "a string"}


def row_list(rows, relation: str) -> list:
    """The rows given to insert/remove as a list; a SessionError when they are not rows."""
    if isinstance(rows, list):
        return rows
    try:
        return list(rows)
    except TypeError:
        raise SessionError(f"'{relation}': rows are an iterable of tuples, or columns (a dict, an Arrow table,"
                           f" a DataFrame), not {type(rows).__name__}", relation) from None


def _integer_block(rows: list, info: RelationInfo) -> np.ndarray | None:
    """The (arity, n) int64 block of rows of a number-only relation, if every row is a
    tuple of Python ints that fit; None means: take the general path (which explains)."""
    if any(t != "number" for t in info.types):
        return None
    arity = info.arity
    if not all(type(row) is tuple and len(row) == arity for row in rows):
        return None
    if not all(type(v) is int for row in rows for v in row):
        return None
    try:
        return np.array(rows, dtype=np.int64).reshape(len(rows), arity).T.copy()
    except OverflowError:
        return None


def _check_row(row, info: RelationInfo) -> None:
    name = info.name
    if not isinstance(row, (tuple, list)):
        raise SessionError(f"'{name}': row {row!r} is not a tuple", name)
    if len(row) != info.arity:
        raise SessionError(f"'{name}': row {tuple(row)!r} has {len(row)} values, but '{name}' has {info.arity} columns", name)
    for value, t, column in zip(row, info.types, info.attribute_names):
        if not fits(value, t):
            integral = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
            too_large = integral and (t == "number" or (t == "unsigned" and value >= 2**64))
            range_note = " (outside its 64-bit range)" if too_large else ""
            raise SessionError(
                f"'{name}': row {tuple(row)!r}: column '{column}' is {'an' if t[0] in 'aeiou' else 'a'} {t} and needs {_TYPE_WORDS[t]}, got {value!r}{range_note}", name
            )


def _to_int64(row: tuple, types) -> tuple:
    return tuple(v - 2**64 if t == "unsigned" and v >= 2**63 else v for v, t in zip(row, types))


def facts_file(directory, info: RelationInfo) -> Path:
    """Where an input's Soufflé fact file is in `directory` (Soufflé's -F): the file its
    `.input r(filename=...)` names (relative to `directory` unless absolute), else `<name>.facts`."""
    return Path(directory) / info.input_options.get("filename", f"{info.name}.facts")


def facts_source(info: RelationInfo, path: str, delimiter: str | None = None):
    """The runtime.spark.TableSource reading the fact file `path` as the input `info`, with
    its `.input`'s delimiter (`delimiter` overrides it) and headers."""
    from runtime.spark import ColumnSpec, TableSource

    return TableSource(
        path=path,
        relation=info.name,
        columns=tuple(ColumnSpec(n, COLUMN_KINDS[t]) for n, t in zip(info.attribute_names, info.types)),
        format="facts",
        **facts_options(info, delimiter),
    )


def read_fact_blocks(info: RelationInfo, path: str, symbols, delimiter: str | None = None) -> list:
    """The fact file `path` of the input `info` as encoded blocks (runtime.spark.read.encode_source),
    its records and ADT values read from Soufflé's text (compiler.values); LoadError if it does not fit."""
    from runtime.spark.facts import read_facts
    from runtime.spark.read import encode_source

    source = facts_source(info, path, delimiter)
    return list(encode_source(encode_records(read_facts(source), info, symbols, f"'{info.name}': {path}"), source, symbols))


def encode_records(table, info: RelationInfo, symbols, where: str):
    """`table` (a relation's columns in order, then any extras) with each record or ADT column,
    Soufflé's text or Arrow structs (compiler.values), as the int64 ids the runtime stores;
    LoadError naming `where` and the column for a value that is neither."""
    import pyarrow as pa

    from runtime.spark import LoadError

    for j, (kind, column) in enumerate(zip(info.kinds, info.attribute_names)):
        if info.types[j] == "record":
            try:
                ids = from_arrow(table.column(j).combine_chunks(), kind, symbols)
            except BadValue as e:
                raise LoadError(f"{where}: column '{column}': {e}") from None
            table = table.set_column(j, table.column_names[j], pa.array(ids, pa.int64()))
    return table


def facts_options(info, delimiter: str | None = None) -> dict:
    """The TableSource settings (delimiter, header, quoting) for reading the input `info` from a
    Soufflé fact file, from its `.input` options (a SQL relation has none: the defaults). With
    `rfc4180=true` fields may be quoted and the delimiter is a comma unless given, as in Soufflé."""
    options = getattr(info, "input_options", {})
    quoted = options.get("rfc4180") == "true"
    return {"delimiter": delimiter or options.get("delimiter", "," if quoted else "\t"), "header": options.get("headers") == "true",
            "quoted": quoted}


__all__ = ["Program", "Session", "SessionError", "compile_datalog", "compile_file", "facts_file", "facts_options", "facts_source", "read_fact_blocks", "encode_records"]
