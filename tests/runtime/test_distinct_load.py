"""Distinct leaves its input unread on a first load (runtime.operators.reduce.ReduceOp._input_before):
the answers stay those of the definition through the load, an epoch of insertions only and an
epoch with removals; the shortcut is taken in the load's large rounds and not after the removals.
(The kernel's side of it: test_reduce_kernels; the trace's bounds: test_trace.)"""

import random

import numpy as np

from runtime import Dataflow
from runtime.operators import reduce_kernels


def closure(edges):
    reach = set(edges)
    while True:
        more = {(a, d) for a, b in reach for c, d in edges if b == c} - reach
        if not more:
            return reach
        reach |= more


def closure_dataflow():
    """A transitive closure by iterate and distinct: (dataflow, edge input handle, capture)."""
    df = Dataflow()
    handle, edges = df.new_input("edges", 2)
    paths = edges.iterate(lambda p: p.map_columns(lambda d: d[::-1])  # (y, x) for a path x -> y
                          .join(edges)  # (y, x, z)
                          .map_columns(lambda d: np.stack([d[1], d[2]]), arity=2)
                          .concat(edges.enter(p.scope)).distinct())
    return df, handle, paths.capture()


def feed_epoch(handle, t, added, removed) -> None:
    """Edges added and removed at time t, then the input advanced past it."""
    handle.update_columns(np.array(added, np.int64).T.reshape(2, -1), diff=1, time=t)
    handle.update_columns(np.array(removed, np.int64).T.reshape(2, -1), diff=-1, time=t)
    handle.advance_to(t + 1)


def test_distinct_reads_its_input_again_once_it_has_had_a_removal(monkeypatch):
    taken = []
    distinct = reduce_kernels.distinct

    def spy(*args, **kwargs):
        taken.append(bool(kwargs.get("input_before")))
        return distinct(*args, **kwargs)

    monkeypatch.setattr(reduce_kernels, "distinct", spy)
    df, handle, captured = closure_dataflow()
    rng = random.Random(5)
    graph = {(rng.randrange(80), rng.randrange(80)) for _ in range(160)}  # rounds of hundreds of pairs
    epochs = [(sorted(graph), []), ([(80, 81), (81, 0)], [])]  # a load, then insertions only
    epochs.append(([], rng.sample(sorted(graph), 20)))  # then removals
    for t, (added, removed) in enumerate(epochs):
        graph = (graph | set(added)) - set(removed)
        feed_epoch(handle, t, added, removed)
        start = len(taken)
        df.step()
        assert captured.contents() == {pair: 1 for pair in closure(graph)}, t
        if t == 0:
            assert any(taken[start:]), "a first load's large rounds leave the input unread"
        if t == 2:
            assert not any(taken[start:]), "after a removal the input is read"


def test_an_update_after_a_load_reads_the_old_history_in_its_own_epoch(monkeypatch):
    """The load's loop ends with no last run of distinct, so its input handle's frontier is
    still the load's last round's. The next epoch's runs read the history advanced to their own
    least time (reduce_kernels._read_since): every key's times then make a chain, and none is
    left to distinct_general. The answers stay those of the definition."""
    general = []
    distinct_general = reduce_kernels.distinct_general

    def spy(*args):
        general.append(args[2].shape[0])  # the keys set aside
        return distinct_general(*args)

    monkeypatch.setattr(reduce_kernels, "distinct_general", spy)
    df, handle, captured = closure_dataflow()
    rng = random.Random(7)
    graph = {(rng.randrange(60), rng.randrange(60)) for _ in range(90)}
    feed_epoch(handle, 0, sorted(graph), [])
    df.step()
    for t in range(1, 4):  # single epochs of removals and insertions
        removed = rng.sample(sorted(graph), 3)
        added = [(rng.randrange(60), rng.randrange(60)) for _ in range(3)]
        graph = (graph - set(removed)) | set(added)
        feed_epoch(handle, t, added, removed)
        df.step()
        assert captured.contents() == {pair: 1 for pair in closure(graph)}, t
    assert not general, f"keys set aside as no chain: {general}"
