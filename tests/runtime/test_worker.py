"""The worker's step: the cycle collector runs less often during it, and as before after it."""

import gc

import numpy as np
import pytest

from runtime import Dataflow
from runtime.worker import YOUNG


@pytest.mark.parametrize("before", [(700, 10, 10), (0, 10, 10), (YOUNG * 5, 3, 4)])
def test_a_step_raises_the_youngest_threshold_only_and_restores_it(before):
    saved = gc.get_threshold()
    seen = []

    def record(data):
        seen.append(gc.get_threshold())
        return data

    df = Dataflow()
    handle, rows = df.new_input("rows", 1)
    captured = rows.map_columns(record, arity=1).capture()
    try:
        gc.set_threshold(*before)
        handle.insert([(1,), (2,)])
        handle.advance_to(1)
        df.step()
        after = gc.get_threshold()
    finally:
        gc.set_threshold(*saved)
    assert seen, "the map ran during the step"
    # 0 means the user switched collection off: it stays off; a higher threshold stays.
    expected = before if before[0] == 0 or before[0] >= YOUNG else (YOUNG,) + before[1:]
    assert set(seen) == {expected}
    assert after == before
    assert captured.contents() == {(1,): 1, (2,): 1}


def test_a_long_loop_holds_neither_a_batch_per_round_nor_a_frontier_per_round():
    """One new fact per round for 3,000 rounds: what leaves the loop waits in few batches, and
    the worker's derived frontiers are not kept for rounds that are over."""
    rounds = 3_000
    df = Dataflow()
    handle, start = df.new_input("start", 1)
    counted = start.iterate(
        lambda n: n.map_columns(lambda d: d + 1).filter_columns(lambda d: d[0] < rounds).concat(start.enter(n.scope)).distinct())
    captured = counted.capture()
    leave = captured.op.dataflow.ops[captured.op.id - 1]
    assert leave.name == "leave"
    waiting, derived = [], []

    def after_round():
        waiting.append(len(leave.queues[0]))
        derived.append(len(df._frontiers))

    df.on_sweep = after_round
    handle.insert([(0,)])
    handle.advance_to(1)
    df.step()
    assert captured.contents() == {(i,): 1 for i in range(rounds)}
    assert len(waiting) >= rounds and max(waiting) < rounds // 10
    assert max(derived) <= 4


def test_a_map_or_filter_after_an_operator_of_its_own_scope_runs_as_batches_are_sent():
    """Stateless operators fed from their own scope (maps, filters, the loop's back edge) are
    applied on delivery (no queue, no turn of their own); fed from an input, they wait for
    their turn in the step. The back edge of the source's negation waits for its turn, the
    last of the round, so it meets the result it cancels (runtime.collection.Variable)."""
    df = Dataflow()
    handle, edges = df.new_input("edges", 2)
    start = edges.map_columns(lambda d: d.copy())
    paths = start.iterate(lambda p: p.map_columns(lambda d: d[[1, 0]].copy())  # (y, x) for a path x -> y
                          .join(edges)  # (y, x, z) for an edge y -> z
                          .map_columns(lambda d: np.stack([d[1], d[2]]), arity=2)
                          .filter_columns(lambda d: d[0] != d[1])
                          .concat(start.enter(p.scope)).distinct())
    captured = paths.capture()
    waited = {}
    for op in df.ops:
        if op.name in ("map_columns", "filter_columns", "feedback"):
            run = op.run

            def counted(op=op, run=run):
                waited[op] += bool(op.queued)
                run()

            waited[op] = 0
            op.run = counted
    handle.insert([(1, 2), (2, 3), (3, 4), (4, 1)])
    handle.advance_to(1)
    df.step()
    assert captured.contents() == {(x, y): 1 for x in range(1, 5) for y in range(1, 5) if x != y}
    in_loop = [op for op in waited if op.scope is not df.root_scope]
    at_root = [op for op in waited if op.scope is df.root_scope]
    # In the loop every sender is of the loop's scope (the join, the distinct, the back edge
    # and the entered start, through the variable): nothing waits there but the source's
    # negation, on its way back.
    *eager, source_back = in_loop
    assert len(eager) == 4 and all(op.eager and waited[op] == 0 for op in eager)
    assert source_back.name == "feedback" and not source_back.eager and waited[source_back] == 1
    # The input flushes as the step starts, before anything runs: its reader takes its turn.
    assert len(at_root) == 1 and waited[at_root[0]] == 1


def test_a_capture_keeps_a_lone_batch_as_it_came_and_arranges_once_a_second_makes_too_many():
    """A loop's answer leaving it in one batch is not sorted until it is read; a second batch
    that takes the unarranged rows past twice the arranged ones arranges both."""
    df = Dataflow()
    handle, xs = df.new_input("xs", 1)
    captured = xs.capture()
    handle.update_columns(np.arange(10_000, dtype=np.int64).reshape(1, -1), diff=1, time=0)
    handle.advance_to(1)
    df.step()
    assert (captured.op.unarranged_rows, len(captured.op.trace)) == (10_000, 0)
    handle.update_columns(np.arange(5_000, dtype=np.int64).reshape(1, -1), diff=-1, time=1)
    handle.advance_to(2)
    df.step()
    assert (captured.op.unarranged_rows, len(captured.op.trace)) == (0, 15_000)
    assert captured.contents() == {(i,): 1 for i in range(5_000, 10_000)}


def test_a_loop_variable_that_starts_empty_is_read_through_its_distincts_output_trace():
    """Joins read such a variable through a delayed view of the distinct's output trace: no
    arrangement of the variable's own, one trace fewer, and the closure is right after updates."""
    from runtime import iterate
    from runtime.operators.arrange import ArrangeOp
    from runtime.operators.join import JoinOp
    from runtime.operators.reduce import ReduceOp
    from runtime.trace.delayed import DelayedTrace

    df = Dataflow()
    handle, edges = df.new_input("edges", 2)
    # path as (y, x): x reaches y; keyed by y, as the join with edges (y, z) reads it.
    (path,) = iterate([("int", "int")], lambda p: [p.join(edges).select([2, 1]).concat(edges.select([1, 0])).distinct()],
                      scope=df.root_scope)
    captured = path.capture()
    join = next(op for op in df.ops if isinstance(op, JoinOp))
    distinct = next(op for op in df.ops if isinstance(op, ReduceOp))
    assert isinstance(join.left_trace, DelayedTrace) and join.left_trace.source is distinct.out_trace
    variable = next(op for op in df.ops if op.name == "variable")
    assert [reader for reader, _ in df.subscribers[(variable.id, 0)]] == [join]  # nothing arranges it
    assert sum(isinstance(op, ArrangeOp) for op in df.ops) == 2  # the edges', and distinct's input
    handle.insert([(1, 2), (2, 3), (3, 4)])
    handle.advance_to(1)
    df.step()
    handle.remove([(2, 3)], time=1)
    handle.insert([(4, 1)], time=1)
    handle.advance_to(2)
    df.step()
    reach = {(1, 2), (3, 4), (4, 1), (3, 1), (4, 2), (3, 2)}  # pairs (x, y): edges 1->2, 3->4, 4->1
    assert set(captured.contents()) == {(y, x) for x, y in reach}


def test_joins_read_a_variable_that_starts_empty_only_when_its_result_is_a_distinct():
    from runtime import DataflowError, iterate

    df = Dataflow()
    _, edges = df.new_input("edges", 2)
    with pytest.raises(DataflowError, match="distinct"):
        iterate([("int", "int")], lambda p: [p.join(edges).select([2, 1]).concat(edges)], scope=df.root_scope)
    with pytest.raises(DataflowError, match="scope"):
        iterate([("int", "int")], lambda p: [p.join(edges).select([2, 1]).concat(edges).distinct()])


@pytest.mark.parametrize("bound", [7, 8, 9])
def test_a_loop_with_a_round_limit_stops_at_the_round_past_it(bound):
    """A counter from 1 reaches n in round n - 2 (the variable starts holding its source):
    within a limit of 6 rounds it reaches 8, and to go on to 9 the step raises RoundLimitError
    naming the loop."""
    from runtime import RoundLimitError, iterate

    df = Dataflow()
    handle, start = df.new_input("start", 1)
    (counted,) = iterate([start], lambda n: [n.map_columns(lambda d: d + 1).filter_columns(lambda d: d[0] <= bound)
                                             .concat(start.enter(n.scope)).distinct()], round_limit=6, label="counter")
    captured = counted.capture()
    handle.insert([(1,)])
    handle.advance_to(1)
    if bound > 8:
        with pytest.raises(RoundLimitError) as info:
            df.step()
        assert (info.value.label, info.value.limit) == ("counter", 6)
        return
    df.step()
    assert captured.contents() == {(n,): 1 for n in range(1, bound + 1)}
