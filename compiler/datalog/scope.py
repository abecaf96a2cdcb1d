"""Variable scopes of a rule.

A rule is one scope: its head and body. Each aggregate opens a nested scope
holding its target and body. As in Soufflé, a variable inside an aggregate
that also occurs in the enclosing scope is, by how that scope grounds it:

- grounded there without this aggregate: the same variable, bound from
  outside (a correlation: it groups the aggregate);
- the aggregate's own result (`y = min z + y : {...}`, `a = max a : r(a)`):
  a different, local variable that happens to share the name;
- otherwise a *witness*: grounded inside the aggregate and used outside, as
  `x, y` in `longest(x, y, l) :- l = max m : length(x, y, m)`. A min or max
  binds it to its value in the body tuples reaching the optimum (all of them
  on a tie, where Soufflé keeps one); count, sum and mean have no such tuple,
  and compiler.datalog.safety rejects the use. A min or max nested in another
  aggregate whose witness the rule uses is grounded in the rule before scopes
  are drawn (compiler.datalog.witnesses, Soufflé's way).

A variable occurring only inside the aggregate is local to it, so two sibling
aggregates may use the same local name for different things. A Scope records
which names it owns, which it takes from outside and which it binds for its
parent, for the safety check, type inference and the lowering.

Existential variables. A variable of a scope that occurs nowhere but as
whole arguments of one negated atom, as `P` in `!s(X, 5, P)` or
`!s(X, P, P)`, means "there is no P such that ...", as in Soufflé: it is
`_`, except that its repeated occurrences must be equal. Such a variable
needs no grounding; a variable shared by two negated atoms (and nothing
positive) is not existential, and stays unsafe.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler.datalog.ast import (
    Aggregate,
    Atom,
    Comparison,
    Literal,
    Negation,
    Term,
    Variable,
    Wildcard,
    literal_terms,
    pattern_variables,
    subterms,
)


@dataclass(eq=False)
class Scope:
    literals: tuple[Literal, ...]
    results: tuple[Term, ...]  # the head's arguments, or an aggregate's target
    aggregate: Aggregate | None
    parent: "Scope | None"
    own: frozenset[str] = frozenset()
    outer: frozenset[str] = frozenset()  # names used here (or deeper) but owned and bound outside
    witnesses: frozenset[str] = frozenset()  # names owned outside but bound here (see above)
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


def grounded(literals, given, needs, more=lambda names: set()) -> set[str]:
    """The names these literals ground, given `given`: the variables positive atoms bind
    (arguments, and fields of record and ADT arguments), then `p = e` where `needs(e)` (the
    names e needs, None if e cannot bind) are grounded, binding p's variables (p a variable,
    record or ADT value), and `more(names)` (what becomes grounded once `names` are), to a
    fixpoint."""
    names = set(given)
    for lit in literals:
        if isinstance(lit, Atom):
            names.update(*(pattern_variables(a) for a in lit.args))
    equalities = [lit for lit in literals if isinstance(lit, Comparison) and lit.op == "="]
    while True:
        before = len(names)
        for eq in equalities:
            for side, other in ((eq.left, eq.right), (eq.right, eq.left)):
                wanted = needs(other)
                if wanted is not None and wanted <= names:
                    names |= pattern_variables(side)
        names |= more(names)
        if len(names) == before:
            return names


def plain_names(term) -> set[str] | None:
    """The variables of a term without aggregates (None if it has one, or `_`: it cannot be computed)."""
    names = set()
    for sub in subterms(term):
        if isinstance(sub, (Aggregate, Wildcard)):
            return None
        if isinstance(sub, Variable):
            names.add(sub.name)
    return names


def _needs_without(aggregate: Aggregate):
    """`needs` for `grounded` when `aggregate` is left out: a term containing it cannot
    bind; another aggregate is taken as able to (an approximation: what it correlates on
    is not asked for)."""

    def needs(term):
        if any(sub is aggregate or isinstance(sub, Wildcard) for sub in subterms(term)):
            return None
        plain = plain_names(term)
        return set() if plain is None else plain

    return needs


def _result_names(literals, aggregate: Aggregate) -> set[str]:
    """Variables that `literals` equate with `aggregate` itself (`y = min ...`)."""
    return {
        side.name
        for lit in literals if isinstance(lit, Comparison) and lit.op == "="
        for side, other in ((lit.left, lit.right), (lit.right, lit.left))
        if isinstance(side, Variable) and other is aggregate
    }


def _build(literals, results, aggregate, visible_outside, parent) -> Scope:
    scope = Scope(tuple(literals), tuple(results), aggregate, parent)
    direct, aggregates = scan(literals, results)
    scope.own = frozenset(direct - visible_outside)
    visible = visible_outside | scope.own
    used = set(direct)
    for agg in aggregates:
        target = () if agg.target is None else (agg.target,)
        without = grounded(literals, visible_outside, _needs_without(agg))
        results_of_agg = _result_names(literals, agg) - without
        child = _build(agg.body, target, agg, visible - results_of_agg, scope)
        inside = grounded(agg.body, child.outer & without, plain_names)
        child.witnesses = frozenset((child.outer & scope.own & inside) - without)
        child.outer -= child.witnesses
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
