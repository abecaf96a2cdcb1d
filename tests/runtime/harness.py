"""Drives one program through the dataflow and the reference evaluator.

`check(program, arities, steps)` builds `program(*inputs)` on real inputs and
replays `steps`: each is `(updates, advance)` with updates
`(input, row, diff, time_offset)` at `epoch + time_offset`, after which every
input advances by `advance` and the dataflow steps. After every step, for every
complete time t, the captured output accumulated at t must equal the program
evaluated from scratch (runtime.reference) on the inputs accumulated at t.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import strategies as st

from runtime import Dataflow
from runtime.reference import Multiset


def check(program, arities, steps, outputs=1):
    df = Dataflow()
    inputs = [df.new_input(f"in{i}", a) for i, a in enumerate(arities)]
    handles = [h for h, _ in inputs]
    built = program(*[c for _, c in inputs])
    built = built if isinstance(built, (list, tuple)) else [built]
    captures = [c.capture() for c in built]
    history: list[tuple[int, tuple, int, int]] = []
    epoch = 0
    for updates, advance in steps:
        for i, row, diff, dt in updates:
            handles[i].update([row], diff, time=epoch + dt)
            history.append((i, row, diff, epoch + dt))
        epoch += advance
        for h in handles:
            h.advance_to(epoch)
        df.step()
        assert_frontiers_past(df, epoch)
        for t in range(epoch):
            accumulated = [Counter() for _ in arities]
            for i, row, diff, time in history:
                if time <= t:
                    accumulated[i][row] += diff
            expected = program(*[Multiset(a) for a in accumulated])
            expected = expected if isinstance(expected, (list, tuple)) else [expected]
            for cap, exp in zip(captures, expected):
                assert cap.done(t)
                assert cap.contents(t) == exp.contents, f"time {t}: got {dict(cap.contents(t))}, want {dict(exp.contents)}"
    return df, captures


def assert_frontiers_past(df, epoch):
    """No outstanding work anywhere (pending, held or queued) is before `epoch`."""
    for op, times in df.outstanding().items():
        for t in times:
            assert t[0] >= epoch, f"work at {t} in {op} is before the input frontier {epoch}"


def toggles(n_inputs, arities, values=4, max_updates=6, max_steps=6, max_offset=2, max_advance=2):
    """Random update sequences: inserts and removes at random, sometimes out-of-order, times."""
    update = st.integers(0, n_inputs - 1).flatmap(
        lambda i: st.tuples(
            st.just(i),
            st.tuples(*[st.integers(0, values - 1)] * arities[i]),
            st.sampled_from([1, 1, -1]),
            st.integers(0, max_offset),
        )
    )
    step = st.tuples(st.lists(update, max_size=max_updates), st.integers(0, max_advance))
    return st.lists(step, min_size=1, max_size=max_steps)
