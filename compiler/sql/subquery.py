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

A scalar subquery `(SELECT ...)` in an expression is its one value, or NULL
for no rows; more than one row is an error at commit time (a check of
compiler.sql.translator), as in SQL engines. Uncorrelated, it is computed
once and crossed with the rows; correlated, it is decorrelated: computed per
distinct value of the outer columns it reads, grouped per such value when it
aggregates, and LEFT-joined back (see _correlated_scalar).
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from compiler.plan import Antijoin, Call, Col, Const, Distinct, Filter, Join, Project, Union, Values
from compiler.sql.aggregate import find_aggregates
from compiler.sql.errors import UnsupportedSQLError
from compiler.sql.expressions import Env, compare, condition, translate
from compiler.sql.relation import Column, Rel, project, stored_layout
from compiler.sql.values import FALSE, INT, ONE, TRUE, ZERO, Value, and_, boolean, not_, or_


def conjuncts(e) -> list:
    """The AND-ed parts of a condition (parentheses looked through)."""
    while isinstance(e, exp.Paren):
        e = e.this
    if isinstance(e, exp.And):
        return conjuncts(e.this) + conjuncts(e.expression)
    return [e]


def apply_where(t, rel: Rel, cond) -> Rel:
    plain, subs = [], []
    for c in conjuncts(cond):
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
    if isinstance(node, exp.Exists):
        q = node.this
    elif isinstance(node, exp.In):
        q = node.args["query"]
    else:  # x op ANY / ALL (q)
        q = node.expression.this
    while isinstance(q, exp.Subquery):
        q = q.this
    return q


def _operator(node) -> str:
    """The comparison `x ... (q)` tests: = for IN, op for op ANY / ALL (q)."""
    from compiler.sql.expressions import _COMPARE

    return "=" if isinstance(node, exp.In) else _COMPARE[type(node)]


def _compared(node) -> list:
    """The expressions `x` of `x IN (q)` or `x op ANY (q)`: several for a row `(a, b) IN (q)`."""
    if isinstance(node, exp.Exists):
        return []
    return list(node.this.expressions) if isinstance(node.this, exp.Tuple) else [node.this]


def _semi(t, rel: Rel, negated: bool, node) -> Rel:
    """The rows of rel for which `[NOT] EXISTS (q)` / `x [NOT] IN (q)` is TRUE."""
    span = t.span(node)
    left = rel.compact(span)
    compared = _compared(node)
    if compared:
        env = Env(t, left)
        xs = [translate(env, e) for e in compared]
        left = project(env.rel, [(c.table, c.name, env.rel.value(i)) for i, c in enumerate(env.rel.columns)] + [(None, None, x) for x in xs], span)
    holds, unknown = _membership(t, left, node, unknown=negated)
    m = holds if unknown is None else Distinct(Union((holds, unknown), span=span), span=span)
    keys = tuple((i, i) for i in range(left.node.arity))
    if negated:
        node_out = Antijoin(left.node, m, keys, span=span)
    else:
        node_out = Project(Join(left.node, m, keys, span=span), tuple(Col(i, tp) for i, tp in enumerate(left.node.types)), span=span)
    return Rel(node_out, left.columns[: len(left.columns) - len(compared)])  # x's columns dropped again


def membership_value(env: Env, node) -> Value:
    """`EXISTS (q)` / `x IN (q)` as a value anywhere (the select list, under OR, in CASE):
    rows of env.rel get flags for whether it holds and whether it is unknown (NULL), as new
    last columns of env.rel (its columns keep their places: values already made read them)."""
    t = env.t
    if isinstance(getattr(node, "expression", None), exp.All):  # x op ALL (q) is NOT (x not-op ANY (q))
        opposite = {exp.EQ: exp.NEQ, exp.NEQ: exp.EQ, exp.LT: exp.GTE, exp.LTE: exp.GT, exp.GT: exp.LTE, exp.GTE: exp.LT}[type(node)]
        some = membership_value(env, opposite(this=node.this, expression=exp.Any(this=node.expression.this)))
        return boolean(some.false, some.true)
    span = t.span(node)
    rel = env.rel
    compared = _compared(node)
    if compared:  # x as new last columns (translating it may widen env.rel)
        xs = [translate(env, e) for e in compared]
        rel = env.rel
        keep = tuple(Col(i, tp) for i, tp in enumerate(rel.node.types))
        exprs, columns = stored_layout([(None, None, x) for x in xs])
        shift = rel.node.arity
        moved = tuple(replace(c, value=c.value + shift, null=None if c.null is None else c.null + shift) for c in columns)
        rel = Rel(Project(rel.node, keep + exprs, span=span), rel.columns + moved)
    left = rel.compact(span)  # the demand's rows: exactly the SQL columns' plan columns, in order
    holds, unknown = _membership(t, left, node, unknown=True)
    width = rel.node.arity
    keys = tuple(pair for c, d in zip(rel.columns, left.columns) for pair in ((c.value, d.value), (c.null, d.null)) if pair[0] is not None)
    flagged = rel.node
    for flags in (holds, unknown):
        if flags is None:
            flagged = Project(flagged, tuple(Col(i, tp) for i, tp in enumerate(flagged.types)) + (Const(0, "number"),), span=span)
            continue
        same = tuple(Col(i, tp) for i, tp in enumerate(flagged.types))
        found = Project(Join(flagged, flags, keys, span=span), same + (Const(1, "number"),), span=span)
        missing = Project(Antijoin(flagged, flags, keys, span=span), same + (Const(0, "number"),), span=span)
        flagged = Union((found, missing), span=span)
    holds_col, unknown_col = Col(width, "number"), Col(width + 1, "number")
    env.rel = Rel(flagged, rel.columns + (Column(None, None, INT, width, None), Column(None, None, INT, width + 1, None)))
    is_true = Call("=", (holds_col, ONE))
    return boolean(is_true, and_(not_(is_true), Call("=", (unknown_col, ZERO[INT]))))


def _membership(t, left: Rel, node, unknown: bool):
    """For `EXISTS (q)` or `x IN (q)` (x: left's last column, or last columns for a row), the
    distinct rows of left for which it is TRUE, and (if `unknown`, for IN) those for which it
    may be NULL (x NULL and q non-empty, or q with a NULL: SQL's NULL rules), or None where
    there are none."""
    span = t.span(node)
    q = _query_of(node)
    correlated = outer_references(q)
    k = len(_compared(node))
    x = None if k == 0 else left.value(len(left.columns) - 1)
    demand = Rel(Distinct(left.node, span=span), tuple(_outer(left)))
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
    if x is not None and len(sub_cols) != k:
        what = "IN (subquery)" if isinstance(node, exp.In) else "a comparison with ANY / ALL (subquery)"
        raise t.error(UnsupportedSQLError, f"{what} needs a subquery of {'one column' if k == 1 else f'{k} columns'}, not {len(sub_cols)}", q)
    xd = d_values[-1] if x is not None else None  # x as a demand column

    def matched(pred) -> object:
        rows = d_rel.filter(pred, span)
        return Distinct(_columns_of(rows, d_values, span), span=span)

    if x is None:  # EXISTS: never NULL
        return matched(TRUE), None
    if k > 1:  # a row: equal when every column is; unknown when none differs and one is NULL
        tests = [compare(Env(t, d_rel), "=", xi, d_rel.value(i), node) for i, xi in enumerate(d_values[-k:])]
        equal, differ = and_(*(c.true for c in tests)), or_(*(c.false for c in tests))
        nullable = correlated or any(v.null != FALSE for v in d_values[-k:] + [d_rel.value(i) for i in range(k)])
        return matched(equal), (matched(and_(not_(equal), not_(differ))) if unknown and nullable else None)
    y = d_rel.value(0)
    eq = compare(Env(t, d_rel), _operator(node), xd, y, node)
    parts = []
    if unknown:
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
    maybe = None if not parts else parts[0] if len(parts) == 1 else Distinct(Union(tuple(parts), span=span), span=span)
    return matched(eq.true), maybe


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
    """The subquery's one value per row of env.rel, as a new last column of env.rel."""
    t = env.t
    q = e.this
    if outer_references(q):
        return _correlated_scalar(env, e)
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


def _correlated_scalar(env: Env, e) -> Value:
    """A correlated scalar subquery, decorrelated.

    Its demand is the distinct values of the outer columns it reads (after GROUP
    BY, the group keys); it is evaluated once per demand row -- grouped per
    demand row when it aggregates (compiler.sql.aggregate.group), so COUNT is 0
    and MAX NULL where nothing matches -- and joined back onto env.rel's rows by
    those values, with NULL for rows whose demand row got no row. More than one
    row for a demand row is an error at commit."""
    t = env.t
    q = e.this
    while isinstance(q, exp.Subquery):
        q = q.this
    span = t.span(e)
    if not isinstance(q, exp.Select):
        raise t.error(UnsupportedSQLError, "a correlated scalar subquery must be a plain SELECT", e)
    for arg, what in (("limit", "LIMIT"), ("offset", "OFFSET")):
        if q.args.get(arg) is not None:
            raise t.error(UnsupportedSQLError, f"{what} in a correlated scalar subquery is not supported", q.args[arg])
    defined = {n.alias_or_name for n in q.find_all(exp.Table, exp.Subquery, exp.CTE)}
    reads: dict = {}
    for c in q.find_all(exp.Column):
        if c.table and c.table not in defined:
            reads.setdefault((c.table, c.name), c)
    values = [translate(env, c) for c in reads.values()]  # may itself widen env.rel (nested subqueries)
    rel = env.rel
    shift = rel.node.arity
    keep = tuple(Col(i, tp) for i, tp in enumerate(rel.node.types))
    # The demand columns, named as the subquery sees them: one level out.
    demand_exprs, demand_columns = stored_layout([(("outer", table), name, v) for (table, name), v in zip(reads, values)])
    width = len(demand_exprs)
    extended = Project(rel.node, keep + demand_exprs, span=span)
    demand = Rel(Distinct(Project(rel.node, demand_exprs, span=span), span=span), demand_columns)
    carry = [(c.table, c.name) for c in demand_columns]
    body = t.select(q, outer=demand, carry=carry)
    if len(body.columns) != len(carry) + 1:
        raise t.error(UnsupportedSQLError, f"a scalar subquery must return one column, not {len(body.columns) - len(carry)}", e)
    # The answer: the demand columns (laid out as in `demand`), then the value and its NULL flag.
    n = len(carry)
    answer = project(body, [(c.table, c.name, body.value(1 + j)) for j, c in enumerate(demand_columns)] + [(None, None, body.value(0))],
                     span, [False] * n + [True])
    keys = tuple((shift + j, j) for j in range(width))
    value_type = body.columns[0].type
    value_plan = answer.node.types[width]
    found = Project(Join(extended, answer.node, keys, span=span),
                    keep + (Col(shift + 2 * width, value_plan), Col(shift + 2 * width + 1, "number")), span=span)
    parts = [found]
    # An aggregate without GROUP BY or HAVING has exactly one row per demand row; otherwise
    # a demand row may have none (NULL) or several (an error).
    if q.args.get("group") or q.args.get("having") or not find_aggregates(list(q.expressions)):
        matched = Project(answer.node, tuple(Col(j, tp) for j, tp in enumerate(answer.node.types[:width])), span=span)
        t.check_at_most_one_row(matched, e, by=tuple(range(width)))
        alone = Antijoin(extended, Distinct(matched, span=span), keys, span=span)
        parts.append(Project(alone, keep + (ZERO[value_type], Const(1, "number")), span=span))
    node = parts[0] if len(parts) == 1 else Union(tuple(parts), span=span)
    env.rel = Rel(node, rel.columns + (Column(None, None, value_type, shift, shift + 1),))
    return env.rel.value(len(env.rel.columns) - 1)
