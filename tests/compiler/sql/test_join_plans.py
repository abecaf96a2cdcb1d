"""SQL cyclic joins under `join_plan`: delta-query plans, binary plans and DuckDB agree.

compile_sql passes planner options to the shared plan rewrites, so
`join_plan="delta"` must give a DeltaJoin for a SQL triangle (with NULLs, which
never join, and duplicate edges, which multiply) and the same answers as the
binary plan and as DuckDB after every commit of random edge changes.
"""

from __future__ import annotations

import pytest

from compiler.sql import compile_sql
from tests.compiler.sql.oracle import SCHEMA, Tables, as_multiset

TRIANGLES = (
    "select a.src as x, b.src as y, c.src as z from edge a "
    "join edge b on a.dst = b.src join edge c on b.dst = c.src and c.dst = a.src"
)
FOUR_CYCLE_COUNT = (
    "select count(*) as n from edge a join edge b on a.dst = b.src "
    "join edge c on b.dst = c.src join edge d on c.dst = d.src and d.dst = a.src"
)


@pytest.mark.parametrize("query", [TRIANGLES, FOUR_CYCLE_COUNT])
@pytest.mark.parametrize("seed", [1, 2])
def test_delta_and_binary_plans_equal_duckdb(query, seed):
    programs = {plan: compile_sql(query, SCHEMA, dialect="duckdb", join_plan=plan) for plan in ("binary", "delta")}
    assert "DeltaJoin" in programs["delta"].explain()
    assert "DeltaJoin" not in programs["binary"].explain()
    tables = Tables(seed, sizes={"t": 0, "s": 0, "edge": 40})
    sessions = {plan: p.session() for plan, p in programs.items()}
    tables.load(_Both(sessions.values()))
    nonempty = 0
    for round_ in range(6):
        changes = {plan: s.commit() for plan, s in sessions.items()}
        assert changes["binary"] == changes["delta"], f"round {round_}"
        expected = as_multiset(tables.duck_rows(query))
        nonempty += expected not in ([], [(0,)])
        for plan, s in sessions.items():
            assert as_multiset(s.read("result")) == expected, f"{plan} plan, round {round_}"
        tables.change(_Both(sessions.values()), n=5)
    assert nonempty, "the generated graphs should hold some cycles"


class _Both:
    """Fans a session's insert/remove out to several sessions."""

    def __init__(self, sessions):
        self.sessions = list(sessions)

    def insert(self, name, rows):
        for s in self.sessions:
            s.insert(name, rows)

    def remove(self, name, rows):
        for s in self.sessions:
            s.remove(name, rows)
