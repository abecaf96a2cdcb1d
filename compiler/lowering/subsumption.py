"""Subsumptive rules: a relation keeps the tuples no other of its tuples dominates.

`sp(x, y, c1) <= sp(x, y, c2) :- c2 <= c1.` says a tuple of sp is dominated by
another tuple of sp when the body holds; sp keeps only its undominated candidates
(the tuples its rules, facts and inputs give). As in Soufflé a tuple never
dominates itself (its "x0 != x1"), so a partial order such as `<=` works, and two
tuples that dominate each other both go. The two heads and every other atom of sp
in the body read the candidates (Soufflé's non-recursive deletion reads the
relation before anything is deleted), so the rule is an antijoin of the candidates
with the dominated ones: the body translated like any rule body (compiler.lowering.rules)
over (dominated head, dominating head, body), projected on the dominated head
where the two heads differ. In a recursion the relation's next iteration is its
undominated candidates, maintained like a min (compiler.lowering.dataflow's
iterate): the shortest paths of `example/shortest_path2` converge to the least
cost per pair.
"""

from __future__ import annotations

from compiler.datalog.scope import rule_scope
from compiler.plan import Antijoin, Call, Node, Project, Union


def undominated(candidates: Node, subsumptions, context_for, span) -> Node:
    """The rows of `candidates` (a set) that no subsumptive rule marks dominated;
    `context_for(subsumption, read)` is the RuleContext translating its body with the
    relation's atoms reading `read`."""
    dominated = [_dominated(candidates, s, context_for) for s in subsumptions]
    right = dominated[0] if len(dominated) == 1 else Union(tuple(dominated), span=span)
    return Antijoin(candidates, right, tuple((i, i) for i in range(candidates.arity)), span=span)


def _dominated(candidates: Node, s, context_for) -> Node:
    rule = s.as_rule()  # its heads' wildcards named: the dominated tuple is all of its columns
    mine, theirs = rule.body[:2]
    body = context_for(s, candidates).body(rule.body, rule_scope((), rule.body))
    dominated = [body.guard(body.expr(a)) for a in mine.args]
    dominating = [body.guard(body.expr(a)) for a in theirs.args]
    body.filter(_any_differ(dominated, dominating), s.span)
    return Project(body.node, tuple(dominated), span=s.span)


def _any_differ(xs, ys):
    differ = [Call("!=", (x, y)) for x, y in zip(xs, ys)]
    return differ[0] if len(differ) == 1 else Call("or", tuple(differ))
