"""Subsumptive rules: a relation keeps the tuples no other of its tuples dominates.

Every program runs through tests.compiler.replay: after every commit each relation
equals the naive oracle (which drops the dominated candidates by evaluating the
subsumptive rule itself, sharing nothing with compiler.lowering.subsumption), and the
commit's changes are the oracle's difference; the assertions pin the answers themselves.
"""

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
