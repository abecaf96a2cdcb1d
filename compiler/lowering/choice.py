"""choice-domain relations: one tuple per key, the least candidate, kept as a reduce.

`.decl advisor(s: symbol, p: symbol) choice-domain s` keeps, for each student s,
one of the tuples its rules and facts derive. Soufflé keeps the first one its
evaluation happens to insert; deltalog keeps the *least* (in the order of the
values: numbers and floats numerically, symbols in code point order, records and
ADT values by value -- nil first, then field by field; an ADT's branches in the
order of their names, then their fields -- columns left to right), so an answer does not depend on evaluation order, and when the chosen
candidate goes, the next least takes its place -- a reduce per key over the
candidates (`ChooseLeast`: runtime's reduce with compiler.lowering.places.TopPlaces
keeping one place).

Recursion. In a recursive stratum Soufflé's choice is first come, first served by
rounds: a tuple derived in round r cannot displace one kept in an earlier round.
deltalog keeps exactly that and fixes only the order within a round: every tuple
of the stratum's relations carries its *depth*, the round it is first derived in
(0 for facts, inputs and rules without a relation of the stratum in their body,
else 1 + the greatest depth among those body atoms; the least over its
derivations), and candidates are ordered by (depth, values). A plain relation of
such a stratum keeps each tuple at its least depth (a min reduce), so the depths
are those of Soufflé's semi-naive rounds and the answer is one Soufflé may give
(`with_depth` adds the column to the stratum's rules). Depths are internal:
the relations outside the stratum read the tuples without them.

Several domains, `choice-domain x, (y, z)`: a tuple is kept when, taking the
candidates in order, no tuple kept before it has its key in any domain (a
functional dependency per domain, enforced greedily as Soufflé's insertion
does). With G the kept tuples, call a candidate *unclaimed* when no tuple of G
before it shares its key in a domain; with W0 the unclaimed candidates and Wk
the first tuple of W(k-1) per key of the k-th domain, G is the one fixpoint of
    G = Wn    (n domains)
By induction along the order: whether c is in Wn depends only on the tuples
before it, and for the greedy answer G the unclaimed tuples are G itself, which
no domain narrows. Iterating the equation settles the tuples in order, each as
soon as those before it are (the parallel form of the greedy choice); it runs
inside the stratum's own fixpoint when that is recursive, in a fixpoint of its
own otherwise (`choose`: a ChooseLeast per domain over the previous iteration's
G, and one per domain in turn over the unclaimed candidates, so each narrowing
sees few tuples).
"""

from __future__ import annotations

from dataclasses import replace

from compiler.datalog.ast import Atom, BinaryOp, Functor, Number, Rule, Variable
from compiler.lowering.places import SortKeys, TopPlaces, ValueBefore
from compiler.plan import TRUE, Antijoin, Call, Col, Filter, Join, Node, Project, Union, conjoin
from compiler.plan.ops import RECORD
from compiler.plan.nodes import _derived, _span, node

DEPTH = "number"  # the type of the depth column


@node
class ChooseLeast(Node):
    """Per distinct value of the `key` columns, the input row that comes first in the
    order of the `order` columns (ascending), then of all columns."""

    input: Node
    key: tuple[int, ...]
    order: tuple[int, ...]
    kinds: tuple = ()  # each column's kind (compiler.datalog.types): record columns are ordered by value
    span: object = _span()
    types: tuple[str, ...] = _derived()
    _child_fields = ("input",)

    def __post_init__(self):
        object.__setattr__(self, "key", tuple(self.key))
        object.__setattr__(self, "order", tuple(self.order))
        object.__setattr__(self, "types", self.input.types)

    def describe(self) -> str:
        first = ", ".join(f"#{c}" for c in (*self.order, *(c for c in range(self.arity) if c not in self.order)))
        return f"ChooseLeast by {', '.join(f'#{c}' for c in self.key)}: the first in order of {first}"

    def lower(self, inputs):
        (rows,) = inputs
        rest = tuple(c for c in range(self.arity) if c not in self.key)
        keyed = rows.select(self.key + rest)
        value_types = tuple(self.types[c] for c in rest)
        # Within a group the key columns are equal: order by the other columns.
        order = tuple((rest.index(c), False) for c in self.order if c in rest)
        value_kinds = tuple(self.kinds[c] for c in rest) if self.kinds else ()
        reducer = TopPlaces(SortKeys(order, value_types, rows.dataflow.codec.symbols, value_kinds), 0, 1)
        chosen = keyed.reduce_columns(reducer, len(self.key), keyed.types[len(self.key) :], "choice", is_set=True)
        return chosen.select(tuple((self.key + rest).index(c) for c in range(self.arity)))


def choose(candidates: Node, domains, order: tuple[int, ...], kinds: tuple, previous: Node | None, span) -> Node:
    """The kept tuples of `candidates` (a set): one per key of each domain, the least in
    the order of the `order` columns then all columns (record columns, of `kinds`, by
    value). With several domains `previous` is the kept set of the previous iteration
    (see the module)."""
    if len(domains) == 1:
        return ChooseLeast(candidates, domains[0], order, kinds, span=span)
    # The candidates no kept tuple before them has claimed: per domain, those whose key
    # has no kept tuple, and those at or before the least kept tuple with their key.
    unclaimed = candidates
    for domain in domains:
        least = ChooseLeast(previous, domain, order, kinds, span=span)
        keys = tuple((c, c) for c in domain)
        pairs = Join(unclaimed, least, keys, span=span)
        before = Filter(pairs, _not_after(unclaimed.types, kinds, order, unclaimed.arity), span=span)
        claimed_later = Project(before, tuple(Col(i, t) for i, t in enumerate(unclaimed.types)), span=span)
        unclaimed = Union((Antijoin(unclaimed, least, keys, span=span), claimed_later), span=span)
    # Kept: the first unclaimed tuple per key of the first domain, of those the first per
    # key of the second, and so on.
    kept = unclaimed
    for domain in domains:
        kept = ChooseLeast(kept, domain, order, kinds, span=span)
    return kept


def _not_after(types, kinds, order, width: int):
    """Over (row, other row) pairs: the row comes at or before the other in the order
    of the `order` columns, then all columns (lexicographic <=; record columns by value,
    as ChooseLeast orders them)."""
    columns = list(dict.fromkeys((*order, *range(len(types)))))
    test = TRUE  # a <= b from column k on: (a_k < b_k) or (a_k = b_k and a <= b from k + 1 on)
    for c in reversed(columns):
        a, b = Col(c, types[c]), Col(width + c, types[c])
        before = Call(ValueBefore(kinds[c]) if types[c] == RECORD else "<", (a, b))
        test = Call("or", (before, conjoin([Call("=", (a, b)), test])))
    return test


def with_depth(rule: Rule, members) -> Rule:
    """The rule over the depth-carrying relations of its stratum (`members`): each of
    their atoms gets a depth variable, the head the depth of what it derives."""
    depths = []

    def tagged(atom: Atom) -> Atom:
        if atom.relation not in members:
            return atom
        depth = Variable(f"<depth {len(depths)}>", span=atom.span)
        depths.append(depth)
        return replace(atom, args=atom.args + (depth,))

    body = tuple(tagged(lit) if isinstance(lit, Atom) else lit for lit in rule.body)
    if not depths:
        depth = Number(0)
    else:
        deepest = depths[0] if len(depths) == 1 else Functor("max", tuple(depths))
        depth = BinaryOp("+", deepest, Number(1))
    head = rule.heads[0]
    return Rule((replace(head, args=head.args + (depth,)),), body, span=rule.span)
