"""ORDER BY ... LIMIT as a maintained top-k, and the order rows are read in.

`TopK` is a plan node: the first `limit` rows (after skipping `offset`) of
its input in the order of `order`, a tuple of (plan column, descending)
pairs; rows equal on those columns are ordered by all columns ascending, so
the answer is one definite multiset. A row that occurs n times fills n
places. It lowers to one reduce over all rows (key of no columns) whose
Python function sorts the group: every change re-sorts the whole input, so
it suits small results and small k, not a million-row top-k.

An SQL ORDER BY item becomes up to two order columns: the NULL flag first
(NULLS LAST sorts flag 0 before 1) and then the value (a NULL's value is its
type's zero, so NULLs tie among themselves and fall back to the rest).
"""

from __future__ import annotations

from compiler.plan.nodes import Node, _derived, _span, node


@node
class TopK(Node):
    input: Node
    order: tuple
    limit: int | None
    offset: int
    span: object = _span()
    types: tuple = _derived()
    _child_fields = ("input",)

    def __post_init__(self):
        object.__setattr__(self, "order", tuple((int(c), bool(d)) for c, d in self.order))
        object.__setattr__(self, "types", self.input.types)

    def lower(self, inputs):
        (collection,) = inputs
        order, limit, offset = self.order, self.limit, self.offset

        def top(key, values):
            return select_top(values, order, limit, offset)

        return collection.reduce(top, key=0, types=collection.types)


def sort_rows(rows: list, order) -> list:
    """rows (tuples) sorted by the (column, descending) pairs, then by the whole row ascending."""
    rows = sorted(rows)
    for col, desc in reversed(order):
        rows.sort(key=lambda r: r[col], reverse=desc)
    return rows


def select_top(values, order, limit, offset):
    """[(row, count)] -> the rows (with counts) at places offset .. offset+limit of the order."""
    by_row = {}
    for row, count in values:
        if count > 0:
            by_row[row] = by_row.get(row, 0) + count
    end = None if limit is None else offset + limit
    out, place = [], 0
    for row in sort_rows(list(by_row), order):
        count = by_row[row]
        lo, hi = max(place, offset), place + count if end is None else min(place + count, end)
        if hi > lo:
            out.append((row, hi - lo))
        place += count
        if end is not None and place >= end:
            break
    return out
