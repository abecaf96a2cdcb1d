"""compile_sql: SQL text to a Program, and the sessions that run it.

`compile_sql(text, schema={"edge": {"src": "int", "dst": "int"}})` parses
the text with sqlglot (in `dialect`, default sqlglot's own), qualifies every
statement against the schema (sqlglot's optimizer: names resolved, `*`
expanded, columns tied to their tables), translates it into the logical plan
Datalog uses (compiler.sql.translator), optimizes it with the same rewrites
and returns a Program. A schema maps table -> {column: type}; types are SQL
names (int, bigint, double, text, varchar, boolean, ...), nullable unless
written with NOT NULL ("int not null"); the SQL text finds its tables and
columns ignoring case, as unquoted identifiers do (compiler.sql.names), and
sessions know them by the names given. A file may hold `CREATE VIEW name AS
...` statements (each view is an output and may be read by later
statements) and queries; a lone query's output is named `result` (further
ones `result_2`, ...).

An SQL session works like a Datalog one (compiler.program) with SQL rows:
`insert("edge", [(1, None)])` takes None for NULL; outputs are bags, so
`read` lists a row as often as it occurs (in ORDER BY order where the query
has one), and `commit` reports (row, change of its count). A commit whose
data makes the query an error in SQL (a scalar subquery with several rows, a
UNION ALL recursion past its iteration limit) raises SQLRuntimeError after
closing the time; later commits that repair the data succeed again.
"""

from __future__ import annotations

import gc
import logging
import re
from contextlib import contextmanager

import numpy as np
import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError as SqlglotParseError
from sqlglot.optimizer.qualify import qualify

from compiler.errors import CompileError, DeclarationError, ParseError, Source, UnknownRelationError, located_text
from compiler.lowering.columns import runtime_types
from compiler.plan import Binding, Fixpoint, Plan, explain
from compiler.plan.errors import PlanError
from compiler.plan.rewrites import optimize as optimize_plan
from compiler.program import Program, Session, SessionError, row_list
from compiler.sql.errors import Span, UnknownColumnError, UnsupportedSQLError, error_at, located_message
from compiler.sql.names import key, normalize
from compiler.sql.relation import Rel
from compiler.sql.translator import Table, Translator, plan_order
from compiler.results import Column, Layout
from compiler.sql.values import BOOL, FLOAT, INT, PLAN_TYPE, TEXT, sql_type
from runtime.symbols import decode_floats, encode_floats

NEGATIVE_ZERO = int(encode_floats(np.array([-0.0]))[0])  # the code of -0.0 (0.0's is 0)
NAN_CODE = int(encode_floats(np.array([float("nan")]))[0])  # the code of the NaN relations store


# The guard of UNION ALL recursion (compiler.sql.recursion): rows made by this many
# iterations are not extended. DuckDB and PostgreSQL have none; this one is sized by rows
# and iterations. An unfinished recursion adds at least a row per iteration, so any series
# of up to 10,001 rows finishes; a cycle, which never finishes, is reported after that many
# iterations -- each costs about 0.1-0.3 ms here beyond its rows' work, so seconds, where
# 100,000 iterations took minutes (twice: the iterations are undone when the cycle is).
# Counting rows inside the loop to stop an exploding join sooner made every iteration
# about ten times dearer in this runtime, so the guard counts iterations only.
RECURSION_LIMIT = 10_000


class SQLRuntimeError(SessionError):
    """The data makes the query an error in SQL (found at commit); `line` and `column` are
    where the SQL text that fails is, and `str()` shows it as compile errors do."""

    def __init__(self, message: str, relation: str | None = None, line: int | None = None, column: int | None = None,
                 source_name: str = "<string>", source_line: str | None = None):
        super().__init__(message, relation)
        self.message, self.line, self.column, self.source_name, self.source_line = message, line, column, source_name, source_line

    def __reduce__(self):
        return (type(self), (self.message, self.relation, self.line, self.column, self.source_name, self.source_line))

    def __str__(self) -> str:
        if self.line is None:
            return self.message
        return located_text(type(self).__name__, self.message, self.source_name, self.line, self.column, self.source_line)


class SQLRelation:
    """A table or output of an SQL program: SQL columns and where the plan keeps them."""

    def __init__(self, name: str, columns, is_input: bool, order=(), hidden=()):
        self.name = name
        self.columns = list(columns)  # [(name, sql type, value column, null column | None)]
        self.is_input = is_input
        self.order = list(order)  # plan (column, descending) pairs for reading
        self.hidden = list(hidden)  # [(sql type, value column, null column | None)]: ORDER BY keys no column shows
        self.attribute_names = tuple(c[0] for c in self.columns)
        self.arity = len(self.columns)
        self.sql_types = tuple(c[1] for c in self.columns)
        held = [c[2:] for c in self.columns] + [h[1:] for h in self.hidden]
        width = max([v for v, _ in held] + [n for _, n in held if n is not None], default=-1) + 1
        self.plan_width = width


def compile_sql(text: str, schema: dict | None = None, dialect: str | None = None, source_name: str = "<string>",
                recursion_limit: int = RECURSION_LIMIT, optimize: bool = True, **planner_options) -> "SQLProgram":
    """Compile SQL text against `schema`; raises a compiler.CompileError subclass if it cannot."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return SQLProgram(text, schema or {}, dialect, source_name, recursion_limit, optimize, planner_options)
    finally:
        if collecting:
            gc.enable()


def _tables(schema: dict, source: Source, dialect) -> dict[str, Table]:
    """The schema's tables by key (compiler.sql.names); two names with one key are an error."""
    tables: dict[str, Table] = {}
    for name, columns in schema.items():
        name = str(name)
        cols, keys = [], {}
        for col, type_name in dict(columns).items():
            col = str(col)
            t, nullable = sql_type(str(type_name))
            if t is None:
                raise DeclarationError(f"table '{name}': column '{col}' has unknown type {type_name!r}", None, None, source.name)
            k = key(col, dialect)
            if k in keys:
                raise DeclarationError(f"table '{name}': columns '{keys[k]}' and '{col}' are one name in SQL (unquoted names ignore case)",
                                       None, None, source.name)
            keys[k] = col
            cols.append((col, t, nullable))
        k = key(name, dialect)
        if k in tables:
            raise DeclarationError(f"tables '{tables[k].name}' and '{name}' are one name in SQL (unquoted names ignore case)", None, None, source.name)
        tables[k] = Table(name, cols, list(keys))
    return tables


def _schema_keys(tables: dict[str, Table]) -> dict[str, str]:
    """Every table and column name of the schema, as given, -> its key."""
    keys = {}
    for k, table in tables.items():
        keys[table.name] = k
        keys.update(zip((c for c, _, _ in table.columns), table.column_keys))
    return keys


class SQLProgram(Program):
    """A compiled SQL text; `session()` runs it."""

    def __init__(self, text, schema, dialect, source_name, recursion_limit, optimize, planner_options):
        source = Source(source_name, text)
        self.source, self.dialect = source, dialect
        tables = _tables(schema, source, dialect)
        t = Translator(source, tables, recursion_limit)
        try:
            with _quiet_sqlglot():
                statements = sqlglot.parse(text, read=dialect)
        except SqlglotParseError as e:
            raise _parse_error(e, source) from None
        schema_keys = _schema_keys(tables)
        statements = [normalize(stmt, dialect, schema_keys) if stmt is not None else None for stmt in statements]
        qualify_schema = {k: {c: _SCHEMA_TYPES[ty] for c, (_, ty, _) in zip(table.column_keys, table.columns)} for k, table in tables.items()}
        outputs: dict[str, SQLRelation] = {}
        results = 0
        for stmt in statements:  # output names are taken before any CTE is named
            if isinstance(stmt, exp.Create) and isinstance(stmt.this, (exp.Table, exp.Schema)):
                t.used.add(stmt.this.this.name if isinstance(stmt.this, exp.Schema) else stmt.this.name)
        t.used.update(["result"] + [f"result_{i}" for i in range(2, len(statements) + 1)])
        for stmt in statements:
            if stmt is None:
                continue
            if isinstance(stmt, exp.Create) and (stmt.args.get("kind") or "").upper() == "VIEW":
                view, renamed = stmt.this, None
                if isinstance(view, exp.Schema):  # CREATE VIEW v (a, b) AS ...: the columns' names
                    view, renamed = view.this, [c.name for c in view.expressions]
                name, query = view.name, stmt.expression
                if name in tables or name in outputs:
                    raise error_at(DeclarationError, f"'{name}' is already defined", view, source)
            elif isinstance(stmt, exp.Query):
                renamed = None
                results += 1
                name, query = ("result" if results == 1 else f"result_{results}"), stmt
            elif isinstance(stmt, exp.Command):
                raise _command_error(stmt, source, dialect)
            else:
                raise error_at(UnsupportedSQLError, f"statement {stmt.key.upper()} is not supported (only queries and CREATE VIEW)", stmt, source)
            _check_tables(query, tables, t.views, source)
            _check_asof_using(query, source)
            try:
                schema = {**_own_columns(query, qualify_schema), **qualify_schema}
                qualified = qualify(query, schema=schema, dialect=dialect, quote_identifiers=False, identify=False)
            except OptimizeError as e:
                raise _optimize_error(e, source, query, qualify_schema) from None
            # Rows keep the ORDER BY keys the select list lacks as plan columns no SQL column
            # shows: they order what is read (SQLSession consolidates rows equal on the rest).
            try:
                rel, visible, order = t.ordered_query(qualified)
            except PlanError as e:
                raise _unplanned(e, stmt, source) from None
            rel = rel.compact(t.span(qualified))
            names = _distinct_names([c.name or f"col{i}" for i, c in enumerate(rel.columns[:visible])])
            if renamed is not None:
                if len(renamed) != visible:
                    raise error_at(UnsupportedSQLError, f"view '{name}' names {len(renamed)} column{'' if len(renamed) == 1 else 's'},"
                                   f" its query makes {visible}", stmt.this, source)
                names = renamed
            t.steps.append(Binding(name, rel.node, span=t.span(qualified)))
            t.used.add(name)
            columns = [(n, c.type, c.value, c.null) for n, c in zip(names, rel.columns)]
            hidden = [(c.type, c.value, c.null) for c in rel.columns[visible:]]
            outputs[name] = SQLRelation(name, columns, False, plan_order(rel, order), hidden)
            if stmt is not query:  # a view: later statements may read it
                from compiler.plan import Ref

                t.views[name] = Rel(Ref(name, rel.node.types), tuple(c.__class__(None, n, c.type, c.value, c.null) for n, c in zip(names, rel.columns)))
                qualify_schema[name] = {n: _SCHEMA_TYPES[c.type] for n, c in zip(names, rel.columns)}
        if not outputs:
            raise CompileError("no query or view in the SQL text", None, None, source_name)
        inputs = {table.name: table.plan_types for table in tables.values()}
        t.finish_checks()
        checks = tuple(name for name, _ in t.checks)
        try:
            plan = Plan(inputs, tuple(t.steps), tuple(outputs) + checks)
            self.plan = optimize_plan(plan, **planner_options) if optimize else plan
        except PlanError as e:
            raise _unplanned(e, None, source, t.steps) from None
        self.checks = dict(t.checks)  # binding -> what its rows (i,) mean: the i-th (message, span)
        self.round_limits = t.round_limits
        self.outputs = tuple(outputs)
        self.inputs = tuple(inputs)
        self.tables = {table.name: table for table in tables.values()}
        self.relations = {}
        for name, table in self.tables.items():
            self.relations[name] = SQLRelation(name, [(c, ty, v, n) for (c, ty, _), (v, n) in zip(table.columns, table.layout)], True)
        self.relations.update(outputs)

    def explain(self) -> str:
        return explain(self.plan)

    def check_error(self, name: str, rows) -> SQLRuntimeError:
        """The error that `rows`, the rows (i,) of check binding `name`, mean: the first one's."""
        message, span = self.checks[name][min(row[0] for row in rows)]
        return self._runtime_error(message, span, name)

    def round_limit_error(self, error) -> SQLRuntimeError:
        message, span = self.round_limits[error.label]
        return self._runtime_error(message, span, None)

    def _runtime_error(self, message: str, span, name) -> SQLRuntimeError:
        if span is None:
            return SQLRuntimeError(message, name, source_name=self.source.name)
        return SQLRuntimeError(message, name, span.line, span.column, self.source.name, self.source.line_text(span.line))

    def session(self, capture: str = "outputs") -> "SQLSession":
        return SQLSession(self, capture)


_SCHEMA_TYPES = {INT: "BIGINT", FLOAT: "DOUBLE", TEXT: "TEXT", BOOL: "BOOLEAN"}


def _unplanned(error: PlanError, stmt, source: Source, steps=()) -> CompileError:
    """A plan deltalog could not build from valid SQL (a gap in the translation, not the
    user's mistake) as a positioned error: at the statement, or at the source of the
    binding the PlanError names."""
    message = f"this SQL could not be planned ({error}); it is a deltalog limitation -- please report it"
    if stmt is None:
        named = str(error).split(":")[0]
        span = next((s.span for s in _flat(steps) if s.name == named and s.span is not None), None)
        return UnsupportedSQLError.at(message, span, source) if span else UnsupportedSQLError(message, None, None, source.name)
    return error_at(UnsupportedSQLError, message, stmt, source)


def _flat(steps):
    for step in steps:
        yield from (step.bindings if isinstance(step, Fixpoint) else (step,))


def _check_tables(query, tables, views, source) -> None:
    ctes = {c.alias for c in query.find_all(exp.CTE)}
    for table in query.find_all(exp.Table):
        name = table.name
        if name and name not in tables and name not in views and name not in ctes and not isinstance(table.this, exp.Func):
            known = ", ".join(sorted(t.name for t in tables.values())) or "none"
            raise error_at(UnknownRelationError, f"unknown table '{table.name}' (the schema's tables: {known})", table, source)


def _distinct_names(names: list) -> list:
    """The names with each repeat suffixed _1, _2, ... (the first free), as DuckDB names the
    columns of a table or view made from `SELECT *` over a join: outputs are written to
    Parquet and CSV, and read as DataFrames, by their names."""
    used, out = set(), []
    for name in names:
        unique, i = name, 0
        while unique in used:
            i += 1
            unique = f"{name}_{i}"
        used.add(unique)
        out.append(unique)
    return out


def _own_columns(query, schema: dict) -> dict:
    """{name: columns} of the recursive CTEs whose definition is not a UNION, as a schema:
    sqlglot finds a recursive CTE's columns, where its definition reads it, only in the first
    branch of a UNION (`SELECT k, MIN(d) FROM (... UNION ALL ... FROM r) GROUP BY k` reads
    r's columns inside a derived table). Their types are not needed to qualify names."""
    found = {}
    for with_ in query.find_all(exp.With):
        if not with_.args.get("recursive"):
            continue
        for cte in with_.expressions:
            body, alias = cte.this, cte.args.get("alias")
            if cte.alias in schema or isinstance(body, exp.SetOperation):
                continue
            if alias is not None and alias.columns:
                names = [c.name for c in alias.columns]
            elif isinstance(body, exp.Select) and not body.is_star:
                names = [e.alias_or_name for e in body.expressions]
            else:
                continue
            found[cte.alias] = dict.fromkeys(names, "UNKNOWN")
    return found


def _check_asof_using(query, source) -> None:
    """ASOF JOIN ... USING (k, t) means k equal and t >=; qualify would make both equalities."""
    for join in query.find_all(exp.Join):
        if (join.args.get("method") or "").upper() == "ASOF" and join.args.get("using"):
            raise error_at(UnsupportedSQLError, "ASOF JOIN ... USING is not supported (write ON l.k = r.k AND l.t >= r.t)", join.this, source)


def _parse_error(e: SqlglotParseError, source: Source) -> ParseError:
    errors = getattr(e, "errors", None) or []
    if errors:
        first = errors[0]
        message = _readable(first.get("description") or str(e))
        highlight = first.get("highlight") or ""
        line, end = first.get("line"), first.get("col")
        if line is not None and end is not None:
            column = max(end - len(highlight) + 1, 1) if highlight else end
            return ParseError.at(message, Span(line, column), source)
        return ParseError(message, None, None, source.name)
    return ParseError(str(e).splitlines()[0], None, None, source.name)


@contextmanager
def _quiet_sqlglot():
    """sqlglot logs a warning (to stderr, unlocated) where it keeps a statement it cannot parse
    as text (exp.Command); `_command_error` says what is wrong, and where, instead."""
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


_VIEW_AS = re.compile(r"\s*(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?VIEW\s+.+?\s+AS\b", re.IGNORECASE | re.DOTALL)


def _command_error(stmt: exp.Command, source: Source, dialect) -> CompileError:
    """A statement sqlglot kept as text: in a `CREATE VIEW ... AS query` (sqlglot's fallback when
    the query does not parse), the query's parse error where it is; else the statement is not
    supported. The query is parsed alone, everything before it blanked, so positions hold."""
    rest = stmt.expression if isinstance(stmt.expression, str) else ""
    m = _VIEW_AS.match(rest) if str(stmt.this).upper() == "CREATE" else None
    whole = f"{stmt.this}{rest}"
    start = source.text.find(whole)
    if m and start >= 0:
        begin, end = start + len(stmt.this) + m.end(), start + len(whole)
        try:
            with _quiet_sqlglot():
                sqlglot.parse(re.sub(r"[^\n]", " ", source.text[:begin]) + source.text[begin:end], read=dialect)
        except SqlglotParseError as e:
            return _parse_error(e, source)
    if m:  # the query parses: the view's own clauses are what sqlglot could not read
        message = "this form of CREATE VIEW is not supported (only CREATE VIEW name AS query)"
    else:
        message = f"statement {' '.join(whole.split()[:2]).upper()} is not supported (only queries and CREATE VIEW)"
    if start < 0:
        return UnsupportedSQLError(message, None, None, source.name)
    line = source.text.count("\n", 0, start) + 1
    column = start - (source.text.rfind("\n", 0, start) + 1) + 1
    return UnsupportedSQLError.at(message, Span(line, column), source)


def _readable(description: str) -> str:
    """sqlglot's "Required keyword: 'this' missing for <class 'sqlglot...Where'>" in SQL's words."""
    m = re.match(r"Required keyword: '(\w+)' missing for <class '[\w.]*\.(\w+)'>", description)
    if not m:
        return description
    part = {"this": "its operand", "expression": "its right operand"}.get(m.group(1), f"its {m.group(1)}")
    construct = re.sub(r"(?<!^)(?=[A-Z])", " ", m.group(2)).upper()
    return f"incomplete {construct}: {part} is missing"


def _optimize_error(e: OptimizeError, source: Source, query, schema: dict) -> CompileError:
    text = str(e)
    m = re.match(r"Column '([^']*)' could not be resolved", text)
    if m:
        message, span = located_message(text, source, m.group(1).split(".")[-1])
        owners = _owners(query, m.group(1), span, schema) if span is not None else []
        if len(owners) > 1:  # sqlglot says the same of a name two tables have
            message = f"column '{m.group(1)}' is ambiguous: {' and '.join(owners)} both have it (write {owners[0]}.{m.group(1)})"
        else:
            message = f"unknown column '{m.group(1)}'"
        if span is not None:
            return UnknownColumnError.at(message, span, source)
        return UnknownColumnError(message, None, None, source.name)
    m = re.match(r"Cannot automatically join: (\S+)", text)
    if m:  # a USING column that one side lacks
        name = m.group(1)
        for join in query.find_all(exp.Join):
            for ident in join.args.get("using") or []:
                if ident.name == name:
                    return error_at(UnknownColumnError, f"JOIN ... USING ({name}): both sides need a column '{name}'", ident, source)
    m = re.match(r"Unknown output column: (\d+)", text)
    if m:  # ORDER BY / GROUP BY position past the select list
        for select in query.find_all(exp.Select):
            for clause in (select.args.get("order"), select.args.get("group")):
                for node in (clause.find_all(exp.Literal) if clause else ()):
                    if node.is_int and node.this == m.group(1):
                        columns = len(select.expressions)
                        return error_at(UnknownColumnError, f"position {node.this} is past the select list ({columns} column"
                                        f"{'' if columns == 1 else 's'})", node, source)
    message, span = located_message(text, source)
    if span is not None:
        return UnsupportedSQLError.at(message, span, source)
    return UnsupportedSQLError(message, None, None, source.name)


def _owners(query, name: str, span: Span, schema: dict) -> list[str]:
    """The FROM items (by alias) of the SELECT where the unresolved column `name` is (at `span`)
    that are schema tables or views having a column of that name."""
    for column in query.find_all(exp.Column):
        position = column.this.meta if isinstance(column.this, exp.Identifier) else {}
        if column.name != name or column.table or (position.get("line"), position.get("col")) != (span.line, span.column + len(name) - 1):
            continue  # (sqlglot's col is where the name ends)
        select = column.find_ancestor(exp.Select)
        if select is None:
            continue
        sources = [select.args.get("from_") or select.args.get("from")] + list(select.args.get("joins") or [])
        owners = []
        for source in sources:
            table = source.this if source is not None else None
            if isinstance(table, exp.Table) and name in schema.get(table.name, {}):
                owners.append(table.alias_or_name)
        return owners
    return []


class SQLSession(Session):
    """A session over SQL rows (None is NULL); outputs are bags."""

    def __init__(self, program: SQLProgram, capture: str = "outputs"):
        super().__init__(program, capture)

    def encode_rows(self, relation: str, rows) -> np.ndarray:
        """SQL rows (None is NULL) as the block `update_columns` takes, each row checked."""
        self._input(relation)
        info, table = self.program.relations[relation], self.program.tables[relation]
        encoded = [_encode_row(row, info, table) for row in row_list(rows, relation)]
        return self._built.dataflow.codec.encode_rows(encoded, runtime_types(table.plan_types))

    def _submit(self, relation: str, handle, data: np.ndarray, diff, time) -> None:
        """As Session's, with -0.0 made 0.0 and every NaN one NaN in the float columns: SQL's
        floats are equal when their values are (DISTINCT, GROUP BY, joins), and rows are equal
        by their codes (compiler.sql.values.Value.canonical)."""
        table = self.program.tables[relation]
        floats = [v for (v, _), (_, ty, _) in zip(table.layout, table.columns) if ty == FLOAT]
        if floats:  # (every update passes here: no work for tables without floats)
            codes = data[floats]
            nan = np.isnan(decode_floats(codes)) & (codes != NAN_CODE)
            negative_zero = codes == NEGATIVE_ZERO
            if nan.any() or negative_zero.any():
                data = data.copy()
                data[floats] = np.where(negative_zero, 0, np.where(nan, NAN_CODE, codes))
        super()._submit(relation, handle, data, diff, time)

    def _advance(self, time: int):
        changes = super()._advance(time)
        for name in self.program.checks:
            rows = self._built.captures[name].contents(self._time - 1)
            if rows:
                raise self.program.check_error(name, rows)
        return changes

    def _make_layout(self, info: SQLRelation) -> Layout:
        """SQL outputs are bags in their ORDER BY order; a nullable column has a NULL-flag column."""
        columns, plan_types = [], {}
        for name, ty, value, null in info.columns:
            columns.append(Column(name, _COLUMN_TYPE[ty], value, null))
        for ty, value, null in [c[1:] for c in info.columns] + info.hidden:
            plan_types[value] = PLAN_TYPE[ty]
            if null is not None:
                plan_types[null] = "number"
        return Layout(tuple(columns), tuple(plan_types.get(j, "number") for j in range(info.plan_width)), tuple(info.order), bag=True)


_COLUMN_TYPE = {INT: "number", FLOAT: "float", TEXT: "symbol", BOOL: "bool"}


def _encode_row(row, info: SQLRelation, table: Table) -> tuple:
    name = info.name
    if not isinstance(row, (tuple, list)):
        raise SessionError(f"'{name}': row {row!r} is not a tuple", name)
    if len(row) != info.arity:
        raise SessionError(f"'{name}': row {tuple(row)!r} has {len(row)} values, but '{name}' has {info.arity} columns", name)
    out = []
    for value, (col, ty, nullable) in zip(row, table.columns):
        if value is None:
            if not nullable:
                raise SessionError(f"'{name}': row {tuple(row)!r}: column '{col}' is NOT NULL", name)
            out.extend((_ZEROS[ty], 1))
            continue
        if not _fits(value, ty):
            raise SessionError(f"'{name}': row {tuple(row)!r}: column '{col}' is {ty}, got {value!r}", name)
        out.append(int(value) if ty in (INT, BOOL) else float(value) if ty == FLOAT else value)
        if nullable:
            out.append(0)
    return tuple(out)


_ZEROS = {INT: 0, BOOL: 0, FLOAT: 0.0, TEXT: ""}


def _fits(value, ty: str) -> bool:
    if ty == BOOL:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if ty == INT:
        return isinstance(value, int) and -(2**63) <= value < 2**63
    if ty == FLOAT:
        return isinstance(value, (int, float))
    return isinstance(value, str)


__all__ = ["compile_sql", "SQLProgram", "SQLSession", "SQLRuntimeError"]
