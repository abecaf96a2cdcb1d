"""A select that alone reads a join is done by the join as it writes its output
(runtime.worker.Dataflow._fuse_selects), and undone when another reader comes."""

from runtime import Dataflow


def test_a_select_alone_after_a_join_is_done_by_it_until_another_reader_comes():
    df = Dataflow()
    a_in, a = df.new_input("a", 2)
    b_in, b = df.new_input("b", 2)
    joined = a.join(b)  # (key, a's value, b's value)
    swapped = joined.select([2, 0]).capture()
    a_in.insert([(1, 10), (2, 20)], time=0)
    b_in.insert([(1, 100), (2, 200), (2, 201)], time=0)
    for handle in (a_in, b_in):
        handle.advance_to(1)
    df.step()
    join = joined.stream.op
    select = next(dst for dst, _ in df.subscribers[(join.id, 0)])
    assert join.columns == (2, 0) and select.passthrough  # fused
    assert swapped.contents() == {(100, 1): 1, (200, 2): 1, (201, 2): 1}

    whole = joined.capture()  # a second reader of the join's output: it writes every column again
    a_in.insert([(2, 21)], time=1)
    for handle in (a_in, b_in):
        handle.advance_to(2)
    df.step()
    assert join.columns is None and not select.passthrough
    assert swapped.contents() == {(100, 1): 1, (200, 2): 2, (201, 2): 2}
    assert whole.contents() == {(2, 21, 200): 1, (2, 21, 201): 1}
