"""A DeltaJoin (compiler.plan.delta) as a runtime delta query.

The node's columns linked by equalities are one variable each; every input
becomes an atom over those variables, and runtime.delta_query builds the
terms. The result has one column per variable; the view's layout maps each of
the node's columns to its variable's column, so equal columns are not copied.
Inputs come in with exactly their plan columns (the lowering's `exact`), so an
input read by several joins is one collection, and each of its key orders one
shared arrangement.
"""

from __future__ import annotations

from runtime.delta_query import as_of_query, delta_query


def lower_delta_join(collections, node) -> tuple[object, tuple[int, ...]]:
    """(collection, layout) computing `node` from its inputs' collections."""
    variables = node.variables()
    offsets = node.offsets()
    atoms = [(c, tuple(variables[offsets[k] + i] for i in range(c.arity))) for k, c in enumerate(collections)]
    output = tuple(dict.fromkeys(variables))
    build = as_of_query if node.as_of else delta_query
    return build(atoms, output), tuple(output.index(v) for v in variables)


__all__ = ["lower_delta_join"]
