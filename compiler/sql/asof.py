"""ASOF JOIN: each left row with the right row of the same key and the latest time at
or before its own -- as the right side was when the left row arrived.

SQL, as DuckDB writes it:

    SELECT o.id, p.price FROM orders o ASOF [LEFT] JOIN prices p
      ON o.item = p.item AND o.at >= p.at

The ON condition is equalities between a left and a right expression (the
key) and exactly one inequality between a left and a right time (int or
float). With `o.at >= p.at` the match is the right row with the greatest
p.at <= o.at (`>`: strictly before); with `o.at <= p.at` the least p.at >=
o.at (`<`: strictly after). A left row matches at most one right row: among
right rows tied on the best time, the least by their stored values (DuckDB
picks an arbitrary one). NULL keys and times never match. ASOF LEFT JOIN keeps
the left rows without a match, with NULLs for the right columns.

Incremental meaning, the calculus post's orders and prices (as Datalog's
`asof` relations and runtime `Collection.as_of_join`): each change of the
left side is looked up in the right side *as it is at that change's time*
(right changes committed at the same time included). Later right changes --
a new price, a corrected one, a deleted one -- never rewrite earlier results.
A retraction of a left row is an event of its own, looked up as of its own
time: if the right side changed in between, it does not cancel the row the
insertion produced (the output keeps both, +1 and -1, as a log would).

`AsOfJoin` is the SQL front end's plan node for it (left columns, then right
columns). It lowers to a half_join of the left updates into the right
arrangement (no arrangement of the left side), the time condition as a
filter, and the pick of the best candidate *per left update*: the candidates
and a marker per left update are differentiated into an AltNeu scope, so a
reduce keyed by the left row sees, at (t, alt), only the events of time t
(runtime.calculus); integrating keeps those picks. The cost of a left update
is the number of right rows with its key.
"""

from __future__ import annotations

import numpy as np
from sqlglot import exp

from compiler.errors import TypeMismatchError
from compiler.plan import Const
from compiler.plan.errors import PlanError
from compiler.plan.nodes import Node, _derived, _span, node
from compiler.plan.ops import SYMBOL
from compiler.sql.errors import UnsupportedSQLError
from compiler.sql.expressions import Env, translate
from compiler.sql.relation import Column, Rel, project
from compiler.sql.subquery import conjuncts
from compiler.sql.values import FALSE, FLOAT, INT, ONE, ZERO, Value, cast_value, common_type, if_, not_, or_
from runtime.calculus import differentiate, integrate
from runtime.operators.reduce import Reducer

# The inequality as written with the left time first: (pick the greatest right time?, strict?)
_INEQUALITIES = {">=": (True, False), ">": (True, True), "<=": (False, False), "<": (False, True)}
_OPS = {exp.GTE: ">=", exp.GT: ">", exp.LTE: "<=", exp.LT: "<", exp.EQ: "="}
_MIRROR = {">=": "<=", ">": "<", "<=": ">=", "<": ">", "=": "="}


@node
class AsOfJoin(Node):
    """Each left row (update) with its as-of match in right: left's columns, then right's.

    keys: (left column, right column) pairs that must be equal; times: (left column,
    right column); op: the inequality "left time OP right time". `pad`: for an ASOF
    LEFT JOIN, the right row (constants) of a left row without a match; `usable`: a
    left number column that is 1 where the row may match (its key and time are not NULL)."""

    left: Node
    right: Node
    keys: tuple[tuple[int, int], ...]
    times: tuple[int, int]
    op: str
    pad: tuple | None = None
    usable: int | None = None
    span: object = _span()
    types: tuple[str, ...] = _derived()
    _child_fields = ("left", "right")
    # Each change of an input row is an event: a Distinct below must stay, as it does under
    # any node without `passes_multiplicities` (compiler.plan.rewrites.distinct).

    def __post_init__(self):
        object.__setattr__(self, "keys", tuple((int(a), int(b)) for a, b in self.keys))
        if self.op not in _INEQUALITIES:
            raise PlanError(f"AsOfJoin: {self.op!r} is not an inequality")
        for a, b in self.keys + (self.times,):
            if not (0 <= a < self.left.arity and 0 <= b < self.right.arity) or self.left.types[a] != self.right.types[b]:
                raise PlanError(f"AsOfJoin: columns ({a}, {b}) are out of range or of different types")
        if self.left.types[self.times[0]] == SYMBOL:
            raise PlanError("AsOfJoin: times are numbers or floats")
        if self.pad is not None and tuple(c.type for c in self.pad) != self.right.types:
            raise PlanError("AsOfJoin: the padding row does not have the right side's types")
        object.__setattr__(self, "types", self.left.types + self.right.types)

    def describe(self) -> str:
        keys = ", ".join(f"#{a}=#{b}" for a, b in self.keys)
        kind = "AsOfJoin left" if self.pad is not None else "AsOfJoin"
        return f"{kind} on {keys}, #{self.times[0]} {self.op} #{self.times[1]}"

    def lower(self, inputs):
        left, right = inputs
        width, right_width, k = left.arity, right.arity, len(self.keys)
        lt, rt = self.times
        greatest, _ = _INEQUALITIES[self.op]
        usable = left if self.usable is None else left.filter_columns(lambda d, u=self.usable: d[u] == 1)
        stream = usable.select([a for a, _ in self.keys] + list(range(width)))
        arranged = right.select([b for _, b in self.keys] + list(range(right_width)))
        # Candidates: (key..., left..., right...) as of each left update's time.
        found = stream.half_join(arranged, key=k)
        left_time, right_time = k + lt, k + width + rt
        compare = {">=": np.greater_equal, ">": np.greater, "<=": np.less_equal, "<": np.less}[self.op]
        found = found.filter_columns(lambda d: compare(d[left_time], d[right_time]))
        flagged = found.map_columns(
            lambda d: np.concatenate([d[k : k + width], np.ones((1, d.shape[1]), np.int64), d[k + width :]]),
            types=left.types + ("int",) + right.types)
        pad_codes = None if self.pad is None else _codes(self.pad, left.dataflow)
        markers = left.map_columns(
            lambda d: np.concatenate([d, np.zeros((1 + right_width, d.shape[1]), np.int64)]),
            types=left.types + ("int",) + right.types)
        events = differentiate(flagged.concat(markers))
        pick = _PickAsOf(1 + rt, greatest, pad_codes, right_width)
        picked = events.reduce_columns(pick, width, right.types, "asof_pick")
        return integrate(picked)


def _codes(row, dataflow) -> np.ndarray:
    """A row of plan constants as the runtime's int64 codes."""
    from compiler.lowering.columns import runtime_types

    return dataflow.codec.encode_rows([tuple(c.value for c in row)], runtime_types(tuple(c.type for c in row)))[:, 0]


class _PickAsOf(Reducer):
    """Per left row, of the events at one time: the best candidate, with the left row's count.

    Values are (flag, right columns...): flag 0 is the marker of a left update (its count
    is the update's), flag 1 a candidate. `time` is the right time's index in the values."""

    def __init__(self, time_index: int, greatest: bool, pad, out_arity: int):
        self.time, self.greatest, self.pad = time_index, greatest, pad
        self.out_arity = out_arity

    def __call__(self, group, val, count):
        if len(group) == 0:
            return group, val[1:, :0], count[:0]
        groups, first, gid = np.unique(group, return_index=True, return_inverse=True)
        gid = gid.reshape(-1)
        marker = val[0] == 0
        updates = np.zeros(len(groups), np.int64)
        np.add.at(updates, gid[marker], count[marker])
        candidate = np.flatnonzero(~marker & (count != 0))
        time = val[self.time, candidate]
        best_first = ~time if self.greatest else time  # ~ reverses int64 order without overflow
        # Sort candidates by group, then best time, then the right row (ties: the least row).
        order = np.lexsort(tuple(val[r, candidate] for r in range(val.shape[0] - 1, 0, -1)) + (best_first, gid[candidate]))
        ranked = candidate[order]
        starts = np.concatenate(([0], np.flatnonzero(gid[ranked][1:] != gid[ranked][:-1]) + 1)) if len(ranked) else ranked
        best = ranked[starts]
        matched = np.zeros(len(groups), bool)
        matched[gid[best]] = True
        keep = updates[gid[best]] != 0
        out_groups = [group[best[keep]]]
        out_vals = [val[1:, best[keep]]]
        out_counts = [updates[gid[best[keep]]]]
        if self.pad is not None:
            alone = np.flatnonzero(~matched & (updates != 0))
            out_groups.append(group[first[alone]])
            out_vals.append(np.repeat(self.pad[:, None], len(alone), axis=1))
            out_counts.append(updates[alone])
        return np.concatenate(out_groups), np.concatenate(out_vals, axis=1), np.concatenate(out_counts)


# ---- translation ---------------------------------------------------------------------------


def asof_join(t, left: Rel, join: exp.Join, right: Rel) -> Rel:
    """`left ASOF [LEFT] JOIN right ON ...` as a Rel of left's columns, then right's."""
    span = t.span(join)
    side = (join.side or "").upper()
    if side not in ("", "LEFT"):
        raise t.error(UnsupportedSQLError, f"ASOF {side} JOIN is not supported (ASOF JOIN and ASOF LEFT JOIN are)", join)
    recursive = _recursive_cte_around(join)
    if recursive is not None:  # retractions that do not cancel have no fixpoint meaning
        raise t.error(UnsupportedSQLError, f"ASOF JOIN in the recursive CTE '{recursive}' is not supported", join)
    on = join.args.get("on")
    if on is None:
        raise t.error(UnsupportedSQLError, "ASOF JOIN needs ON: equal keys and one inequality of times (o.t >= p.t)", join)
    left, right = left.compact(span), right.compact(span)
    right_tables = {c.table for c in right.columns}
    left_tables = {c.table for c in left.columns}
    keys, inequality = [], None
    for part in conjuncts(on):
        op = _OPS.get(type(part))
        sides = [_side(x, left_tables, right_tables) for x in (part.this, part.expression)] if op else None
        if op is None or sorted(sides, key=str) != ["left", "right"]:
            raise t.error(UnsupportedSQLError, "ASOF JOIN's ON takes equalities and one inequality, each between a left and a right expression", part)
        a, b = part.this, part.expression
        if sides[0] == "right":
            a, b, op = b, a, _MIRROR[op]
        if op == "=":
            keys.append((a, b))
        elif inequality is not None:
            raise t.error(UnsupportedSQLError, "ASOF JOIN takes one inequality (of times) in ON, not two", part)
        else:
            inequality = (a, b, op, part)
    if inequality is None:
        raise t.error(UnsupportedSQLError, "ASOF JOIN needs an inequality of times in ON (such as o.t >= p.t)", on)
    left_env, right_env = Env(t, left), Env(t, right)
    pairs = [(translate(left_env, a), translate(right_env, b), a) for a, b in keys]
    a, b, op, where = inequality
    lt, rt = translate(left_env, a), translate(right_env, b)
    if left_env.rel is not left or right_env.rel is not right:
        raise t.error(UnsupportedSQLError, "a subquery in ASOF JOIN's ON is not supported", on)
    pairs = [_unified(t, x, y, node) for x, y, node in pairs]
    lt, rt = _unified(t, lt, rt, where)
    if lt.type not in (INT, FLOAT):
        raise t.error(UnsupportedSQLError, f"ASOF JOIN compares times of int or float type, not {lt.type}", where)
    outer = side == "LEFT"
    # Right rows with a NULL key or time are never candidates.
    right_ok = not_(or_(*(y.null for _, y in pairs), rt.null))
    r = right.filter(right_ok, span)
    right_items = [(c.table, c.name, r.value(i)) for i, c in enumerate(r.columns)]
    rp = project(r, right_items + [(None, None, y) for _, y in pairs] + [(None, None, rt)], span,
                 [outer] * len(right_items) + [False] * (len(pairs) + 1))
    left_items = [(c.table, c.name, left.value(i)) for i, c in enumerate(left.columns)]
    left_ok = not_(or_(*(x.null for x, _ in pairs), lt.null))
    lsrc = left if outer else left.filter(left_ok, span)
    helpers = [(None, None, x) for x, _ in pairs] + [(None, None, lt)]
    usable = [(None, None, Value(if_(left_ok, ONE, ZERO[INT]), FALSE, INT))] if outer else []
    lp = project(lsrc, left_items + helpers + usable, span)
    n_left, n_right = len(left.columns), len(right.columns)
    key_cols = tuple((lp.columns[n_left + j].value, rp.columns[n_right + j].value) for j in range(len(pairs)))
    times = (lp.columns[n_left + len(pairs)].value, rp.columns[n_right + len(pairs)].value)
    pad = None
    if outer:
        flags = {c.null for c in rp.columns[:n_right]}
        pad = tuple(Const(1, "number") if i in flags else _zero(tp) for i, tp in enumerate(rp.node.types))
    usable_col = lp.columns[-1].value if outer else None
    joined = AsOfJoin(lp.node, rp.node, key_cols, times, op, pad, usable_col, span=span)
    shift = lp.node.arity
    moved = tuple(Column(c.table, c.name, c.type, c.value + shift, None if c.null is None else c.null + shift) for c in rp.columns[:n_right])
    return Rel(joined, lp.columns[:n_left] + moved)


def _recursive_cte_around(join: exp.Join) -> str | None:
    """The name of a WITH RECURSIVE CTE whose group the join's SELECT reads, if it is inside one."""
    select = join.parent
    node = join
    while node is not None:
        if isinstance(node, exp.CTE) and isinstance(node.parent, exp.With) and node.parent.args.get("recursive"):
            names = {c.alias_or_name for c in node.parent.expressions}
            if {tb.name for tb in select.find_all(exp.Table)} & names:
                return node.alias_or_name
        node = node.parent
    return None


def _side(e, left_tables, right_tables) -> str | None:
    tables = {c.table for c in e.find_all(exp.Column)}
    if not tables or e.find(exp.Subquery) is not None:
        return None
    if tables <= right_tables and not tables & left_tables:
        return "right"
    if tables <= left_tables:
        return "left"
    return None


def _unified(t, x, y, node):
    common = common_type(x.type, y.type)
    if common is None:
        raise t.error(TypeMismatchError, f"ASOF JOIN compares {x.type} with {y.type}", node)
    return cast_value(x, common), cast_value(y, common)


def _zero(plan_type: str) -> Const:
    return {"number": Const(0, "number"), "float": Const(0.0, "float"), "symbol": Const("", "symbol")}[plan_type]


__all__ = ["AsOfJoin", "asof_join"]
