"""One SELECT block: FROM and joins, WHERE, GROUP BY/HAVING, the select list, DISTINCT.

`select(t, sel)` translates a qualified sqlglot Select into a Rel whose
columns are the select list's, named by their aliases. FROM items are
tables, views and CTEs (compiler.sql.translator resolves names), subqueries
and VALUES lists. Joins: an inner join is the cross product filtered by its
ON condition (the optimizer turns equalities into join keys); USING and
NATURAL arrive as ON conditions, sqlglot's qualify having rewritten them (a
USING column is then COALESCE of both sides, listed once by `*`, as in
DuckDB); a LEFT, RIGHT
or FULL join adds the rows of the preserved side that matched nothing -- an
Antijoin against the distinct matched rows, so it is exact for any ON
condition and for duplicate rows -- padded with NULLs. WHERE keeps the rows
whose condition is TRUE; its EXISTS / IN (subquery) conjuncts become semi-
and antijoins (compiler.sql.subquery).

`order_keys` are ORDER BY expressions the select list lacks: each is one
more column, after the select list's, computed like a select item (after
GROUP BY, so ORDER BY SUM(x) works), for compiler.sql.translator to order
by and then leave out.

`outer` is the demand of a correlated subquery: the distinct rows of the
enclosing query, joined into the FROM so outer columns can be read; `carry`
names columns (by table and name) appended, unchanged, to the output. With
GROUP BY or aggregates, a correlated subquery groups per outer row too
(compiler.sql.aggregate.group): that is its decorrelation.
"""

from __future__ import annotations

from sqlglot import exp

from compiler.plan import Antijoin, Col, Distinct, Project, Union, Values
from compiler.sql.aggregate import find_aggregates, group
from compiler.errors import ParseError
from compiler.sql.errors import UnsupportedSQLError
from compiler.sql.expressions import Env, condition, translate
from compiler.sql.relation import Rel, always_null, conform, project
from compiler.sql.values import TRUE, ZERO, Value


def select(t, sel: exp.Select, outer: Rel | None = None, carry=(), only_carry: bool = False, order_keys=()) -> Rel:
    span = t.span(sel)
    for arg in ("distinct",):
        d = sel.args.get(arg)
        if d is not None and d.args.get("on") is not None:
            raise t.error(UnsupportedSQLError, "DISTINCT ON is not supported", d)
    for arg, what in (("windows", "WINDOW"), ("qualify", "QUALIFY"), ("laterals", "LATERAL"), ("pivots", "PIVOT")):
        if sel.args.get(arg):
            raise t.error(UnsupportedSQLError, f"{what} is not supported", sel)
    for e in sel.find_all(exp.Window):
        raise t.error(UnsupportedSQLError, "window functions (OVER) are not supported", e)
    rel = from_clause(t, sel, outer)
    where = sel.args.get("where")
    if where is not None:
        from compiler.sql.subquery import apply_where

        rel = apply_where(t, rel, where.this)
    having = sel.args.get("having")
    group_node = sel.args.get("group")
    keys = list(group_node.expressions) if group_node is not None else []
    if group_node is not None and any(group_node.args.get(a) for a in ("grouping_sets", "cube", "rollup")):
        raise t.error(UnsupportedSQLError, "GROUPING SETS, CUBE and ROLLUP are not supported", group_node)
    if group_node is not None and group_node.args.get("all"):  # DuckDB's GROUP BY ALL: every select item without an aggregate
        keys = [e.unalias() for e in sel.expressions if not find_aggregates([e])]
    elif group_node is not None and not keys:
        raise t.error(ParseError, "GROUP BY needs at least one expression", group_node)
    calls = find_aggregates(([] if only_carry else list(sel.expressions)) + ([having] if having is not None else []) + list(order_keys))
    if carry and outer is None and (keys or calls):
        raise t.error(UnsupportedSQLError, "GROUP BY or aggregates in a UNION ALL recursive member are not supported", sel)
    env = Env(t, rel)
    if keys or calls:
        # A correlated subquery groups per outer row as well (the carried columns are the outer row's).
        by_outer = [rel.find(table, name)[0] for table, name in carry] if outer is not None else []
        grouped_rel, grouped = group(env, keys, calls, span, outer if by_outer else None, by_outer)
        env = Env(t, grouped_rel, grouped)
        t.note_aggregate(calls, sel)
    if having is not None:
        kept = condition(env, having.this).true  # first: a subquery in it widens env.rel
        env = Env(t, env.rel.filter(kept, span), env.grouped)
    items = []
    for e in () if only_carry else sel.expressions:
        if isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)):
            raise t.error(UnsupportedSQLError, "* could not be expanded", e)
        items.append((None, e.alias_or_name, translate(env, e.unalias() if isinstance(e, exp.Alias) else e)))
    items += [(None, None, translate(env, e)) for e in order_keys]
    for table, name in carry:
        (i,) = env.rel.find(table, name)
        items.append((table, name, env.rel.value(i)))
    out = project(env.rel, items, span)
    if sel.args.get("distinct") is not None:
        out = out.distinct(span)
    return out


def from_clause(t, sel: exp.Select, outer: Rel | None) -> Rel:
    span = t.span(sel)
    source = sel.args.get("from_") or sel.args.get("from")
    if source is None:
        rel = Rel(Values(((),), ()), ())
    else:
        rel = from_item(t, source.this)
    for join in sel.args.get("joins") or []:
        rel = _join(t, rel, join)
    if outer is not None:
        rel = rel.cross(outer, span)
    return rel


def from_item(t, item) -> Rel:
    alias = item.alias_or_name
    names = None
    table_alias = item.args.get("alias")
    if table_alias is not None and table_alias.columns:
        names = [c.name for c in table_alias.columns]
    if isinstance(item, exp.Table):
        if item.args.get("joins") or item.args.get("pivots"):
            raise t.error(UnsupportedSQLError, "this FROM item is not supported", item)
        rel = t.table(item)
    elif isinstance(item, exp.Subquery):
        rel = t.query(item.this)
    elif isinstance(item, exp.Values):
        rel = values_list(t, item)
    else:
        raise t.error(UnsupportedSQLError, f"FROM {type(item).__name__} is not supported", item)
    if names is not None and len(names) != len(rel.columns):
        raise t.error(UnsupportedSQLError, f"{alias} names {len(names)} columns, but has {len(rel.columns)}", item)
    return rel.aliased(alias, names)


def values_list(t, item: exp.Values) -> Rel:
    env = Env(t, Rel(Values(((),), ()), ()))
    rows = []
    for tup in item.expressions:
        rows.append([translate(env, e) for e in tup.expressions])
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise t.error(UnsupportedSQLError, "VALUES rows of different lengths", item)
    rels = [project(env.rel, [(None, f"col{j}", v) for j, v in enumerate(r)], t.span(item)) for r in rows]
    return union_all(t, rels, item)


def unified_shape(t, rels: list[Rel], node) -> list[tuple[str, bool]]:
    from compiler.errors import TypeMismatchError
    from compiler.sql.values import common_type

    width = len(rels[0].columns)
    for r in rels[1:]:
        if len(r.columns) != width:
            raise t.error(UnsupportedSQLError, f"set operation of {width} columns with {len(r.columns)} columns", node)
    result = []
    for j in range(width):
        cols = [r.columns[j] for r in rels]
        typed = [c for r, c in zip(rels, cols) if not always_null(r, j)] or cols  # a NULL literal takes the others' type
        ty = typed[0].type
        for c in typed[1:]:
            common = common_type(ty, c.type)
            if common is None:
                raise t.error(TypeMismatchError, f"column {j + 1} is {ty} on one side and {c.type} on another", node)
            ty = common
        result.append((ty, any(c.null is not None for c in cols)))
    return result


def union_all(t, rels: list[Rel], node) -> Rel:
    if len(rels) == 1:
        return rels[0]
    wanted = unified_shape(t, rels, node)
    parts = [conform(r, wanted, t.span(node)) for r in rels]
    return Rel(Union(tuple(p.node for p in parts), span=t.span(node)), parts[0].columns)


def _join(t, rel: Rel, join: exp.Join) -> Rel:
    span = t.span(join)
    side = (join.side or "").upper()
    kind = (join.kind or "").upper()
    method = (join.args.get("method") or "").upper()
    if method == "ASOF":
        from compiler.sql.asof import asof_join

        return asof_join(t, rel, join, from_item(t, join.this))
    if method == "NATURAL":  # qualify made every NATURAL JOIN with common columns an ON
        raise t.error(UnsupportedSQLError, f"NATURAL JOIN with {join.this.alias_or_name}: no column in common (write CROSS JOIN for a cross product)", join.this)
    if kind in ("SEMI", "ANTI", "ASOF", "POSITIONAL") or method:
        raise t.error(UnsupportedSQLError, f"{kind or method} JOIN is not supported", join)
    if join.args.get("using"):  # qualify rewrites USING into ON and COALESCE; a leftover is a bug to report
        raise t.error(UnsupportedSQLError, "JOIN ... USING could not be resolved (write ON)", join)
    right = from_item(t, join.this)
    on = join.args.get("on")
    left = rel.compact(span)
    right = right.compact(span)
    crossed = left.cross(right, span)
    if on is None:
        if side:
            raise t.error(UnsupportedSQLError, f"{side} JOIN without ON", join)
        return crossed
    env = Env(t, crossed)
    cond = condition(env, on)
    inner = env.rel.filter(cond.true, span)
    if env.rel is not crossed:  # a subquery in ON added columns of its own after the join's: dropped again
        inner = project(inner, [(c.table, c.name, inner.value(i)) for i, c in enumerate(crossed.columns)], span)
    if not side:
        return inner
    parts = [inner]
    width = left.node.arity
    if side in ("LEFT", "FULL"):
        parts.append(_unmatched(t, left, right, inner, range(width), True, span))
    if side in ("RIGHT", "FULL"):
        parts.append(_unmatched(t, right, left, inner, range(width, inner.node.arity), False, span))
    nullable = [(c.type, c.null is not None or (side in ("LEFT", "FULL") and i >= len(left.columns)) or (side in ("RIGHT", "FULL") and i < len(left.columns))) for i, c in enumerate(inner.columns)]
    conformed = [conform(p, nullable, span) for p in parts]
    return Rel(Union(tuple(p.node for p in conformed), span=span), _named_like(conformed[0], inner))


def _named_like(rel: Rel, like: Rel):
    from dataclasses import replace

    return tuple(replace(c, table=o.table, name=o.name) for c, o in zip(rel.columns, like.columns))


def _unmatched(t, kept: Rel, other: Rel, inner: Rel, plan_cols, kept_is_left: bool, span) -> Rel:
    """kept's rows that matched nothing in `inner`, with NULLs for other's columns (in join order)."""
    cols = tuple(plan_cols)
    matched = Distinct(Project(inner.node, tuple(Col(c, inner.node.types[c]) for c in cols), span=span), span=span)
    alone = Antijoin(kept.node, matched, tuple((i, i) for i in range(kept.node.arity)), span=span)
    base = Rel(alone, kept.columns)
    nulls = [(c.table, c.name, Value(ZERO[c.type], TRUE, c.type)) for c in other.columns]
    own = [(c.table, c.name, base.value(i)) for i, c in enumerate(kept.columns)]
    return project(base, own + nulls if kept_is_left else nulls + own, span)
