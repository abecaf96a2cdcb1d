"""MIN and MAX of texts: per group, the least (or greatest) string in code point order.

A text is stored as a symbol id, and ids number strings in order of arrival
(runtime.symbols), so the plan's Aggregate min/max -- which compares the
stored int64 -- would pick the first-seen string, not the least one.
`TextExtreme` is the SQL front end's own plan node for it: like
`Aggregate(input, group, "min"|"max", arg)` over a symbol column, its output
is the group columns followed by the chosen text, one row per group with
rows. It lowers to one reduce keyed by the group columns whose reducer
decodes the distinct ids of the groups it recomputes, ranks the strings
(compiler.plan.ops.string_ranks) and picks per group with numpy: the reduce
keeps it incremental and exact under deletes (a deleted minimum gives way to
the next one), and the Python work is one decode per distinct string of the
changed groups.
"""

from __future__ import annotations

import numpy as np

from compiler.plan.errors import PlanError
from compiler.plan.nodes import Node, _derived, _span, node
from compiler.plan.ops import SYMBOL, string_ranks
from runtime.operators.reduce import Reducer


@node
class TextExtreme(Node):
    input: Node
    group: tuple[int, ...]
    largest: bool  # MAX if true, else MIN
    arg: int
    span: object = _span()
    types: tuple[str, ...] = _derived()
    _child_fields = ("input",)

    def __post_init__(self):
        object.__setattr__(self, "group", tuple(int(g) for g in self.group))
        for c in self.group + (self.arg,):
            if not 0 <= c < self.input.arity:
                raise PlanError(f"TextExtreme: column #{c} is out of range")
        if self.input.types[self.arg] != SYMBOL:
            raise PlanError(f"TextExtreme: argument #{self.arg} is not a symbol column")
        object.__setattr__(self, "types", tuple(self.input.types[g] for g in self.group) + (SYMBOL,))

    def describe(self) -> str:
        keys = ", ".join(f"#{g}" for g in self.group)
        return f"TextExtreme {'max' if self.largest else 'min'}(#{self.arg}) by [{keys}]"

    def lower(self, inputs):
        (collection,) = inputs
        k = len(self.group)
        values = collection.select(self.group + (self.arg,))
        reducer = _PickText(values.dataflow.symbols, self.largest)
        return values.reduce_columns(reducer, k, values.types[k:], "max_text" if self.largest else "min_text", is_set=True)


class _PickText(Reducer):
    """Per group, the value (a symbol id) whose string is least, or greatest."""

    out_arity = 1

    def __init__(self, symbols, largest: bool):
        self.symbols, self.largest = symbols, largest

    def __call__(self, group, val, count):
        keep = count > 0
        group, ids = group[keep], val[0, keep]
        if len(group) == 0:
            return group, val[:, :0], count[:0]
        ranks = string_ranks(ids, self.symbols)
        order = np.lexsort((-ranks if self.largest else ranks, group))
        ordered = group[order]
        firsts = order[np.concatenate(([0], np.flatnonzero(ordered[1:] != ordered[:-1]) + 1))]
        return group[firsts], ids[firsts][None, :], np.ones(len(firsts), np.int64)


__all__ = ["TextExtreme"]
