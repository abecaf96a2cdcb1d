"""Path summaries compose correctly; frontiers leave finished epochs behind."""

import numpy as np

from runtime import Dataflow
from runtime.progress import Summary
from tests.runtime.harness import assert_frontiers_past


def test_summary_normal_form_composes_like_the_operations():
    enter = lambda d: Summary(d, 0, (0,))
    leave = lambda d: Summary(d - 1)
    feedback = lambda d: Summary(d, 1)
    t = (5, 2)
    path = [feedback(2), enter(2), feedback(3), feedback(3), leave(3), feedback(2), enter(2)]
    expected = t
    composed = Summary.identity(2)
    for s in path:
        expected = s.apply(expected)
        composed = composed.then(s)
    assert composed.apply(t) == expected == (5, 4, 0)


def reachability():
    """reach(root, node) by iterate + join + distinct: (dataflow, edges, roots, capture)."""
    df = Dataflow()
    ein, edges = df.new_input("edges", 2)
    rin, roots = df.new_input("roots", 1)
    seed = roots.map_columns(lambda d: np.vstack([d[0], d[0]]), arity=2)
    reach = seed.iterate(lambda r: r.map_columns(lambda d: d[::-1]).join(edges)
                         .map_columns(lambda d: d[1:], arity=2).concat(seed).distinct())
    return df, ein, rin, reach.capture()


def test_frontiers_pass_every_finished_epoch_in_a_loop():
    df, ein, rin, cap = reachability()
    rin.insert([(0,)])
    for epoch in range(1, 30):
        ein.insert([(epoch - 1, epoch)], time=epoch - 1)
        if epoch % 3 == 0:
            ein.remove([(epoch - 2, epoch - 1)], time=epoch - 1)
        ein.advance_to(epoch)
        rin.advance_to(epoch)
        df.step()
        assert_frontiers_past(df, epoch)
        for op in df.ops:
            for port in range(len(op.in_lattices)):
                assert all(t[0] >= epoch for t in op.frontier(port)), (op, op.frontier(port))
        assert cap.done(epoch - 1) and not cap.done(epoch)
    # the chain 0 -> 1 -> 2 -> ... lost (1, 2) at epoch 3: only 0 and 1 remain
    assert set(cap.contents()) == {(0, 0), (0, 1)}


def test_closing_every_input_empties_all_frontiers():
    df = Dataflow()
    ein, edges = df.new_input("edges", 2)
    cap = edges.iterate(lambda x: x.join(x.map_columns(lambda d: d[::-1])).map_columns(lambda d: d[1:], arity=2).concat(x).distinct()).capture()
    ein.insert([(1, 2), (2, 3)])
    ein.close()
    df.step()
    assert not df.outstanding()
    assert cap.frontier().is_empty()


def test_batches_go_past_concat_and_loop_variables_straight_to_their_readers():
    df, ein, rin, cap = reachability()
    passthrough = [op for op in df.ops if op.passthrough]
    assert sorted(op.name for op in passthrough) == ["concat", "variable"]  # the body's concat
    runs = {op.id: 0 for op in passthrough}
    for op in passthrough:
        op.run = lambda op=op: runs.__setitem__(op.id, runs[op.id] + 1)
    rin.insert([(0,)])
    ein.insert([(0, 1), (1, 2), (2, 0), (5, 6)])
    ein.advance_to(1)
    rin.advance_to(1)
    df.step()
    assert set(cap.contents()) == {(0, 0), (0, 1), (0, 2)}
    assert all(n == 0 for n in runs.values()) and not any(op.queued for op in passthrough)
