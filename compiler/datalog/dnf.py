"""Disjunctive normal form of rule bodies.

The builder first keeps a body as a formula: literals combined by `,` (and),
`;` (or) and `!`/`not`. `to_dnf` pushes negations down to single literals
(De Morgan; a negated comparison flips its operator, a doubly negated atom is
the atom) and then multiplies conjunctions out, giving a tuple of
alternatives, each a tuple of literals read as a conjunction. Each
alternative becomes one Rule, so later stages only see conjunctive bodies.
Pushing negation down before multiplying matters: `!(a, (b; c), (d; e))` is
three alternatives, not the 2^4 that negating its expanded form would give.
Multiplying out can still blow up exponentially, hence a cap.
"""

from __future__ import annotations

from itertools import product

from compiler.datalog.ast import Atom, Comparison, Literal, Negation, Span, StringTest

DNF = tuple[tuple[Literal, ...], ...]
# ("lit", literal) | ("and", [formula, ...]) | ("or", [formula, ...]) | ("not", formula, span of the `!`)
Formula = tuple

MAX_ALTERNATIVES = 4096

_FLIPPED = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


class TooManyAlternatives(Exception):
    """Raised when a body would expand to more than MAX_ALTERNATIVES rules."""


def negate_literal(lit: Literal, span: Span | None = None) -> Literal:
    """The literal that holds exactly when `lit` does not (for grounded variables)."""
    if isinstance(lit, Atom):
        return Negation(lit, span=span or lit.span)
    if isinstance(lit, Negation):
        return lit.atom
    if isinstance(lit, Comparison):
        return Comparison(_FLIPPED[lit.op], lit.left, lit.right, span=lit.span)
    assert isinstance(lit, StringTest)
    return StringTest(lit.name, lit.args, not lit.negated, span=lit.span)


def to_dnf(formula: Formula, negated: bool = False, negation_span: Span | None = None) -> DNF:
    kind = formula[0]
    if kind == "lit":
        return ((negate_literal(formula[1], negation_span) if negated else formula[1],),)
    if kind == "not":
        inner = formula[1]
        # `!atom` as written: the Negation's span starts at the `!`.
        return to_dnf(inner, not negated, formula[2] if inner[0] == "lit" else None)
    parts = [to_dnf(part, negated) for part in formula[1]]
    conjunctive = (kind == "and") != negated  # De Morgan swaps and/or under negation
    return _conjoin(parts) if conjunctive else _disjoin(parts)


def _disjoin(parts: list[DNF]) -> DNF:
    out = tuple(alt for part in parts for alt in part)
    if len(out) > MAX_ALTERNATIVES:
        raise TooManyAlternatives
    return out


def _conjoin(parts: list[DNF]) -> DNF:
    size = 1
    for part in parts:
        size *= len(part)
        if size > MAX_ALTERNATIVES:
            raise TooManyAlternatives
    return tuple(tuple(lit for alt in combo for lit in alt) for combo in product(*parts))
