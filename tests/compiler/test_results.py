"""Results are columns: arrow()/df() of contents, commits and change logs, and columnar inputs.

The tuple API decodes the runtime's columns with numpy, `arrow()` with Arrow;
each test compares one with the other (and the tuple API is checked against
the naive oracle by tests.compiler.test_random_programs), or with rows read
back through Arrow's own `to_pylist`.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler
from compiler import SessionError
from compiler.results import Result
from tests.compiler.replay import Replay
from tests.compiler.test_random_programs import COMMITS, INPUTS, ROW, apply, programs

TYPED = """
.decl t(n: number, u: unsigned, f: float, s: symbol)
.input t
copy(n, u, f, s) :- t(n, u, f, s).
"""
ROWS = [(-3, 2**64 - 1, -0.5, "b"), (7, 0, 2.25, "a"), (7, 5, float("inf"), "é"), (0, 1, 0.0, "")]


def arrow_rows(table: pa.Table) -> list[tuple]:
    return [tuple(r.values()) for r in table.to_pylist()]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=programs(), first=st.lists(st.tuples(st.sampled_from(INPUTS), ROW), min_size=3, max_size=20), commits=COMMITS)
def test_arrow_equals_the_tuple_api_on_random_programs(text, first, commits):
    program = compiler.compile_datalog(text)
    replay = Replay(program)  # its commits check read() and the changes against the naive oracle
    apply(replay, [(rel, row, "insert") for rel, row in first])
    for updates in [[]] + commits:
        apply(replay, updates)
        session = replay.session
        time = session.time
        changes = replay.commit()
        for name, found in changes.items():
            table = found.arrow()
            assert table.column_names == [*program.relations[name].attribute_names, "time", "diff"]
            assert [(row[:-2], row[-1]) for row in arrow_rows(table)] == list(found)
            assert set(table.column("time").to_pylist()) == {time}
        for name in program.relations:
            assert arrow_rows(session.arrow(name)) == session.read(name)
            log = session.changes(name).arrow()
            assert [(row[:-2], row[-2], row[-1]) for row in arrow_rows(log)] == session.change_log(name)


def test_typed_columns_decode_to_arrow_types_and_pandas():
    s = compiler.compile_datalog(TYPED).session()
    s.insert("t", ROWS)
    changes = s.commit()["copy"]
    table = s.arrow("copy")
    assert table.schema.types == [pa.int64(), pa.uint64(), pa.float64(), pa.string()]
    assert arrow_rows(table) == s.read("copy") == sorted(ROWS)
    assert [row for row, _ in changes] == sorted(ROWS)
    frame = s.df("t")  # an input keeps its declared names
    assert list(frame.columns) == ["n", "u", "f", "s"]
    assert [tuple(r) for r in frame.itertuples(index=False)] == sorted(ROWS)


def test_a_commit_is_not_decoded_to_tuples_for_arrow(monkeypatch):
    s = compiler.compile_datalog(TYPED).session()
    s.insert("t", ROWS)
    changes = s.commit()

    def refuse(*args):
        raise AssertionError("decoded to Python tuples")

    monkeypatch.setattr(Result, "_python_column", refuse)
    assert changes["copy"].arrow().num_rows == len(changes["copy"]) == len(ROWS)
    assert s.arrow("copy").num_rows == len(ROWS)
    with pytest.raises(AssertionError, match="tuples"):
        list(changes["copy"])


def test_change_log_as_arrow_keeps_times_and_diffs():
    s = compiler.compile_datalog(TYPED).session()
    s.insert("t", ROWS[:2])
    s.commit()
    s.remove("t", ROWS[:1])
    s.insert("t", ROWS[2:3])
    s.commit()
    log = s.changes("copy").arrow()
    assert log.column("time").to_pylist() == [0, 0, 1, 1]
    assert sorted(zip(log.column("x0").to_pylist(), log.column("diff").to_pylist())) == [(-3, -1), (-3, 1), (7, 1), (7, 1)]
    assert arrow_rows(log) == [row + (t, d) for row, t, d in s.change_log("copy")]


@pytest.mark.parametrize("make", [
    lambda rows: pa.table({"n": [r[0] for r in rows], "u": pa.array([r[1] for r in rows], pa.uint64()),
                           "f": [r[2] for r in rows], "s": [r[3] for r in rows]}),
    lambda rows: pa.table({"n": [r[0] for r in rows], "u": pa.array([r[1] for r in rows], pa.uint64()),
                           "f": [r[2] for r in rows], "s": [r[3] for r in rows]}).to_batches()[0],
    lambda rows: __import__("pandas").DataFrame({"S": [r[3] for r in rows], "F": [r[2] for r in rows],
                                                 "U": np.array([r[1] for r in rows], dtype=np.uint64), "N": [r[0] for r in rows]}),
    lambda rows: {"c1": np.array([r[0] for r in rows]), "c2": np.array([r[1] for r in rows], dtype=np.uint64),
                  "c3": np.array([r[2] for r in rows]), "c4": [r[3] for r in rows]},
], ids=["arrow", "record batch", "pandas by name", "numpy by position"])
def test_columnar_inputs_equal_row_inputs(make):
    by_rows = compiler.compile_datalog(TYPED).session()
    by_rows.insert("t", ROWS)
    by_rows.commit()
    by_columns = compiler.compile_datalog(TYPED).session()
    by_columns.insert("t", make(ROWS))
    by_columns.commit()
    assert by_columns.read("copy") == by_rows.read("copy")
    by_columns.remove("t", make(ROWS[:2]))
    by_columns.commit()
    assert by_columns.read("copy") == sorted(ROWS[2:])


def test_a_numpy_block_of_rows_is_input():
    s = compiler.compile_datalog(".decl e(x: number, y: number)\n.input e\nr(x, y) :- e(x, y).").session()
    s.insert("e", np.array([[1, 2], [3, 4], [1, 2]]))
    s.commit()
    assert s.read("r") == [(1, 2), (3, 4)]


def test_columnar_inputs_that_do_not_fit_are_refused_whole():
    s = compiler.compile_datalog(TYPED).session()
    with pytest.raises(SessionError, match=r"'t': column 'u'.*row 2: -1 is not a non-negative integer"):
        s.insert("t", pa.table({"n": [1, 2], "u": [1, -1], "f": [1.0, 2.0], "s": ["a", "b"]}))
    with pytest.raises(SessionError, match=r"'t': columns \(a, b\) do not match: wanted n, u, f, s"):
        s.insert("t", {"a": [1], "b": [2]})
    with pytest.raises(SessionError, match="'t': column 's': 1 empty"):
        s.insert("t", pa.table({"n": [1], "u": [1], "f": [1.0], "s": pa.array([None], pa.string())}))
    s.commit()
    assert s.read("copy") == []


SQL_SCHEMA = {"item": {"id": "int not null", "name": "text", "price": "double", "sale": "boolean"}}
SQL_ROWS = [(1, "tea", 2.5, True), (2, None, None, None), (3, "cake", 4.0, False), (3, "cake", 4.0, False)]


def test_sql_nulls_are_arrow_nulls_and_bags_repeat_rows_in_order():
    program = compiler.compile_sql("SELECT id, name, price, sale FROM item ORDER BY id DESC", SQL_SCHEMA)
    s = program.session()
    s.insert("item", SQL_ROWS)
    changes = s.commit()["result"]
    table = s.arrow("result")
    assert table.schema.types == [pa.int64(), pa.string(), pa.float64(), pa.bool_()]
    assert table.column("name").null_count == 1 and table.column("sale").null_count == 1
    assert arrow_rows(table) == s.read("result") == [SQL_ROWS[2], SQL_ROWS[3], SQL_ROWS[1], SQL_ROWS[0]]
    assert [(row[:-2], row[-1]) for row in arrow_rows(changes.arrow())] == list(changes) == [
        (SQL_ROWS[2], 2), (SQL_ROWS[1], 1), (SQL_ROWS[0], 1)]


def test_sql_inputs_take_arrow_nulls():
    program = compiler.compile_sql("SELECT id, name, price, sale FROM item", SQL_SCHEMA)
    by_rows, by_columns = program.session(), program.session()
    by_rows.insert("item", SQL_ROWS)
    by_columns.insert("item", pa.table({name: [r[i] for r in SQL_ROWS] for i, name in enumerate(SQL_SCHEMA["item"])}))
    by_rows.commit(), by_columns.commit()
    assert by_columns.read("result") == by_rows.read("result")
    assert any(v is None for row in by_columns.read("result") for v in row)
    with pytest.raises(SessionError, match="'item': column 'id': 1 empty"):
        by_columns.insert("item", pa.table({"id": pa.array([None], pa.int64()), "name": ["x"], "price": [1.0], "sale": [True]}))


def test_floats_decode_exactly():
    s = compiler.compile_datalog(".decl v(f: float)\n.input v\nw(f) :- v(f).").session()
    values = [(-0.0,), (0.0,), (1e-310,), (-math.inf,), (1.5,)]
    s.insert("v", values)
    s.commit()
    decoded = s.arrow("w").column(0).to_pylist()
    assert decoded == [v for (v,) in s.read("w")]
    signed = lambda vs: sorted((v, math.copysign(1.0, v)) for v in vs)  # -0.0 stays -0.0
    assert signed(decoded) == signed(v for (v,) in values)
