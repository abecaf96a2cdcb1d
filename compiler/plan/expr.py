"""Column expressions: what Filter predicates and Project outputs are made of.

An expression is a tree of `Col` (the i-th column of the node's input),
`Const` and `Call` (an op of compiler.plan.ops applied to expressions). Every
expression has a type: a column type (number, unsigned, float, symbol) or
`bool` for predicates; a Call's type follows from its op and its arguments'
types and is checked when the Call is made. Expressions are immutable values:
two equal trees are interchangeable, which is what lets the optimizer compare
and share plans.

Columns are positional, so moving an expression to another node means
renumbering its columns (`remap`) or replacing them by the expressions that
computed them (`substitute`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from compiler.plan.errors import PlanError
from compiler.plan.ops import BOOL, COLUMN_TYPES, FLOAT, INTEGRAL, NUMBER, RECORD, SYMBOL, UNSIGNED, result_type

# A record constant is an id the dataflow's record table gives every dataflow alike: nil (0),
# or an enum ADT's branch number (compiler.values).
_PYTHON_TYPES = {"number": int, UNSIGNED: int, FLOAT: float, SYMBOL: str, RECORD: int, BOOL: bool}


@dataclass(frozen=True)
class Col:
    index: int
    type: str

    def __post_init__(self):
        if self.index < 0 or self.type not in COLUMN_TYPES:
            raise PlanError(f"bad column reference #{self.index}: {self.type}")


@dataclass(frozen=True)
class Const:
    value: int | float | str | bool
    type: str

    def __post_init__(self):
        expected = _PYTHON_TYPES.get(self.type)
        if expected is None or type(self.value) is not expected:
            raise PlanError(f"constant {self.value!r} is not a {self.type}")


@dataclass(frozen=True)
class Call:
    op: str
    args: tuple["Expr", ...]
    type: str = field(init=False)
    # Derived once: the Cols read, their indexes, and the hash (trees are hashed and compared often).
    cols: frozenset = field(init=False, compare=False, repr=False)
    reads: frozenset = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "type", result_type(self.op, tuple(a.type for a in self.args)))
        cols = frozenset().union(*(a.cols if isinstance(a, Call) else (a,) if isinstance(a, Col) else () for a in self.args))
        object.__setattr__(self, "cols", cols)
        object.__setattr__(self, "reads", frozenset(c.index for c in cols))
        object.__setattr__(self, "_hash", hash((self.op, self.args)))

    def __hash__(self):
        return self._hash


Expr = Union[Col, Const, Call]
TRUE = Const(True, BOOL)


def columns(expr: Expr) -> frozenset[int]:
    """The input columns an expression reads."""
    if isinstance(expr, Col):
        return frozenset((expr.index,))
    if isinstance(expr, Call):
        return expr.reads
    return frozenset()


def remap(expr: Expr, mapping) -> Expr:
    """The expression with column i renumbered to mapping[i]."""
    if isinstance(expr, Col):
        return Col(mapping[expr.index], expr.type)
    if isinstance(expr, Call):
        return Call(expr.op, tuple(remap(a, mapping) for a in expr.args))
    return expr


def substitute(expr: Expr, exprs) -> Expr:
    """The expression with column i replaced by exprs[i] (to move it below a Project)."""
    if isinstance(expr, Col):
        return exprs[expr.index]
    if isinstance(expr, Call):
        return Call(expr.op, tuple(substitute(a, exprs) for a in expr.args))
    return expr


def conjuncts(predicate: Expr) -> list[Expr]:
    """The predicate as a list of conjuncts (`and` flattened, `true` dropped)."""
    if isinstance(predicate, Call) and predicate.op == "and":
        return [c for a in predicate.args for c in conjuncts(a)]
    if predicate == TRUE:
        return []
    return [predicate]


def conjoin(predicates) -> Expr:
    """One predicate that holds when all of `predicates` do (`true` for none); duplicates dropped."""
    parts = list(dict.fromkeys(c for p in predicates for c in conjuncts(p)))
    if not parts:
        return TRUE
    return parts[0] if len(parts) == 1 else Call("and", tuple(parts))


def equated_columns(predicate: Expr) -> tuple[int, int] | None:
    """(i, j) if the predicate is `#i = #j`, else None."""
    if isinstance(predicate, Call) and predicate.op == "=":
        a, b = predicate.args
        if isinstance(a, Col) and isinstance(b, Col):
            return a.index, b.index
    return None


def equated_constant(predicate: Expr) -> tuple[int, Const] | None:
    """(i, c) if the predicate is `#i = c` or `c = #i`, else None."""
    if isinstance(predicate, Call) and predicate.op == "=":
        a, b = predicate.args
        if isinstance(a, Col) and isinstance(b, Const):
            return a.index, b
        if isinstance(b, Col) and isinstance(a, Const):
            return b.index, a
    return None


def domain(expr: Expr) -> list[Expr]:
    """Predicates under which every op of `expr` means something (ops are total, but
    integer `/` by 0, `to_number("x")`, ... only give placeholders; see compiler.plan.ops)."""
    if not isinstance(expr, Call):
        return []
    out = [c for a in expr.args for c in domain(a)]
    args = expr.args
    if expr.op in ("/", "%") and args[0].type in INTEGRAL:
        out.append(Call("!=", (args[1], Const(0, args[1].type))))
    elif expr.op == "^" and args[0].type == NUMBER:
        out.append(Call(">=", (args[1], Const(0, NUMBER))))
    elif expr.op == "to_number" and args[0].type == SYMBOL:
        out.append(Call("is_number", args))
    elif expr.op == "substr":
        s, start, length = args
        zero = Const(0, NUMBER)
        out += [Call(">=", (start, zero)), Call(">=", (length, zero)), Call("<=", (start, Call("strlen", (s,))))]
    return out


_INFIX = {"+", "-", "*", "/", "%", "^", "=", "!=", "<", "<=", ">", ">=", "and", "or", *"band bor bxor bshl bshr bshru land lor lxor".split()}


def show(expr: Expr) -> str:
    """A compact rendering: #i for columns, infix for binary operators."""
    if isinstance(expr, Col):
        return f"#{expr.index}"
    if isinstance(expr, Const):
        if expr.type == SYMBOL:
            return '"' + expr.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return f"{expr.value}u" if expr.type == UNSIGNED else repr(expr.value)
    if expr.op in _INFIX and len(expr.args) >= 2:
        return "(" + f" {expr.op} ".join(show(a) for a in expr.args) + ")"
    if expr.op == "neg":
        return f"-{show(expr.args[0])}"
    return f"{expr.op}({', '.join(show(a) for a in expr.args)})"


def unread(column_type: str) -> Const:
    """A constant of `column_type` for a column nothing reads (its type's zero), so a node keeps its shape."""
    return Const(_PYTHON_TYPES[column_type](), column_type)
