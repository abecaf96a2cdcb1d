"""The hierarchical top-k (compiler.sql.topk) against from-scratch references.

At the dataflow level: random inserts and deletes (duplicates included) at
fine-grained times, and at every time the maintained top-k equals
`select_top` (a Python sort of the accumulated rows) -- with hierarchies small
enough that every level prunes (2 to 8 buckets), over numbers, strings
(in code point order, not by interning order) and floats, ascending and
descending, with OFFSET and without LIMIT. At the SQL level: ORDER BY with
NULLS FIRST/LAST, LIMIT and OFFSET against DuckDB re-running the query after
every commit.
"""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.sql import compile_sql
from compiler.sql.topk import lower_top, select_top
from runtime import Dataflow

from tests.compiler.sql.oracle import SCHEMA, Tables, normalize

PLAN_TYPES = ("number", "symbol", "float")
RUNTIME_TYPES = ("int", "str", "float")
WORDS = ["pear", "Apple", "apple", "", "fig", "banana"]
FLOATS = [-2.5, 0.0, 0.25, 1.0, 1e9, -1e-9]

rows_st = st.tuples(st.integers(-3, 3), st.sampled_from(WORDS), st.sampled_from(FLOATS))


@st.composite
def histories(draw):
    """Epochs of (row, +1 | -1) updates; deletes remove rows present at that point."""
    present: list = []
    epochs = []
    for _ in range(draw(st.integers(1, 6))):
        epoch = []
        for _ in range(draw(st.integers(0, 12))):
            if present and draw(st.booleans()):
                i = draw(st.integers(0, len(present) - 1))
                if draw(st.booleans()):
                    epoch.append((present.pop(i), -1))
                else:  # a duplicate of a present row
                    present.append(present[i])
                    epoch.append((present[i], 1))
            else:
                row = draw(rows_st)
                present.append(row)
                epoch.append((row, 1))
        epochs.append(epoch)
    return epochs


orders_st = st.lists(st.tuples(st.integers(0, 2), st.booleans()), min_size=1, max_size=3, unique_by=lambda p: p[0])


@settings(max_examples=150, deadline=None)
@given(
    histories(),
    orders_st,
    st.one_of(st.none(), st.integers(0, 6)),
    st.integers(0, 3),
    st.sampled_from([(0, 4), (1, 1), (3, 1), (2, 2)]),
    st.booleans(),
)
def test_hierarchy_equals_a_sort_at_every_time(epochs, order, limit, offset, shape, step_each):
    levels, fan_in_bits = shape
    df = Dataflow()
    handle, rows = df.new_input("rows", RUNTIME_TYPES)
    out = lower_top(rows, order, PLAN_TYPES, limit, offset, levels, fan_in_bits).capture()
    # Interned ids in an order unlike code point order: "pear" gets id 0.
    for word in WORDS:
        df.codec.symbols.intern(word)
    for t, epoch in enumerate(epochs):
        for row, diff in epoch:
            (handle.insert if diff > 0 else handle.remove)([row], time=t)
        if step_each:
            handle.advance_to(t + 1)
            df.step()
    handle.advance_to(len(epochs))
    df.step()
    accumulated = Counter()
    for t, epoch in enumerate(epochs):
        for row, diff in epoch:
            accumulated[row] += diff
        want = Counter(dict(select_top(list(accumulated.items()), order, limit, offset)))
        got = +out.contents(t)
        assert got == want, (t, order, limit, offset)


def _order_by(columns, rng: random.Random) -> str:
    items = []
    for c in columns:
        direction = rng.choice(["", " asc", " desc"])
        nulls = rng.choice(["", " nulls first", " nulls last"])
        items.append(f"{c}{direction}{nulls}")
    return ", ".join(items)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6))
def test_order_limit_offset_equal_duckdb_under_changes(seed):
    """Rows in DuckDB's order; where ORDER BY leaves ties, the ordered columns in DuckDB's order."""
    rng = random.Random(seed)
    columns = rng.sample(["a", "b", "c", "d"], rng.randint(1, 4))
    ordered = rng.sample(columns, rng.randint(1, len(columns)))
    limit = rng.choice([None, 0, 1, 3, 10])
    offset = rng.choice([None, 0, 2, 5])
    if limit is None and offset is None:
        offset = 1
    sql = f"select {', '.join(columns)} from t order by {_order_by(ordered, rng)}"
    sql += "" if limit is None else f" limit {limit}"
    sql += "" if offset is None else f" offset {offset}"
    tables = Tables(seed=seed)
    session = compile_sql(sql, SCHEMA, dialect="duckdb").session()
    tables.load(session)
    session.commit()
    positions = [columns.index(c) for c in ordered]
    for _ in range(3):
        got, want = normalize(session.read("result")), normalize(tables.duck_rows(sql))
        if len(ordered) < len(columns):
            got = [tuple(r[i] for i in positions) for r in got]
            want = [tuple(r[i] for i in positions) for r in want]
        assert got == want, sql
        tables.change(session, 6)
        session.commit()


def test_order_by_columns_not_selected_equals_duckdb_and_reports_sql_rows():
    """ORDER BY keys the select list lacks (salary) order and cut the rows as in DuckDB,
    maintained by the top-k under changes; each commit reports exactly the change of the
    SQL rows read, though rows differing only in a hidden key are different plan rows."""
    import duckdb

    sql = "SELECT id, name FROM emp ORDER BY salary DESC, id LIMIT 5"
    schema = {"emp": {"id": "int", "name": "text", "salary": "int"}}
    program = compile_sql(sql, schema, dialect="duckdb")
    assert "TopK" in program.explain()
    session = program.session()
    duck = duckdb.connect()
    duck.execute("CREATE TABLE emp (id BIGINT, name VARCHAR, salary BIGINT)")
    rng = random.Random(16)
    rows: list = []
    for commit in range(8):
        for _ in range(6):
            if rows and rng.random() < 0.4:
                row = rows.pop(rng.randrange(len(rows)))
                session.remove("emp", [row])
                duck.execute("DELETE FROM emp WHERE id = ?", [row[0]])
            else:
                row = (rng.randint(0, 40), rng.choice(["ann", "bob", "cy"]), rng.choice([10, 20, 30, None]))
                if any(r[0] == row[0] for r in rows):  # unique ids: the order is definite (and DELETE removes one row)
                    continue
                rows.append(row)
                session.insert("emp", [row])
                duck.execute("INSERT INTO emp VALUES (?, ?, ?)", list(row))
        before = Counter(session.read("result"))
        reported = Counter(dict(session.commit().get("result", [])))
        after = Counter(session.read("result"))
        assert reported == Counter({r: after[r] - before[r] for r in before | after if after[r] != before[r]}), commit
        assert session.read("result") == [tuple(r) for r in duck.execute(sql).fetchall()], commit
    assert len(session.read("result")) == 5
    top = session.read("result")[0]  # a raise keeps it first: its SQL row does not change
    old = next(r for r in rows if r[:2] == top)
    session.remove("emp", [old])
    session.insert("emp", [(old[0], old[1], 1000)])
    assert session.commit() == {} and session.read("result")[0] == top
