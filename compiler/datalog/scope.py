"""Variable scopes of a rule.

A rule is one scope: its head and body. Each aggregate opens a nested scope
holding its target and body. As in Soufflé, a variable inside an aggregate
that also occurs in an enclosing scope (outside the aggregate) is that outer
variable, bound from outside; a variable occurring only inside the aggregate
is local to it, so two sibling aggregates may use the same local name for
different things. A Scope records which names it owns and which it takes
from outside, for the safety check and type inference.

Existential variables. A variable of a scope that occurs nowhere but as
whole arguments of one negated atom, as `P` in `!s(X, 5, P)` or
`!s(X, P, P)`, means "there is no P such that ...", as in Soufflé: it is
`_`, except that its repeated occurrences must be equal. Such a variable
needs no grounding; a variable shared by two negated atoms (and nothing
positive) is not existential, and stays unsafe.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler.datalog.ast import Aggregate, Literal, Negation, Term, Variable, literal_terms, subterms


@dataclass(eq=False)
class Scope:
    literals: tuple[Literal, ...]
    results: tuple[Term, ...]  # the head's arguments, or an aggregate's target
    aggregate: Aggregate | None
    parent: "Scope | None"
    own: frozenset[str] = frozenset()
    outer: frozenset[str] = frozenset()  # names used here (or deeper) but owned outside
    existential: frozenset[str] = frozenset()  # own names local to one negated atom (see above)
    children: dict[int, "Scope"] = field(default_factory=dict)  # id(Aggregate) -> its scope

    def owner(self, name: str) -> "Scope":
        scope = self
        while name not in scope.own and scope.parent is not None:
            scope = scope.parent
        return scope

    def child(self, aggregate: Aggregate) -> "Scope":
        return self.children[id(aggregate)]


def scan(literals, results) -> tuple[set[str], list[Aggregate]]:
    """Names occurring directly in these literals and results, and the aggregates met there."""
    names, aggregates = set(), []
    terms = list(results) + [t for lit in literals for t in literal_terms(lit)]
    for term in terms:
        for sub in subterms(term):
            if isinstance(sub, Variable):
                names.add(sub.name)
            elif isinstance(sub, Aggregate):
                aggregates.append(sub)
    return names, aggregates


def rule_scope(heads, body) -> Scope:
    results = tuple(arg for head in heads for arg in head.args)
    return _build(body, results, None, frozenset(), None)


def _build(literals, results, aggregate, visible_outside, parent) -> Scope:
    scope = Scope(tuple(literals), tuple(results), aggregate, parent)
    direct, aggregates = scan(literals, results)
    scope.own = frozenset(direct - visible_outside)
    visible = visible_outside | scope.own
    used = set(direct)
    for agg in aggregates:
        target = () if agg.target is None else (agg.target,)
        child = _build(agg.body, target, agg, visible, scope)
        scope.children[id(agg)] = child
        used |= child.outer
    scope.outer = frozenset(used & visible_outside)
    deeper = set().union(*(child.outer for child in scope.children.values()))
    scope.existential = frozenset((_local_to_one_negation(literals, results) & scope.own) - deeper)
    return scope


def _local_to_one_negation(literals, results) -> set[str]:
    """Names whose every occurrence among these literals and results is a whole argument
    of one and the same negated atom."""
    owner: dict[str, int | None] = {}  # name -> index of its negated atom (None: used elsewhere)
    for index, lit in enumerate(literals):
        whole = {a.name for a in lit.atom.args if isinstance(a, Variable)} if isinstance(lit, Negation) else set()
        names, _ = scan((lit,), ())
        for name in names:
            mine = index if name in whole and not _nested(lit, name) else None
            owner[name] = mine if owner.get(name, mine) == mine else None
    used_in_results, _ = scan((), results)
    return {name for name, index in owner.items() if index is not None} - used_in_results


def _nested(negation: Negation, name: str) -> bool:
    """Whether `name` also occurs inside an expression argument of `negation`."""
    return any(
        isinstance(sub, Variable) and sub.name == name
        for arg in negation.atom.args if not isinstance(arg, Variable)
        for sub in subterms(arg)
    )
