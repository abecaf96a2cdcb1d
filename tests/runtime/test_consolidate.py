"""Consolidate holds updates at times not yet complete and sends each exactly once."""

from runtime import Dataflow


def test_held_updates_are_sent_once_when_complete_and_never_again():
    df = Dataflow()
    handle, rows = df.new_input("rows", 1)
    captured = rows.consolidate().capture()
    handle.insert([(1,)], time=5)
    handle.advance_to(1)
    df.step()
    assert captured.contents() == {}  # time 5 is not complete: held
    handle.advance_to(6)
    df.step()  # nothing new arrives; the held update is now complete
    assert captured.contents() == {(1,): 1}
    handle.insert([(2,)], time=7)
    handle.advance_to(8)
    df.step()
    assert captured.contents() == {(1,): 1, (2,): 1}
    assert not df.outstanding()
