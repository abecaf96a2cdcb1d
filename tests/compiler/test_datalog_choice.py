"""choice-domain relations: one tuple per key, the least candidate, and by rounds in a recursion.

Every program runs through tests.compiler.replay: after every commit each relation
equals the naive oracle, which evaluates a stratum with a choice round by round as
Soufflé does, taking each round's new candidates one by one in ascending order (it
shares nothing with compiler.lowering.choice's depths and reduces), and the commit's
changes are the oracle's difference; the assertions pin the answers themselves.
"""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.compiler.replay import replay_updates, run



ADVISOR = (
    ".decl student(s: symbol, major: symbol)\n.input student\n.decl professor(p: symbol, major: symbol)\n.input professor\n"
    ".decl advisor(s: symbol, p: symbol) choice-domain s\nadvisor(s, p) :- student(s, m), professor(p, m).\n"
)


def test_one_tuple_per_key_the_least_and_the_next_takes_its_place():
    r = run(ADVISOR, {"student": [("ann", "cs"), ("bob", "cs"), ("cy", "math")],
                      "professor": [("turing", "cs"), ("knuth", "cs"), ("noether", "math")]})  # fmt: skip
    assert r.session.read("advisor") == [("ann", "knuth"), ("bob", "knuth"), ("cy", "noether")]
    r.remove("professor", [("knuth", "cs")])
    r.commit()
    assert r.session.read("advisor") == [("ann", "turing"), ("bob", "turing"), ("cy", "noether")]
    r.insert("professor", [("hopper", "cs")])
    r.commit()
    assert r.session.read("advisor") == [("ann", "hopper"), ("bob", "hopper"), ("cy", "noether")]


def test_the_order_is_by_value_numbers_numerically_strings_by_code_point():
    text = (
        ".decl c(k: symbol, n: number, s: symbol) choice-domain k\n"
        'c("a", 10, "b"). c("a", 9, "z"). c("b", 1, "B"). c("b", 1, "a").\n'
        ".decl f(k: number, x: float) choice-domain k\nf(1, 2.5). f(1, -0.5). f(2, 10.0).\n"
        ".decl u(k: number, x: unsigned) choice-domain k\nu(1, 18446744073709551615u). u(1, 5u).\n"
    )
    r = run(text)
    assert r.session.read("c") == [("a", 9, "z"), ("b", 1, "B")]
    assert r.session.read("f") == [(1, -0.5), (2, 10.0)]
    assert r.session.read("u") == [(1, 5)]


def test_a_domain_of_several_attributes_and_several_domains():
    text = (
        ".decl mark(st: symbol, m: number, grade: number)\n.input mark\n"
        ".decl top(st: symbol, m: number, grade: number) choice-domain (grade, m)\ntop(s, m, g) :- mark(s, m, g).\n"
        ".decl edge(a: number, b: number)\n.input edge\n"
        ".decl matching(a: number, b: number) choice-domain a, b\nmatching(a, b) :- edge(a, b).\n"
    )
    r = run(text, {"mark": [("x", 90, 1), ("y", 90, 1), ("z", 80, 1)], "edge": [(1, 2), (1, 3), (2, 2), (3, 3), (4, 3)]})
    assert r.session.read("top") == [("x", 90, 1), ("z", 80, 1)]
    # greedy in order: (1, 2) kept; (1, 3) has a's 1 taken; (2, 2) b's 2; (3, 3) kept; (4, 3) b's 3
    assert r.session.read("matching") == [(1, 2), (3, 3)]
    r.remove("edge", [(1, 2)])
    r.commit()
    assert r.session.read("matching") == [(1, 3), (2, 2)]


def test_recursive_choice_keeps_what_earlier_rounds_chose():
    # A spanning tree (Soufflé's documentation example): each node reached once, by the
    # edge of the earliest round, the least source among that round's.
    text = (
        ".decl edge(v: symbol, u: symbol)\n.input edge\n"
        ".decl st(v: symbol, u: symbol) choice-domain u\n"
        'st("r", "L1").\nst(v, u) :- st(_, v), edge(v, u).\n'
    )
    edges = [("L1", "L2"), ("L2", "L10"), ("L2", "L3"), ("L3", "L4"), ("L4", "L8"), ("L3", "L6"), ("L6", "L8"), ("L8", "L2")]
    r = run(text, {"edge": edges})
    assert r.session.read("st") == [("L1", "L2"), ("L2", "L10"), ("L2", "L3"), ("L3", "L4"), ("L3", "L6"), ("L4", "L8"), ("r", "L1")]
    r.remove("edge", [("L3", "L4")])
    r.commit()
    assert ("L6", "L8") in r.session.read("st")  # L8 is now first reached from L6
    r.insert("edge", [("L1", "L8")])
    r.commit()
    assert ("L1", "L8") in r.session.read("st")  # and now in round 2, before L6's round 4


def test_recursive_choice_over_several_domains_builds_a_total_order():
    # Soufflé's choice_total_order: a chain through every value, each link chosen once.
    text = (
        ".decl domain(x: symbol)\n.input domain\n"
        ".decl list(prev: symbol, data: symbol) choice-domain prev, data\n"
        'list("nil", "head").\nlist(x, y) :- domain(y), list(_, x).\n'
        "notTotalOrder() :- list(p, x), list(p, y), x != y.\n"
        "notTotalOrder() :- list(pa, x), list(pb, x), pa != pb.\n"
        "notTotalOrder() :- domain(x), !list(x, _), !list(_, x).\n"
    )
    values = [(w,) for w in ("pear", "apple", "fig", "kiwi", "date", "lime")]
    r = run(text, {"domain": values})
    assert r.session.read("notTotalOrder") == []
    assert r.session.read("list") == [("apple", "date"), ("date", "fig"), ("fig", "kiwi"), ("head", "apple"), ("kiwi", "lime"),
                                       ("lime", "pear"), ("nil", "head")]  # fmt: skip
    r.remove("domain", [("date",), ("kiwi",)])
    r.commit()
    assert r.session.read("list") == [("apple", "fig"), ("fig", "lime"), ("head", "apple"), ("lime", "pear"), ("nil", "head")]


def test_a_greedy_colouring_in_rounds():
    # Soufflé's choice_colourable: a triangle cannot be coloured this way.
    text = (
        ".decl colour(c: symbol)\n.decl node(n: symbol)\n.input node\n.decl edge(x: symbol, y: symbol)\n.input edge\n"
        ".decl node_colour(node: symbol, colour: symbol) choice-domain node\n"
        'colour("red"). colour("green"). colour("blue").\nnode_colour("a", "red").\n'
        "edge(x, y) :- edge(y, x).\n"
        "node_colour(n, c) :- node(n), colour(c), edge(n, y), node_colour(y, yc), c != yc.\n"
        "cannot_colour() :- edge(x, y), node_colour(x, c), node_colour(y, c).\n"
    )
    nodes = [("a",), ("b",), ("c",), ("d",)]
    r = run(text, {"node": nodes, "edge": [("a", "b"), ("a", "c"), ("b", "c"), ("c", "d")]})
    assert r.session.read("node_colour") == [("a", "red"), ("b", "blue"), ("c", "blue"), ("d", "green")]
    assert r.session.read("cannot_colour") == [()]
    r.remove("edge", [("b", "c")])
    r.commit()
    assert r.session.read("cannot_colour") == []


CHAIN = (
    ".decl e(x: number, y: number)\n.input e\n"
    ".decl pick(x: number, y: number) choice-domain x\npick(x, y) :- e(x, y).\n"
    ".decl tree(v: number, u: number) choice-domain u\ntree(0, 0).\ntree(v, u) :- tree(_, v), e(v, u).\n"
    "reached(u) :- tree(_, u).\n"
    ".decl both(x: number, y: number) choice-domain x, y\nboth(x, y) :- reached(x), e(x, y).\n"
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.tuples(st.booleans(), st.integers(0, 6), st.integers(0, 6)), max_size=10), min_size=1, max_size=5))
def test_random_updates_equal_recomputation(batches):
    replay_updates(CHAIN, "e", batches)
