"""Subqueries in conditions and expressions: semi-joins, anti-joins, scalar values.

WHERE conjuncts `EXISTS (q)`, `x IN (q)` and their negations filter the rows
of the enclosing query L. Each is decided per distinct row of L: the
*demand* D = DISTINCT L is joined into q (a correlated q reads its outer
columns from D's columns, known by their aliases one level out); M is the
set of rows of D for which q has a qualifying row; EXISTS/IN keep the rows
of L in M (a join on all columns, so L's duplicates survive), NOT EXISTS /
NOT IN keep the others (an Antijoin). For IN the qualifying rows are those
with y = x TRUE; for NOT IN, SQL's NULL rules make a row of L fail also when
x is NULL and q has rows, or when q has a NULL y: exactly what `x NOT IN (q)`
being TRUE means. Uncorrelated q is computed once and those cases are joins
against one-row flags, not cross products.

A scalar subquery `(SELECT ...)` in an expression (uncorrelated) is its one
value, or NULL for no rows; more than one row is an error at commit time
(compiler.sql.checks), as in SQL engines.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from compiler.plan import Antijoin, Col, Distinct, Filter, Join, Project, Union, Values
from compiler.sql.errors import UnsupportedSQLError
from compiler.sql.expressions import Env, compare, condition, translate
from compiler.sql.relation import Column, Rel, project
from compiler.sql.values import FALSE, TRUE, ZERO, Value, or_


def _conjuncts(e) -> list:
    while isinstance(e, exp.Paren):
        e = e.this
    if isinstance(e, exp.And):
        return _conjuncts(e.this) + _conjuncts(e.expression)
    return [e]


def apply_where(t, rel: Rel, cond) -> Rel:
    plain, subs = [], []
    for c in _conjuncts(cond):
        inner, negated = c, False
        while isinstance(inner, (exp.Not, exp.Paren)):
            negated ^= isinstance(inner, exp.Not)
            inner = inner.this
        if isinstance(inner, exp.Exists) or (isinstance(inner, exp.In) and inner.args.get("query") is not None):
            subs.append((negated, inner))
        else:
            plain.append(c)
    for c in plain:
        env = Env(t, rel)
        v = condition(env, c)
        rel = env.rel.filter(v.true, t.span(c))
    for negated, s in subs:
        rel = _semi(t, rel, negated, s)
    return rel


def outer_references(q) -> bool:
    """Whether q reads columns of tables it does not define itself (a correlated subquery)."""
    defined = {n.alias_or_name for n in q.find_all(exp.Table, exp.Subquery, exp.CTE)}
    return any(c.table and c.table not in defined for c in q.find_all(exp.Column))


def _outer(rel: Rel) -> list[Column]:
    """rel's columns as the outer columns of a subquery: their table alias one level out."""
    return [replace(c, table=("outer", c.table)) for c in rel.columns]


def _query_of(node):
    q = node.this if isinstance(node, exp.Exists) else node.args["query"]
    while isinstance(q, exp.Subquery):
        q = q.this
    return q


def _semi(t, rel: Rel, negated: bool, node) -> Rel:
    span = t.span(node)
    q = _query_of(node)
    correlated = outer_references(q)
    left = rel.compact(span)
    x = None
    if isinstance(node, exp.In):
        env = Env(t, left)
        x = translate(env, node.this)
        left = project(env.rel, [(c.table, c.name, env.rel.value(i)) for i, c in enumerate(env.rel.columns)] + [(None, None, x)], span)
        x = left.value(len(left.columns) - 1)
    width = left.node.arity
    demand = Rel(Distinct(left.node, span=span), tuple(_outer(left)))
    carry = [(c.table, c.name) for c in demand.columns if c.name is not None]
    if correlated:
        if not isinstance(q, exp.Select):
            raise t.error(UnsupportedSQLError, "a correlated subquery must be a plain SELECT", q)
        hidden = [replace(c, name=c.name if c.name is not None else f"#{i}") for i, c in enumerate(demand.columns)]
        demand = Rel(demand.node, tuple(hidden))
        carry = [(c.table, c.name) for c in hidden]
        body = t.select(q, outer=demand, carry=carry, only_carry=x is None)
        ncarry = len(carry)
        sub_cols = body.columns[: len(body.columns) - ncarry]
        d_rel = Rel(body.node, body.columns)
        d_values = [d_rel.value(len(sub_cols) + i) for i in range(ncarry)]
    else:
        sub = t.query(q)
        sub_cols = sub.columns
        d_rel = sub.compact(span).cross(demand, span)
        d_values = [d_rel.value(len(sub_cols) + i) for i in range(len(demand.columns))]
    if x is not None and len(sub_cols) != 1:
        raise t.error(UnsupportedSQLError, f"IN (subquery) needs a subquery of one column, not {len(sub_cols)}", q)
    xd = d_values[-1] if x is not None else None  # x as a demand column

    def matched(pred) -> object:
        rows = d_rel.filter(pred, span)
        return Distinct(_columns_of(rows, d_values, span), span=span)

    if x is None:  # EXISTS
        parts = [matched(TRUE)]
    else:
        y = d_rel.value(0)
        eq = compare(Env(t, d_rel), "=", xd, y, node)
        parts = [matched(eq.true)]
        if negated:
            if correlated:
                parts.append(matched(or_(xd.null, y.null)))
            else:
                sub_c = sub.compact(span)
                y_null = sub_c.value(0).null
                if y_null != FALSE:
                    has_null = Distinct(Project(Filter(sub_c.node, y_null, span=span), (), span=span), span=span)
                    parts.append(_columns_only(Join(demand.node, has_null, (), span=span), demand.node, span))
                x_null = Rel(demand.node, demand.columns).value(len(demand.columns) - 1).null
                if x_null != FALSE:
                    nonempty = Distinct(Project(sub_c.node, (), span=span), span=span)
                    parts.append(_columns_only(Join(Filter(demand.node, x_null, span=span), nonempty, (), span=span), demand.node, span))
    m = parts[0] if len(parts) == 1 else Distinct(Union(tuple(parts), span=span), span=span)
    keys = tuple((i, i) for i in range(width))
    if negated:
        node_out = Antijoin(left.node, m, keys, span=span)
    else:
        node_out = Project(Join(left.node, m, keys, span=span), tuple(Col(i, tp) for i, tp in enumerate(left.node.types)), span=span)
    out = Rel(node_out, left.columns)
    if x is not None:  # drop x's columns again
        out = Rel(out.node, out.columns[:-1])
    return out


def _columns_of(rel: Rel, values, span):
    """The plan node of exactly the stored columns of `values` (demand columns), in order."""
    exprs = []
    for v in values:
        exprs.append(v.canonical())
        if v.null != FALSE:
            from compiler.sql.values import null_flag

            exprs.append(null_flag(v))
    return Project(rel.node, tuple(exprs), span=span)


def _columns_only(node, like, span):
    return Project(node, tuple(Col(i, tp) for i, tp in enumerate(like.types)), span=span)


def scalar_subquery(env: Env, e) -> Value:
    t = env.t
    q = e.this
    if outer_references(q):
        raise t.error(UnsupportedSQLError, "correlated scalar subqueries are not supported", e)
    sub = t.query(q).compact(t.span(e))
    if len(sub.columns) != 1:
        raise t.error(UnsupportedSQLError, f"a scalar subquery must return one column, not {len(sub.columns)}", e)
    span = t.span(e)
    c = sub.columns[0]
    v = sub.value(0)
    t.check_at_most_one_row(sub.node, e)
    empty = Antijoin(Values(((),), ()), Project(sub.node, (), span=span), (), span=span)
    present = project(sub, [(None, None, v)], span, [True])
    null_row = project(Rel(empty, ()), [(None, None, Value(ZERO[c.type], TRUE, c.type))], span, [True])
    one = Rel(Union((present.node, null_row.node), span=span), present.columns)
    env.rel = env.rel.cross(one, span)
    return env.rel.value(len(env.rel.columns) - 1)
