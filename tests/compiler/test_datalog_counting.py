"""What count, sum and mean range over (compiler.datalog.counting), and witnesses of
aggregates nested in aggregates (compiler.datalog.witnesses): Soufflé's meaning.

Which aggregates Soufflé materialises is checked on the checked program's
aggregates; what they compute runs through tests.compiler.replay (the naive
oracle after every commit, updates included), and the answers are pinned as
Soufflé's rules give them (its tests/evaluation/aggregate_witnesses among them).
"""

import pytest

import compiler
from compiler.datalog.ast import Aggregate, literal_terms, subterms
from tests.compiler.replay import run


def aggregates(text: str) -> list[Aggregate]:
    """The aggregates of the checked program's rules, outermost first, in rule order."""
    found = []

    def visit(terms):
        for term in terms:
            for sub in subterms(term):
                if isinstance(sub, Aggregate):
                    found.append(sub)
                    visit([sub.target] if sub.target is not None else [])
                    visit([t for lit in sub.body for t in literal_terms(lit)])

    for rule in compiler.check_datalog(text).rules:
        visit([a for h in rule.heads for a in h.args] + [t for lit in rule.body for t in literal_terms(lit)])
    return found


DECLS = ".decl r(x: number, y: number)\n.decl s(x: number)\n.input r, s\n"


@pytest.mark.parametrize(
    "rule, counted",
    [
        ("a(n) :- n = count : { r(x, _) }.", None),  # one atom: its tuples
        ("a(n) :- n = count : { r(x, _), s(x) }.", {"x"}),  # two atoms: the bindings of x
        ("a(n) :- n = sum y : { r(x, y), !s(x) }.", None),  # a negated atom is no atom
        ("a(n) :- n = count : { r(x, x) }.", {"x"}),  # a repeated variable
        ("a(n) :- n = count : { r(x, x + 1) }.", {"x"}),
        ("a(n) :- n = count : { r(x, y), x = y }.", {"x", "y"}),  # an alias Soufflé resolves into r(x, x)
        ("a(x, n) :- r(x, y), n = count : { r(x, y), x = y }.", None),  # both from outside: never resolved
        ("a(n) :- n = count : { r(x, _), x > min z : { s(z) } }.", {"x"}),  # an inner aggregate: not its z
        ("a(n) :- n = count : { r(x, _), y = range(0, x) }.", {"x", "y"}),
        ("a(x, n) :- s(x), n = mean y : { r(x, y), s(y) }.", {"y"}),  # x comes from outside: it groups
        ("a(n) :- n = min y : { r(x, y), s(x) }.", None),  # min and max are not counted
    ],
)
def test_which_bodies_soufflé_materialises(rule, counted):
    outer = aggregates(DECLS + rule)[0]
    assert outer.counted == (None if counted is None else frozenset(counted))


def test_inlining_comes_after_the_decision():
    # Soufflé materialises before it inlines: one inline atom is one atom.
    text = DECLS + ".decl p(x: number) inline\np(x) :- r(x, y), s(y).\n"
    assert aggregates(text + "a(n) :- n = count : { p(x) }.")[0].counted is None
    assert aggregates(text + "a(n) :- n = count : { p(x), s(x) }.")[0].counted == {"x"}


def test_a_materialised_count_counts_distinct_bindings():
    text = DECLS + (
        "pairs(n) :- n = count : { r(x, _), s(x) }.\n"  # x values with an r row and an s row
        "tuples(n) :- n = count : { r(x, _) }.\n"  # r's tuples
        "deg(x, n) :- s(x), n = count : { r(x, y), s(y) }.\n"
        "total(n) :- n = sum y : { r(_, y), s(y) }.\n"  # each y once
        "avg(m) :- m = mean y : { r(x, y), s(x) }.\n"  # over distinct (x, y)
        "inline(n) :- n = count : { q(x), s(x) }.\n"
        ".decl q(x: number) inline\nq(x) :- r(x, _)."
    )
    r = run(text, {"r": [(1, 2), (1, 3), (2, 3), (4, 4)], "s": [(1,), (3,), (4,)]})
    assert r.session.read("pairs") == [(2,)]  # x = 1 and 4, though 1 has two r rows
    assert r.session.read("tuples") == [(4,)]
    assert r.session.read("deg") == [(1, 1), (3, 0), (4, 1)]
    assert r.session.read("total") == [(7,)]  # 3 and 4, though 3 is in two r rows
    assert r.session.read("avg") == [(3.0,)]  # (1, 2), (1, 3), (4, 4)
    assert r.session.read("inline") == [(2,)]
    # Another r row with x = 1: more combinations, the same bindings.
    r.insert("r", [(1, 4)])
    r.commit()
    assert r.session.read("pairs") == [(2,)] and r.session.read("tuples") == [(5,)]
    r.remove("s", [(4,)])
    r.commit()
    assert r.session.read("pairs") == [(1,)] and r.session.read("total") == [(3,)]


WITNESSES = """
.decl d(x: number, y: number)
.decl b(x: number, y: number)
.decl f(s: symbol, x: number, y: number)
.input d, b
f("reaching", result, witness) :- result = count : { b(x, _), x > min y : { d(y, witness) } }.
f("injected", result, witness) :- result = max x : { d(x, witness), x < count : { b(_, witness) } }.
f("side by side", res1, res2) :- res1 = count : { d(_, y), y > 1 }, res2 = count : { d(_, y), y < 4 }.
"""


def test_a_witness_of_a_min_inside_a_count_is_grounded_in_the_rule():
    # Soufflé's aggregate_witnesses, its facts and expected rows.
    d = [(1, 1), (1, 2), (1, 3), (1, 4)]
    r = run(WITNESSES, {"d": d, "b": [(2, 1), (2, 2), (2, 3), (2, 4)]})
    assert r.session.read("f") == [
        ("reaching", 1, 1), ("reaching", 1, 2), ("reaching", 1, 3), ("reaching", 1, 4), ("side by side", 3, 3),
    ]  # fmt: skip
    # The witnesses are the d tuples at the least y; the count counts b's distinct x.
    r.insert("d", [(0, 9), (5, 1)])
    r.insert("b", [(1, 7)])
    r.commit()
    assert [row for row in r.session.read("f") if row[0] == "reaching"] == [("reaching", 2, 9)]
    r.remove("d", [(0, 9)])
    r.commit()
    assert [row for row in r.session.read("f") if row[0] == "reaching"] == [("reaching", 1, w) for w in (1, 2, 3, 4)]


def test_a_nested_witness_whose_aggregate_reads_the_outer_one_cannot_be_grounded():
    text = ".decl b(x: number)\n.decl c(x: number, y: number)\n.input b, c\na(n, w) :- n = count : { b(x), x > min y : { c(y, w), y < x } }."
    with pytest.raises(compiler.UnsafeVariableError) as info:
        compiler.compile_datalog(text)
    error = info.value
    assert (error.line, error.column) == (4, 51)
    assert error.message == (
        "variable 'w' is grounded only inside this min aggregate, which reads 'x' of the count aggregate "
        "around it: the witness cannot be grounded in the rule"
    )
