"""GROUP BY and aggregates: a grouped relation, one row per group.

`group(env, keys, calls)` groups env's rows by the key expressions and
computes each aggregate call (COUNT(*), COUNT(x), COUNT(DISTINCT x), SUM,
MIN, MAX, AVG, each optionally DISTINCT). The result is a Rel of the key
columns followed by one column per aggregate, and the mapping from each key
expression and aggregate call (sqlglot expressions, compared structurally) to
its Value -- what SELECT, HAVING and ORDER BY read after grouping.

Each aggregate is one plan Aggregate (MIN/MAX of a text: a TextExtreme, which
orders by the strings) over the rows where its argument is not NULL (SQL
aggregates ignore NULLs), joined to the set of groups on the key
columns (NULL keys group together: a NULL is a flag and a zero, equal to any
other NULL). A group with no such row gets COUNT 0 and NULL for the others;
without GROUP BY there is exactly one group, even over no rows.
"""

from __future__ import annotations

from sqlglot import exp

from compiler.errors import TypeMismatchError
from compiler.plan import Aggregate, Antijoin, Call, Col, Distinct, Join, Project, Union, Values
from compiler.sql.errors import UnsupportedSQLError
from compiler.sql.expressions import Env, condition, evaluated_where, overflow_check, show, translate, wrapped_around
from compiler.sql.relation import Column, Rel, project
from compiler.sql.text_extreme import TextExtreme
from compiler.sql.values import BOOL, FALSE, FLOAT, INT, PLAN_TYPE, TEXT, TRUE, Value, and_, cast_value, not_

_FUNCS = {exp.Count: "count", exp.Sum: "sum", exp.Min: "min", exp.Max: "max", exp.Avg: "mean",
          exp.LogicalAnd: "min", exp.LogicalOr: "max"}  # bool_and / bool_or: MIN / MAX of booleans


def group(env: Env, keys: list, calls: list, span=None, outer: Rel | None = None, outer_columns=()) -> tuple[Rel, dict]:
    """Group env's rows by `keys`; in a correlated subquery also by the outer row.

    `outer` is the subquery's demand (the distinct outer rows) and `outer_columns`
    the columns of env.rel that hold it: the groups are then per outer row too,
    and without GROUP BY every outer row is a group, rows or not (so COUNT is 0
    and MAX is NULL for an outer row that matches nothing, as in SQL). The
    grouped Rel keeps those columns, named as in env.rel."""
    t, rel = env.t, env.rel
    by_outer = [rel.value(i) for i in outer_columns]
    key_values = by_outer + [translate(env, k) for k in keys]
    if env.rel is not rel:
        raise t.error(UnsupportedSQLError, "a subquery in GROUP BY is not supported", keys[0] if keys else None)
    keyed = project(rel, [(rel.columns[i].table, rel.columns[i].name, v) for i, v in zip(outer_columns, by_outer)]
                    + [(None, None, v) for v in key_values[len(by_outer):]], span)
    k = keyed.node.arity
    if outer is not None and not keys:
        groups = project(outer, [(c.table, c.name, outer.value(j)) for j, c in enumerate(outer.columns)], span)
        assert groups.node.types == keyed.node.types, "the outer rows are laid out as their columns in env.rel"
    elif key_values:
        groups = keyed.distinct(span)
    else:
        groups = Rel(Values(((),), ()), ())
    result = groups
    grouped: dict = {}
    for key, col in zip(keys, groups.columns[len(by_outer):]):
        grouped.setdefault(key, stored_value(col))
    for call in dict.fromkeys(calls):
        result = _add_aggregate(env, result, key_values, k, call, bool(keys), span)
        grouped[call] = stored_value(result.columns[-1])
    return result, grouped


_NAMES = {exp.LogicalAnd: "BOOL_AND", exp.LogicalOr: "BOOL_OR"}


def stored_value(c: Column) -> Value:
    from compiler.sql.values import stored

    return stored(c.value, c.null, c.type)


def _add_aggregate(env: Env, result: Rel, key_values, k: int, call, grouped: bool, span) -> Rel:
    t, rel = env.t, env.rel
    kept = TRUE  # the rows the aggregate reads: `agg(x) FILTER (WHERE cond)` reads those where cond is true
    if isinstance(call, exp.Filter):
        call, where = call.this, call.expression.this
        kept = condition(env, where).true
        if env.rel is not rel:
            raise t.error(UnsupportedSQLError, "a subquery in FILTER (WHERE ...) is not supported", where)
    func = _FUNCS[type(call)]
    arg_node = call.this
    distinct = isinstance(arg_node, exp.Distinct)
    if distinct:
        if len(arg_node.expressions) != 1:
            raise t.error(UnsupportedSQLError, f"{func.upper()}(DISTINCT ...) of several expressions is not supported", call)
        arg_node = arg_node.expressions[0]
    star = isinstance(arg_node, exp.Star) or arg_node is None
    if star and func != "count":
        raise t.error(UnsupportedSQLError, f"{call.sql()} is not supported", call)
    arg_nullable = False
    if star:
        rows = project(rel.filter(kept, span), [(None, None, v) for v in key_values], span)
        arg_type = None
    else:
        with evaluated_where(env, kept):
            arg = translate(env, arg_node)
        if env.rel is not rel:
            raise t.error(UnsupportedSQLError, f"a subquery in the argument of {call.key.upper()} is not supported", arg_node)
        if arg.null == TRUE:  # an aggregate of NULLs only: no row counts
            arg = Value(arg.value, TRUE, arg.type if func in ("count",) else INT)
        if isinstance(call, (exp.LogicalAnd, exp.LogicalOr)) and arg.type != BOOL:
            raise t.error(TypeMismatchError, f"{_NAMES[type(call)]} needs a boolean, not {show(arg_node)}", call)
        as_bool = arg.type == BOOL and func in ("min", "max")
        if as_bool:  # a bool is stored as 0/1: its MIN/MAX is the number's
            arg = cast_value(arg, INT)
        if func != "count" and arg.type not in (INT, FLOAT) and not (arg.type == TEXT and func in ("min", "max")):
            what = "text" if arg.type == TEXT else "boolean" if arg.type == BOOL else arg.type
            raise t.error(TypeMismatchError, f"{call.key.upper()} needs a number, not a {what}", call)
        arg_nullable = arg.null != FALSE
        present = rel.filter(and_(kept, not_(arg.null)), span)
        rows = project(present, [(None, None, v) for v in key_values] + [(None, None, Value(arg.value, FALSE, arg.type))], span)
        arg_type = BOOL if as_bool else arg.type
    node = rows.node
    if distinct:
        node = Distinct(node, span=span)
    group_cols = tuple(range(k))
    if func in ("min", "max") and arg_type == TEXT:  # by the strings' order, not the symbol ids'
        agg = TextExtreme(node, group_cols, func == "max", k, span=span)
    else:
        agg = Aggregate(node, group_cols, func, None if func == "count" else k, span=span)
    if func == "sum" and arg_type == INT:
        _sum_overflow_check(env, node, agg, k, call, span)
    out_type = INT if func == "count" else FLOAT if func == "mean" else arg_type
    # Join the aggregate's value onto the groups; groups it has no row for get 0 (COUNT) or NULL.
    keys = tuple((i, i) for i in range(k))  # the group keys are the first k plan columns of both
    width = result.node.arity
    may_miss = not grouped or (not star and arg_nullable) or kept != TRUE
    if not may_miss and width == k:  # the first aggregate, over every group: it is the result
        return Rel(agg, result.columns + (Column(None, None, out_type, k, None),))
    joined = Join(result.node, agg, keys, span=span)
    value_col = width + k
    if not may_miss:
        columns = result.columns + (Column(None, None, out_type, value_col, None),)
        return Rel(joined, columns)
    have = Project(agg, tuple(Col(i, agg.types[i]) for i in range(k)), span=span)
    missing = Antijoin(result.node, have, keys, span=span)
    plan_type = PLAN_TYPE[out_type]
    same = tuple(Col(i, tp) for i, tp in enumerate(result.node.types))
    found = Project(joined, same + (Col(value_col, plan_type), _const(0)), span=span)
    fill = (_const(0), _const(0)) if func == "count" else (_zero(plan_type), _const(1))
    filled = Project(missing, same + fill, span=span)
    node = Union((found, filled), span=span)
    if func == "count":  # never NULL: drop the flag
        node = Project(node, tuple(Col(i, tp) for i, tp in enumerate(node.types[:-1])), span=span)
        return Rel(node, result.columns + (Column(None, None, out_type, width, None),))
    return Rel(node, result.columns + (Column(None, None, out_type, width, width + 1),))


def _sum_overflow_check(env: Env, rows, total, k: int, call, span) -> None:
    """SUM of integers is an error where a group's sum does not fit in 64 bits: the int64
    sum (wrapping) is compared with the same sum in floats, per group."""
    in_floats = Project(rows, tuple(Col(i, rows.types[i]) for i in range(k)) + (Call("to_float", (Col(k, "number"),)),), span=span)
    float_total = Aggregate(in_floats, tuple(range(k)), "sum", k, span=span)
    both = Join(total, float_total, tuple((i, i) for i in range(k)), span=span)
    overflow_check(Env(env.t, Rel(both, ())), wrapped_around(Col(k, "number"), Col(2 * k + 1, "float")), call)


def _const(v: int):
    from compiler.plan import Const

    return Const(v, "number")


def _zero(plan_type: str):
    from compiler.plan import Const

    return Const(0.0, "float") if plan_type == "float" else Const(0, plan_type) if plan_type == "number" else Const("", "symbol")


def find_aggregates(nodes) -> list:
    """The aggregate calls in `nodes` (not those inside subqueries), in order."""
    out = []
    for n in nodes:
        if n is None:
            continue
        for sub in n.walk(prune=lambda x: isinstance(x, (exp.Subquery, exp.Query)) and x is not n):
            if isinstance(sub, tuple(_FUNCS)):
                out.append(sub.parent if isinstance(sub.parent, exp.Filter) else sub)  # with its FILTER (WHERE ...)
    return out
