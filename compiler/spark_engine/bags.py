"""Bag recursion on Spark: a Fixpoint whose bodies are linear in its bindings, by deltas.

SQL's `base UNION ALL rec` recursive CTE (compiler.sql.recursion) is a
Fixpoint whose body is a Union, not a Distinct: the rows are a bag, and the
in-process runtime's `iterate` computes x(i+1) = B(x(i)) from x(0) = B(empty)
until nothing changes. When every body reads the loop's bindings linearly --
each row it derives comes from exactly one loop row (Union, Filter, Project,
a Join or DeltaJoin with one input reading the loop, an Antijoin whose left
side does) -- B(x + d) = B(x) + L(d), where L is the body with the parts
that do not read the loop dropped (`linear_part`). Then x(i) is the sum of
deltas d(0) = B(empty), d(i+1) = L(d(i)): each iteration is one Spark job
over the last delta only (materialized with localCheckpoint and counted),
the loop ends when every delta is empty -- exactly where the runtime's
iteration stops changing -- and each binding is the UNION ALL of its deltas.

SQL bounds a UNION ALL recursion with a depth column and a check binding
(the session's "did not converge within N iterations" error), so the loop
always ends; `max_iterations` bounds it too, as in compiler.spark_engine.fixpoint.
Bodies that are not linear (sets, aggregates) go to that module's loops.
"""

from __future__ import annotations

from compiler.plan import Antijoin, Filter, Fixpoint, Join, Node, Project, Ref, Union
from compiler.plan.delta import DeltaJoin

from compiler.spark_engine.fixpoint import DELTA, LoopStats, check_iterations
from compiler.spark_engine.relations import Relations, schema


class _NotLinear(Exception):
    pass


def _reads(node: Node, loop: frozenset) -> bool:
    if isinstance(node, Ref):
        return node.name in loop
    return any(_reads(c, loop) for c in node.children())


def linear_part(node: Node, loop: frozenset) -> Node | None:
    """L: the rows `node` gains from deltas of the loop's bindings (`Ref(DELTA + name)`), for a
    node linear in them; None if it does not read the loop; _NotLinear otherwise."""
    if not _reads(node, loop):
        return None
    if isinstance(node, Ref):
        return Ref(DELTA + node.name, node.types)
    if isinstance(node, Union):
        parts = [p for p in (linear_part(c, loop) for c in node.inputs) if p is not None]
        return parts[0] if len(parts) == 1 else Union(tuple(parts))
    if isinstance(node, (Filter, Project)):
        return node.with_children([linear_part(node.input, loop)])
    if isinstance(node, Antijoin) and not _reads(node.right, loop):
        return node.with_children([linear_part(node.left, loop), node.right])
    if isinstance(node, (Join, DeltaJoin)) and not getattr(node, "as_of", False):
        children = list(node.children())
        reading = [k for k, c in enumerate(children) if _reads(c, loop)]
        if len(reading) == 1:
            k = reading[0]
            return node.with_children(children[:k] + [linear_part(children[k], loop)] + children[k + 1 :])
    raise _NotLinear(type(node).__name__)


def linear_bodies(step: Fixpoint) -> dict | None:
    """{binding name: L of its body} if every body is a bag body linear in the loop, else None."""
    loop = frozenset(b.name for b in step.bindings)
    try:
        parts = {b.name: linear_part(b.body, loop) for b in step.bindings}
    except _NotLinear:
        return None
    if not any(_reads(b.body, loop) for b in step.bindings):
        return None
    return parts


def run_bag_fixpoint(step: Fixpoint, outer: Relations, parts: dict, max_iterations: int | None = None):
    """{binding name: DataFrame} of a Fixpoint with linear bodies (`parts` from linear_bodies), and its LoopStats."""
    loop = frozenset(b.name for b in step.bindings)
    spark = outer.spark
    stats = LoopStats(tuple(b.name for b in step.bindings), "bag deltas")

    def relations(refs):
        return Relations(spark, outer.scans, {**outer.refs, **refs}, parent=outer, loop_names=loop | {DELTA + n for n in loop})

    empty = {b.name: spark.createDataFrame([], schema(b.types)) for b in step.bindings}
    first = relations(empty)
    delta = {b.name: first.df(b.body).localCheckpoint() for b in step.bindings}
    found = {name: [df] for name, df in delta.items()}
    stats.delta_rows.append(sum(df.count() for df in delta.values()))
    while stats.delta_rows[-1]:
        check_iterations(step, stats.iterations, max_iterations)
        stats.iterations += 1
        rel = relations({DELTA + n: d for n, d in delta.items()})
        delta = {}
        for b in step.bindings:
            part = parts[b.name]
            delta[b.name] = spark.createDataFrame([], schema(b.types)) if part is None else rel.df(part).localCheckpoint()
            found[b.name].append(delta[b.name])
        stats.delta_rows.append(sum(df.count() for df in delta.values()))
    results = {}
    for name, dfs in found.items():
        out = dfs[0]
        for df in dfs[1:]:
            out = out.unionAll(df)
        results[name] = out.coalesce(spark.sparkContext.defaultParallelism) if len(dfs) > 1 else out
    return results, stats


__all__ = ["linear_part", "linear_bodies", "run_bag_fixpoint"]
