"""Plans as indented text, for people and for tests (`explain(plan)`).

Each node is one line -- its operator, its parameters with columns written
`#i`, and its output column types -- followed by its inputs indented below. A
subplan that occurs more than once (the optimizer shares common subplans) is
written in full the first time, tagged `[n]`, and as `[n]` afterwards. The
plan's multiway joins follow, each with the plan chosen for it and why
(compiler.plan.rewrites.delta.JoinChoice).
"""

from __future__ import annotations

from compiler.plan.expr import show
from compiler.plan.nodes import Aggregate, Antijoin, Distinct, Filter, Join, Node, Project, Ref, Scan, Union, Values
from compiler.plan.program import Fixpoint, Plan


def explain(plan: Plan) -> str:
    counts: dict[int, int] = {}
    for b in plan.bindings():
        _count(b.body, counts)
    tags: dict[int, int] = {}
    lines = [f"input {name}({', '.join(types)})" for name, types in plan.inputs.items()]
    for step in plan.steps:
        if isinstance(step, Fixpoint):
            lines.append("fixpoint")
            for b in step.bindings:
                _binding(b, lines, counts, tags, "  ")
        else:
            _binding(step, lines, counts, tags, "")
    lines.append("outputs " + ", ".join(plan.outputs))
    if plan.join_choices:
        lines.append("multiway joins (records each plan adds to what the program arranges anyway, N rows per relation;")
        lines.append("  lookups when each input changes once; compiler.plan.rewrites.cost)")
        lines += ["  " + line for choice in plan.join_choices for line in choice.describe().splitlines()]
    return "\n".join(lines)


def explain_node(node: Node) -> str:
    counts: dict[int, int] = {}
    _count(node, counts)
    lines: list[str] = []
    _node(node, lines, counts, {}, "")
    return "\n".join(lines)


def _count(root: Node, counts) -> None:
    stack = [root]
    while stack:
        n = stack.pop()
        counts[id(n)] = counts.get(id(n), 0) + 1
        if counts[id(n)] == 1:
            stack.extend(n.children())


def _binding(b, lines, counts, tags, indent) -> None:
    lines.append(f"{indent}{b.name} :=")
    _node(b.body, lines, counts, tags, indent + "  ")


def _node(n: Node, lines, counts, tags, indent) -> None:
    if id(n) in tags:
        lines.append(f"{indent}[{tags[id(n)]}]")
        return
    tag = ""
    if counts.get(id(n), 0) > 1 and n.children():
        tags[id(n)] = len(tags) + 1
        tag = f"[{tags[id(n)]}] "
    lines.append(f"{indent}{tag}{describe(n)} -> ({', '.join(n.types)})")
    for child in n.children():
        _node(child, lines, counts, tags, indent + "  ")


def describe(n: Node) -> str:
    """The node's own line: operator and parameters, without its inputs."""
    if isinstance(n, (Scan, Ref)):
        return f"{type(n).__name__} {n.name}"
    if isinstance(n, Values):
        shown = ", ".join(map(repr, n.rows[:3])) + (", ..." if len(n.rows) > 3 else "")
        return f"Values {len(n.rows)} rows [{shown}]"
    if isinstance(n, Filter):
        return f"Filter {show(n.predicate)}"
    if isinstance(n, Project):
        return f"Project {', '.join(show(e) for e in n.exprs) or '(no columns)'}"
    if isinstance(n, (Join, Antijoin)):
        keys = ", ".join(f"#{a}=#{b}" for a, b in n.keys) or ("(cross product)" if isinstance(n, Join) else "(no keys)")
        return f"{type(n).__name__} on {keys}"
    if isinstance(n, Aggregate):
        arg = "" if n.arg is None else f" #{n.arg}"
        return f"Aggregate {n.func}{arg} by {', '.join(f'#{g}' for g in n.group) or '()'}"
    if isinstance(n, (Union, Distinct)):
        return type(n).__name__
    if hasattr(n, "describe"):  # nodes defined outside compiler.plan.nodes (compiler.plan.delta)
        return n.describe()
    return type(n).__name__


__all__ = ["explain", "explain_node", "describe"]
