"""Relations under translation: a plan node and the SQL columns it holds.

A `Rel` is what a FROM item, a join, a filtered or grouped query is while it
is being translated: a plan `node` (a multiset of plan rows) and a list of
`Column`s, each an SQL column with the table alias it is known by, its name,
its SQL type, and the plan columns that hold it (`value`, and `null`, the
NULL-flag column, or None when it can never be NULL; see
compiler.sql.values). Columns of a Rel may have no name (hidden columns the
translation carries along). A Rel is SQL's bag: Project keeps duplicates.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from compiler.plan import Distinct, Filter, Join, Node, Project
from compiler.plan.expr import TRUE
from compiler.sql.values import FALSE, ONE, ZERO, Value, cast_value, null_flag, stored


@dataclass(frozen=True)
class Column:
    table: str | None
    name: str | None
    type: str
    value: int
    null: int | None


@dataclass(frozen=True)
class Rel:
    node: Node
    columns: tuple[Column, ...]

    def value(self, i: int) -> Value:
        c = self.columns[i]
        return stored(c.value, c.null, c.type)

    def values(self) -> list[Value]:
        return [self.value(i) for i in range(len(self.columns))]

    def find(self, table: str | None, name: str) -> list[int]:
        return [i for i, c in enumerate(self.columns) if c.name == name and (table is None or c.table == table)]

    def aliased(self, table: str | None, names=None) -> "Rel":
        """The same rows with every column known by `table` (and renamed to `names`)."""
        names = names if names is not None else [c.name for c in self.columns]
        return Rel(self.node, tuple(replace(c, table=table, name=n) for c, n in zip(self.columns, names)))

    def filter(self, predicate, span=None) -> "Rel":
        if predicate == TRUE:
            return self
        return Rel(Filter(self.node, predicate, span=span), self.columns)

    def cross(self, other: "Rel", span=None) -> "Rel":
        shift = self.node.arity
        moved = tuple(replace(c, value=c.value + shift, null=None if c.null is None else c.null + shift) for c in other.columns)
        return Rel(Join(self.node, other.node, (), span=span), self.columns + moved)

    def distinct(self, span=None) -> "Rel":
        return Rel(Distinct(self.node, span=span), self.columns)

    def plan_columns(self) -> tuple[int, ...]:
        """Every plan column that holds part of an SQL column, in column order."""
        out = []
        for c in self.columns:
            out.append(c.value)
            if c.null is not None:
                out.append(c.null)
        return tuple(out)

    def compact(self, span=None) -> "Rel":
        """The same SQL columns over exactly the plan columns they use (a Project)."""
        return project(self, [(c.table, c.name, self.value(i)) for i, c in enumerate(self.columns)], span)


def stored_layout(items, nullable=None) -> tuple[tuple, tuple[Column, ...]]:
    """The plan expressions that store one column per (table, name, Value) of `items`
    (value, then NULL flag where it may be NULL or `nullable[i]`), and those columns."""
    exprs, columns = [], []
    for i, (table, name, v) in enumerate(items):
        vi = len(exprs)
        exprs.append(v.canonical())
        ni = None
        if v.null != FALSE or (nullable is not None and nullable[i]):
            ni = len(exprs)
            exprs.append(null_flag(v))
        columns.append(Column(table, name, v.type, vi, ni))
    return tuple(exprs), tuple(columns)


def project(rel: Rel, items, span=None, nullable=None) -> Rel:
    """A Rel of one column per (table, name, Value) in `items`, computed from rel's rows;
    `nullable[i]` true gives column i a NULL flag even if it can never be NULL."""
    exprs, columns = stored_layout(items, nullable)
    node = Project(rel.node, exprs, span=span)
    if node.is_identity():
        node = rel.node
    return Rel(node, tuple(columns))


def always_null(rel: Rel, i: int) -> bool:
    """Whether column i of rel is NULL in every row, as a NULL literal is (`SELECT NULL`,
    `VALUES (NULL)`): its type is any other column's beside it in a set operation."""
    c = rel.columns[i]
    return c.null is not None and isinstance(rel.node, Project) and rel.node.exprs[c.null] == ONE


def shape(rel: Rel) -> list[tuple[str, bool]]:
    """(SQL type, nullable) of each column."""
    return [(c.type, c.null is not None) for c in rel.columns]


def conform(rel: Rel, wanted, span=None) -> Rel:
    """rel's columns in the (type, nullable) shape `wanted`: ints made floats, NULL flags added."""
    items = []
    for i, (c, (t, _)) in enumerate(zip(rel.columns, wanted)):
        v = rel.value(i)
        if v.type != t:
            v = Value(ZERO[t], TRUE, t) if always_null(rel, i) else cast_value(v, t)
        items.append((c.table, c.name, v))
    return project(rel, items, span, [n for _, n in wanted])
