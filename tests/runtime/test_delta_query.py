"""Delta queries, half joins, as-of joins and the AltNeu calculus against oracles.

Delta-query plans and binary-join plans of the same conjunctive query are both
compared, at every complete time, with a brute-force evaluation of the query on
the accumulated inputs (every combination of rows, kept when the variables
agree). As-of joins depend on the order of events, not only on the accumulated
inputs, so their oracle replays the update history: an update of the stream side
at time t meets the other side accumulated at t.
"""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime import Dataflow, DataflowError
from runtime.delta_query import delta_query, term_steps
from runtime.operators.half_join_kernels import LOOKUPS
from runtime.reference import Multiset
from tests.runtime.harness import check, toggles


def brute_force(atoms, output) -> Multiset:
    """Every combination of one row per atom whose variables agree, with multiplicities multiplied."""
    out = Counter()
    for combo in itertools.product(*[list(m.contents.items()) for m, _ in atoms]):
        binding, count, ok = {}, 1, True
        for (row, c), (_, names) in zip(combo, atoms):
            count *= c
            for v, x in zip(names, row):
                if binding.setdefault(v, x) != x:
                    ok = False
        if ok:
            out[tuple(binding[v] for v in output)] += count
    return Multiset(out)


def query(atoms_of, output, binary, fuel=None):
    """A program for harness.check: delta plan and binary plan on collections, brute force on multisets."""

    def program(*inputs):
        atoms = atoms_of(*inputs)
        if isinstance(inputs[0], Multiset):
            expected = brute_force(atoms, output)
            return [expected, expected]
        kw = {} if fuel is None else {"fuel": fuel}
        return [delta_query(atoms, output, **kw), binary(*inputs)]

    return program


# triangle: e(a,b), e(b,c), e(a,c); binary plan: two-paths keyed by (a, c), then e by (a, c)
def triangle_atoms(e):
    return [(e, "ab"), (e, "bc"), (e, "ac")]


def triangle_binary(e):
    two_paths = e.select((1, 0)).join(e, key=1)  # (b, a, c)
    return two_paths.select((1, 2, 0)).join(e, key=2).select((0, 2, 1))  # (a, c, b) keyed by (a, c)


TRIANGLE = query(triangle_atoms, "abc", triangle_binary)


@settings(max_examples=60, deadline=None)
@given(toggles(1, [2], values=4, max_updates=8, max_steps=5))
def test_triangles_delta_equals_binary_equals_oracle(steps):
    check(TRIANGLE, [2], steps, outputs=2)


@settings(max_examples=25, deadline=None)
@given(toggles(1, [2], values=4, max_updates=8, max_steps=4))
def test_triangles_with_tiny_fuel(steps):
    # fuel=1: every half join emits one slice per activation, many activations per step
    check(query(triangle_atoms, "abc", triangle_binary, fuel=1), [2], steps, outputs=2)


def test_whole_triangle_inserted_at_once_is_counted_once():
    steps = [([(0, (1, 2), 1, 0), (0, (2, 3), 1, 0), (0, (1, 3), 1, 0)], 1)]
    _, (delta, binary) = check(TRIANGLE, [2], steps, outputs=2)
    assert delta.contents() == Counter({(1, 2, 3): 1})
    # ...and removed at once, counted once again; then a double edge doubles the count
    steps += [([(0, (1, 2), -1, 0), (0, (2, 3), -1, 0), (0, (1, 3), -1, 0)], 1)]
    steps += [([(0, (1, 2), 1, 0), (0, (2, 3), 1, 0), (0, (1, 3), 1, 0), (0, (1, 3), 1, 0)], 1)]
    _, (delta, _) = check(TRIANGLE, [2], steps, outputs=2)
    assert delta.changes() == [((1, 2, 3), 0, 1), ((1, 2, 3), 1, -1), ((1, 2, 3), 2, 2)]


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.tuples(st.integers(0, 4), st.integers(0, 4)), st.sampled_from([1, 1, -1])), min_size=1, max_size=30))
def test_one_distinct_time_per_update(updates):
    # every update at its own time, all sent in one batch: many distinct times per batch
    steps = [([(0, row, d, t) for t, (row, d) in enumerate(updates)], len(updates))]
    check(TRIANGLE, [2], steps, outputs=2)


def four_cycle_atoms(e):
    return [(e, "ab"), (e, "bc"), (e, "cd"), (e, "da")]


def four_cycle_binary(e):
    paths = e.select((1, 0)).join(e, key=1)  # (b, a, c)
    paths = paths.select((2, 1, 0)).join(e, key=1)  # (c, a, b, d)
    closed = paths.select((3, 1, 0, 2)).join(e.select((0, 1)), key=2)  # (d, a, c, b) on (d, a)
    return closed.select((1, 3, 2, 0))


@settings(max_examples=30, deadline=None)
@given(toggles(1, [2], values=3, max_updates=8, max_steps=4))
def test_four_cycles(steps):
    check(query(four_cycle_atoms, "abcd", four_cycle_binary), [2], steps, outputs=2)


def clique_atoms(e):
    return [(e, "ab"), (e, "ac"), (e, "ad"), (e, "bc"), (e, "bd"), (e, "cd")]


def clique_binary(e):
    abc = e.select((1, 0)).join(e, key=1).select((1, 2, 0)).join(e, key=2)  # (a, c, b)
    abcd = abc.select((0, 2, 1)).join(e, key=1)  # (a, b, c, d) with a-d
    abcd = abcd.select((1, 3, 0, 2)).join(e, key=2)  # b-d: (b, d, a, c)
    return abcd.select((3, 1, 2, 0)).join(e, key=2).select((2, 3, 0, 1))  # c-d


@settings(max_examples=20, deadline=None)
@given(toggles(1, [2], values=4, max_updates=10, max_steps=4))
def test_four_cliques(steps):
    check(query(clique_atoms, "abcd", clique_binary), [2], steps, outputs=2)


def mixed_atoms(r, s, t):
    # three relations, a repeated variable within one atom, a variable only in one atom
    return [(r, ("x", "y", "y")), (s, ("y", "z")), (t, ("z", "x", "w"))]


def mixed_binary(r, s, t):
    rr = r.filter_columns(lambda d: d[1] == d[2]).select((1, 0))  # (y, x)
    rs = rr.join(s, key=1)  # (y, x, z)
    rst = rs.select((2, 1, 0)).join(t, key=2)  # (z, x, y, w)
    return rst.select((1, 2, 0, 3))


@settings(max_examples=40, deadline=None)
@given(toggles(3, [3, 2, 3], values=3, max_updates=10, max_steps=4))
def test_three_relations_with_repeated_variables(steps):
    check(query(mixed_atoms, "xyzw", mixed_binary), [3, 2, 3], steps, outputs=2)


def test_term_steps_intersect_the_atoms_that_bind_the_same_new_variables():
    # (atom, key columns): each atom keyed by its columns bound before its step
    assert [term_steps(["ab", "bc", "ac"], i) for i in range(3)] == [
        [[(1, (0,)), (2, (0,))]],  # from ab: c from bc by b and from ac by a
        [[(0, (1,)), (2, (1,))]],  # from bc: a from ab by b and from ac by c
        [[(0, (0,)), (1, (1,))]],  # from ac: b from ab by a and from bc by c
    ]
    # 4-cliques from ab: c from ac and bc, then d from ad, bd and cd
    assert term_steps(["ab", "ac", "ad", "bc", "bd", "cd"], 0) == [[(1, (0,)), (3, (0,))], [(2, (0,)), (4, (0,)), (5, (0,))]]
    # different new variables ({z} and {z, w}), and a new variable repeated within an atom: one at a time
    assert term_steps([("x", "y", "y"), ("y", "z"), ("z", "x", "w")], 0) == [[(1, (0,))], [(2, (0, 1))]]
    assert term_steps([("x",), ("x", "y", "y"), ("x", "y")], 0) == [[(1, (0,))], [(2, (0, 1))]]
    # at most LOOKUPS atoms a step: the others are looked up once their variables are bound
    star = [("x",)] + [("x", "y")] * (LOOKUPS + 2)
    assert term_steps(star, 0) == [[(j, (0,)) for j in range(1, LOOKUPS + 1)], [(LOOKUPS + 1, (0, 1)), (LOOKUPS + 2, (0, 1))]]


def star_atoms(e, label):
    return [(label, "x")] + [(e, "xy")] * (LOOKUPS + 2)


def star_binary(e, label):
    joined = label.join(e, key=1)  # (x, y)
    for _ in range(LOOKUPS + 1):
        joined = joined.join(e.select((0, 1)), key=2)  # the same (x, y) again: multiplicities multiply
    return joined


@settings(max_examples=20, deadline=None)
@given(toggles(2, [2, 1], values=3, max_updates=8, max_steps=4))
def test_more_atoms_binding_one_variable_than_an_intersection_takes(steps):
    check(query(lambda e, label: star_atoms(e, label), "xy", star_binary), [2, 1], steps, outputs=2)


def test_delta_query_shares_one_arrangement_per_relation_and_key():
    df = Dataflow()
    _, e = df.new_input("e", 2)
    delta_query(triangle_atoms(e), "abc")
    delta_query(triangle_atoms(e), "abc")
    steps = [op for op in df.ops if op.name == "half_join"]
    traces = {id(t) for op in steps for t in op.traces}
    # one step per term, each intersecting two lookups (the third variable is proposed by one edge
    # atom and validated by the other); keys: e by source, e by target -- each arranged once for both queries
    assert len(steps) == 6 and all(len(op.lookups) == 2 for op in steps) and len(traces) == 2


def test_delta_query_errors():
    df = Dataflow()
    _, e = df.new_input("e", 2)
    with pytest.raises(DataflowError, match="occur in no atom"):
        delta_query(triangle_atoms(e), "abz")
    with pytest.raises(DataflowError, match="at least two atoms"):
        delta_query([(e, "ab")], "ab")
    with pytest.raises(DataflowError, match="3 variables"):
        delta_query([(e, "abc"), (e, "bc")], "abc")


# -- as-of joins -------------------------------------------------------------------------


def as_of_oracle(history, until, strict=False):
    """Output accumulated at `until`: each order update at t times the prices accumulated at t
    (before t when `strict`)."""
    out = Counter()
    for which, row, diff, t in history:
        if which != 0 or t > until:
            continue
        for (item, price), c in _accumulated(history, 1, t - 1 if strict else t).items():
            if item == row[0]:
                out[row + (price,)] += diff * c
    return Counter({r: c for r, c in out.items() if c})


def _accumulated(history, which, t):
    acc = Counter()
    for w, row, diff, time in history:
        if w == which and time <= t:
            acc[row] += diff
    return acc


def _run_as_of(steps):
    df = Dataflow()
    (oi, orders), (pi, prices) = df.new_input("orders", 2), df.new_input("prices", 2)
    half = orders.as_of_join(prices).capture()
    strict = orders.half_join(prices, strict=True).capture()
    blips = orders.differentiate()
    calculus = blips.join(prices.enter_at(blips.scope)).integrate().capture()
    # Half joins in the AltNeu scope, where the lattice orders alt < neu: prices entered at alt
    # count at the order's own time, entered at neu only before it.
    alt = blips.half_join(prices.enter_at(blips.scope)).integrate().capture()
    neu = blips.half_join(prices.enter_at(blips.scope, neu=True)).integrate().capture()
    handles, history, epoch = (oi, pi), [], 0
    for updates, advance in steps:
        for which, row, diff, dt in updates:
            handles[which].update([row], diff, time=epoch + dt)
            history.append((which, row, diff, epoch + dt))
        epoch += advance
        for h in handles:
            h.advance_to(epoch)
        df.step()
        for t in range(epoch):
            expected = as_of_oracle(history, t)
            assert half.contents(t) == expected, f"half join at {t}"
            assert calculus.contents(t) == expected, f"differentiate/join/integrate at {t}"
            assert alt.contents(t) == expected, f"half join at alt in the AltNeu scope at {t}"
            assert strict.contents(t) == neu.contents(t) == as_of_oracle(history, t, strict=True), f"strict at {t}"
    return half


def test_as_of_orders_and_prices_by_hand():
    # prices: item 1 costs 10 from time 0, 12 from time 2. Orders: #100 at 1, #101 at 2 (same
    # time as the price change: it sees 12), #100 retracted at 3 (looked up at 12: no cancel).
    steps = [
        ([(1, (1, 10), 1, 0)], 1),
        ([(0, (1, 100), 1, 0)], 1),
        ([(1, (1, 10), -1, 0), (1, (1, 12), 1, 0), (0, (1, 101), 1, 0)], 1),
        ([(0, (1, 100), -1, 0)], 1),
    ]
    half = _run_as_of(steps)
    assert half.changes() == [((1, 100, 10), 1, 1), ((1, 101, 12), 2, 1), ((1, 100, 12), 3, -1)]
    assert half.contents(2) == Counter({(1, 100, 10): 1, (1, 101, 12): 1})  # the price change did not rewrite #100


@settings(max_examples=50, deadline=None)
@given(toggles(2, [2, 2], values=3, max_updates=8, max_steps=5))
def test_as_of_join_against_history_oracle(steps):
    _run_as_of(steps)


def test_differentiate_then_integrate_is_identity():
    steps = [([(0, (1, 2), 1, 0), (0, (1, 2), 1, 1), (0, (3, 4), 1, 0)], 2), ([(0, (1, 2), -1, 0)], 1)]
    check(lambda c: c if isinstance(c, Multiset) else c.differentiate().integrate(), [2], steps)


def test_blips_vanish_at_neu():
    df = Dataflow()
    h, c = df.new_input("c", 1)
    blips = c.differentiate()
    seen = []
    blips.inspect(lambda row, t, d: seen.append((row, t, d))).integrate().capture()
    h.insert([(7,)], time=3)
    h.advance_to(4)
    df.step()
    assert sorted(seen) == [((7,), (3, 0), 1), ((7,), (3, 1), -1)]


def test_strict_half_join_only_in_product_scopes():
    df = Dataflow()
    _, a = df.new_input("a", 2)
    inner = a.differentiate()
    with pytest.raises(DataflowError, match="strict"):
        inner.half_join(a.enter_at(inner.scope), strict=True)


def test_a_loop_below_output_held_upstream_waits_without_running_empty_rounds():
    """A half join out of fuel (one probe per activation) holds output at the time a loop
    below it reads; the loop stops and is entered again each time the scope around it
    sweeps, instead of counting empty rounds until the output comes (Soufflé's
    `sequences` ran for ever so). The answer is the closure it must be."""
    import numpy as np

    df = Dataflow()
    edges_in, edges = df.new_input("edges", 2)
    roots_in, roots = df.new_input("roots", 1)
    seed = roots.half_join(edges, fuel=1)  # (root, node) one edge away
    reach = seed.iterate(
        lambda r: r.map_columns(lambda d: d[::-1]).join(edges).map_columns(lambda d: np.vstack([d[1], d[2]]), arity=2).concat(seed).distinct())
    out = reach.capture()
    sweeps = []

    def count_sweeps():
        sweeps.append(1)
        if len(sweeps) > 10_000:
            raise AssertionError("the loop ran 10,000 rounds")

    df.on_sweep = count_sweeps
    edge_rows = [(i, (i * 7 + 3) % 40) for i in range(40)] + [(i, (i + 1) % 40) for i in range(0, 40, 3)]
    edges_in.insert(edge_rows)
    roots_in.insert([(r,) for r in range(0, 40, 4)])
    for h in (edges_in, roots_in):
        h.advance_to(1)
    df.step()
    expected = set()
    for root in range(0, 40, 4):
        frontier, seen = {root}, set()
        while frontier:
            frontier = {b for a, b in edge_rows if a in frontier} - seen
            seen |= frontier
        expected |= {(root, node) for node in seen}
    assert set(out.contents()) == expected
    assert all(c == 1 for c in out.contents().values())
