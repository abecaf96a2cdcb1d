"""The planner's choice for multiway joins under join_plan="auto", and the cost figures behind it.

Each shape is compiled under auto, binary and delta. The choice recorded in
`plan.join_choices` must be the expected plan for the expected reason, its
figures those of compiler.plan.rewrites.cost's model (worked out in the
comments), the plan must contain a DeltaJoin exactly when delta was chosen,
and the model's arrangement counts must be what the runtime dataflow builds:
the binary dataflow has as many more arrangements than the delta one as the
model says. That answers stay equal under updates is tests.compiler
.test_delta_plans's job.
"""

from __future__ import annotations

import pytest

import compiler
from compiler.plan.delta import DeltaJoin
from compiler.plan.nodes import walk
from compiler.plan.rewrites.cost import Cost

EDGE = ".decl edge(a: number, b: number)\n.input edge\n"
RELATIONS = "".join(f".decl {r}(x: number, y: number)\n.input {r}\n" for r in "rstu")

TRIANGLE = EDGE + "tri(a, b, c) :- edge(a, b), edge(b, c), edge(a, c).\n.output tri\n"
FOUR_CYCLE = EDGE + "sq(a, b, c, d) :- edge(a, b), edge(b, c), edge(c, d), edge(d, a).\n.output sq\n"
PATH3 = EDGE + "p3(a, d) :- edge(a, b), edge(b, c), edge(c, d).\n.output p3\n"
STAR4 = RELATIONS + "star(x, a, b, c, d) :- r(x, a), s(x, b), t(x, c), u(x, d).\n.output star\n"
# q's binary intermediate r(a, b), s(b, c) keyed by c is arranged anyway, by p's antijoin.
SHARED_INTERMEDIATE = RELATIONS + (
    ".decl blocked(x: number)\n.input blocked\n"
    "p(a, c) :- r(a, b), s(b, c), !blocked(c).\n"
    "q(a, d) :- r(a, b), s(b, c), u(c, d).\n"
    ".output p\n.output q\n"
)

# (program, plan chosen by auto, reason, binary figures, delta figures), figures as
# Cost(records in units of N, arrangements, intermediates, lookups when each input changes once).
SHAPES = {
    # binary: edge by b, edge by a, (a, b, c) by (a, c): width 3, edge by (a, b); delta: edge by a and by b
    # (each term intersects the other two atoms, each keyed by its one bound column)
    "triangle": (TRIANGLE, "delta", "cyclic", Cost(9, 4, 1, 5), Cost(4, 2, 0, 6)),
    # binary: three edge arrangements and two intermediates of widths 3 and 4; delta: edge by a and by b
    # (each term's second step intersects the two atoms that close the cycle)
    "4-cycle": (FOUR_CYCLE, "delta", "cyclic", Cost(13, 5, 2, 9), Cost(4, 2, 0, 12)),
    # binary: edge by b, edge by a, (a, b, c) by c; delta: edge by a and by b
    "path of 3": (PATH3, "delta", "fewer records", Cost(7, 3, 1, 5), Cost(4, 2, 0, 6)),
    # binary: r, s, t, u by x, and (x, a, b), (x, a, b, c) by x; delta: r, s, t, u by x
    "star of 4": (STAR4, "delta", "fewer records", Cost(15, 6, 2, 9), Cost(8, 4, 0, 12)),
    # binary adds only u by c (r by b, s by b and the intermediate are p's); delta adds u by c and s by c
    "shared intermediate": (SHARED_INTERMEDIATE, "binary", "binary plan keeps fewer records", Cost(2, 1, 0, 5), Cost(4, 2, 0, 6)),
}


def choices(program):
    return list(program.plan.join_choices)


def delta_joins(program) -> list:
    return [n for b in program.plan.bindings() for n in walk(b.body) if isinstance(n, DeltaJoin) and not n.as_of]


def arrangements(program) -> int:
    return sum(op.name == "arrange" for op in program.session().dataflow.ops)


@pytest.mark.parametrize("shape", SHAPES)
def test_auto_choice_and_its_figures(shape):
    text, plan, reason, binary, delta = SHAPES[shape]
    auto = compiler.compile_datalog(text)
    decided = [c for c in choices(auto) if c.binding in ("tri", "sq", "p3", "star", "q")]
    assert len(decided) == 1
    choice = decided[0]
    assert (choice.plan, choice.binary, choice.delta) == (plan, binary, delta)
    assert reason in choice.reason
    assert len(delta_joins(auto)) == (plan == "delta")


@pytest.mark.parametrize("shape", SHAPES)
def test_forced_plans_record_their_choice_and_the_model_counts_the_dataflow(shape):
    text = SHAPES[shape][0]
    forced = {mode: compiler.compile_datalog(text, join_plan=mode) for mode in ("binary", "delta")}
    for mode, program in forced.items():
        assert [c.plan for c in choices(program)] == [mode] * len(choices(program))
        assert all(c.reason == f"join_plan={mode}" for c in choices(program))
    # Under a forced plan the rest of the program is planned the same way, so the figures
    # are whole plans' arrangements: their difference is the dataflows' difference.
    (choice,) = [c for c in choices(forced["binary"]) if c.binding != "p"]
    assert arrangements(forced["binary"]) - arrangements(forced["delta"]) == choice.binary.arrangements - choice.delta.arrangements


def test_a_join_of_two_atoms_is_no_multiway_join():
    program = compiler.compile_datalog(EDGE + "p2(a, c) :- edge(a, b), edge(b, c).\n.output p2\n")
    assert choices(program) == [] and "multiway joins" not in program.explain()


def test_a_cross_product_is_no_multiway_join():
    program = compiler.compile_datalog(EDGE + "x(a, c, e) :- edge(a, b), edge(b, c), edge(e, e).\n.output x\n", join_plan="delta")
    assert choices(program) == [] and not delta_joins(program)


def test_recursion_keeps_binary_under_auto_and_says_why():
    text = EDGE + "tc(a, b) :- edge(a, b).\ntc(a, d) :- tc(a, b), edge(b, c), edge(c, d).\n.output tc\n"
    (choice,) = choices(compiler.compile_datalog(text))
    assert choice.plan == "binary" and choice.reason == "reads its fixpoint's own relations"
    assert [c.plan for c in choices(compiler.compile_datalog(text, join_plan="delta"))] == ["delta"]


def test_explain_shows_each_multiway_join_with_plan_reason_and_figures():
    text = SHARED_INTERMEDIATE + "tri(a, b, c) :- r(a, b), r(b, c), r(a, c).\n.output tri\n"
    shown = compiler.compile_datalog(text).explain()
    section = shown.split("multiway joins")[1].splitlines()
    assert "  q: 3-way acyclic join of r, s, u -> binary: the binary plan keeps fewer records" in section
    assert "    binary adds 2N in 1 arrangement, 5 lookups; delta adds 4N in 2 arrangements, 6 lookups" in section
    assert "  tri: 3-way cyclic join of r, r, r -> delta: cyclic: binary intermediates outgrow the inputs" in section
    # r by b is p's anyway: the triangle's own figures less that arrangement (delta: r by a and by b)
    assert "    binary adds 7N in 3 arrangements (1 intermediate), 5 lookups; delta adds 2N in 1 arrangement, 6 lookups" in section
