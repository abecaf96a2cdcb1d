"""Projection pruning: carry only the columns something reads.

Walking down from each binding (which keeps all its columns), every node is
asked for the columns its parent needs and answers with a node that has at
least those. A Project drops the expressions nobody reads, a Filter adds the
columns its predicate reads, a Join or Antijoin asks each input for what is
needed plus its key columns, an Aggregate for its group and argument columns.
Where an input is arranged or combined -- the inputs of Join, Antijoin, Union,
Distinct and Aggregate -- it is narrowed to exactly the columns needed, so
indexes and unions carry no dead columns. Distinct and Aggregate need all
their input's columns and groups: dropping one would change multiplicities or
groups. Consecutive Projects merge when that computes nothing twice.
"""

from __future__ import annotations

from compiler.plan.delta import DeltaJoin
from compiler.plan.expr import Col, Expr, columns, remap, substitute
from compiler.plan.nodes import Aggregate, Antijoin, Distinct, Filter, Join, Node, Project, Union
from compiler.plan.program import Plan


def prune_columns(plan: Plan, **options) -> Plan:
    memo: dict = {}
    return plan.map_bodies(lambda body: _exactly(body, tuple(range(body.arity)), memo))


def project(node: Node, exprs: tuple[Expr, ...], span=None) -> Node:
    """Project(node, exprs), merged into `node` if it is a Project, or node itself if the identity."""
    exprs = tuple(exprs)
    if isinstance(node, Project) and _mergeable(node.exprs, exprs):
        node, exprs = node.input, tuple(substitute(e, node.exprs) for e in exprs)
    result = Project(node, exprs, span=span or node.span)
    return node if result.is_identity() else result


def _mergeable(inner: tuple[Expr, ...], outer: tuple[Expr, ...]) -> bool:
    """Merging would not evaluate any computed inner expression more than once per row."""
    uses: dict[int, int] = {}
    for e in outer:
        for i in _column_uses(e):
            uses[i] = uses.get(i, 0) + 1
    return all(isinstance(inner[i], Col) or n <= 1 for i, n in uses.items())


def _column_uses(e: Expr) -> list[int]:
    if isinstance(e, Col):
        return [e.index]
    return [i for a in getattr(e, "args", ()) for i in _column_uses(a)]


def _exactly(node: Node, wanted: tuple[int, ...], memo) -> Node:
    """The node with exactly the columns `wanted`, in that order."""
    pruned, kept = _prune(node, frozenset(wanted), memo)
    position = {c: i for i, c in enumerate(kept)}
    return project(pruned, tuple(Col(position[w], node.types[w]) for w in wanted), node.span)


def _prune(node: Node, needed: frozenset, memo) -> tuple[Node, tuple[int, ...]]:
    key = (id(node), needed)
    done = memo.get(key)
    if done is None:
        done = memo[key] = _prune_node(node, needed, memo)
    return done


def _prune_node(node: Node, needed: frozenset, memo) -> tuple[Node, tuple[int, ...]]:
    everything = tuple(range(node.arity))
    if isinstance(node, Filter):
        child, kept = _prune(node.input, needed | columns(node.predicate), memo)
        position = {c: i for i, c in enumerate(kept)}
        return Filter(child, remap(node.predicate, position), span=node.span), kept
    if isinstance(node, Project):
        keep = tuple(sorted(needed))
        reads = frozenset().union(*(columns(node.exprs[i]) for i in keep))
        child, kept = _prune(node.input, reads, memo)
        position = {c: i for i, c in enumerate(kept)}
        return project(child, tuple(remap(node.exprs[i], position) for i in keep), node.span), keep
    if isinstance(node, Join):
        width = node.left.arity
        left_cols = tuple(sorted({i for i in needed if i < width} | {a for a, _ in node.keys}))
        right_cols = tuple(sorted({i - width for i in needed if i >= width} | {b for _, b in node.keys}))
        left, right = _exactly(node.left, left_cols, memo), _exactly(node.right, right_cols, memo)
        keys = tuple((left_cols.index(a), right_cols.index(b)) for a, b in node.keys)
        return Join(left, right, keys, span=node.span), left_cols + tuple(width + j for j in right_cols)
    if isinstance(node, Antijoin):
        left_cols = tuple(sorted(needed | {a for a, _ in node.keys}))
        right_cols = tuple(sorted({b for _, b in node.keys}))
        left, right = _exactly(node.left, left_cols, memo), _exactly(node.right, right_cols, memo)
        keys = tuple((left_cols.index(a), right_cols.index(b)) for a, b in node.keys)
        return Antijoin(left, right, keys, span=node.span), left_cols
    if isinstance(node, Union):
        keep = tuple(sorted(needed))
        return Union(tuple(_exactly(c, keep, memo) for c in node.inputs), span=node.span), keep
    if isinstance(node, Distinct):
        return node.with_children([_exactly(node.input, tuple(range(node.input.arity)), memo)]), everything
    if isinstance(node, Aggregate):
        wanted = tuple(dict.fromkeys(node.group + (() if node.arg is None else (node.arg,))))
        child = _exactly(node.input, wanted, memo)
        group = tuple(wanted.index(g) for g in node.group)
        arg = None if node.arg is None else wanted.index(node.arg)
        return Aggregate(child, group, node.func, arg, span=node.span), everything
    if isinstance(node, DeltaJoin):
        return node.prune(needed, lambda child, cols: _exactly(child, cols, memo))
    return node, everything  # leaves: Scan, Ref, Values
