"""Distinct leaves its input unread on a first load (runtime.operators.reduce.ReduceOp._input_before):
the answers stay those of the definition through the load, an epoch of insertions only and an
epoch with removals; the shortcut is taken in the load's large rounds and not after the removals.
(The kernel's side of it: test_reduce_kernels; the trace's bounds: test_trace.)"""

import random

import numpy as np

from runtime import Dataflow
from runtime.operators import reduce_kernels, seen_keys
from runtime.operators.reduce import ReduceOp


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


def _spy_anti_joins(monkeypatch) -> list[bool]:
    """A list that gets, for each run offered the seen keys' anti-join, whether it took it."""
    taken = []
    first_outputs = ReduceOp._first_outputs

    def spy(self, *args):
        done = first_outputs(self, *args)
        taken.append(done)
        return done

    monkeypatch.setattr(ReduceOp, "_first_outputs", spy)
    return taken


def test_distinct_reads_its_input_again_once_it_has_had_a_removal(monkeypatch):
    """The shortcut is the kernel told `input_before`, or the anti-join with the seen keys."""
    taken = _spy_anti_joins(monkeypatch)
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


def _load_then_updates(seed: int, epochs_in_one_step: bool = False) -> None:
    """A closure loaded, then epochs of insertions only and of removals; with
    `epochs_in_one_step`, the load and the first insertions go in before one step (rounds then
    hold two epochs' times). The answers are those of the definition after every step."""
    df, handle, captured = closure_dataflow()
    rng = random.Random(seed)
    graph = {(rng.randrange(90), rng.randrange(90)) for _ in range(200)}
    feed_epoch(handle, 0, sorted(graph), [])
    if not epochs_in_one_step:
        df.step()
        assert captured.contents() == {pair: 1 for pair in closure(graph)}
    added = [(rng.randrange(120), rng.randrange(120)) for _ in range(8)]
    graph |= set(added)
    feed_epoch(handle, 1, added, [])
    df.step()
    assert captured.contents() == {pair: 1 for pair in closure(graph)}
    removed = rng.sample(sorted(graph), 10)
    graph -= set(removed)
    feed_epoch(handle, 2, [], removed)
    df.step()
    assert captured.contents() == {pair: 1 for pair in closure(graph)}


def test_a_first_load_is_an_anti_join_with_the_keys_seen(monkeypatch):
    """The load's large rounds take the seen keys' anti-join (runtime.operators.seen_keys),
    not the kernel; after loads, insertions at later epochs and removals keep the definition's
    answers."""
    taken = _spy_anti_joins(monkeypatch)
    df, handle, captured = closure_dataflow()
    rng = random.Random(3)
    graph = {(rng.randrange(90), rng.randrange(90)) for _ in range(200)}
    feed_epoch(handle, 0, sorted(graph), [])
    df.step()
    assert any(taken), "a first load's large rounds are anti-joins with the seen keys"
    assert captured.contents() == {pair: 1 for pair in closure(graph)}
    _load_then_updates(4)
    _load_then_updates(5, epochs_in_one_step=True)


def test_seen_keys_given_up_in_a_load_leave_the_output_trace_to_tell(monkeypatch):
    """A box of keys past MAX_BITS is given up mid-load: the kernel reads the output trace from
    then on, and the answers stay those of the definition."""
    monkeypatch.setattr(seen_keys, "MAX_BITS", 64)
    for seed in range(3):
        _load_then_updates(seed)
        _load_then_updates(seed, epochs_in_one_step=True)


def test_keys_output_before_the_anti_join_are_seen_by_it(monkeypatch):
    """Keys a run that read the output trace put out (a batch too small to skip the input) are
    marked seen: a later large batch of insertions, taken by the anti-join, does not put them
    out again."""
    taken = _spy_anti_joins(monkeypatch)
    df = Dataflow()
    handle, rows = df.new_input("rows", 2)
    captured = rows.distinct().capture()
    small = [(i, i % 7) for i in range(50)]
    large = small + [(i, -i) for i in range(50, 600)]
    for t, batch in enumerate([small, large, large[::2]]):
        handle.update_columns(np.array(batch, np.int64).T, diff=1, time=t)
        handle.advance_to(t + 1)
        df.step()
    assert taken == [True, True], "the first batch is read by the kernel, the others are not"
    assert captured.contents() == {row: 1 for row in large}
