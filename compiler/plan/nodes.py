"""Logical plan nodes: typed, immutable relational operators.

A node computes a relation: a multiset of rows whose columns are positional
and typed (`node.types`, column types of compiler.plan.ops). Leaves read
relations (`Scan` an input, `Ref` a binding, `Values` constant rows); inner
nodes are relational operators (`Filter`, `Project`, `Join`, `Antijoin`,
`Union`, `Distinct`, `Aggregate`). Every node checks its inputs when made
(`__post_init__`): a column out of range, mismatched key types or a predicate
that is not boolean is a PlanError, so a malformed plan fails where it is
built, not when it runs. Each node carries the source `span` (anything with
`.line`/`.column`) it came from, for messages; spans take no part in equality.

Nodes are values: equal trees are equal and hash alike (hashes are cached, so
hashing a deep tree is cheap after the first time). That is what lets the
optimizer find common subplans and share them (compiler.plan.rewrites.share).

Multiset semantics: Project keeps duplicates, Union adds multiplicities, Join
multiplies them, Distinct makes a set. A program's relations are sets
(compiler.plan.program); the multiplicities in between are what `count` and
`sum` aggregate over.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from compiler.plan.errors import PlanError
from compiler.plan.expr import Call, Col, Const, Expr
from compiler.plan.ops import BOOL, COLUMN_TYPES, FLOAT, NUMBER, NUMERIC

AGGREGATES = ("count", "sum", "min", "max", "mean")


def node(cls):
    """Make `cls` a frozen dataclass whose hash is computed once and whose equality checks it first."""
    cls = dataclass(frozen=True)(cls)
    cls._key_fields = tuple(f.name for f in fields(cls) if f.compare)
    cls._init_fields = tuple(f.name for f in fields(cls) if f.init)
    cls.__hash__ = Node.__hash__
    cls.__eq__ = Node.__eq__
    return cls


class Node:
    span: object
    types: tuple[str, ...]
    _key_fields: tuple[str, ...] = ()
    _init_fields: tuple[str, ...] = ()
    _child_fields: tuple[str, ...] = ()  # fields holding a Node; "inputs" holds a tuple of them

    def _key(self) -> tuple:
        return tuple(getattr(self, name) for name in self._key_fields)

    def __hash__(self) -> int:
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((type(self).__name__,) + self._key())
            object.__setattr__(self, "_hash", h)
        return h

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if type(self) is not type(other) or hash(self) != hash(other):
            return False
        return self._key() == other._key()

    @property
    def arity(self) -> int:
        return len(self.types)

    def children(self) -> tuple["Node", ...]:
        out = self.__dict__.get("_children")
        if out is None:
            out = []
            for name in self._child_fields:
                value = getattr(self, name)
                out.extend(value if isinstance(value, tuple) else (value,))
            out = tuple(out)
            object.__setattr__(self, "_children", out)
        return out

    def with_children(self, children) -> "Node":
        """The same node over other children (checked again); self if they are the same objects."""
        children = tuple(children)
        old = self.children()
        if len(children) == len(old) and all(a is b for a, b in zip(children, old)):
            return self
        values = {name: getattr(self, name) for name in self._init_fields}
        if self._child_fields == ("inputs",):
            values["inputs"] = children
        else:
            values.update(zip(self._child_fields, children))
        return type(self)(**values)

    def with_equal_children(self, children) -> "Node":
        """The same node over children *equal* to its own (other objects): no checks needed."""
        children = tuple(children)
        old = self.children()
        if all(a is b for a, b in zip(children, old)):
            return self
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        if self._child_fields == ("inputs",):
            copy.__dict__["inputs"] = children
        else:
            copy.__dict__.update(zip(self._child_fields, children))
        copy.__dict__["_children"] = children
        return copy


def _span():
    return field(default=None, compare=False, repr=False, kw_only=True)


def _derived():
    return field(init=False, compare=False, repr=False)


def _check_types(types, what: str) -> tuple[str, ...]:
    types = tuple(types)
    for t in types:
        if t not in COLUMN_TYPES:
            raise PlanError(f"{what}: {t!r} is not a column type")
    return types


def _check_expr(expr: Expr, types: tuple[str, ...], what: str) -> None:
    cols = expr.cols if isinstance(expr, Call) else (expr,) if isinstance(expr, Col) else ()
    for c in cols:
        if c.index >= len(types):
            raise PlanError(f"{what}: column #{c.index} is out of range for {len(types)} columns")
        if types[c.index] != c.type:
            raise PlanError(f"{what}: column #{c.index} is {types[c.index]}, not {c.type}")


def _check_keys(left, right, keys, what: str) -> tuple[tuple[int, int], ...]:
    keys = tuple((int(a), int(b)) for a, b in keys)
    for a, b in keys:
        if not (0 <= a < left.arity and 0 <= b < right.arity):
            raise PlanError(f"{what}: key ({a}, {b}) is out of range")
        if left.types[a] != right.types[b]:
            raise PlanError(f"{what}: key ({a}, {b}) joins {left.types[a]} with {right.types[b]}")
    return keys


# ---- leaves ---------------------------------------------------------------------------


@node
class Scan(Node):
    """All rows of an input relation (data from outside: a Datalog .input, an SQL table)."""

    name: str
    types: tuple[str, ...]
    span: object = _span()

    def __post_init__(self):
        object.__setattr__(self, "types", _check_types(self.types, f"Scan {self.name}"))


@node
class Ref(Node):
    """The rows of a binding: one defined by an earlier step, or (inside a Fixpoint) by the same one."""

    name: str
    types: tuple[str, ...]
    span: object = _span()

    def __post_init__(self):
        object.__setattr__(self, "types", _check_types(self.types, f"Ref {self.name}"))


@node
class Values(Node):
    """Constant rows (Datalog facts, SQL VALUES), each value of its column's Python type."""

    rows: tuple[tuple, ...]
    types: tuple[str, ...]
    span: object = _span()

    def __post_init__(self):
        types = _check_types(self.types, "Values")
        object.__setattr__(self, "types", types)
        object.__setattr__(self, "rows", tuple(tuple(r) for r in self.rows))
        for row in self.rows:
            if len(row) != len(types):
                raise PlanError(f"Values: row {row!r} does not have {len(types)} columns")
            for value, t in zip(row, types):
                Const(value, t)  # checks the Python type


# ---- operators --------------------------------------------------------------------------


@node
class Filter(Node):
    """The rows of `input` for which `predicate` (a bool expression over its columns) holds."""

    input: Node
    predicate: Expr
    span: object = _span()
    types: tuple[str, ...] = _derived()
    _child_fields = ("input",)

    def __post_init__(self):
        if self.predicate.type != BOOL:
            raise PlanError(f"Filter: predicate is {self.predicate.type}, not bool")
        _check_expr(self.predicate, self.input.types, "Filter")
        object.__setattr__(self, "types", self.input.types)


@node
class Project(Node):
    """One output row per input row: the values of `exprs` (a pure projection when all are Cols)."""

    input: Node
    exprs: tuple[Expr, ...]
    span: object = _span()
    types: tuple[str, ...] = _derived()
    _child_fields = ("input",)

    def __post_init__(self):
        object.__setattr__(self, "exprs", tuple(self.exprs))
        for e in self.exprs:
            _check_expr(e, self.input.types, "Project")
        object.__setattr__(self, "types", _check_types((e.type for e in self.exprs), "Project"))

    def is_identity(self) -> bool:
        return len(self.exprs) == self.input.arity and all(isinstance(e, Col) and e.index == i for i, e in enumerate(self.exprs))


@node
class Join(Node):
    """Pairs of rows that agree on `keys` ((left column, right column) pairs): left's columns,
    then right's. No keys is a cross product."""

    left: Node
    right: Node
    keys: tuple[tuple[int, int], ...]
    span: object = _span()
    types: tuple[str, ...] = _derived()
    _child_fields = ("left", "right")

    def __post_init__(self):
        object.__setattr__(self, "keys", _check_keys(self.left, self.right, self.keys, "Join"))
        object.__setattr__(self, "types", self.left.types + self.right.types)


@node
class Antijoin(Node):
    """The rows of `left` that agree on `keys` with no row of `right`."""

    left: Node
    right: Node
    keys: tuple[tuple[int, int], ...]
    span: object = _span()
    types: tuple[str, ...] = _derived()
    _child_fields = ("left", "right")

    def __post_init__(self):
        object.__setattr__(self, "keys", _check_keys(self.left, self.right, self.keys, "Antijoin"))
        object.__setattr__(self, "types", self.left.types)


@node
class Union(Node):
    """All rows of all inputs (multiplicities add)."""

    inputs: tuple[Node, ...]
    span: object = _span()
    types: tuple[str, ...] = _derived()
    _child_fields = ("inputs",)

    def __post_init__(self):
        object.__setattr__(self, "inputs", tuple(self.inputs))
        if not self.inputs:
            raise PlanError("Union of nothing (use an empty Values)")
        for other in self.inputs[1:]:
            if other.types != self.inputs[0].types:
                raise PlanError(f"Union of {self.inputs[0].types} with {other.types}")
        object.__setattr__(self, "types", self.inputs[0].types)


@node
class Distinct(Node):
    """Each row of `input` once (rows with a positive multiplicity)."""

    input: Node
    span: object = _span()
    types: tuple[str, ...] = _derived()
    _child_fields = ("input",)

    def __post_init__(self):
        object.__setattr__(self, "types", self.input.types)


@node
class Aggregate(Node):
    """Per distinct value of the `group` columns, `func` over the rows with that value:
    output is the group columns, then the aggregate. count counts rows (with their
    multiplicities); sum, min, max and mean take column `arg`. A group with no rows
    has no output row."""

    input: Node
    group: tuple[int, ...]
    func: str
    arg: int | None
    span: object = _span()
    types: tuple[str, ...] = _derived()
    _child_fields = ("input",)

    def __post_init__(self):
        object.__setattr__(self, "group", tuple(self.group))
        if self.func not in AGGREGATES:
            raise PlanError(f"Aggregate: unknown function {self.func!r}")
        for g in self.group:
            if not 0 <= g < self.input.arity:
                raise PlanError(f"Aggregate: group column #{g} is out of range")
        if (self.arg is None) != (self.func == "count"):
            raise PlanError("Aggregate: count takes no argument, the others take one")
        if self.arg is not None and not (0 <= self.arg < self.input.arity and self.input.types[self.arg] in NUMERIC):
            raise PlanError(f"Aggregate: argument #{self.arg} is not a numeric column")
        value = NUMBER if self.func == "count" else FLOAT if self.func == "mean" else self.input.types[self.arg]
        object.__setattr__(self, "types", tuple(self.input.types[g] for g in self.group) + (value,))


def is_set(node: Node) -> bool:
    """Whether the node's rows are known to have multiplicity one."""
    return isinstance(node, (Distinct, Aggregate))


def walk(root: Node):
    """Every distinct node under (and including) root, each once, children first."""
    seen: set[int] = set()
    order: list[Node] = []
    stack = [(root, False)]
    while stack:
        n, expanded = stack.pop()
        if id(n) in seen:
            continue
        if expanded:
            seen.add(id(n))
            order.append(n)
        else:
            stack.append((n, True))
            stack.extend((c, False) for c in reversed(n.children()))
    return order
