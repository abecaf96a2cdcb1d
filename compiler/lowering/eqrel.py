"""Equivalence relations (eqrel) as classes with representatives, not as their closure.

`.decl same(x: T, y: T) eqrel` is the least equivalence relation containing the
pairs its rules, facts and inputs give: reflexive on every value in them,
symmetric and transitive. Its closure has n² pairs for a class of n values, so
deltalog keeps the classes instead: the *base* pairs (binding `same@base`) and
each value's class label (`same@class`: value, label), the least `ord` of the
values it is connected to -- min-label propagation, a min aggregate iterated to
its fixpoint across the base pairs both ways (compiler.plan's Aggregate in a
Fixpoint, maintained incrementally like any other: a pair that goes splits the
labels again).

Reading `same(a, b)` in a body is then two class atoms with one label,
`same@class(a, l), same@class(b, l)` (`eqrel_leaf`), which the join planner orders
like any atoms: with `a` bound it visits a's class only. `same(a, _)` is one class
atom (a is a value of the relation), except inside a count, sum or mean, which
count each pair. `!same(a, b)` asks the classes of just the
(a, b) pairs the rule has (`without_equivalent`). Only an output needs the pairs
themselves (binding `same`, a join of the classes on their label); an eqrel
relation no output names is never materialised.
"""

from __future__ import annotations

from compiler.plan import Aggregate, Antijoin, Call, Col, Distinct, Filter, Join, Node, Project, Ref, Union

LABEL = "number"  # `ord` of a value: its bits, or a symbol's id


def base_name(name: str) -> str:
    return f"{name}@base"


def class_name(name: str) -> str:
    return f"{name}@class"


def class_types(value_type: str) -> tuple[str, str]:
    return (value_type, LABEL)


def classes_body(base: Node, classes: Node, span) -> Node:
    """(value, label) for every value of the base pairs: the least ord(v) over the values
    v its class holds, given `classes` (the previous iteration's labels)."""
    t = base.types[0]
    own = [Project(base, (Col(i, t), Call("ord", (Col(i, t),))), span=span) for i in (0, 1)]
    # A label crosses every base pair, both ways: (value, label) joined on the pair's a (b).
    crossing = []
    for near, far in ((0, 1), (1, 0)):
        joined = Join(classes, base, ((0, near),), span=span)
        crossing.append(Project(joined, (Col(2 + far, t), Col(1, LABEL)), span=span))
    return Aggregate(Union((*own, *crossing), span=span), (0,), "min", 1, span=span)


def pairs_body(classes: Node, span) -> Node:
    """Every pair of values with one label: the closure, for outputs."""
    t = classes.types[0]
    joined = Join(classes, classes, ((1, 1),), span=span)
    return Project(joined, (Col(0, t), Col(2, t)), span=span)


def eqrel_leaf(classes: Node, args, is_wildcard) -> tuple[Node, list[int | None]]:
    """The node an atom of the eqrel relation reads, and the column each argument is
    (None: an argument that `is_wildcard` says needs no column)."""
    wild = [is_wildcard(a) for a in args]
    if any(wild):
        return classes, [None if w else 0 for w in wild]
    return Join(classes, classes, ((1, 1),)), [0, 2]


def without_equivalent(left: Node, a: int | None, b: int | None, classes: Node, span) -> Node:
    """The rows of `left` whose columns a and b hold values that are not equivalent
    (None: any value, as for `_`): `!same(a, b)`."""
    if a is None and b is None:  # there is no pair at all
        return Antijoin(left, Project(classes, (), span=span), (), span=span)
    if a is None or b is None:  # the value is in no pair
        return Antijoin(left, classes, (((a if b is None else b), 0),), span=span)
    t = left.types[a]
    asked = Distinct(Project(left, (Col(a, t), Col(b, t)), span=span), span=span)
    labelled = Join(Join(asked, classes, ((0, 0),), span=span), classes, ((1, 0),), span=span)
    # (a, b, a, label of a, b, label of b)
    same = Filter(labelled, Call("=", (Col(3, LABEL), Col(5, LABEL))), span=span)
    equivalent = Project(same, (Col(0, t), Col(1, t)), span=span)
    return Antijoin(left, equivalent, ((a, 0), (b, 1)), span=span)


def eqrel_bindings(name: str, info, candidates: Node, span) -> tuple[tuple[str, Node], tuple[str, Node]]:
    """The (name, body) of the base and class bindings of an eqrel relation whose base
    pairs are `candidates`; the class binding reads itself (a fixpoint)."""
    base = Ref(base_name(name), info.types, span=span)
    classes = Ref(class_name(name), class_types(info.types[0]), span=span)
    return (base_name(name), Distinct(candidates, span=span)), (class_name(name), classes_body(base, classes, span))
