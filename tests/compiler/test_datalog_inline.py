"""inline relations: substituted into their uses, never materialised.

The oracle (tests.compiler.replay) evaluates the inlined program, so these tests also
compare each program with the same program whose relations are not inline (evaluated
the ordinary way), and check that no inline relation is in the plan.
"""

import pytest

import compiler
from tests.compiler.replay import Replay
from tests.compiler.naive import evaluate

PROGRAMS = {
    "nats": (
        ".decl nat(x: number)\nnat(0).\nnat(x + 1) :- x < 300, nat(x).\n"
        ".decl nat_pair(x: number, y: number) inline\nnat_pair(x, y) :- nat(x), nat(y).\n"
        "query(x) :- nat_pair(x, x), x < 2.\n"
    ),
    "facts and negation": (
        ".decl a(x: number) inline\na(3).\na(4).\n.decl b(x: number, y: number) inline\nb(1, 2).\n"
        ".decl e(x: number, y: number)\n.input e\n"
        ".decl none(x: number) inline\n"
        "c(x) :- e(x, _), !a(x), !none(0).\nd(x, y) :- e(x, y), !b(x, y).\n"
    ),
    "unification": (
        ".decl e(x: number, y: number)\n.input e\n"
        ".decl a(x: number, y: number) inline\na(0, 0).\na(x, y) :- e(x, _), e(y, _), x != y.\n"
        "c(x, y) :- a(y, x), x % 2 != 0.\n"
        ".decl f(x: number, y: number) inline\nf(x + x, x + 1) :- e(x, _).\n"
        "g(x) :- e(x, _), f(x * 2, x + 1).\n"
        ".decl w(x: number, y: number) inline\nw(x, y) :- e(x, y).\nh(y) :- w(_, y), y != 2.\n"
    ),
    "nested, in aggregates and bodies with aggregates": (
        ".decl e(x: number, y: number)\n.input e\n"
        ".decl out(x: number, n: number) inline\nout(x, n) :- e(x, _), n = count : { e(x, _) }.\n"
        ".decl big(x: number) inline\nbig(x) :- out(x, n), n > 1.\n"
        "hub(x) :- big(x).\n"
        "most(t) :- t = max n : { out(_, n) }.\n"
    ),
    "a '_' in a record argument": (
        ".decl e(x: number, y: number)\n.input e\n.type Pair = [a: number, b: number]\n"
        ".decl p(x: Pair, y: number) inline\np([x, y], y) :- e(x, y).\np(z, 9) :- e(x, y), z = [y, x].\n"
        ".decl q(x: Pair) inline\nq(z) :- p(z, y), z != [y, y].\n"
        "first(x) :- q([x, _]).\nsecond(y) :- p([_, y], _).\n"
    ),
}

INPUTS = {"e": [(0, 1), (1, 2), (1, 3), (2, 2), (3, 0), (5, 4)]}


def _not_inline(text: str) -> str:
    return text.replace(") inline\n", ")\n")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_inlined_answers_equal_the_materialised_ones(name):
    text = PROGRAMS[name]
    program = compiler.compile_datalog(text)
    assert not [r for r in compiler.check_datalog(text).relations if r in ("nat_pair", "a", "b", "none", "f", "w", "out", "big", "p", "q")]
    plain = compiler.check_datalog(_not_inline(text))
    inputs = {k: v for k, v in INPUTS.items() if k in program.inputs}
    replay = Replay(program)
    for rel, rows in inputs.items():
        replay.insert(rel, rows)
    replay.commit()
    want = evaluate(plain, inputs)
    for rel in program.outputs:
        assert set(replay.session.read(rel)) == want[rel], rel
    if inputs:
        replay.remove("e", inputs["e"][:3])
        replay.commit()
        want = evaluate(plain, {"e": inputs["e"][3:]})
        for rel in program.outputs:
            assert set(replay.session.read(rel)) == want[rel], rel


def test_an_inline_relation_never_becomes_a_binding():
    program = compiler.compile_datalog(PROGRAMS["nats"])
    names = {b.name for b in program.plan.bindings()}
    assert names == {"nat", "query"}
    session = program.session()
    session.commit()
    assert session.read("query") == [(0,), (1,)]


def test_no_inline_and_the_inline_exclude_pragma_keep_a_relation():
    text = '.pragma "inline-exclude" "b"\n.decl e(x: number)\ne(1).\n.decl b(x: number) inline\nb(x) :- e(x).\n'
    text += ".decl d(x: number) inline no_inline\nd(x) :- e(x).\nc(x) :- b(x), d(x).\n"
    program = compiler.compile_datalog(text)
    assert {"b", "d"} <= {b.name for b in program.plan.bindings()}
    session = program.session()
    session.commit()
    assert session.read("c") == [(1,)]
