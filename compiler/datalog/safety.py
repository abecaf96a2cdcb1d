"""Safety (range restriction): every variable must be grounded.

A variable is grounded in its scope when it is an argument of a positive atom
of that scope's body, or when it is one side of an equality `x = e` whose
other side uses only grounded variables (repeated to a fixpoint, so chains
like `y = x + 1, z = y * 2` work). Variables taken from an enclosing scope
must be grounded there. A variable local to one negated atom is existential
and needs no grounding (compiler.datalog.scope). Anything else -- a variable
that occurs only in the head, under negation, in a comparison, in a functor argument -- would range
over an infinite domain, and is an UnsafeVariableError pointing at it. The
wildcard `_` is only meaningful as a whole argument of a body atom.
"""

from __future__ import annotations

from compiler.datalog.ast import (
    Aggregate,
    Atom,
    BinaryOp,
    Comparison,
    Functor,
    Negation,
    PATTERNS,
    Rule,
    StringTest,
    Term,
    UnaryOp,
    Variable,
    Wildcard,
    literal_terms,
    subterms,
)
from compiler.datalog.scope import Scope, grounded as grounded_names, rule_scope
from compiler.errors import Source, UnsafeVariableError, UnsupportedError

_PHRASES = {
    "head": "in the head",
    "target": "in the aggregate's target",
    "negation": "under negation",
    "comparison": "in a comparison",
    "functor": "in a functor argument",
    "expression": "in an argument expression",
    "test": "in a contains/match test",
    "aggregate": "inside an aggregate",
}


def check_safety(rule: Rule, source: Source | None) -> None:
    _check_wildcards(rule, source)
    _check_ranges(rule, source)
    _check_scope(rule_scope(rule.heads, rule.body), frozenset(), source)


def _check_wildcards(rule: Rule, source) -> None:
    def visit(term: Term, where: str | None):
        """`where` says why `_` may not stand here; None: a whole argument of a body atom (or
        a field, at any depth, of a record or ADT value that is one), where it may."""
        if isinstance(term, Wildcard) and where is not None:
            raise UnsafeVariableError.at(f"'_' is not allowed {where}", term.span, source)
        if isinstance(term, Aggregate):
            if term.target is not None:
                visit(term.target, "in an aggregate's target")
            literals(term.body)
        for sub in _children(term):
            visit(sub, where if isinstance(term, PATTERNS) else where or "in an expression")

    def literals(body):
        for lit in body:
            if isinstance(lit, (Atom, Negation)):
                for arg in literal_terms(lit):
                    visit(arg, None)
            else:
                kind = "in a comparison" if isinstance(lit, Comparison) else f"in {lit.name}(...)"
                for arg in literal_terms(lit):
                    # `v = [a, _]` takes v apart: a field of the pattern may be `_`, as in Soufflé.
                    pattern = isinstance(lit, Comparison) and lit.op == "=" and isinstance(arg, PATTERNS)
                    visit(arg, None if pattern else kind)

    for head in rule.heads:
        for arg in head.args:
            visit(arg, "in the head")
    literals(rule.body)


def _check_ranges(rule: Rule, source) -> None:
    """`range` has several values: deltalog takes it where it binds a variable to each of
    them (or tests one), `x = range(a, b[, step])`; its bounds are grounded like any
    other expression's."""
    binding = set()

    def literals(body):
        for lit in body:
            if isinstance(lit, Comparison) and lit.op == "=":
                for side, other in ((lit.left, lit.right), (lit.right, lit.left)):
                    if isinstance(side, Variable) and isinstance(other, Functor) and other.name == "range":
                        binding.add(id(other))
            for term in literal_terms(lit):
                visit(term)

    def visit(term):
        for sub in subterms(term):
            if isinstance(sub, Functor) and sub.name == "range" and id(sub) not in binding:
                message = "range(...) is supported only as 'x = range(a, b[, step])', binding x to each value"
                raise UnsupportedError.at(message, sub.span, source)
            if isinstance(sub, Aggregate):
                if sub.target is not None:
                    visit(sub.target)
                literals(sub.body)

    for head in rule.heads:
        for arg in head.args:
            visit(arg)
    literals(rule.body)


def _occurrences(scope: Scope) -> list[tuple[Variable, str | None]]:
    """(variable, context) for each variable occurrence of this scope, in source order;
    context None marks a grounding occurrence. A nested aggregate contributes the
    first use of each variable it takes from outside, with context 'aggregate'."""
    found: list[tuple[Variable, str | None]] = []

    def visit(term: Term, context: str | None):
        if isinstance(term, Variable):
            found.append((term, context))
        elif isinstance(term, Aggregate):
            child = scope.child(term)
            found.extend((var, "aggregate") for var in _first_uses(child, child.outer))
        else:
            # A field of a record or ADT value is where the value is; an operand is in an expression.
            inner = "functor" if isinstance(term, Functor) else context if isinstance(term, PATTERNS) else context or "expression"
            for sub in _children(term):
                visit(sub, inner)

    for result in scope.results:
        visit(result, "head" if scope.aggregate is None else "target")
    for lit in scope.literals:
        if isinstance(lit, Atom):
            for arg in lit.args:
                visit(arg, None)
        else:
            context = {Negation: "negation", Comparison: "comparison", StringTest: "test"}[type(lit)]
            for arg in literal_terms(lit):
                visit(arg, context)
    found.sort(key=lambda item: (item[0].span.line, item[0].span.column))
    return found


def _children(term: Term) -> tuple[Term, ...]:
    if isinstance(term, BinaryOp):
        return (term.left, term.right)
    if isinstance(term, UnaryOp):
        return (term.operand,)
    if isinstance(term, (Functor, *PATTERNS)):
        return term.args
    return ()


def _first_uses(scope: Scope, names) -> list[Variable]:
    """The first occurrence, anywhere in this scope or deeper, of each of `names`."""
    first: dict[str, Variable] = {}
    for var, _ in _occurrences(scope):
        if var.name in names and var.name not in first:
            first[var.name] = var
    return list(first.values())


def _needs(term: Term, scope: Scope) -> set[str] | None:
    """The variables `term` needs bound to be computed in `scope` (an aggregate: its groups); None if it cannot be (it holds `_`)."""
    names = set()
    for sub in subterms(term):
        if isinstance(sub, Variable):
            names.add(sub.name)
        elif isinstance(sub, Aggregate):
            names |= scope.child(sub).outer
        elif isinstance(sub, Wildcard):
            return None
    return names


def _check_scope(scope: Scope, grounded_outside: frozenset[str], source) -> None:
    _check_witnesses(scope, source)

    grounded = grounded_in(scope, scope.outer & grounded_outside)
    equalities = [lit for lit in scope.literals if isinstance(lit, Comparison) and lit.op == "="]

    unsafe: dict[str, list[tuple[Variable, str]]] = {}
    for var, context in _occurrences(scope):
        if var.name in scope.own and var.name not in grounded and var.name not in scope.existential:
            unsafe.setdefault(var.name, []).append((var, context))
    if unsafe:
        # `x = e` would bind x if e were grounded: x's trouble is e's, so blame e's variables.
        bound_by_equality = {side.name for eq in equalities for side in (eq.left, eq.right) if isinstance(side, Variable)}
        roots = {n: uses for n, uses in unsafe.items() if n not in bound_by_equality}
        raise _unsafe_error(roots or unsafe, source)
    for child in scope.children.values():
        _check_scope(child, frozenset(grounded), source)


def grounded_in(scope: Scope, given) -> set[str]:
    """The names grounded in `scope` when `given` are: by its literals, and by the min/max
    aggregates that bind their witnesses once their groups are bound."""

    def witnesses(names):
        return set().union(*(c.witnesses for c in scope.children.values() if c.outer <= names))

    return grounded_names(scope.literals, given, lambda t: _needs(t, scope), witnesses)


def _check_witnesses(scope: Scope, source) -> None:
    """A witness (compiler.datalog.scope) of a count, sum or mean has no tuple to come from."""
    for child in scope.children.values():
        if child.witnesses and child.aggregate.kind not in ("min", "max"):
            name = min(child.witnesses)
            (use,) = _first_uses(child, {name})
            message = (
                f"variable '{name}' is grounded only inside this {child.aggregate.kind} aggregate, but is used outside it: "
                f"only min and max have a witness tuple to take its value from"
            )
            raise UnsafeVariableError.at(message, use.span, source)


def _unsafe_error(unsafe, source) -> UnsafeVariableError:
    def pointed(uses):
        # Point at the use that needs grounding (a head use only says where it is wanted).
        return next((v for v, c in uses if c not in ("head", "target")), uses[0][0])

    name, uses = min(unsafe.items(), key=lambda item: (pointed(item[1]).span.line, pointed(item[1]).span.column))
    contexts = list(dict.fromkeys(c for _, c in uses))
    phrases = [_PHRASES[c] for c in contexts]
    said = phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]
    message = f"variable '{name}' is not grounded: it only occurs {said}, never in a positive body atom"
    return UnsafeVariableError.at(message, pointed(uses).span, source)
