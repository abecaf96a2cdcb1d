"""ASOF JOIN in SQL: each left row with the right row of its key and the latest time at or
before its own, as the right side was when the left row arrived (compiler.sql.asof).

Checked by hand (orders and prices), against DuckDB's ASOF JOIN when everything is
loaded in one commit, against a replay oracle of the as-of meaning under random
commits (each left change meets the right side as it is after its commit), and
against the Datalog `asof` form of the same join (tests/compiler/test_as_of.py).
"""

from __future__ import annotations

import csv
import random
from collections import Counter
from pathlib import Path

import duckdb
import pytest

import compiler
from compiler.sql import compile_sql

SHOP = {"orders": {"id": "int", "item": "text", "at": "int"}, "prices": {"item": "text", "since": "int", "cents": "int"}}
BILL = "select o.id, p.cents from orders o asof left join prices p on o.item = p.item and o.at >= p.since"


def _commit(session) -> dict:
    return dict(session.commit().get("result", []))


def test_orders_and_prices_by_hand():
    s = compile_sql(BILL, SHOP, dialect="duckdb").session()
    s.insert("prices", [("tea", 0, 10), ("tea", 5, 12), ("cake", 0, 30)])
    s.commit()
    s.insert("orders", [(100, "tea", 3), (101, "tea", 7), (102, "cake", 1), (103, "juice", 2), (104, "tea", None)])
    assert _commit(s) == {(100, 10): 1, (101, 12): 1, (102, 30): 1, (103, None): 1, (104, None): 1}
    # A price for time 2 arrives late: earlier orders keep their price; an order now sees it.
    s.insert("prices", [("tea", 2, 11)])
    s.insert("orders", [(105, "tea", 3)])
    assert _commit(s) == {(105, 11): 1}
    # Deleting the price an order matched rewrites nothing either.
    s.remove("prices", [("tea", 5, 12)])
    assert _commit(s) == {}
    # A retraction is looked up as of its own time: order 101 now meets price 11, so the
    # retraction does not cancel its row at 12 (the change log shows the event as it is).
    s.remove("orders", [(101, "tea", 7)])
    assert _commit(s) == {(101, 11): -1}
    assert Counter(s.read("result")) == Counter({(100, 10): 1, (101, 12): 1, (102, 30): 1, (103, None): 1, (104, None): 1, (105, 11): 1})
    # At an unchanged price a retraction cancels.
    s.remove("orders", [(105, "tea", 3)])
    assert _commit(s) == {(105, 11): -1}


def test_changes_of_both_sides_in_one_commit_meet():
    s = compile_sql(BILL.replace(" left", ""), SHOP, dialect="duckdb").session()
    s.insert("prices", [("tea", 0, 10)])
    s.insert("orders", [(1, "tea", 5)])
    assert _commit(s) == {(1, 10): 1}
    s.remove("prices", [("tea", 0, 10)])
    s.insert("prices", [("tea", 0, 12)])
    s.insert("orders", [(2, "tea", 5)])
    assert _commit(s) == {(2, 12): 1}


def test_explain_shows_the_as_of_join():
    text = compile_sql(BILL, SHOP, dialect="duckdb").explain()
    assert "AsOfJoin left on" in text and ">=" in text


# ---- against DuckDB, loaded at once -----------------------------------------------------------

EVENTS = {"o": {"id": "int", "k": "int", "t": "int"}, "p": {"k": "int", "t": "int", "v": "int not null"}}
DUCK_TYPES = {"int": "BIGINT", "int not null": "BIGINT NOT NULL"}
QUERIES = [
    "select o.id, p.t, p.v from o asof join p on o.k = p.k and o.t >= p.t",
    "select o.id, o.t, p.v from o asof left join p on o.k = p.k and o.t >= p.t",
    "select o.id, p.v from o asof join p on o.k = p.k and o.t > p.t",
    "select o.id, p.v from o asof left join p on p.k = o.k and o.t <= p.t",
    "select o.id, p.v from o asof join p on o.k = p.k and p.t > o.t",
    "select * from o asof left join p on o.k = p.k and o.t >= p.t",
    "select o.id, p.v from o asof join p on o.k = p.k and o.t * 1.5 >= p.t where p.v > 2",
    "select o.k, count(*), max(p.v) from o asof left join p on o.k = p.k and o.t >= p.t group by o.k",
]


def _random_rows(rng: random.Random, ties: bool):
    def maybe(v):
        return None if rng.random() < 0.1 else v

    o = [(i, maybe(rng.randint(0, 3)), maybe(rng.randint(0, 12))) for i in range(30)]
    o += o[:3]  # duplicates
    p, used = [], set()
    for _ in range(25):
        k, t = maybe(rng.randint(0, 3)), maybe(rng.randint(0, 12))
        if ties or (k, t) not in used:
            used.add((k, t))
            p.append((k, t, rng.randint(0, 9)))
    return o, p


def _duck(o, p):
    duck = duckdb.connect()
    for name, rows in (("o", o), ("p", p)):
        duck.execute(f"create table {name} ({', '.join(f'{c} {DUCK_TYPES[t]}' for c, t in EVENTS[name].items())})")
        duck.executemany(f"insert into {name} values ({', '.join('?' * len(EVENTS[name]))})", [list(r) for r in rows])
    return duck


@pytest.mark.parametrize("sql", QUERIES)
def test_loaded_at_once_it_is_duckdbs_asof_join(sql):
    for seed in range(3):
        o, p = _random_rows(random.Random(seed), ties=False)  # DuckDB breaks ties arbitrarily
        s = compile_sql(sql, EVENTS, dialect="duckdb").session()
        s.insert("o", o)
        s.insert("p", p)
        s.commit()
        want = _duck(o, p).execute(sql).fetchall()
        assert Counter(s.read("result")) == Counter(tuple(r) for r in want), (sql, seed)


# ---- the as-of meaning under random commits ----------------------------------------------------

REPLAYED = "select * from o asof left join p on o.k = p.k and o.t >= p.t"


def _as_of(row, prices: Counter):
    """The row's match among the prices present: latest p.t <= o.t; ties: the least row."""
    _, k, t = row
    if k is None or t is None:
        return None
    found = [q for q, c in prices.items() if c > 0 and q[0] == k and q[1] is not None and q[1] <= t]
    return min(found, key=lambda q: (-q[1], q)) if found else None


@pytest.mark.parametrize("seed", range(6))
def test_replay_oracle_under_random_commits(seed):
    rng = random.Random(seed)
    s = compile_sql(REPLAYED, EVENTS, dialect="duckdb").session()
    orders, prices, expected = Counter(), Counter(), Counter()
    for _ in range(10):
        before = Counter(orders)
        for _ in range(rng.randint(1, 5)):
            table, bag = rng.choice([("o", orders), ("p", prices)])
            present = [r for r, c in bag.items() if c > 0]
            if present and rng.random() < 0.4:
                row = rng.choice(present)
                s.remove(table, [row])
                bag[row] -= 1
            else:
                row = (rng.randint(0, 4), rng.choice([1, 2, None]), rng.randint(0, 6)) if table == "o" else (
                    rng.choice([1, 2, None]), rng.choice([0, 2, 4, None]), rng.randint(0, 3))
                s.insert(table, [row])
                bag[row] += 1
        s.commit()
        for row in set(orders) | set(before):
            d = orders[row] - before[row]
            if d:
                match = _as_of(row, prices)
                expected[row + (match if match is not None else (None, None, None))] += d
        assert Counter(s.read("result")) == +expected


# ---- the Datalog form of the same join ---------------------------------------------------------

DATALOG = """
.decl order(id: number, item: symbol)
.decl price(item: symbol, cents: number)
.input order
.input price
.decl billed(id: number, item: symbol, cents: number) asof
billed(o, i, c) :- order(o, i), price(i, c).
.output billed
"""
TWIN = "select o.id, o.item, p.cents from orders o asof join prices p on o.item = p.item and o.at >= p.since"


def test_equals_the_datalog_asof_relation_under_random_updates():
    """With one price per item (at time 0) and orders at time 0, the latest price at or
    before the order is the item's one price: the SQL and Datalog as-of joins agree."""
    rng = random.Random(3)
    d = compiler.compile_datalog(DATALOG).session()
    s = compile_sql(TWIN, SHOP, dialect="duckdb").session()
    price, orders = {}, set()
    for step in range(12):
        for item in ("tea", "cake"):
            if rng.random() < 0.5:
                if item in price:
                    d.remove("price", [(item, price[item])])
                    s.remove("prices", [(item, 0, price[item])])
                price[item] = rng.randint(1, 4)
                d.insert("price", [(item, price[item])])
                s.insert("prices", [(item, 0, price[item])])
        for _ in range(2):
            order = (rng.randint(0, 5), rng.choice(["tea", "cake"]))
            (d.remove if order in orders else d.insert)("order", [order])
            (s.remove if order in orders else s.insert)("orders", [order + (0,)])
            orders ^= {order}
        d.commit()
        s.commit()
        assert set(s.read("result")) == set(d.read("billed")), step


# ---- the example -------------------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _csv(name):
    with open(EXAMPLES / "asof" / f"{name}.csv", newline="") as f:
        return [tuple(int(v) if v.lstrip("-").isdigit() else v for v in row) for row in list(csv.reader(f))[1:]]


def test_asof_example():
    schema = {"orders": {"id": "int", "item": "text", "at": "int"}, "prices": {"item": "text", "since": "int", "cents": "int"}}
    s = compile_sql((EXAMPLES / "asof.sql").read_text(), schema, source_name="asof.sql").session()
    s.insert("orders", _csv("orders"))
    s.insert("prices", _csv("prices"))
    s.commit()
    assert s.read("billed") == [(1, "tea", 250), (2, "cake", 400), (3, "tea", 275), (4, "juice", None)]
    s.insert("prices", [("tea", 4, 260)])  # a late correction: billed orders keep their price
    s.insert("orders", [(5, "tea", 6)])
    assert s.commit() == {"billed": [((5, "tea", 260), 1)]}


def test_a_set_on_the_left_stays_a_set_under_a_distinct():
    # `select distinct *` makes a second insertion of the same order no event; the optimizer
    # must keep that Distinct even though the consumer (DISTINCT) only needs presence.
    sql = "select distinct x.id, p.v from (select distinct * from o) x asof join p on x.k = p.k and x.t >= p.t"
    s = compile_sql(sql, EVENTS, dialect="duckdb").session()
    s.insert("p", [(1, 0, 10)])
    s.insert("o", [(1, 1, 5)])
    s.commit()
    s.remove("p", [(1, 0, 10)])
    s.insert("p", [(1, 0, 12)])
    s.insert("o", [(1, 1, 5)])
    s.commit()
    assert s.read("result") == [(1, 10)]
