"""Filter pushdown: apply each condition as early as it can be.

Conditions travel down from the Filter that states them, as conjuncts over
the columns of the node they have reached. They pass through Project (the
projected expressions are substituted for the columns), Distinct and Union
(into every input); an Aggregate lets through conditions on its group
columns; a Join sends each conjunct to the side whose columns it reads, and
turns an equality between a left and a right column into a join key (which is
what makes a cross product a join); an Antijoin sends them to its left input.
A condition that reads only key columns of one side of a Join or Antijoin is
also copied to the other side through the key equalities -- this is how a
constant (`x = 3`) reaches every relation joined on `x`. What cannot go
further becomes a Filter right there, leaves included.
"""

from __future__ import annotations

from compiler.plan.expr import columns, conjoin, conjuncts, equated_columns, remap, substitute
from compiler.plan.nodes import Aggregate, Antijoin, Distinct, Filter, Join, Node, Project, Union
from compiler.plan.program import Plan


def push_filters(plan: Plan, **options) -> Plan:
    memo: dict = {}
    return plan.map_bodies(lambda body: _push(body, (), memo))


def _filtered(node: Node, preds) -> Node:
    return Filter(node, conjoin(preds), span=node.span) if preds else node


def _push(node: Node, preds: tuple, memo) -> Node:
    key = (id(node), preds)
    done = memo.get(key)
    if done is None:
        done = memo[key] = _push_into(node, preds, memo)
    return done


def _push_into(node: Node, preds: tuple, memo) -> Node:
    if isinstance(node, Filter):
        return _push(node.input, tuple(dict.fromkeys(preds + tuple(conjuncts(node.predicate)))), memo)
    if isinstance(node, Project):
        below = tuple(substitute(p, node.exprs) for p in preds)
        return node.with_children([_push(node.input, below, memo)])
    if isinstance(node, (Distinct, Union)):
        return node.with_children([_push(c, preds, memo) for c in node.children()])
    if isinstance(node, Aggregate):
        k = len(node.group)
        down = tuple(remap(p, node.group) for p in preds if max(columns(p), default=-1) < k)
        stay = [p for p in preds if max(columns(p), default=-1) >= k]
        return _filtered(node.with_children([_push(node.input, down, memo)]), stay)
    if isinstance(node, Join):
        return _push_join(node, preds, memo)
    if isinstance(node, Antijoin):
        right = _through_keys(preds, dict(node.keys))
        return node.with_children([_push(node.left, preds, memo), _push(node.right, right, memo)])
    return _filtered(node, preds)


def _through_keys(preds, key_map: dict[int, int]) -> tuple:
    """The conditions that read only key columns, rewritten over the other side's columns."""
    return tuple(remap(p, key_map) for p in preds if columns(p) and columns(p) <= key_map.keys())


def _push_join(node: Join, preds, memo) -> Node:
    width = node.left.arity
    shift_right = {i: i - width for i in range(width, node.arity)}
    left, right, stay, keys = [], [], [], list(node.keys)
    for p in preds:
        cols = columns(p)
        pair = equated_columns(p)
        if cols and max(cols) < width:
            left.append(p)
        elif cols and min(cols) >= width:
            right.append(remap(p, shift_right))
        elif pair is not None:
            a, b = sorted(pair)
            keys.append((a, b - width))
        else:
            stay.append(p)
    # Conditions on key columns hold on both sides (new keys included); copy each across once.
    left_to_right = dict(keys)
    right_to_left = {b: a for a, b in keys}
    extra_right = _through_keys(left, left_to_right)
    extra_left = _through_keys(right, right_to_left)
    new_left = _push(node.left, tuple(dict.fromkeys(left + list(extra_left))), memo)
    new_right = _push(node.right, tuple(dict.fromkeys(right + list(extra_right))), memo)
    joined = Join(new_left, new_right, tuple(dict.fromkeys(keys)), span=node.span)
    return _filtered(joined, stay)

