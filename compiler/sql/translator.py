"""The translation of one SQL text into a logical plan.

A `Translator` holds what the translation of every statement shares: the
source (for errors), the tables of the schema (plan inputs: each SQL column
is a value column, plus a NULL-flag column when nullable), the views and
CTEs in scope (names to plan relations), and the plan steps made so far --
a Binding per view, CTE and top-level query, a Fixpoint per group of
mutually recursive CTEs. `query(q)` translates any query expression (SELECT,
set operation, with its WITH, ORDER BY and LIMIT) into a Rel;
`ordered_query(q)` also gives its ORDER BY, whose keys the select list may
lack (they are extra columns past q's own, which a statement's output keeps
for reading order and anything else leaves out).

Checks: some SQL errors depend on the data -- a scalar subquery with two
rows, a UNION ALL recursion that has not converged by its iteration limit.
Each is a node and a predicate on its rows: the error occurs when a row
satisfies it (an integer overflow where the rows evaluate the expression). The
checks of one node become one small hidden binding (`finish_checks`), empty
exactly when none fails, whose rows say which does; sessions test them at
every commit (compiler.sql.program).

Inside the members of recursive CTEs (`defining`), their fixpoint variables
are not plan steps yet: a check waits until the Fixpoint is a step (it may
read a variable, e.g. a correlated scalar subquery's demand), and a binding
that reads a variable (a WITH inside a member) is not made a step but used
in place.
"""

from __future__ import annotations

from contextlib import contextmanager

from sqlglot import exp

from compiler.errors import CompileError, Source, UnknownRelationError
from compiler.plan import Aggregate, Binding, Col, Const, Distinct, Filter, Project, Ref, Scan
from compiler.plan.nodes import walk
from compiler.sql.errors import UnknownColumnError, UnsupportedSQLError, error_at, position
from compiler.sql.relation import Column, Rel
from compiler.sql.select import select as select_block, unified_shape
from compiler.sql.topk import TopK
from compiler.sql.values import PLAN_TYPE, TRUE, if_, or_


class Table:
    """A schema table: its SQL columns [(name, type, nullable)] and its plan input.

    `name` and the column names are as the schema gave them (the session's
    relation and attribute names); `column_keys` are the column names SQL
    finds them by (compiler.sql.names)."""

    def __init__(self, name: str, columns, column_keys=None):
        self.name = name
        self.columns = list(columns)
        self.column_keys = list(column_keys) if column_keys is not None else [c[0] for c in self.columns]
        layout, types = [], []
        for _, t, nullable in self.columns:
            v = len(types)
            types.append(PLAN_TYPE[t])
            n = None
            if nullable:
                n = len(types)
                types.append("number")
            layout.append((v, n))
        self.layout = layout
        self.plan_types = tuple(types)

    def rel(self, node) -> Rel:
        return Rel(node, tuple(Column(None, key, t, v, n) for key, (_, t, _), (v, n) in zip(self.column_keys, self.columns, self.layout)))


class Translator:
    def __init__(self, source: Source, tables: dict[str, Table], recursion_limit: int):
        self.source = source
        self.tables = tables  # key (compiler.sql.names) -> Table
        self.recursion_limit = recursion_limit  # the UNION ALL guard (compiler.sql.recursion)
        self.views: dict[str, Rel] = {}  # name -> Rel over Ref(binding)
        self.scopes: list[dict] = []  # CTE scopes, innermost last: name -> fn(alias) -> Rel
        self.input_names = {table.name for table in tables.values()}  # the plan's inputs: no binding may take these
        self.steps: list = []
        self.used: set[str] = set()
        self.checks: list[tuple] = []  # (binding name, ((message, span), ...)): a row (i,) of it is error i
        self.row_checks: dict = {}  # rows -> [(predicate, message, span)] until `finish_checks`
        self.round_limits: dict = {}  # a limited Fixpoint's binding names -> (message, span of its CTE)
        self.variables: set[str] = set()  # fixpoint variables being defined (see `defining`)
        self.pending_checks: list | None = None  # checks waiting for their Fixpoint (see `defining`)
        self.aggregate_hook = None  # set while translating a recursive member (compiler.sql.recursion)

    # ---- errors and spans ----

    def error(self, cls, message: str, node) -> CompileError:
        return error_at(cls, message, node, self.source)

    def span(self, node):
        return position(node, self.source)

    # ---- names ----

    def fresh(self, base: str) -> str:
        name, i = base, 1
        while name in self.used or name in self.tables or name in self.input_names:
            i += 1
            name = f"{base}#{i}"
        self.used.add(name)
        return name

    def bind(self, rel: Rel, base: str, span=None) -> Rel:
        """rel as a named binding (a plan step); a Rel over a Ref of it (rel itself if it
        reads a fixpoint variable being defined: no step can come before its Fixpoint)."""
        rel = rel.compact(span)
        if self.variables and any(isinstance(n, Ref) and n.name in self.variables for n in walk(rel.node)):
            return rel
        name = self.fresh(base)
        self.steps.append(Binding(name, rel.node, span=span))
        return Rel(Ref(name, rel.node.types, span=span), rel.columns)

    def table(self, item: exp.Table) -> Rel:
        name = item.name
        if item.args.get("db") or item.args.get("catalog"):
            raise self.error(UnsupportedSQLError, f"qualified table name {item.sql()} is not supported", item)
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name](item)
        if name in self.views:
            return self.views[name]
        table = self.tables.get(name)
        if table is None:
            raise self.error(UnknownRelationError, f"unknown table '{name}'", item)
        return table.rel(Scan(table.name, table.plan_types, span=self.span(item)))

    @contextmanager
    def defining(self, variables):
        """While the members of recursive CTEs with these fixpoint variables are translated;
        yields the list of the checks they make, which become steps when the block ends
        without an error (after the Fixpoint, which the block appends)."""
        outer = self.variables, self.pending_checks
        self.variables, self.pending_checks = self.variables | set(variables), []
        try:
            yield self.pending_checks
        finally:
            pending = self.pending_checks
            self.variables, self.pending_checks = outer
        for args in pending:
            self.check(*args)

    def check(self, node, message: str, span=None, where=TRUE) -> None:
        """An error at commit time, located at `span`, whenever a row of `node` satisfies `where`."""
        if self.pending_checks is not None:
            self.pending_checks.append((node, message, span, where))
            return
        checks = self.row_checks.setdefault(node, [])
        if (where, message, span) not in checks:
            checks.append((where, message, span))

    def finish_checks(self) -> None:
        """The checks as plan steps, one binding per node checked: its rows are the indexes of
        the first check each row of the node fails (the one a commit reports)."""
        for node, checks in self.row_checks.items():
            span = checks[0][2]
            which = Const(len(checks) - 1, "number")
            for i in range(len(checks) - 2, -1, -1):
                which = if_(checks[i][0], Const(i, "number"), which)
            failing = or_(*(where for where, _, _ in checks))
            rows = node if failing == TRUE else Filter(node, failing, span=span)
            name = self.fresh("check")
            self.steps.append(Binding(name, Distinct(Project(rows, (which,), span=span), span=span), span=span))
            self.checks.append((name, tuple((message, at) for _, message, at in checks)))
        self.row_checks = {}

    def check_at_most_one_row(self, node, e, by=()) -> None:
        """An error at commit whenever `node` has more than one row (per value of the `by` columns)."""
        span = self.span(e)
        if by:
            rows = Project(node, tuple(Col(c, node.types[c]) for c in by), span=span)
        else:
            rows = Project(node, (Const(1, "number"),), span=span)
        group = tuple(range(rows.arity))
        counted = Aggregate(rows, group, "count", None, span=span)
        what = "a correlated scalar subquery" if by else "a scalar subquery"
        many = Filter(counted, _gt(Col(len(group), "number"), 1), span=span)
        self.check(many, f"{what} returned more than one row{' for an outer row' if by else ''}", span)

    def note_aggregate(self, calls, sel) -> None:
        if self.aggregate_hook is not None:
            self.aggregate_hook(calls, sel)

    # ---- queries ----

    def select(self, sel, **options) -> Rel:
        return select_block(self, sel, **options)

    def query(self, q) -> Rel:
        rel, visible, _ = self.ordered_query(q)
        return Rel(rel.node, rel.columns[:visible])

    def ordered_query(self, q) -> tuple[Rel, int, list]:
        """q's rows, how many of the Rel's columns are q's, and q's ORDER BY as
        (column, descending, nulls first) over the Rel's columns: those past the
        first `visible` are ORDER BY keys the select list does not have."""
        from compiler.sql.recursion import define_ctes

        while isinstance(q, exp.Subquery):
            if q.args.get("limit") or q.args.get("order") or q.args.get("offset"):
                break
            q = q.this
        with_ = q.args.get("with_") or q.args.get("with")
        if with_ is not None:
            self.scopes.append({})
            try:
                define_ctes(self, with_)
                return self._query(q)
            finally:
                self.scopes.pop()
        return self._query(q)

    def _query(self, q) -> tuple[Rel, int, list]:
        hidden = []
        if isinstance(q, exp.Select):
            hidden = self._order_keys_not_selected(q)
            rel = self.select(q, order_keys=hidden)
        elif isinstance(q, exp.Union):
            rel = self._setop(q)
        elif isinstance(q, (exp.Intersect, exp.Except)):
            rel = self._setop(q)
        elif isinstance(q, exp.Subquery):
            rel = self.query(q.this)
        else:
            raise self.error(UnsupportedSQLError, f"{type(q).__name__} is not supported as a query", q)
        visible = len(rel.columns) - len(hidden)
        order = self._order_columns(rel, q, visible)
        limit, offset = q.args.get("limit"), q.args.get("offset")
        if limit is not None or offset is not None:
            rel = self.top_k(rel, q, order)
        return rel, visible, order

    def _setop(self, q) -> Rel:
        from compiler.plan import Antijoin, Join, Union

        span = self.span(q)
        left, right = self.query(q.this), self.query(q.expression)
        wanted = unified_shape(self, [left, right], q)
        from compiler.sql.relation import conform

        left, right = conform(left, wanted, span), conform(right, wanted, span)
        distinct = q.args.get("distinct", True) is not False
        if isinstance(q, exp.Union):
            node = Union((left.node, right.node), span=span)
            return Rel(Distinct(node, span=span) if distinct else node, left.columns)
        if not distinct:
            what = "INTERSECT ALL" if isinstance(q, exp.Intersect) else "EXCEPT ALL"
            raise self.error(UnsupportedSQLError, f"{what} is not supported (INTERSECT and EXCEPT are)", q)
        keys = tuple((i, i) for i in range(left.node.arity))
        lset = Distinct(left.node, span=span)
        if isinstance(q, exp.Intersect):
            joined = Join(lset, Distinct(right.node, span=span), keys, span=span)
            node = Project(joined, tuple(Col(i, tp) for i, tp in enumerate(lset.types)), span=span)
        else:
            node = Antijoin(lset, right.node, keys, span=span)
        return Rel(node, left.columns)

    # ---- ORDER BY / LIMIT ----

    def _order_keys_not_selected(self, sel: exp.Select) -> list:
        """The ORDER BY expressions of `sel` that name no column of its select list (SQL
        orders by them all the same); ORDER BY of SELECT DISTINCT must name its columns."""
        order = sel.args.get("order")
        if order is None:
            return []
        names = [p.alias_or_name for p in sel.expressions]
        hidden = [item.this for item in order.expressions if _select_list_position(item.this, names, sel.expressions) is None]
        if hidden and sel.args.get("distinct") is not None:
            key = hidden[0].name if isinstance(hidden[0], exp.Column) else hidden[0].sql()
            raise self.error(UnknownColumnError, f"ORDER BY {key} of SELECT DISTINCT must be in the select list", hidden[0])
        return hidden

    def _order_columns(self, rel: Rel, q, visible: int) -> list[tuple[int, bool, bool]]:
        """ORDER BY as (column, descending, nulls first) over rel's columns: a key not in the
        select list is one of the columns past `visible`, in ORDER BY order."""
        order = q.args.get("order")
        if order is None:
            return []
        out = []
        projections = q.expressions if isinstance(q, exp.Select) else []
        names = [c.name for c in rel.columns[:visible]]
        hidden = iter(range(visible, len(rel.columns)))
        for item in order.expressions:
            found = _select_list_position(item.this, names, projections)
            if found is None and isinstance(q, exp.Select):
                found = next(hidden)
            if found is None or not 0 <= found < len(rel.columns):
                what = item.this.name if isinstance(item.this, exp.Column) else item.this.sql()
                raise self.error(UnknownColumnError, f"ORDER BY {what} of a set operation must name one of its columns (by name or position)", item)
            out.append((found, bool(item.args.get("desc")), bool(item.args.get("nulls_first"))))
        return out

    def top_k(self, rel: Rel, q, order) -> Rel:
        span = self.span(q)
        limit, offset = q.args.get("limit"), q.args.get("offset")
        n = self._count(limit.expression if limit is not None else None, q)
        skip = self._count(offset.expression if offset is not None else None, q) or 0
        ref = self.bind(rel, "ordered", span)
        keys = plan_order(ref, order)
        return Rel(TopK(ref.node, tuple(keys), n, skip, span=span), ref.columns)

    def _count(self, e, q) -> int | None:
        if e is None:
            return None
        if isinstance(e, exp.Literal) and not e.is_string and e.this.isdigit():
            return int(e.this)
        raise self.error(UnsupportedSQLError, "LIMIT and OFFSET must be integer constants", e)


def _select_list_position(e, names: list, projections) -> int | None:
    """The select list column an ORDER BY expression names (by position, name or alias, or
    as an equal expression), else None."""
    if isinstance(e, exp.Literal) and not e.is_string:
        return int(e.this) - 1
    if isinstance(e, exp.Column) and not e.table and e.name in names:
        return names.index(e.name)
    for i, p in enumerate(projections):
        if p.unalias() == e:
            return i
    return None


def plan_order(rel: Rel, order) -> list[tuple[int, bool]]:
    """SQL order items as plan (column, descending) pairs: NULL flag, then value."""
    keys = []
    for i, desc, nulls_first in order:
        c = rel.columns[i]
        if c.null is not None:
            keys.append((c.null, nulls_first))
        keys.append((c.value, desc))
    return keys


def _gt(col, n: int):
    from compiler.plan import Call

    return Call(">", (col, Const(n, "number")))
