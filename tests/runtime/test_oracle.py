"""Randomised tests: every operator against the from-scratch reference."""

import numpy as np
from hypothesis import given, settings

from runtime import iterate as dd_iterate
from runtime.reference import Multiset
from runtime.reference import iterate as ref_iterate
from tests.runtime.harness import check, toggles

SETTINGS = settings(max_examples=120, deadline=None)


@SETTINGS
@given(toggles(1, [2]))
def test_map_filter_negate_concat(steps):
    def program(x):
        a = x.map(lambda r: (r[1], r[0] + r[1]), arity=2)
        b = x.filter(lambda r: r[0] != r[1]).negate()
        c = x.map_columns(lambda d: d[::-1] * 2).filter_columns(lambda d: d[0] > 1)
        return a.concat(b, c)

    check(program, [2], steps)


@SETTINGS
@given(toggles(1, [2]))
def test_flat_map(steps):
    check(lambda x: x.flat_map(lambda r: [(r[0],), (r[1],), (r[0],)], arity=1), [2], steps)


@SETTINGS
@given(toggles(2, [2, 2]))
def test_join(steps):
    check(lambda a, b: a.join(b), [2, 2], steps)


@SETTINGS
@given(toggles(2, [3, 2], values=3))
def test_join_on_two_columns_and_join_map(steps):
    def program(a, b):
        return [a.join(b, key=2), a.join_map(b.map(lambda r: (r[1], r[0]), arity=2), lambda k, x, y, z: (z, k + x), arity=2)]

    check(program, [3, 2], steps)


@SETTINGS
@given(toggles(2, [2, 1]))
def test_semijoin_antijoin(steps):
    check(lambda a, b: [a.semijoin(b), a.antijoin(b)], [2, 1], steps)


@SETTINGS
@given(toggles(1, [2], values=5))
def test_reduce_family(steps):
    def program(x):
        return [
            x.distinct(),
            x.count(key=1),
            x.count(),
            x.sum(key=1),
            x.min(key=1),
            x.max(key=1),
            x.threshold(lambda c: np.where(c > 1, 1, 0)),
            x.mean(key=1),
            # Quarters add exactly in any order, so float sums compare exactly.
            x.map(lambda r: (r[0], r[1] * 0.25 - 0.5), types=("int", "float")).sum(key=1),
            x.map(lambda r: (r[0], r[1] * 0.25 - 0.5), types=("int", "float")).mean(key=1),
            x.reduce(lambda k, vals: [((sum(v[0] * c for v, c in vals) % 3,), 1)] if vals else [], key=1, arity=1),
        ]

    check(program, [2], steps)


@SETTINGS
@given(toggles(1, [2], values=4))
def test_reduce_chain(steps):
    # A reduce reading another reduce's arranged output.
    check(lambda x: x.min(key=1).map(lambda r: (r[1], r[0]), arity=2).count(key=1), [2], steps)


# Loop bodies see the inputs as sets: with negative multiplicities (a removal
# before its insertion) a recursive program need not have a fixed point.


def reachability(edges, roots):
    edges = edges.distinct()
    return roots.map(lambda r: (r[0], r[0]), arity=2).iterate(
        lambda reach: reach.map(lambda r: (r[1], r[0]), arity=2)
        .join(edges)
        .map(lambda r: (r[1], r[2]), arity=2)
        .concat(reach)
        .distinct()
    )


def bfs(edges, roots):
    edges = edges.distinct()
    return roots.map(lambda r: (r[0], 0), arity=2).iterate(
        lambda dist: dist.join(edges).map(lambda r: (r[2], r[1] + 1), arity=2).concat(dist).min()
    )


@SETTINGS
@given(toggles(2, [2, 1], values=6, max_updates=8, max_steps=8))
def test_iterate_reachability(steps):
    check(reachability, [2, 1], steps)


@SETTINGS
@given(toggles(2, [2, 1], values=6, max_updates=8, max_steps=8))
def test_iterate_bfs_min(steps):
    check(bfs, [2, 1], steps)


@SETTINGS
@given(toggles(2, [2, 1], values=5, max_updates=8, max_steps=6, max_offset=4, max_advance=4))
def test_iterate_many_times_in_flight(steps):
    # Large offsets and advances put several epochs into one batch: inside the
    # loop, (epoch, iteration) times are then only partially ordered.
    check(bfs, [2, 1], steps)


@SETTINGS
@given(toggles(1, [2], values=5, max_updates=8))
def test_nested_iterate(steps):
    # For each round of the outer loop, the inner loop closes the relation
    # transitively; the outer loop adds reversed edges (symmetric closure).
    def program(edges):
        edges = edges.distinct()

        def outer(x):
            closed = x.iterate(
                lambda y: y.map(lambda r: (r[1], r[0]), arity=2).join(x).map(lambda r: (r[1], r[2]), arity=2).concat(y).distinct()
            )
            return closed.concat(closed.map(lambda r: (r[1], r[0]), arity=2)).distinct()

        return edges.iterate(outer)

    check(program, [2], steps)


def even_odd(starts_empty: bool):
    """Nodes reachable from node 0 by an even / odd number of edges: two variables, each read by
    a join keyed by its only column; both seeded, or both starting empty."""
    def program(edges):
        edges = edges.distinct()
        start = edges.filter(lambda r: r[0] == 0).map(lambda r: (r[0],), arity=1).distinct()

        def step(nodes):
            return nodes.join(edges).map(lambda r: (r[1],), arity=1)

        def body(even, odd):
            return [step(odd).concat(start).distinct(), step(even).distinct()]

        if isinstance(edges, Multiset):
            return ref_iterate([Multiset(), Multiset()] if starts_empty else [start, start.filter(lambda r: False)], body)
        if starts_empty:
            return dd_iterate([("int",), ("int",)], body, scope=edges.scope)
        return dd_iterate([start, start.filter(lambda r: False)], body)

    return program


@SETTINGS
@given(toggles(1, [2], values=5, max_updates=8))
def test_mutual_recursion(steps):
    check(even_odd(starts_empty=False), [2], steps)


def _empty_start(edges, arity, body):
    """One loop variable that starts empty: read by joins through its result's output trace,
    one iteration later (runtime.trace.delayed), in the dataflow."""
    if isinstance(edges, Multiset):
        return ref_iterate([Multiset()], lambda v: [body(v)])[0]
    return dd_iterate([("int",) * arity], lambda v: [body(v)], scope=edges.scope)[0]


def closure_keyed_by_target(edges):
    """path as (y, x): x reaches y. The join reads the variable keyed by its first column."""
    edges = edges.distinct()
    return _empty_start(edges, 2, lambda p: p.join(edges).map(lambda r: (r[2], r[1]), arity=2)
                        .concat(edges.map(lambda r: (r[1], r[0]), arity=2)).distinct())


def joined_with_itself(edges):
    """Pairs (y, z) with a walk from y to z whose first edge leaves y: p(y, w) and p(w, z) make
    p(y, z) -- a join of the variable with itself (both sides read through delayed traces,
    and both sides' updates meet in one run)."""
    edges = edges.distinct()

    def body(p):
        turned = p.map(lambda r: (r[1], r[0]), arity=2)  # (w, y): an arrangement of its own
        return turned.join(p).map(lambda r: (r[1], r[2]), arity=2).concat(edges).distinct()
    return _empty_start(edges, 2, body)


def squared(edges):
    """Both sides of a join read the variable itself, keyed by its first column."""
    edges = edges.distinct()
    return _empty_start(edges, 2, lambda p: p.join(p).map(lambda r: (r[1], r[2]), arity=2).concat(edges).distinct())


@SETTINGS
@given(toggles(1, [2], values=6, max_updates=8, max_steps=8))
def test_loop_variable_that_starts_empty_read_through_its_results_trace(steps):
    check(closure_keyed_by_target, [2], steps)


@SETTINGS
@given(toggles(1, [2], values=5, max_updates=8, max_steps=6, max_offset=4, max_advance=4))
def test_loop_variable_that_starts_empty_with_many_times_in_flight(steps):
    check(closure_keyed_by_target, [2], steps)


@SETTINGS
@given(toggles(1, [2], values=5, max_updates=8, max_steps=6, max_offset=3, max_advance=3))
def test_loop_variable_that_starts_empty_joined_with_itself(steps):
    check(joined_with_itself, [2], steps)
    check(squared, [2], steps)


@SETTINGS
@given(toggles(1, [2], values=5, max_updates=8))
def test_mutual_recursion_of_variables_that_start_empty(steps):
    check(even_odd(starts_empty=True), [2], steps)


@SETTINGS
@given(toggles(2, [3, 2], values=3))
def test_selects_after_joins(steps):
    """A select that alone reads a join is done by the join (runtime.worker.Dataflow._fuse_selects):
    some columns, reordered, dropped, or all; a join read by two selects does neither."""

    def program(a, b):
        both = a.join(b, key=2)  # (k0, k1, a2): read twice, so not fused
        return [a.join(b).select([3, 0]), a.join(b, key=2).select([2]), both.select([1, 2]), both.select([2, 2, 0]),
                a.semijoin(b.select([0])).select([2, 1])]

    check(program, [3, 2], steps)


@SETTINGS
@given(toggles(2, [2, 1], values=6, max_updates=10, max_steps=8))
def test_reachability_with_a_select_after_the_join(steps):
    """The loop of bench/reachability.py: (node, root) joined with edges, then (dst, root)."""

    def program(edges, roots):
        seed = roots.select([0, 0])
        return seed.iterate(lambda reach: reach.join(edges.distinct()).select([2, 1]).concat(seed).distinct())

    check(program, [2, 1], steps)
