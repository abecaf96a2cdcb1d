"""WITH and WITH RECURSIVE: CTEs as bindings, recursive groups as fixpoints.

Non-recursive CTEs are translated in order, each a Binding its readers Ref.
In WITH RECURSIVE, the CTEs that refer to each other form strongly
connected groups; each group is one plan Fixpoint (one runtime `iterate`
with a variable per CTE), so mutual recursion is just a bigger group.

A recursive CTE's body is `base UNION rec` (any number of branches; those
not reading the group are the base), or any single query reading the group
(e.g. `SELECT k, MIN(d) FROM (... UNION ALL ...) GROUP BY k`, the form of
shortest paths). Its meaning is the least fixpoint of the body, iterated
from empty: with UNION (or a query whose rows are a set) a set, so it
terminates on cyclic data like Datalog does. Inside the group, a CTE may
not be read under NOT EXISTS / NOT IN / EXCEPT, the padded side of an
outer join, COUNT/SUM/AVG, LIMIT/OFFSET, a scalar subquery, or MIN/MAX
inside EXISTS or IN, ANY or ALL (subquery), or EXISTS / IN used as a value
rather than a WHERE condition (none is monotone, or not planned as such:
more rows of the CTE could take rows away); MIN and MAX are allowed
otherwise. Subqueries that read other tables -- correlated or not -- may
appear anywhere in a member.

A group whose members take MIN or MAX may have no fixpoint: such a loop that
has not settled after the recursion limit's number of iterations is an error
at commit time naming the CTE (the session cannot go on after it).

`base UNION ALL rec` keeps SQL's bag semantics: iteration i adds rec of the
rows added by iteration i-1. It is translated with a hidden depth column
(base rows 0, rec adds 1). The recursion limit guards it: rows made by that
many iterations are not extended, and if extending them would have made a
row, the recursion had not finished -- an error at commit time naming the
CTE and where it is (raise the limit with `recursion_limit=`, or the CLI's
--recursion-limit). UNION ALL recursion must be linear: each rec branch
reads the CTE once, in its own FROM.

Checks made in a recursive member (a scalar subquery's one-row check) read
the fixpoint's variables, so they become steps after the Fixpoint
(Translator.defining).
"""

from __future__ import annotations

from sqlglot import exp

from compiler.errors import TypeMismatchError
from compiler.plan import Binding, Call, Col, Const, Distinct, Filter, Fixpoint, Project, Ref, Union
from compiler.sql.aggregate import find_aggregates
from compiler.sql.errors import UnsupportedSQLError
from compiler.sql.relation import Column, Rel, conform
from compiler.sql.select import unified_shape
from compiler.sql.values import INT, PLAN_TYPE

DEPTH = "#depth"


class _NeedShape(Exception):
    pass


def define_ctes(t, with_: exp.With) -> None:
    ctes = list(with_.expressions)
    names = [c.alias for c in ctes]
    if len(set(names)) != len(names):
        raise t.error(UnsupportedSQLError, "two CTEs with the same name", with_)
    if not with_.args.get("recursive"):
        for cte in ctes:
            _define(t, cte)
        return
    deps = {c.alias: {n.name for n in c.this.find_all(exp.Table) if n.name in names and not n.args.get("db")} for c in ctes}
    by_name = {c.alias: c for c in ctes}
    for group in _components(names, deps):
        if len(group) == 1 and group[0] not in deps[group[0]]:
            _define(t, by_name[group[0]])
        else:
            _define_recursive(t, [by_name[n] for n in group])


def _column_names(cte, rel: Rel) -> list:
    alias = cte.args.get("alias")
    if alias is not None and alias.columns:
        names = [c.name for c in alias.columns]
        return names
    return [c.name for c in rel.columns]


def _define(t, cte) -> None:
    rel = t.query(cte.this)
    names = _column_names(cte, rel)
    if len(names) != len(rel.columns):
        raise t.error(UnsupportedSQLError, f"CTE {cte.alias} names {len(names)} columns, but its query has {len(rel.columns)}", cte)
    bound = t.bind(rel.aliased(None, names), cte.alias, t.span(cte))
    t.scopes[-1][cte.alias] = lambda item, r=bound: r


def _components(names, deps) -> list[list[str]]:
    """Strongly connected components in dependency order (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(deps[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            out.append(sorted(group, key=names.index))

    for v in names:
        if v not in index:
            visit(v)
    return out


def _branches(body):
    """(kind, branches): 'union' / 'union_all' for a top-level UNION chain, else ('query', [body])."""
    if isinstance(body, exp.Union) and not body.args.get("order") and not body.args.get("limit") and not (body.args.get("with_") or body.args.get("with")):
        distinct = body.args.get("distinct", True) is not False
        out = []

        def flatten(q):
            if isinstance(q, exp.Union) and (q.args.get("distinct", True) is not False) == distinct and not q.args.get("order") and not q.args.get("limit"):
                flatten(q.this)
                flatten(q.expression)
            else:
                out.append(q)

        flatten(body)
        return ("union" if distinct else "union_all"), out
    return "query", [body]


def _reads(q, names) -> list:
    return [n for n in q.find_all(exp.Table) if n.name in names and not n.args.get("db")]


def _check_monotone(t, member, branch, names) -> None:
    for ref in _reads(branch, names):
        node, child = ref.parent, ref
        extreme = False  # the CTE is read under MIN or MAX somewhere below `node`
        while node is not None and child is not branch:
            bad = None
            if isinstance(node, (exp.Select, exp.Subquery)) and (node.args.get("limit") or node.args.get("offset")):
                bad = "LIMIT / OFFSET"
            elif _is_scalar_subquery(node):
                bad = "a scalar subquery"
            elif extreme and (isinstance(node, exp.Exists) or (isinstance(node, exp.In) and child is node.args.get("query"))):
                bad = "MIN / MAX in an EXISTS or IN subquery"
            elif isinstance(node, exp.Not) and child.find(exp.Exists, exp.In) is not None:
                bad = "NOT EXISTS / NOT IN"
            elif (isinstance(node, exp.Exists) or (isinstance(node, exp.In) and child is node.args.get("query"))) and not _filters(node):
                bad = "EXISTS / IN used as a value (it may turn from false to true)"
            elif isinstance(node, (exp.All, exp.Any)):
                bad = f"{node.key.upper()} (subquery)"
            elif isinstance(node, exp.Except) and child is node.expression:
                bad = "the right side of EXCEPT"
            elif isinstance(node, exp.Join):
                side = (node.side or "").upper()
                if side == "FULL" or (side == "LEFT" and child is node.this):
                    bad = f"the NULL-padded side of a {side} JOIN"
            elif isinstance(node, exp.Select) and child is not node.args.get("with_"):
                joins = node.args.get("joins") or []
                if any((j.side or "").upper() == "RIGHT" for j in joins) and child is (node.args.get("from_") or node.args.get("from")):
                    bad = "the NULL-padded side of a RIGHT JOIN"
                for call in find_aggregates(list(node.expressions) + [node.args.get("having")]):
                    if not isinstance(call, (exp.Min, exp.Max)):
                        bad = f"{call.key.upper()} (only MIN and MAX may aggregate a recursive CTE)"
                    extreme = True
            if bad is not None:
                raise t.error(UnsupportedSQLError, f"recursive CTE '{ref.name}' is read under {bad} in the definition of '{member}': not monotone", ref)
            child, node = node, node.parent


def _filters(node) -> bool:
    """Whether `node` is a conjunct of a WHERE, or its negation (a semi- or anti-join, the
    latter refused as such), not a value."""
    while isinstance(node.parent, (exp.And, exp.Paren, exp.Not)):
        node = node.parent
    return isinstance(node.parent, exp.Where)


def _is_scalar_subquery(node) -> bool:
    """A subquery used as a value (not a FROM item, an IN list, a CTE or a set operation's side)."""
    return isinstance(node, exp.Subquery) and not isinstance(node.parent, (exp.From, exp.Join, exp.In, exp.CTE, exp.SetOperation, exp.Subquery,
                                                                           exp.Any, exp.All))


def _define_recursive(t, ctes) -> None:
    names = [c.alias for c in ctes]
    plans = {}
    for cte in ctes:
        kind, branches = _branches(cte.this)
        base = [b for b in branches if not _reads(b, names)]
        rec = [b for b in branches if _reads(b, names)]
        for b in rec:
            _check_monotone(t, cte.alias, b, names)
        plans[cte.alias] = (kind, base, rec)
    if any(k == "union_all" for k, _, _ in plans.values()):
        if len(ctes) > 1:
            raise t.error(UnsupportedSQLError, "mutually recursive CTEs must use UNION, not UNION ALL", ctes[0])
        return _define_union_all(t, ctes[0], *plans[ctes[0].alias][1:])
    # Shapes (type, nullable per column): from the base branches, then widened by the others.
    shapes: dict = {}
    base_rels = {}
    for cte in ctes:
        _, base, _ = plans[cte.alias]
        if base:
            rels = [t.query(b) for b in base]
            base_rels[cte.alias] = rels
            shapes[cte.alias] = unified_shape(t, rels, cte)
    bnames = {n: t.fresh(n) for n in names}
    mark = len(t.steps)
    for cte in ctes:  # no base branch (e.g. SELECT k, MIN(d) FROM (... UNION ALL ...) GROUP BY k):
        if cte.alias not in shapes:  # start from non-NULL integers and widen
            width = len(_names(t, cte, None)) if _names(t, cte, None) is not None else None
            if width:
                shapes[cte.alias] = [(INT, False)] * width
    with t.defining(bnames.values()) as pending:  # checks go after the Fixpoint
        for _ in range(len(ctes) + 3):
            del t.steps[mark:]  # what an earlier round with narrower shapes made
            del pending[:]
            changed, results = False, {}
            for cte in ctes:
                name = cte.alias
                _, _, rec = plans[name]
                parts = []
                try:
                    t.scopes.append({n: _ref_source(t, n, bnames[n], shapes, ctes) for n in names})
                    try:
                        parts = [t.query(b) for b in rec]
                    finally:
                        t.scopes.pop()
                except _NeedShape:
                    continue
                rels = base_rels.get(name, []) + parts
                if not rels:
                    continue
                new = unified_shape(t, rels + ([_shape_rel(shapes[name])] if name in shapes else []), cte)
                if shapes.get(name) != new:
                    shapes[name], changed = new, True
                results[name] = rels
            if not changed and len(results) == len(ctes):
                break
        else:
            missing = [n for n in names if n not in shapes]
            raise t.error(UnsupportedSQLError, f"cannot tell the column types of recursive CTE '{missing[0] if missing else names[0]}' (give it a non-recursive branch)", ctes[0])
        bindings = []
        for cte in ctes:
            name = cte.alias
            kind = plans[name][0]
            span = t.span(cte)
            parts = [conform(r, shapes[name], span) for r in results[name]]
            node = parts[0].node if len(parts) == 1 else Union(tuple(p.node for p in parts), span=span)
            bindings.append(Binding(bnames[name], Distinct(node, span=span), span=span))
        t.steps.append(Fixpoint(tuple(bindings), round_limit=_round_limit(t, ctes, plans, bnames)))
    for cte, b in zip(ctes, bindings):
        rel = Rel(Ref(b.name, b.body.types), _columns(shapes[cte.alias], _names(t, cte, shapes[cte.alias])))
        t.scopes[-1][cte.alias] = lambda item, r=rel: r


def _round_limit(t, ctes, plans, bnames) -> int | None:
    """The recursion limit, for a group whose members take MIN or MAX: the least fixpoint a
    monotone body reaches need not exist then (`best` climbing to a bound by MAX, past it
    back to its start, and up again), and without a limit the loop would never end."""
    extremes = [cte for cte in ctes if any(b.find(exp.Min, exp.Max) is not None for b in plans[cte.alias][2])]
    if not extremes:
        return None
    name = extremes[0].alias
    t.round_limits[frozenset(bnames.values())] = (
        f"recursive CTE '{name}' did not settle within {t.recursion_limit} iterations: MIN and MAX over a recursion need not"
        f" reach a fixpoint; if it is still converging, raise the limit (deltalog --recursion-limit N,"
        f" compile_sql(..., recursion_limit=N))", t.span(extremes[0]))
    return t.recursion_limit


def _names(t, cte, shape) -> list:
    alias = cte.args.get("alias")
    if alias is not None and alias.columns:
        names = [c.name for c in alias.columns]
        if shape is not None and len(names) != len(shape):
            raise t.error(UnsupportedSQLError, f"CTE {cte.alias} names {len(names)} columns, but its query has {len(shape)}", cte)
        return names
    kind, branches = _branches(cte.this)
    first = branches[0]
    while isinstance(first, exp.Subquery):
        first = first.this
    if isinstance(first, exp.Select):
        return [e.alias_or_name for e in first.expressions]
    return None if shape is None else [f"col{i}" for i in range(len(shape))]


def _columns(shape, names) -> tuple:
    cols, i = [], 0
    for (ty, nullable), name in zip(shape, names):
        n = i + 1 if nullable else None
        cols.append(Column(None, name, ty, i, n))
        i += 2 if nullable else 1
    return tuple(cols)


def _plan_types(shape) -> tuple:
    out = []
    for ty, nullable in shape:
        out.append(PLAN_TYPE[ty])
        if nullable:
            out.append("number")
    return tuple(out)


def _shape_rel(shape) -> Rel:
    from compiler.plan import Values

    return Rel(Values((), _plan_types(shape)), _columns(shape, [None] * len(shape)))


def _ref_source(t, name, binding, shapes, ctes):
    def source(item):
        if name not in shapes:
            raise _NeedShape()
        cte = next(c for c in ctes if c.alias == name)
        return Rel(Ref(binding, _plan_types(shapes[name]), span=t.span(item)), _columns(shapes[name], _names(t, cte, shapes[name])))

    return source


def _define_union_all(t, cte, base, rec) -> None:
    name = cte.alias
    span = t.span(cte)
    if not base:
        raise t.error(UnsupportedSQLError, f"recursive CTE '{name}' has no non-recursive branch", cte)
    for b in rec:
        refs = _reads(b, [name])
        if len(refs) != 1:
            raise t.error(UnsupportedSQLError, f"a UNION ALL recursive member must read '{name}' exactly once (it reads it {len(refs)} times)", b)
        member = b
        while isinstance(member, exp.Subquery):
            member = member.this
        if not isinstance(refs[0].parent, (exp.From, exp.Join)) or refs[0].parent.parent is not member:
            # the iteration depth each row carries comes from the member's own FROM
            raise t.error(UnsupportedSQLError, f"a UNION ALL recursive member must read '{name}' in its own FROM or JOIN, not in a subquery", refs[0])
        if not isinstance(member, exp.Select):
            raise t.error(UnsupportedSQLError, "a UNION ALL recursive member must be a plain SELECT", b)
    base_rels = [t.query(b) for b in base]
    shape = unified_shape(t, base_rels, cte)
    names = _names(t, cte, shape)
    binding = t.fresh(name)
    limit = t.recursion_limit
    with t.defining([binding]) as pending:  # checks go after the Fixpoint
        for _ in range(3):
            del pending[:]  # what an earlier round with narrower shapes made
            rows = Ref(binding, _plan_types(shape) + ("number",))
            depth = Col(rows.arity - 1, "number")
            extended = Filter(rows, Call("<", (depth, Const(limit, "number"))))  # the guard: rows made by iteration `limit` are not extended
            parts = _members(t, rec, name, Rel(extended, _columns(shape, names) + (Column(None, DEPTH, INT, rows.arity - 1, None),)))
            wider = unified_shape(t, [_shape_rel(shape)] + [Rel(p.node, p.columns[:-1]) for p in parts], cte)
            if wider == shape:
                break
            shape = wider
        else:
            raise t.error(TypeMismatchError, f"the column types of recursive CTE '{name}' do not settle", cte)
        node = _with_depths(base_rels, parts, shape, span)
        t.steps.append(Fixpoint((Binding(binding, node, span=span),)))
    full = Ref(binding, node.types)
    cols = _columns(shape, names)
    # The guard tripped if a row it kept from being extended would have made a row: the
    # members over exactly those rows have one.
    stopped = Filter(full, Call(">=", (Col(node.arity - 1, "number"), Const(limit, "number"))), span=span)
    for p in _members(t, rec, name, Rel(stopped, cols + (Column(None, DEPTH, INT, node.arity - 1, None),))):
        t.check(p.node, f"recursive CTE '{name}' (UNION ALL) did not finish within {limit} iterations; raise the limit"
                f" (deltalog --recursion-limit N, compile_sql(..., recursion_limit=N)), or use UNION for set semantics", span)
    visible = Project(full, tuple(Col(i, tp) for i, tp in enumerate(node.types[:-1])), span=span)
    rel = Rel(visible, cols)
    t.scopes[-1][name] = lambda item, r=rel: r


def _members(t, rec, name, source: Rel) -> list[Rel]:
    """The UNION ALL recursive members reading `name` as `source` (whose last column is each
    row's depth); each member's rows end with the depth of the row they came from."""
    t.scopes.append({name: lambda item: source})
    try:
        parts = []
        for b in rec:
            alias = _reads(b, [name])[0].alias_or_name
            sel = b
            while isinstance(sel, exp.Subquery):
                sel = sel.this
            parts.append(t.select(sel, carry=[(alias, DEPTH)]))
        return parts
    finally:
        t.scopes.pop()


def _with_depths(base_rels, parts, shape, span):
    """The body of a UNION ALL recursion: base rows at depth 0, member rows one deeper than their source."""
    from compiler.sql.relation import project
    from compiler.sql.values import Value, constant

    wanted = shape + [(INT, False)]
    pieces = []
    for r in base_rels:
        with_depth = project(r, [(c.table, c.name, r.value(i)) for i, c in enumerate(r.columns)] + [(None, DEPTH, constant(0))], span)
        pieces.append(conform(with_depth, wanted, span))
    for p in parts:
        d = p.value(len(p.columns) - 1)
        stepped = project(p, [(c.table, c.name, p.value(i)) for i, c in enumerate(p.columns[:-1])] + [(None, DEPTH, Value(Call("+", (d.value, Const(1, "number"))), d.null, INT))], span)
        pieces.append(conform(stepped, wanted, span))
    return Union(tuple(p.node for p in pieces), span=span)
