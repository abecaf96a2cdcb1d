"""Delta-query plans: when the planner picks them, and that they compute what binary plans do.

Each program is compiled three times, join_plan="auto", "delta" and "binary",
and driven with the same random updates; after every commit every session
must equal the naive oracle (tests.compiler.naive, via Replay). Updates spread
over several distinct times in one advance must produce identical change logs.
Which plan auto picks for which shape, and why, is tests.compiler.test_join_cost's.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler
from compiler.plan.delta import DeltaJoin
from compiler.plan.nodes import Join, walk
from tests.compiler.naive import evaluate
from tests.compiler.replay import Replay

EDGE = ".decl edge(a: number, b: number)\n.input edge\n"

TRIANGLES = EDGE + "tri(a, b, c) :- edge(a, b), edge(b, c), edge(a, c).\n.output tri\n"
FOUR_CYCLES = EDGE + "sq(a, b, c, d) :- edge(a, b), edge(b, c), edge(c, d), edge(d, a).\n.output sq\n"
CLIQUES = EDGE + "k4(a, b, c, d) :- edge(a, b), edge(a, c), edge(a, d), edge(b, c), edge(b, d), edge(c, d).\n.output k4\n"
FILTERED = EDGE + (
    ".decl color(x: number, c: number)\n.input color\n"
    "mono(a, b, c) :- edge(a, b), edge(b, c), edge(c, a), color(a, k), color(b, k), a < b, b != c, a + c > 1.\n"
    "count_tri(n) :- n = count : { edge(a, b), edge(b, c), edge(a, c) }.\n"
    ".output mono\n.output count_tri\n"
)
CHAIN = EDGE + "p3(a, d) :- edge(a, b), edge(b, c), edge(c, d).\n.output p3\n"
STAR = EDGE + ".decl label(x: number, l: number)\n.input label\n" + (
    "star(x, a, b, l) :- edge(x, a), edge(x, b), label(x, l), a < b.\n.output star\n"
)
# q's intermediate edge(a, b), edge(b, c) keyed by c is arranged anyway for p's antijoin:
# auto keeps q binary.
SHARED_INTERMEDIATE = EDGE + ".decl blocked(x: number)\n.input blocked\n.decl label(x: number, l: number)\n.input label\n" + (
    "p(a, c) :- edge(a, b), edge(b, c), !blocked(c).\n"
    "q(a, l) :- edge(a, b), edge(b, c), label(c, l).\n"
    ".output p\n.output q\n"
)
RECURSIVE = EDGE + (
    "tc(a, b) :- edge(a, b).\n"
    "tc(a, c) :- tc(a, b), tc(b, c), edge(a, c).\n"  # a cycle through the recursive relation
    "tri_tc(a, b, c) :- tc(a, b), tc(b, c), tc(c, a).\n"
    ".output tc\n.output tri_tc\n"
)


def delta_joins(program) -> list:
    return [n for b in program.plan.bindings() for n in walk(b.body) if isinstance(n, DeltaJoin)]


@pytest.mark.parametrize("text", [TRIANGLES, FOUR_CYCLES, CLIQUES])
def test_auto_plans_cyclic_joins_as_delta_queries(text):
    auto = compiler.compile_datalog(text)
    assert len(delta_joins(auto)) == 1
    assert "DeltaJoin" in auto.explain()
    binary = compiler.compile_datalog(text, join_plan="binary")
    assert not delta_joins(binary) and "DeltaJoin" not in binary.explain()
    assert any(isinstance(n, Join) for b in binary.plan.bindings() for n in walk(b.body))


def test_auto_plans_acyclic_joins_by_cost_and_keeps_recursion_binary():
    assert len(delta_joins(compiler.compile_datalog(CHAIN))) == 1  # no intermediate arranged is cheaper
    assert len(delta_joins(compiler.compile_datalog(STAR))) == 1
    assert len(delta_joins(compiler.compile_datalog(SHARED_INTERMEDIATE))) == 0  # it is arranged anyway
    assert not delta_joins(compiler.compile_datalog(CHAIN, join_plan="binary"))
    auto = compiler.compile_datalog(RECURSIVE)
    # tri_tc is outside the fixpoint (a delta query); tc's recursive rule stays binary
    assert len(delta_joins(auto)) == 1
    assert len(delta_joins(compiler.compile_datalog(RECURSIVE, join_plan="delta"))) == 2


def test_delta_query_shares_arrangements_of_one_relation():
    program = compiler.compile_datalog(TRIANGLES, join_plan="delta")
    df = program.session().dataflow
    steps = [op for op in df.ops if op.name == "half_join"]
    # one step per term, intersecting the two other atoms (one proposes the third variable, the other validates)
    assert len(steps) == 3 and all(len(op.lookups) == 2 for op in steps)
    assert len({id(t) for op in steps for t in op.traces}) == 2  # edge by source, edge by target
    assert not any(op.name == "join" for op in df.ops)


def test_unknown_join_plan_is_an_error():
    with pytest.raises(ValueError, match="join_plan"):
        compiler.compile_datalog(TRIANGLES, join_plan="wcoj")


edges = st.tuples(st.integers(0, 4), st.integers(0, 4))
commits = st.lists(st.tuples(st.lists(edges, max_size=8), st.lists(edges, max_size=4)), min_size=1, max_size=5)


def _drive(text, steps, extra=None):
    replays = [Replay(compiler.compile_datalog(text, join_plan=p)) for p in ("auto", "delta", "binary")]
    present: set = set()
    for added, removed in steps:
        removed = [r for r in dict.fromkeys(removed) if r in present and r not in added]
        added = [r for r in dict.fromkeys(added) if r not in present]
        present = (present | set(added)) - set(removed)
        for r in replays:
            if added:
                r.insert("edge", added)
            if removed:
                r.remove("edge", removed)
            if extra:
                extra(r)
            r.commit()


@settings(max_examples=30, deadline=None)
@given(commits)
def test_triangles_delta_equals_binary_equals_oracle(steps):
    _drive(TRIANGLES, steps)


@settings(max_examples=15, deadline=None)
@given(commits)
def test_four_cycles_and_cliques(steps):
    _drive(FOUR_CYCLES, steps)
    _drive(CLIQUES, steps)


@settings(max_examples=20, deadline=None)
@given(commits, st.lists(st.tuples(st.integers(0, 4), st.integers(0, 1)), max_size=5))
def test_filters_and_aggregates_over_delta_joins(steps, colors):
    def colored(r):
        if r.commits == 0:
            r.insert("color", list(dict.fromkeys(colors)))

    _drive(FILTERED, steps, colored)


side_rows = st.lists(st.tuples(st.sampled_from(["blocked", "label"]), st.integers(0, 4), st.integers(0, 1)), max_size=6)


@settings(max_examples=20, deadline=None)
@given(commits, side_rows)
def test_acyclic_joins_under_every_plan(steps, side):
    """auto picks delta for the chain and the star, binary for q: all equal the oracle."""

    rows = list(dict.fromkeys((rel, (x,) if rel == "blocked" else (x, l)) for rel, x, l in side))

    def sides(r):  # all side rows with the first commit, then one retracted with each next commit
        mine = [(rel, row) for rel, row in rows if rel in r.program.inputs]
        if r.commits == 0:
            for rel, row in mine:
                r.insert(rel, [row])
        elif r.commits <= len(mine):
            rel, row = mine[r.commits - 1]
            r.remove(rel, [row])

    _drive(CHAIN, steps)
    _drive(STAR, steps, sides)
    _drive(SHARED_INTERMEDIATE, steps, sides)


@settings(max_examples=15, deadline=None)
@given(commits)
def test_recursive_cyclic_join_forced_delta(steps):
    _drive(RECURSIVE, steps)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(edges, st.integers(0, 5), st.booleans()), min_size=1, max_size=25))
def test_many_distinct_times_same_change_logs(updates):
    sessions = [compiler.compile_datalog(TRIANGLES, join_plan=p).session() for p in ("delta", "binary")]
    present = set()
    for edge, t, insert in sorted(updates, key=lambda u: u[1]):
        if insert == (edge in present):
            continue
        present ^= {edge}
        for s in sessions:
            (s.insert if insert else s.remove)("edge", [edge], time=t)
    for s in sessions:
        s.advance_to(6)
    assert sessions[0].change_log("tri") == sessions[1].change_log("tri")
    want = evaluate(compiler.compile_datalog(TRIANGLES).checked, {"edge": present})["tri"]
    assert set(sessions[0].read("tri")) == want


def test_triangles_example_against_brute_force():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "examples"
    edges = {tuple(map(int, line.split("\t"))) for line in (root / "triangles" / "edge.facts").read_text().splitlines() if line}
    program = compiler.compile_file(root / "triangles.dl")
    assert "DeltaJoin" in program.explain()
    session = program.session()
    session.load_facts(root / "triangles")
    session.commit()
    want = {(a, b, c) for a, b in edges for b2, c in edges if b2 == b and (a, c) in edges}
    assert set(session.read("tri")) == want and want
