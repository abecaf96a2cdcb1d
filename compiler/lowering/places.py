"""Places in an order: the first rows of each group, as a vectorised reduce.

A `SortKeys` is an order of plan rows -- some columns first, ascending or
descending, then every column ascending, so distinct rows never tie -- computed
on the runtime's encoded columns (compiler.results.order_keys: numbers and
floats on their codes, unsigned with the sign bit flipped, strings by their
rank in code point order among the strings being sorted, records and ADT values of
the given kinds by their rank among the values being sorted; `ValueBefore` is `<` in
that order for two record columns). `TopPlaces` is the
Reducer (runtime.operators.reduce) keeping, per group, the rows at places
first .. end of that order; a row that occurs n times fills n places. SQL's
ORDER BY ... LIMIT (compiler.sql.topk) and Datalog's choice-domain
(compiler.lowering.choice) are both built on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compiler.plan import PlanError
from compiler.plan.ops import BOOL, RECORD, ColumnOp
from compiler.results import order_keys
from runtime.operators.reduce import Reducer


class SortKeys:
    """The order of the plan's rows as int64 sort keys over their encoded columns,
    most significant first (compiler.results.order_keys: the order columns, then every
    column ascending, so distinct rows never tie). `kinds`: the record type or ADT of each
    record column (compiler.datalog.types), which orders it by value; without, by id."""

    def __init__(self, order, plan_types, symbols, kinds=()):
        self.order, self.plan_types, self.symbols, self.kinds = tuple(order), tuple(plan_types), symbols, tuple(kinds)

    def __call__(self, data: np.ndarray) -> list[np.ndarray]:
        return order_keys(data, self.plan_types, self.symbols, self.order, self.kinds)


@dataclass(frozen=True)
class ValueBefore(ColumnOp):
    """`a < b` for two record columns of values of `kind` (a record type or ADT), in the order
    SortKeys gives them: by value, not by id (ids number records in order of arrival)."""

    kind: object

    def type_of(self, arg_types):
        if arg_types != (RECORD, RECORD):
            raise PlanError(f"{self} compares two record columns, not ({', '.join(arg_types)})")
        return BOOL

    def evaluate(self, arg_types, args, symbols):
        a, b = args
        (ranks,) = order_keys(np.concatenate([a, b])[None, :], (RECORD,), symbols, (), (self.kind,))
        return ranks[: len(a)] < ranks[len(a) :]

    def __str__(self) -> str:
        return f"before<{self.kind.name}>"


class TopPlaces(Reducer):
    """Per group, the rows at places first .. end in the order of `keys` (with their counts cut to fit)."""

    def __init__(self, keys: SortKeys, first: int, end: int):
        self.keys, self.first, self.end = keys, first, end
        self.out_arity = len(keys.plan_types)

    def __call__(self, group, val, count):
        present = count > 0
        group, val, count = group[present], val[:, present], count[present]
        if not len(group):
            return group, val, count
        by_place = np.lexsort(self.keys(val)[::-1] + [group])
        group, val, count = group[by_place], val[:, by_place], count[by_place]
        # Places are counted from each group's start: subtract the running total before it.
        upto = np.cumsum(count)
        starts = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
        before_group = np.repeat(upto[starts] - count[starts], np.diff(np.append(starts, len(group))))
        place = upto - count - before_group
        lo = np.maximum(place, self.first)
        hi = np.minimum(place + count, self.end)
        keep = hi > lo
        return group[keep], val[:, keep], (hi - lo)[keep]
