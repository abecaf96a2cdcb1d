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
