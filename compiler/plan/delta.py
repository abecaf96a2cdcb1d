"""DeltaJoin: a multiway join to be maintained as a delta query.

`DeltaJoin(inputs, equalities)` is the rows of the cross product of its inputs
(columns: the first input's, then the second's, ...) on which every equality
`(i, j)` of two columns holds -- the same relation as a tree of Joins with
those keys. The difference is how it runs (runtime.delta_query): no
intermediate result is arranged; each input's changes are extended by
lookups in the other inputs' arrangements, one arrangement per (input, key
columns), shared between the terms. compiler.plan.rewrites.delta chooses it
for cyclic joins (triangles, 4-cycles, cliques), where every binary plan
arranges an intermediate that can be far larger than the inputs.

Columns linked by equalities form the query's variables; every equality links
columns of two different inputs (conditions within one input are filters of
that input), and the inputs are connected (no cross products).

With `as_of=True` it is an as-of join instead (a relation declared `asof` in
Datalog): the first input is a stream of events, and each event at time t is
joined with the other inputs as they were at t (runtime.calculus); later
changes of the other inputs do not touch earlier results. Not the join of the
accumulated inputs, so no rewrite may treat it as a Join.
"""

from __future__ import annotations

from compiler.plan.errors import PlanError
from compiler.plan.nodes import Node, _derived, _span, node


@node
class DeltaJoin(Node):
    inputs: tuple[Node, ...]
    equalities: tuple[tuple[int, int], ...]
    as_of: bool = False
    span: object = _span()
    types: tuple[str, ...] = _derived()
    _child_fields = ("inputs",)

    def __post_init__(self):
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "equalities", tuple((int(a), int(b)) for a, b in self.equalities))
        if len(self.inputs) < 2 and not self.as_of:
            raise PlanError("DeltaJoin of fewer than two inputs")
        types = tuple(t for i in self.inputs for t in i.types)
        owner = self.owners_of(self.inputs)
        for a, b in self.equalities:
            if not (0 <= a < len(types) and 0 <= b < len(types)):
                raise PlanError(f"DeltaJoin: equality #{a}=#{b} is out of range")
            if types[a] != types[b]:
                raise PlanError(f"DeltaJoin: equality #{a}=#{b} joins {types[a]} with {types[b]}")
            if owner[a] == owner[b]:
                raise PlanError(f"DeltaJoin: equality #{a}=#{b} is within one input (a filter of it)")
        object.__setattr__(self, "types", types)

    @staticmethod
    def owners_of(inputs) -> list[int]:
        return [k for k, i in enumerate(inputs) for _ in range(i.arity)]

    def offsets(self) -> list[int]:
        out, at = [], 0
        for i in self.inputs:
            out.append(at)
            at += i.arity
        return out

    def variables(self) -> list[int]:
        """For each column, the number of its variable (classes of columns linked by equalities)."""
        parent = list(range(self.arity))

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for a, b in self.equalities:
            parent[find(a)] = find(b)
        roots = [find(c) for c in range(self.arity)]
        number: dict[int, int] = {}
        return [number.setdefault(r, len(number)) for r in roots]

    def describe(self) -> str:
        eqs = ", ".join(f"#{a}=#{b}" for a, b in self.equalities) or "(cross product)"
        if self.as_of:
            return f"AsOfJoin on {eqs} (input 1's updates look up the others as of their time)"
        return f"DeltaJoin on {eqs} (delta query: {len(self.inputs)} inputs, no intermediate arranged)"

    def prune(self, needed: frozenset, exactly) -> tuple[Node, tuple[int, ...]]:
        """For prune_columns: each input narrowed to the needed and joined columns; (node, kept columns)."""
        joined = {c for pair in self.equalities for c in pair}
        offsets = self.offsets()
        inputs, kept, position = [], [], {}
        for k, child in enumerate(self.inputs):
            cols = tuple(c for c in range(child.arity) if offsets[k] + c in needed or offsets[k] + c in joined)
            inputs.append(exactly(child, cols))
            for c in cols:
                position[offsets[k] + c] = len(kept)
                kept.append(offsets[k] + c)
        equalities = tuple((position[a], position[b]) for a, b in self.equalities)
        return DeltaJoin(tuple(inputs), equalities, self.as_of, span=self.span), tuple(kept)


__all__ = ["DeltaJoin"]
