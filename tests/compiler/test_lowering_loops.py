"""A fixpoint's loop carries only enough of its bindings round the back edge to break every
cycle of references (compiler.lowering.dataflow): the others are computed within each
iteration. Fewer back edges, fewer iterations, the same answers as the naive oracle, batch
and after updates."""

from __future__ import annotations

import random

import compiler
from tests.compiler.replay import Replay


def back_edges(program) -> int:
    """The loop variables: each is fed back from its result (a variable whose result comes out
    of a distinct has a second back edge, its source's negation: runtime.collection.Variable)."""
    return sum(op.name == "variable" for op in program.session().dataflow.ops)


def loop_rounds(program) -> int:
    """Rounds the first commit runs, of its loops (and the root's few sweeps): the worker calls
    `on_sweep` after each. (Not by the back edges' runs: they are applied as batches are sent.)"""
    session = program.session()
    rounds = []
    session.dataflow.on_sweep = lambda: rounds.append(1)
    session.commit()
    return len(rounds)


EDGES = ".decl e(x: number, y: number)\n.input e\n"


def replay_edge_changes(program, seed: int, nodes: int, edges: int, commits: int, changes: int) -> None:
    """Random edges e among `nodes` nodes, then commits each removing `changes` edges and adding
    as many, the session checked against the naive oracle at every commit (Replay)."""
    rng = random.Random(seed)
    replay = Replay(program)
    present = {(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(edges)}
    replay.insert("e", sorted(present))
    replay.commit()
    for _ in range(commits):
        gone = rng.sample(sorted(present), changes)
        new = {(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(changes)} - present
        replay.remove("e", gone)
        replay.insert("e", sorted(new))
        present = (present - set(gone)) | new
        replay.commit()


def test_a_cycle_through_two_relations_has_one_back_edge_and_half_the_rounds():
    counter = """
    .decl a(x: number)
    a(x) :- b(x), c(y), c(z), y < z.
    .decl b(x: number)
    b(0).
    b(x + 1) :- a(x), x < 200.
    .decl c(x: number)
    .input c
    """
    program = compiler.compile_datalog(counter)
    assert back_edges(program) == 1
    replay = Replay(program)
    replay.insert("c", [(1,), (2,)])
    replay.commit()
    assert sorted(replay.session.read("a")) == [(x,) for x in range(201)]
    replay.remove("c", [(1,)])
    replay.commit()
    assert replay.session.read("a") == []
    replay.insert("c", [(0,)])
    replay.commit()
    # One value of b a round: ~200 sweeps, not ~400 (a round for a, then one for b).
    assert loop_rounds(compiler.compile_datalog(counter + "c(1). c(2).")) <= 205


def test_one_relation_on_every_cycle_is_the_only_back_edge():
    # Cycles a-b-a, a-c-a and a-b-c-a all pass through a.
    text = EDGES + """
    .decl a(x: number)
    .decl b(x: number)
    .decl c(x: number)
    a(0).
    a(y) :- b(x), e(x, y).
    a(y) :- c(x), e(x, y).
    b(y) :- a(x), e(x, y).
    c(y) :- a(x), e(y, x).
    c(y) :- b(x), e(x, y), y > 2.
    """
    program = compiler.compile_datalog(text)
    assert back_edges(program) == 1
    replay_edge_changes(program, seed=7, nodes=12, edges=20, commits=6, changes=3)


def test_a_relation_that_reads_itself_keeps_its_back_edge():
    text = EDGES + """
    .decl path(x: number, y: number)
    .decl reach(x: number)
    path(x, y) :- e(x, y).
    path(x, z) :- path(x, y), e(y, z), reach(y).
    reach(0).
    reach(y) :- path(0, y).
    """
    program = compiler.compile_datalog(text)
    assert back_edges(program) == 1  # path; reach is computed from it within each round
    replay = Replay(program)
    replay.insert("e", [(0, 1), (1, 2), (2, 3), (3, 1), (4, 5)])
    replay.commit()
    replay.remove("e", [(1, 2)])
    replay.insert("e", [(1, 4)])
    replay.commit()


def test_a_fixpoint_that_is_not_monotone_keeps_every_binding_on_the_back_edge():
    # A min relation in the cycle: the order in which bindings are brought up to date
    # could change what an iteration sees, so every binding keeps its own back edge.
    text = EDGES + """
    .decl d(n: number, k: number) min(k)
    .decl via(n: number, k: number)
    d(0, 0).
    d(y, k + 1) :- via(x, k), e(x, y).
    via(x, k) :- d(x, k).
    """
    program = compiler.compile_datalog(text)
    assert back_edges(program) == 2
    replay = Replay(program)
    replay.insert("e", [(0, 1), (1, 2), (0, 2), (2, 3)])
    replay.commit()
    replay.remove("e", [(0, 2)])
    replay.commit()


def test_a_recursive_relation_a_join_reads_is_read_through_its_distincts_output_trace():
    """path's loop variable starts empty, its columns keyed by y as the first join with it,
    path(x, y), e(y, z), reads them; that join reads the distinct's output trace one
    iteration later (runtime.trace.delayed). The second, e(x, y), path(y, z), keys it by its
    other column: an arrangement of its own, of the variable's columns selected. Answers and
    changes equal the naive oracle's, after updates too."""
    text = EDGES + """
    .decl path(x: number, y: number)
    path(x, y) :- e(x, y).
    path(x, z) :- path(x, y), e(y, z).
    path(x, z) :- e(x, y), path(y, z).
    """
    program = compiler.compile_datalog(text)
    df = program.session().dataflow
    variable = next(op for op in df.ops if op.name == "variable")
    readers = sorted((reader for reader, _ in df.subscribers[(variable.id, 0)]), key=lambda op: op.name)
    assert [r.name for r in readers] == ["join", "select"]
    distinct = next(op for op in df.ops if op.name == "distinct")
    delayed = [t for op in df.ops if op.name == "join" for t in (op.left_trace, op.right_trace) if t.delay]
    assert len(delayed) == 1 and delayed[0].source is distinct.out_trace
    replay_edge_changes(program, seed=3, nodes=10, edges=14, commits=5, changes=2)


def test_a_union_asked_for_in_another_order_is_built_from_its_inputs_in_that_order():
    """Transitive closure's loop holds path keyed by its second column (the join reads it so):
    the union of edge and the join's projection is made of each in that order, so the join
    writes its output reordered (runtime.worker.Dataflow._fuse_selects) and no select reorders
    the union's rows. Answers as the oracle's, batch and after updates."""
    tc = EDGES + """
    .decl path(x: number, y: number)
    .output path
    path(x, y) :- e(x, y).
    path(x, z) :- path(x, y), e(y, z).
    """
    program = compiler.compile_datalog(tc)
    session = program.session()
    ops = session.dataflow.ops
    union = next(op for op in ops if op.name == "concat")
    readers = [dst for (src, _), subs in session.dataflow.subscribers.items() if src == union.id for dst, _ in subs]
    assert [op.name for op in readers] == ["arrange"]  # the union's rows go straight to distinct's arrangement
    session.commit()  # (plans the dataflow: selects after joins are fused)
    join = next(op for op in ops if op.name == "join")
    assert join.columns is not None  # it writes the union's order itself
    replay_edge_changes(program, seed=3, nodes=30, edges=60, commits=4, changes=5)
