"""A Distinct over rows that are already a set is built as nothing (compiler.lowering.dataflow):
fewer distinct operators, the same answers as the naive oracle, batch and after updates."""

from __future__ import annotations

import pytest

import compiler
from tests.compiler.replay import Replay


def distincts(program) -> int:
    return sum(op.name == "distinct" for op in program.session().dataflow.ops)


COUNTER = """
.decl c(x: number)
.input c
.decl a(x: number)
a(x) :- b(x), c(y), c(z), y < z.
.decl b(x: number)
b(0).
b(x + 1) :- a(x), x < 20.
.decl q(x: number)
q(x) :- a(x), x < 10.
.decl pair(x: number, y: number)
pair(x, y) :- a(x), b(y), x = y.
.decl same(x: number)
same(x) :- a(x), b(x).
"""


def test_a_join_of_sets_and_a_filter_of_one_are_not_made_distinct_again():
    program = compiler.compile_datalog(COUNTER)
    # The existence test's and b's (a union) stay; a's (a join of b and the existence test),
    # q's (a filter of a), pair's (a join of sets) and same's (its join's key gives back the
    # column it drops) go.
    assert distincts(program) == 2
    replay = Replay(program)
    replay.insert("c", [(1,), (2,), (2,)])  # a multiset input: its own Distinct stays
    replay.commit()
    assert sorted(replay.session.read("q")) == [(x,) for x in range(10)]
    replay.remove("c", [(1,)])  # y < z no longer holds: the counter stops at b(0)
    replay.commit()
    assert replay.session.read("a") == []
    replay.insert("c", [(0,)])
    replay.commit()
    replay.remove("c", [(2,), (2,)])
    replay.commit()


@pytest.mark.parametrize("rule", [
    "p(x) :- e(x, _).",  # a projection that drops a column: duplicates to remove
    "p(x) :- e(x, y), e(y, x).",  # the join's key does not give back the dropped column
    "p(x) :- f(x). p(x) :- g(x).",  # a union of sets
])
def test_where_rows_can_repeat_the_distinct_stays(rule):
    text = f"""
    .decl e(x: number, y: number)
    .decl f(x: number)
    .decl g(x: number)
    .decl s(x: number, y: number)
    .input e
    .input f
    .input g
    s(x, y) :- e(x, y).
    .decl p(x: number)
    .output p
    {rule.replace("e(", "s(")}
    """
    program = compiler.compile_datalog(text)
    replay = Replay(program)
    replay.insert("e", [(1, 2), (1, 3), (2, 1), (3, 1)])
    replay.insert("f", [(1,), (2,)])
    replay.insert("g", [(2,), (3,)])
    replay.commit()
    replay.remove("e", [(1, 3)])
    replay.remove("g", [(2,)])
    replay.commit()
