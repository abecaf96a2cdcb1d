"""Constant folding and empty-relation propagation.

Expressions: a Call whose arguments are all constants becomes the constant it
evaluates to (through compiler.plan.ops, so folding means exactly what running
means), and `and`/`or`/`not` with constant operands simplify. Nodes: a Filter
whose predicate is `true` disappears, one whose predicate is `false` is the
empty relation, and emptiness propagates (a Join with an empty side is empty,
an Antijoin against nothing is its left input, a Union drops empty inputs).
Empty relations are `Values` with no rows.
"""

from __future__ import annotations

import numpy as np

from compiler.plan.expr import TRUE, Call, Const, conjoin, conjuncts
from compiler.plan.nodes import Aggregate, Antijoin, Distinct, Filter, Join, Node, Project, Union, Values
from compiler.plan.ops import NATURAL_DTYPE, RECORD_OPS, SYMBOL, ColumnOp, apply
from compiler.plan.program import Plan
from compiler.plan.rewrites.walk import bottom_up

FALSE = Const(False, "bool")


class _Strings:
    """A private symbol table, so string constants can be folded without a dataflow."""

    def __init__(self):
        self.ids: dict[str, int] = {}
        self.table: list[str] = []

    def intern(self, s: str) -> int:
        if s not in self.ids:
            self.ids[s] = len(self.table)
            self.table.append(s)
        return self.ids[s]

    def strings(self, ids) -> list[str]:
        return [self.table[i] for i in np.asarray(ids).tolist()]


def fold_expr(expr):
    if not isinstance(expr, Call):
        return expr
    args = tuple(fold_expr(a) for a in expr.args)
    constant = [isinstance(a, Const) for a in args]
    if not any(constant):
        return expr if all(a is b for a, b in zip(args, expr.args)) else Call(expr.op, args)
    if expr.op in ("and", "or", "not"):
        return _fold_logic(expr.op, args)
    # Records are interned by a dataflow's table; a ColumnOp may need its tables too.
    foldable = all(constant) and expr.op not in RECORD_OPS and not isinstance(expr.op, ColumnOp)
    return _evaluate(expr.op, args) if foldable else Call(expr.op, args)


def _fold_logic(op: str, args):
    if op == "not":
        (a,) = args
        return Const(not a.value, "bool") if isinstance(a, Const) else Call("not", args)
    absorbing = FALSE if op == "and" else TRUE
    if absorbing in args:
        return absorbing
    rest = [a for a in args if not isinstance(a, Const)]
    if not rest:
        return TRUE if op == "and" else FALSE
    return conjoin(rest) if op == "and" else (rest[0] if len(rest) == 1 else Call("or", tuple(rest)))


def _evaluate(op: str, args) -> Const:
    strings = _Strings()
    types = tuple(a.type for a in args)
    natural = [np.array([strings.intern(a.value) if a.type == SYMBOL else a.value], dtype=NATURAL_DTYPE[a.type]) for a in args]
    result_type = Call(op, args).type
    value = apply(op, types, natural, strings)[0]
    if result_type == SYMBOL:
        return Const(strings.table[int(value)], SYMBOL)
    return Const({"bool": bool, "float": float}.get(result_type, int)(value), result_type)


def empty(node: Node) -> Values:
    return Values((), node.types, span=node.span)


def is_empty(node: Node) -> bool:
    return isinstance(node, Values) and not node.rows


def _fold_node(node: Node) -> Node:
    if isinstance(node, Filter):
        predicate = fold_expr(node.predicate)
        if predicate == TRUE:
            return node.input
        if predicate == FALSE or is_empty(node.input):
            return empty(node)
        predicate = conjoin(conjuncts(predicate))
        return node if predicate == node.predicate else Filter(node.input, predicate, span=node.span)
    if isinstance(node, Project):
        if is_empty(node.input):
            return empty(node)
        exprs = tuple(fold_expr(e) for e in node.exprs)
        return node if exprs == node.exprs else Project(node.input, exprs, span=node.span)
    if isinstance(node, Join) and (is_empty(node.left) or is_empty(node.right)):
        return empty(node)
    if isinstance(node, Antijoin):
        if is_empty(node.left):
            return empty(node)
        if is_empty(node.right):
            return node.left
    if isinstance(node, Union):
        kept = [n for n in node.inputs if not is_empty(n)]
        if not kept:
            return empty(node)
        return kept[0] if len(kept) == 1 else node.with_children(kept)
    if isinstance(node, (Distinct, Aggregate)) and is_empty(node.input):
        return empty(node)
    return node


def fold_constants(plan: Plan, **options) -> Plan:
    memo: dict[int, Node] = {}
    return plan.map_bodies(lambda body: bottom_up(body, _fold_node, memo))
