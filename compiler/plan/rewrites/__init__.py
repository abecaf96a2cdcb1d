"""The optimizer: a pipeline of small plan rewrites, each keeping the plan's meaning.

As in sqlglot's optimizer, each rewrite is a function `(plan, **options) ->
plan` that does one thing, and `optimize` runs them in order:

1. fold_constants -- evaluate constant expressions, drop true filters, empty relations;
2. push_filters   -- move each condition down to the earliest node that can test it,
                     turning equalities across a cross product into join keys;
3. isolate_existence_tests -- a part of a join that shares no variable with the rest and
                     that nothing reads is planned apart and reduced to one row of no
                     columns, which the rest is crossed with (a filter);
4. drop_distincts -- no Distinct where only presence matters or rows are already a set
                     (before ordering, so filtered inputs show their filters to it);
5. plan_delta_joins -- cyclic multiway joins, and others the cost model finds cheaper,
                     become DeltaJoins (delta queries: only the base relations are
                     arranged; compiler.plan.rewrites.delta and .cost);
6. order_joins    -- rebuild join clusters left-deep: connected relations first, keys
                     from shared variables, no cross product when avoidable;
7. prune_columns  -- carry only columns something reads; narrow what gets indexed;
8. fold_constants -- again, for what the moves exposed;
9. share          -- equal subplans become one node, so each is built (and indexed) once.

Options (keyword arguments of `optimize`, and of `compiler.compile_datalog`):
`join_order="greedy"` (default) or `"source"` (keep the written atom order);
`join_plan="auto"` (default), `"binary"` or `"delta"` (see plan_delta_joins).
"""

from __future__ import annotations

from compiler.plan.program import Plan
from compiler.plan.rewrites.delta import JOIN_PLANS, plan_delta_joins
from compiler.plan.rewrites.distinct import drop_distincts
from compiler.plan.rewrites.existence import isolate_existence_tests
from compiler.plan.rewrites.fold import fold_constants
from compiler.plan.rewrites.joins import JOIN_ORDERS, order_joins
from compiler.plan.rewrites.prune import prune_columns
from compiler.plan.rewrites.pushdown import push_filters
from compiler.plan.rewrites.share import share

PIPELINE = (fold_constants, push_filters, isolate_existence_tests, drop_distincts, plan_delta_joins, order_joins, prune_columns, fold_constants, share)
OPTIONS = {"join_order": JOIN_ORDERS, "join_plan": JOIN_PLANS}


def optimize(plan: Plan, **options) -> Plan:
    for name, value in options.items():
        if name not in OPTIONS:
            raise TypeError(f"unknown planner option {name!r} (known: {', '.join(OPTIONS)})")
        if value not in OPTIONS[name]:
            raise ValueError(f"planner option {name}={value!r}: expected one of {OPTIONS[name]}")
    for rewrite in PIPELINE:
        plan = rewrite(plan, **options)
    return plan


__all__ = ["optimize", "PIPELINE", "OPTIONS", "fold_constants", "push_filters", "order_joins", "plan_delta_joins", "prune_columns", "drop_distincts", "isolate_existence_tests", "share"]
