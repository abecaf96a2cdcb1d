"""Rebuilding plan trees: the traversal every rewrite shares.

Plans are DAGs (a subplan may feed several nodes), so traversals memoize by
node identity: each node is rewritten once however many parents it has, and
a shared input stays shared. The memo is keyed by `id`, which is safe because
the plan being rewritten keeps every original node alive during the pass.
"""

from __future__ import annotations

from compiler.plan.nodes import Node


def bottom_up(node: Node, fn, memo: dict[int, Node]) -> Node:
    """fn applied to every node after its children were rewritten (fn(node) -> node)."""
    done = memo.get(id(node))
    if done is None:
        rebuilt = node.with_children(bottom_up(c, fn, memo) for c in node.children())
        done = memo[id(node)] = fn(rebuilt)
    return done
