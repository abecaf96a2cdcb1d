"""Bad input is refused with a clear error, and leaves the dataflow unchanged."""

import pytest

from runtime import Dataflow, DataflowError


def setup():
    df = Dataflow()
    h, people = df.new_input("people", ("str", "int", "float"))
    cap = people.capture()
    h.insert([("ann", 30, 1.5)])
    h.advance_to(1)
    df.step()
    return df, h, cap


@pytest.mark.parametrize(
    "rows, message",
    [
        ([("bob", 1)], "input 'people': row ('bob', 1) has arity 2, expected 3"),
        ([("bob", "x", 2.0)], "input 'people': row ('bob', 'x', 2.0), column 1: expected an integer, got str 'x'"),
        ([(3, 1, 2.0)], "input 'people': row (3, 1, 2.0), column 0: expected a string, got int 3"),
        (["bob"], "input 'people': row 'bob' has arity ? (not a tuple: str), expected 3"),
        ([("bob", 2**70, 1.0)], "input 'people': row ('bob', 1180591620717411303424, 1.0), column 1: integer 1180591620717411303424 does not fit in 64 bits"),
    ],
)
def test_bad_rows_are_refused_and_change_nothing(rows, message):
    df, h, cap = setup()
    with pytest.raises(DataflowError) as err:
        h.insert([("carl", 5, 0.0)] + rows)  # a good row first: the whole call is refused
    assert str(err.value) == message
    h.advance_to(2)
    df.step()
    assert cap.contents() == {("ann", 30, 1.5): 1}


def test_times_before_the_frontier_are_refused():
    df, h, cap = setup()
    with pytest.raises(DataflowError, match=r"input 'people': time 0 is before the input's frontier 1"):
        h.insert([("bob", 1, 1.0)], time=0)
    with pytest.raises(DataflowError, match="cannot advance to 0, already at 1"):
        h.advance_to(0)
    h.advance_to(2)
    df.step()
    assert cap.contents() == {("ann", 30, 1.5): 1}


def test_updates_after_close_are_refused():
    df, h, cap = setup()
    h.close()
    with pytest.raises(DataflowError, match="input 'people' is closed"):
        h.insert([("bob", 1, 1.0)])
    df.step()
    assert cap.frontier().is_empty()
    assert cap.contents() == {("ann", 30, 1.5): 1}


def test_strings_and_floats_round_trip_through_operators():
    df = Dataflow()
    h, people = df.new_input("people", ("str", "int", "float"))
    oldest = people.map(lambda r: (r[1] // 10, r[2], r[0]), types=("int", "float", "str")).max(key=1)
    cap = oldest.capture()
    h.insert([("ann", 31, 1.5), ("bob", 35, -2.25), ("cy", 12, 0.5)])
    h.advance_to(1)
    df.step()
    assert cap.contents() == {(3, 1.5, "ann"): 1, (1, 0.5, "cy"): 1}
    h.remove([("ann", 31, 1.5)])
    h.advance_to(2)
    df.step()
    assert cap.contents() == {(3, -2.25, "bob"): 1, (1, 0.5, "cy"): 1}
    assert cap.changes(since=1) == [((3, -2.25, "bob"), 1, 1), ((3, 1.5, "ann"), 1, -1)]


def test_row_function_with_wrong_output_type_names_the_operator():
    df = Dataflow()
    h, xs = df.new_input("xs", 1)
    xs.map(lambda r: (str(r[0]),)).capture()
    h.insert([(1,)])
    with pytest.raises(TypeError, match=r"map: row \('1',\), column 0: expected an integer, got str '1' \(the output columns are \('int',\); declare others with types=...\)"):
        df.step()
