"""Subsumptive rules: a relation keeps the tuples no other of its tuples dominates.

Every program runs through tests.compiler.replay: after every commit each relation
equals the naive oracle (which drops the dominated candidates by evaluating the
subsumptive rule itself, sharing nothing with compiler.lowering.subsumption), and the
commit's changes are the oracle's difference; the assertions pin the answers themselves.
"""

import signal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.compiler.replay import replay_updates, run



SHORTEST = (
    ".decl e(x: number, y: number, c: number)\n.input e\n"
    ".decl sp(x: number, y: number, c: number) btree_delete\n"
    "sp(x, y, c1) <= sp(x, y, c2) :- c2 <= c1.\n"
    "sp(x, y, c) :- e(x, y, c).\nsp(x, z, c1 + c2) :- sp(x, y, c1), e(y, z, c2).\n"
)


def test_recursive_shortest_paths_keep_the_least_cost():
    # Soufflé's shortest_path2: a tuple does not dominate itself, so `<=` is a partial order.
    r = run(SHORTEST, {"e": [(1, 2, 1), (2, 2, 1), (2, 3, 1), (3, 4, 1), (1, 4, 100)]})
    assert r.session.read("sp") == [(1, 2, 1), (1, 3, 2), (1, 4, 3), (2, 2, 1), (2, 3, 1), (2, 4, 2), (3, 4, 1)]
    r.remove("e", [(2, 3, 1)])
    r.commit()
    assert r.session.read("sp") == [(1, 2, 1), (1, 4, 100), (2, 2, 1), (3, 4, 1)]
    r.insert("e", [(2, 4, 5)])
    r.commit()
    assert r.session.read("sp") == [(1, 2, 1), (1, 4, 6), (2, 2, 1), (2, 4, 5), (3, 4, 1)]


def test_intervals_contained_in_another_go_and_mutual_domination_drops_both():
    text = (
        ".decl i(lb: number, ub: number)\n.input i\n"
        ".decl r(lb: number, ub: number)\nr(l, u) :- i(l, u).\n"
        "r(l1, u1) <= r(l2, u2) :- l2 <= l1, u1 <= u2.\n"
        ".decl s(x: number, y: number)\ns(x, y) :- i(x, y).\n"
        "s(x, y) <= s(y, x) :- x != y.\n"
    )
    r = run(text, {"i": [(1, 10), (1, 1), (2, 2), (2, 130), (5, 1), (1, 5)]})
    assert r.session.read("r") == [(1, 10), (2, 130)]
    assert r.session.read("s") == [(1, 1), (1, 10), (2, 2), (2, 130)]  # (5, 1) and (1, 5) dominate each other
    r.remove("i", [(2, 130)])
    r.commit()
    assert r.session.read("r") == [(1, 10)]


def test_the_body_may_read_other_relations_the_candidates_and_use_wildcards():
    # Soufflé's issue2551: m(x) goes when x is not in r and some m exists; the heads' `_`
    # columns are compared too.
    text = (
        ".decl r(s: number)\n.input r\n.decl m(s: number)\nm(1). m(2).\n.input m\n"
        "m(x) <= m(y) :- !r(x), m(y).\n"
        ".decl p(a: number, b: number)\n.input p\n"
        "p(x, _) <= p(y, _) :- x < y.\n"
    )
    r = run(text, {"r": [(1,)], "p": [(1, 5), (2, 3), (2, 4)]})
    assert r.session.read("m") == [(1,)]
    assert r.session.read("p") == [(2, 3), (2, 4)]
    r.remove("r", [(1,)])
    r.commit()
    assert r.session.read("m") == []  # 1 and 2 now dominate each other
    r.insert("m", [(7,)])
    r.commit()
    assert r.session.read("m") == []


def test_several_subsumptive_rules_and_unsigned_values():
    text = (
        ".decl kdof(a: unsigned, b: number)\nkdof(1, -2). kdof(1, 9). kdof(2, 4). kdof(2, 4).\n"
        "kdof(b, a1) <= kdof(b, a2) :- a1 < a2.\n"
        "kdof(b, a) <= kdof(c, a) :- b > c.\n"
        ".output kdof\n"
    )
    r = run(text)
    assert r.session.read("kdof") == [(1, 9), (2, 4)]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.tuples(st.booleans(), st.integers(0, 5), st.integers(0, 5), st.integers(1, 4)), max_size=8),
                min_size=1, max_size=5))  # fmt: skip
def test_random_updates_equal_recomputation(batches):
    text = SHORTEST + "cheap(x, y) :- sp(x, y, c), c < 4.\n"
    replay_updates(text, "e", batches)


# A recursive rule that derives from a relation's best row a better one, up to a bound: the
# best row at the bound derives nothing. Were a relation's rows in a round only what that
# round derived, the row at the bound would leave nothing to keep it, the loop would start
# over, and it would never end; as Soufflé evaluates subsumption, what the relation kept stays
# among its candidates, and only a better row replaces it.
CLIMB = (
    ".decl start(k: number, v: number)\n.input start\n"
    ".decl best(k: number, v: number) max(v)\n"
    "best(k, v) :- start(k, v).\nbest(k, v + 1) :- best(k, v), v < 5.\n"
    ".decl sub(k: number, v: number)\n"
    "sub(k, v1) <= sub(k, v2) :- v1 < v2.\n"
    "sub(k, v) :- start(k, v).\nsub(k, v + 1) :- sub(k, v), v < 5.\n"
)


@pytest.fixture
def deadline():
    """A loop that never ends fails the test after a minute instead of holding CI."""

    def expire(signum, frame):
        raise TimeoutError("the fixpoint did not end within 60 s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_a_max_relation_climbing_to_a_bound_ends_at_the_bound_and_follows_its_inputs(deadline):
    r = run(CLIMB, {"start": [(0, 1), (1, 9)]})
    assert r.session.read("best") == r.session.read("sub") == [(0, 5), (1, 9)]
    r.insert("start", [(0, 7)])
    r.commit()
    assert r.session.read("best") == r.session.read("sub") == [(0, 7), (1, 9)]
    r.remove("start", [(0, 7)])
    r.commit()
    assert r.session.read("best") == r.session.read("sub") == [(0, 5), (1, 9)]
    # Nothing keeps a row once its start is gone: each commit's loop starts from nothing.
    r.remove("start", [(0, 1)])
    r.commit()
    assert r.session.read("best") == r.session.read("sub") == [(1, 9)]


def test_the_longest_walk_up_to_a_bound_on_a_graph_with_a_cycle(deadline):
    # 1 -> 2 -> 1: walks grow around the cycle until the bound stops them. What a since-replaced
    # row derived stays, as in Soufflé: best(3, ..) comes only from 2's walks under the bound.
    text = (
        ".decl e(x: number, y: number)\n.input e\n"
        ".decl best(n: number, d: number) max(d)\n"
        "best(1, 0).\nbest(m, d + 1) :- best(n, d), e(n, m), d < 6.\n"
    )
    r = run(text, {"e": [(1, 2), (2, 1), (2, 3)]})
    assert r.session.read("best") == [(1, 6), (2, 5), (3, 6)]
    r.remove("e", [(2, 1)])
    r.commit()
    assert r.session.read("best") == [(1, 0), (2, 1), (3, 2)]
