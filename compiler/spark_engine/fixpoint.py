"""Recursive strata on Spark: a Fixpoint as a loop of Spark jobs.

A plan Fixpoint is the least fixpoint of its bindings taken together: start
from x0 = f(empty) and apply all bodies at once, x(i+1) = f(x(i)), until
nothing changes (this is exactly the sequence the in-process runtime's
`iterate` computes). Two loops compute it:

Semi-naive, when every body is `Distinct(B)` with B monotone in the loop's
bindings (Union, Project, Filter, Join, DeltaJoin, inner Distinct, and
Antijoin whose right side does not read the loop). Then `delta_plan(B)` is a
plan over the bindings' accumulated relations `Ref(r)` and their last deltas
`Ref(DELTA + r)` (a Join with both sides recursive is ΔL⋈R ∪ L⋈ΔR, both over
the accumulated relations including the delta, which is a superset of the
new derivations and still within the fixpoint), and each iteration is
  new(r) = Distinct(delta_plan(B_r)) left-anti-joined with known(r);
  known(r) = known(r) ∪ new(r);  delta(r) = new(r)
ending when every delta is empty. Each delta is materialized with
`localCheckpoint` (it is read by the next iteration and counted), and every
`checkpoint_every` iterations each accumulated relation is repartitioned and
checkpointed, so lineage and partition counts stay bounded.

Semi-naive too for min/max inside the recursion, where it is monotone: a
body `Aggregate(min|max)` of B keeps the best value per group. Each
iteration's candidates are the best value per group among delta_plan(B)'s
rows; the improved ones (better than the group's known value, or of a new
group) replace the known row of their group and are the next delta. This is
the naive sequence's answer when every derivation from a value since
improved upon is dominated by one from the improved value: same group, a
value at least as good. `_monotone_loop` checks that on the plan, following
how each column moves as the loop runs (fixed; only down, as a min's value;
only up, as a max's; any way): `+`, `min`, `max`, `to_float` and
multiplication by a constant keep directions (`-` and `neg` flip them),
joins and antijoins match fixed columns only, a filter must stay true when
its columns move their way (`d < 10` over a min's d), a set binding's rows
must be fixed, and a min (max) binding's groups fixed and its value moving
only down (up). The one thing it takes on trust is that integer values do
not wrap around at 64 bits (a loop whose sums overflow may differ).

Naive, otherwise (another aggregate inside the recursion, an Antijoin
over a recursive binding, a min/max value that does not move monotonically):
each iteration evaluates every body on the previous iteration's relations,
materializes the results, and stops when they equal the previous ones (as sets: each body ends in Distinct or an
Aggregate; `delta_rows` then counts rows that differ, or the change in
size). Correct for any body the runtime can iterate, but every iteration
recomputes everything; `max_iterations` bounds either loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import functions as F

from compiler.plan import Aggregate, Antijoin, Distinct, Filter, Fixpoint, Join, Node, Project, Ref, Union, Values
from compiler.plan.delta import DeltaJoin
from compiler.plan.expr import Call, Col, Const

from compiler.spark_engine.errors import SparkEngineError
from compiler.spark_engine.relations import Relations, schema
from runtime.worker import RoundLimitError

DELTA = "Δ"


class _NotMonotone(Exception):
    pass


def _reads(node: Node, loop: frozenset) -> bool:
    return any(isinstance(n, Ref) and n.name in loop for n in _walk(node))


def _walk(node: Node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children())


def delta_plan(node: Node, loop: frozenset) -> Node | None:
    """A plan whose rows include every row `node` gains when the loop's bindings gain their
    deltas (`Ref(DELTA + name)`); None if `node` does not read the loop. _NotMonotone if
    the node is not monotone in the loop's bindings."""
    if not _reads(node, loop):
        return None
    if isinstance(node, Ref):
        return Ref(DELTA + node.name, node.types)
    if isinstance(node, (Filter, Project, Distinct)):
        return node.with_children([delta_plan(node.input, loop)])
    if isinstance(node, Union):
        parts = [d for d in (delta_plan(c, loop) for c in node.inputs) if d is not None]
        return parts[0] if len(parts) == 1 else Union(tuple(parts))
    if isinstance(node, Join):
        parts = []
        left, right = delta_plan(node.left, loop), delta_plan(node.right, loop)
        if left is not None:
            parts.append(node.with_children([left, node.right]))
        if right is not None:
            parts.append(node.with_children([node.left, right]))
        return parts[0] if len(parts) == 1 else Union(tuple(parts))
    if isinstance(node, DeltaJoin) and not node.as_of:
        parts = []
        for k, child in enumerate(node.inputs):
            d = delta_plan(child, loop)
            if d is not None:
                parts.append(node.with_children(node.inputs[:k] + (d,) + node.inputs[k + 1 :]))
        return parts[0] if len(parts) == 1 else Union(tuple(parts))
    if isinstance(node, Antijoin) and not _reads(node.right, loop):
        return node.with_children([delta_plan(node.left, loop), node.right])
    raise _NotMonotone(type(node).__name__)


@dataclass
class LoopStats:
    """What a fixpoint's loop did: for the report of a run (and the benchmark)."""

    names: tuple[str, ...]
    method: str  # "semi-naive" or "naive"
    iterations: int = 0
    delta_rows: list[int] = field(default_factory=list)  # rows found new at each iteration (all bindings)


def check_iterations(step: Fixpoint, iterations: int, max_iterations: int | None) -> None:
    """Raise if a loop that has taken `iterations` may not take another: by the Fixpoint's own
    round limit (RoundLimitError, as the runtime raises it) or by the caller's max_iterations."""
    names = frozenset(b.name for b in step.bindings)
    if step.round_limit is not None and iterations >= step.round_limit:
        raise RoundLimitError(names, step.round_limit)
    if max_iterations is not None and iterations >= max_iterations:
        raise SparkEngineError(f"fixpoint of {', '.join(sorted(names))} did not converge in {max_iterations} iterations")


def run_fixpoint(step: Fixpoint, outer: Relations, checkpoint_every: int = 4, max_iterations: int | None = None):
    """{binding name: materialized DataFrame} for the Fixpoint, and its LoopStats."""
    loop = frozenset(b.name for b in step.bindings)
    try:
        _monotone_loop(step)
        deltas = {b.name: _semi_naive_body(b.body, loop) for b in step.bindings}
    except _NotMonotone:
        deltas = None
    stats = LoopStats(tuple(b.name for b in step.bindings), "naive" if deltas is None else "semi-naive")
    spark = outer.spark

    def relations(refs):
        return Relations(spark, outer.scans, {**outer.refs, **refs}, parent=outer, loop_names=loop | {DELTA + n for n in loop})

    empty = {b.name: spark.createDataFrame([], schema(b.types)) for b in step.bindings}
    first = relations(empty)
    known = {b.name: first.df(b.body).localCheckpoint() for b in step.bindings}
    if deltas is None:
        return _naive(step, known, relations, stats, max_iterations), stats
    delta = dict(known)
    bodies = {b.name: b.body for b in step.bindings}
    stats.delta_rows.append(sum(df.count() for df in known.values()))
    while True:
        check_iterations(step, stats.iterations, max_iterations)
        stats.iterations += 1
        rel = relations({**known, **{DELTA + n: d for n, d in delta.items()}})
        found = {}
        for b in step.bindings:
            candidates = rel.df(deltas[b.name])
            if isinstance(b.body, Aggregate):  # min/max: groups whose best value improved
                found[b.name] = _improved(candidates, known[b.name], b.body).localCheckpoint()
            else:
                found[b.name] = _unknown(candidates, known[b.name]).localCheckpoint()
        counts = {n: df.count() for n, df in found.items()}
        stats.delta_rows.append(sum(counts.values()))
        if not any(counts.values()):
            return known, stats
        for n, df in found.items():
            body = bodies[n]
            if isinstance(body, Aggregate):
                known[n] = _replaced(known[n], df, len(body.group)).unionAll(df)
            else:
                known[n] = known[n].unionAll(df)
            if stats.iterations % checkpoint_every == 0:
                known[n] = known[n].repartition(spark.sparkContext.defaultParallelism).localCheckpoint()
        delta = found


def _extreme(body: Node) -> bool:
    return isinstance(body, Aggregate) and body.func in ("min", "max")


def _semi_naive_body(body: Node, loop: frozenset) -> Node:
    """The plan of one iteration's candidate rows: Distinct of the delta plan for a set
    body; for a min/max body, the best value per group among the delta's derivations."""
    if _extreme(body):
        d = delta_plan(body.input, loop)
        return Values((), body.types) if d is None else body.with_children([d])
    if not isinstance(body, Distinct):
        raise _NotMonotone(type(body).__name__)
    d = delta_plan(body.input, loop)
    # None: the body does not read the loop, its first value is final (no new rows ever).
    return Values((), body.types) if d is None else Distinct(d)


# How a column's values move as the loop runs: not at all, only down, only up, any way.
FIXED, DOWN, UP, ANY = "fixed", "down", "up", "any"
_FLIP = {FIXED: FIXED, DOWN: UP, UP: DOWN, ANY: ANY}


def _both(a: str, b: str) -> str:
    """The movement of a value that moves with both a and b in the same sense (a + b, a union)."""
    return b if a == FIXED else a if b in (FIXED, a) else ANY


def _monotone_loop(step: Fixpoint) -> None:
    """_NotMonotone unless every derivation from the loop's current rows is dominated by one
    from any later state: a set body's rows fixed, a min (max) body's groups fixed and its
    value moving only down (up) -- see the module's account of the semi-naive min/max loop."""
    moves = {}
    for b in step.bindings:
        if _extreme(b.body):
            value = DOWN if b.body.func == "min" else UP
            moves[b.name] = (FIXED,) * len(b.body.group) + (value,)
        elif isinstance(b.body, Distinct):
            moves[b.name] = (FIXED,) * b.body.arity
        else:
            raise _NotMonotone(type(b.body).__name__)
    if all(isinstance(b.body, Distinct) for b in step.bindings):
        return  # only sets: every column is fixed
    for b in step.bindings:
        if _extreme(b.body):
            columns = _moves(b.body.input, moves)
            value = DOWN if b.body.func == "min" else UP
            if any(columns[g] != FIXED for g in b.body.group) or columns[b.body.arg] not in (FIXED, value):
                raise _NotMonotone(f"{b.body.func} of {b.name}")
        elif any(m != FIXED for m in _moves(b.body, moves)):
            raise _NotMonotone(f"rows of {b.name}")


def _moves(node: Node, loop: dict) -> tuple:
    """How each output column of `node` moves as the loop's bindings (`loop`: name -> moves) gain
    rows and improve their values; _NotMonotone where a derivation could be lost."""
    if isinstance(node, Ref):
        return loop.get(node.name, (FIXED,) * node.arity)
    if not _reads(node, frozenset(loop)):
        return (FIXED,) * node.arity
    if isinstance(node, Distinct):
        return _moves(node.input, loop)
    if isinstance(node, Project):
        columns = _moves(node.input, loop)
        return tuple(_expr_moves(e, columns) for e in node.exprs)
    if isinstance(node, Filter):
        columns = _moves(node.input, loop)
        if not _stays_true(node.predicate, columns):
            raise _NotMonotone("Filter")
        return columns
    if isinstance(node, Union):
        out = None
        for child in node.inputs:
            columns = _moves(child, loop)
            out = columns if out is None else tuple(_both(a, b) for a, b in zip(out, columns))
        return out
    if isinstance(node, (Join, Antijoin)):
        left = _moves(node.left, loop)
        right = _moves(node.right, loop)
        if any(left[a] != FIXED or right[b] != FIXED for a, b in node.keys):
            raise _NotMonotone(f"{type(node).__name__} on a moving column")
        return left if isinstance(node, Antijoin) else left + right
    if isinstance(node, DeltaJoin) and not node.as_of:
        columns = tuple(m for child in node.inputs for m in _moves(child, loop))
        if any(columns[a] != FIXED or columns[b] != FIXED for a, b in node.equalities):
            raise _NotMonotone("DeltaJoin on a moving column")
        return columns
    raise _NotMonotone(type(node).__name__)


def _expr_moves(expr, columns: tuple) -> str:
    if isinstance(expr, Col):
        return columns[expr.index]
    if not isinstance(expr, Call):
        return FIXED
    args = [_expr_moves(a, columns) for a in expr.args]
    if all(a == FIXED for a in args):
        return FIXED
    if expr.op in ("+", "min", "max", "to_float"):
        out = FIXED
        for a in args:
            out = _both(out, a)
        return out
    if expr.op == "neg":
        return _FLIP[args[0]]
    if expr.op == "-":
        return _both(args[0], _FLIP[args[1]])
    if expr.op == "*":
        for k in (0, 1):  # times a constant: kept (positive), flipped (negative)
            factor, other = expr.args[k], args[1 - k]
            if isinstance(factor, Const) and not isinstance(factor.value, bool):
                return other if factor.value > 0 else _FLIP[other] if factor.value < 0 else FIXED
    return ANY


def _stays_true(predicate, columns: tuple) -> bool:
    """Whether a row that passes `predicate` still passes when its columns move their ways."""
    if isinstance(predicate, Call) and predicate.op in ("and", "or"):
        return all(_stays_true(a, columns) for a in predicate.args)
    if isinstance(predicate, Call) and predicate.op in ("<", "<=", ">", ">="):
        low, high = predicate.args if predicate.op in ("<", "<=") else reversed(predicate.args)
        return _expr_moves(low, columns) in (FIXED, DOWN) and _expr_moves(high, columns) in (FIXED, UP)
    return _expr_moves(predicate, columns) == FIXED


def _improved(candidates, known, body: Aggregate):
    """The candidate (group, value) rows better than the group's known value, or of a new group."""
    k = len(body.group)
    value = f"c{k}"
    other = known.select(*[F.col(c).alias(f"k{c}") for c in known.columns])
    condition = None
    for g in range(k):
        part = candidates[f"c{g}"] == other[f"kc{g}"]
        condition = part if condition is None else condition & part
    at_least_as_good = other[f"k{value}"] <= candidates[value] if body.func == "min" else other[f"k{value}"] >= candidates[value]
    condition = at_least_as_good if condition is None else condition & at_least_as_good
    return candidates.join(other, on=condition, how="left_anti")


def _replaced(known, improved, k: int):
    """`known` without the rows of the groups that `improved` holds a better value for."""
    if k == 0:
        return known.limit(0)
    other = improved.select(*[F.col(f"c{g}").alias(f"i{g}") for g in range(k)])
    condition = None
    for g in range(k):
        part = known[f"c{g}"] == other[f"i{g}"]
        condition = part if condition is None else condition & part
    return known.join(other, on=condition, how="left_anti")


def _unknown(candidates, known):
    """The candidates' rows that are not in `known` (a left anti join on every column)."""
    cols = candidates.columns
    other = known.select(*[F.col(c).alias(f"k{c}") for c in cols])
    condition = None
    for c in cols:  # the engine's DataFrames hold no NULLs; eqNullSafe keeps that harmless
        part = candidates[c].eqNullSafe(other[f"k{c}"])
        condition = part if condition is None else condition & part
    return candidates.join(other, on=condition, how="left_anti")


def _naive(step: Fixpoint, current: dict, relations, stats: LoopStats, max_iterations):
    sizes = {name: df.count() for name, df in current.items()}
    while True:
        check_iterations(step, stats.iterations, max_iterations)
        stats.iterations += 1
        rel = relations(current)
        following = {b.name: rel.df(b.body).localCheckpoint() for b in step.bindings}
        changed = 0
        for b in step.bindings:  # both are sets: equal sizes and new within old means equal
            new, old = following[b.name], current[b.name]
            size, before = new.count(), sizes[b.name]
            sizes[b.name] = size
            changed += abs(size - before) if size != before else new.exceptAll(old).count()
        stats.delta_rows.append(changed)
        if not changed:
            return following
        current = following


__all__ = ["run_fixpoint", "delta_plan", "LoopStats", "DELTA"]
