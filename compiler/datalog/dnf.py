"""Disjunctive normal form of rule bodies.

A body is held as a DNF: a tuple of alternatives, each a tuple of literals read
as a conjunction. `,` multiplies alternatives out, `;` concatenates them, and
`!` over a parenthesised body applies De Morgan's laws down to single
literals (a negated comparison flips its operator, a doubly negated atom is
the atom). Each alternative becomes one Rule, so later stages only ever see
conjunctive bodies. Multiplying out can blow up exponentially, hence a cap.
"""

from __future__ import annotations

from itertools import product

from compiler.datalog.ast import Atom, Comparison, Literal, Negation, StringTest

DNF = tuple[tuple[Literal, ...], ...]

MAX_ALTERNATIVES = 4096

_FLIPPED = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


class TooManyAlternatives(Exception):
    """Raised when a body would expand to more than MAX_ALTERNATIVES rules."""


def single(lit: Literal) -> DNF:
    return ((lit,),)


def disjoin(parts: list[DNF]) -> DNF:
    out = tuple(alt for part in parts for alt in part)
    if len(out) > MAX_ALTERNATIVES:
        raise TooManyAlternatives
    return out


def conjoin(parts: list[DNF]) -> DNF:
    size = 1
    for part in parts:
        size *= len(part)
        if size > MAX_ALTERNATIVES:
            raise TooManyAlternatives
    return tuple(tuple(lit for alt in combo for lit in alt) for combo in product(*parts))


def negate_literal(lit: Literal, span=None) -> Literal:
    """The literal that holds exactly when `lit` does not (for grounded variables)."""
    span = span or lit.span
    if isinstance(lit, Atom):
        return Negation(lit, span=span)
    if isinstance(lit, Negation):
        return lit.atom
    if isinstance(lit, Comparison):
        return Comparison(_FLIPPED[lit.op], lit.left, lit.right, span=lit.span)
    assert isinstance(lit, StringTest)
    return StringTest(lit.name, lit.args, not lit.negated, span=lit.span)


def negate(body: DNF) -> DNF:
    # not (A1 or A2 ...) = (not A1) and (not A2) ...; not (l1 and l2 ...) = (not l1) or (not l2) ...
    return conjoin([tuple((negate_literal(lit),) for lit in alt) for alt in body])
