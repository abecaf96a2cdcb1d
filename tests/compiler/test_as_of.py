"""As-of joins in Datalog: a relation declared `asof` joins each event with the other atoms as of its time.

The oracle replays the history of commits: every order update (insert or
remove) committed at time t meets the prices as they were after commit t; a
billed row is present while the sum of its matches' signs is positive.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler
from compiler.plan.delta import DeltaJoin
from compiler.plan.nodes import walk

PROGRAM = """
.decl order(id: number, item: symbol)
.decl price(item: symbol, cents: number)
.input order
.input price
.decl billed(id: number, item: symbol, cents: number) asof
billed(o, i, c) :- order(o, i), price(i, c), c > 0.
.output billed
"""


def test_plan_is_an_as_of_join():
    program = compiler.compile_datalog(PROGRAM)
    (node,) = [n for b in program.plan.bindings() for n in walk(b.body) if isinstance(n, DeltaJoin)]
    assert node.as_of and "AsOfJoin" in program.explain()


def test_orders_and_prices_by_hand():
    s = compiler.compile_datalog(PROGRAM).session()
    s.insert("price", [("tea", 10), ("cake", 30)])
    s.commit()
    s.insert("order", [(100, "tea")])
    assert s.commit() == {"billed": [((100, "tea", 10), 1)]}
    # the price changes and a second order comes at the same time: it sees the new price
    s.remove("price", [("tea", 10)])
    s.insert("price", [("tea", 12)])
    s.insert("order", [(101, "tea")])
    assert s.commit() == {"billed": [((101, "tea", 12), 1)]}  # order 100 keeps its price
    # retracting order 100 looks it up at today's price (12): it does not cancel the 10
    s.remove("order", [(100, "tea")])
    assert s.commit() == {}
    assert s.read("billed") == [(100, "tea", 10), (101, "tea", 12)]
    s.remove("order", [(101, "tea")])  # at an unchanged price the retraction cancels
    assert s.commit() == {"billed": [((101, "tea", 12), -1)]}


def test_relations_are_sets_for_the_lookup():
    # a price inserted twice is one row; removing it once removes it
    s = compiler.compile_datalog(PROGRAM).session()
    s.insert("price", [("tea", 10), ("tea", 10)])
    s.commit()
    s.insert("order", [(1, "tea")])
    s.commit()
    s.remove("price", [("tea", 10)])
    s.commit()
    s.remove("order", [(1, "tea")])
    assert s.commit() == {"billed": [((1, "tea", 10), -1)]}  # price 10 was still there: it cancels
    assert s.read("billed") == []


def test_asof_rule_needs_a_lookup_atom():
    with pytest.raises(compiler.plan.PlanError, match="asof"):
        compiler.compile_datalog(".decl a(x: number)\n.input a\n.decl b(x: number) asof\nb(x) :- a(x).\n.output b\n")


items = st.sampled_from(["tea", "cake"])
events = st.lists(
    st.tuples(
        st.lists(st.tuples(st.booleans(), st.integers(0, 3), items), max_size=3),  # orders: insert?, id, item
        st.lists(st.tuples(st.booleans(), items, st.integers(-1, 2)), max_size=3),  # prices: insert?, item, cents
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=40, deadline=None)
@given(events)
def test_as_of_against_history_oracle(steps):
    s = compiler.compile_datalog(PROGRAM).session()
    orders, prices, billed = Counter(), Counter(), Counter()
    for order_updates, price_updates in steps:
        for insert, item, cents in price_updates:
            if insert or prices[(item, cents)] > 0:
                (s.insert if insert else s.remove)("price", [(item, cents)])
                prices[(item, cents)] += 1 if insert else -1
        was = {k for k, c in orders.items() if c > 0}
        for insert, oid, item in order_updates:
            if insert or orders[(oid, item)] > 0:
                (s.insert if insert else s.remove)("order", [(oid, item)])
                orders[(oid, item)] += 1 if insert else -1
        s.commit()
        # relations are sets: an order event is a change of its presence at this commit,
        # and it meets the prices present after this commit
        now = {k for k, c in orders.items() if c > 0}
        for (oid, item), d in [(k, 1) for k in now - was] + [(k, -1) for k in was - now]:
            for (pitem, cents), c in prices.items():
                if pitem == item and c > 0 and cents > 0:
                    billed[(oid, item, cents)] += d
        assert s.read("billed") == sorted(r for r, c in billed.items() if c > 0)


def test_billing_example():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "examples"
    s = compiler.compile_file(root / "billing.dl").session()
    s.load_facts(root / "billing")
    s.commit()
    rows = lambda name: [tuple(line.split("\t")) for line in (root / "billing" / f"{name}.facts").read_text().splitlines() if line]
    price = {item: int(c) for item, c in rows("price")}
    assert s.read("billed") == sorted((int(o), item, price[item]) for o, item in rows("order"))
    s.remove("price", [("tea", price["tea"])])
    s.insert("price", [("tea", price["tea"] + 1)])
    assert s.commit() == {}  # a price change alone bills nothing and rewrites nothing
