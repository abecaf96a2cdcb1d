"""SQL values over plan expressions: a value, whether it is NULL, and its SQL type.

The logical plan has no NULL, so the SQL front end carries it itself. An SQL
expression translates to a `Value`: `value`, a plan expression of the value
when it is not NULL; `null`, a plan bool expression that holds when it is
NULL (the constant false for expressions that can never be NULL); and
`type`, one of the SQL types below. Stored in a relation, a value is one
plan column, plus a NULL-flag column (a number, 1 for NULL) when it may be
NULL; a NULL's value column holds the type's zero, so rows that are equal in
SQL (NULLs included, as DISTINCT, GROUP BY and UNION see them) are equal
plan rows.

Booleans follow SQL's three-valued logic: a bool Value's `value` is the
condition "is TRUE" (never true when NULL), and FALSE is "neither TRUE nor
NULL". AND, OR and NOT are built from those two facts, so WHERE keeps exactly
the rows whose condition is TRUE.

SQL types: int (plan number), float (plan float), text (plan symbol) and
bool (plan number 0/1 in a relation, plan bool in an expression).
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.plan.expr import TRUE, Call, Col, Const, Expr

INT, FLOAT, TEXT, BOOL = "int", "float", "text", "bool"
SQL_TYPES = (INT, FLOAT, TEXT, BOOL)
PLAN_TYPE = {INT: "number", FLOAT: "float", TEXT: "symbol", BOOL: "number"}
FALSE = Const(False, "bool")
ONE = Const(1, "number")
ZERO = {INT: Const(0, "number"), FLOAT: Const(0.0, "float"), TEXT: Const("", "symbol"), BOOL: FALSE}
NAN = Const(float("nan"), "float")  # the one NaN relations store (one object: plans compare equal)

# Type names accepted in a schema and in CAST, by their first word.
TYPE_NAMES = {
    **dict.fromkeys(("int", "integer", "bigint", "smallint", "tinyint", "int2", "int4", "int8", "long", "hugeint"), INT),
    **dict.fromkeys(("float", "double", "real", "float4", "float8", "decimal", "numeric"), FLOAT),
    **dict.fromkeys(("text", "varchar", "string", "char", "character", "bpchar"), TEXT),
    **dict.fromkeys(("bool", "boolean"), BOOL),
}


def sql_type(name: str) -> tuple[str | None, bool]:
    """(SQL type, nullable) of a schema type such as 'int', 'TEXT NOT NULL', 'double precision'."""
    words = name.lower().replace("(", " ").split()
    nullable = not (len(words) >= 2 and words[-2:] == ["not", "null"])
    return (TYPE_NAMES.get(words[0]) if words else None), nullable


# ---- boolean algebra with constants folded ------------------------------------------------


def and_(*args: Expr) -> Expr:
    parts = []
    for a in args:
        if a == FALSE:
            return FALSE
        if a != TRUE and a not in parts:
            parts.append(a)
    return TRUE if not parts else parts[0] if len(parts) == 1 else Call("and", tuple(parts))


def or_(*args: Expr) -> Expr:
    parts = []
    for a in args:
        if a == TRUE:
            return TRUE
        if a != FALSE and a not in parts:
            parts.append(a)
    return FALSE if not parts else parts[0] if len(parts) == 1 else Call("or", tuple(parts))


def not_(a: Expr) -> Expr:
    if a == TRUE:
        return FALSE
    if a == FALSE:
        return TRUE
    if isinstance(a, Call) and a.op == "not":
        return a.args[0]
    return Call("not", (a,))


def if_(cond: Expr, then: Expr, other: Expr) -> Expr:
    if cond == TRUE or then == other:
        return then
    if cond == FALSE:
        return other
    return Call("if", (cond, then, other))


@dataclass(frozen=True)
class Value:
    value: Expr  # for a bool: TRUE (false when NULL)
    null: Expr
    type: str
    # Set when the value is read straight from a relation: the stored columns, already canonical.
    stored_value: Expr | None = None
    stored_null: Expr | None = None

    @property
    def true(self) -> Expr:
        """(bool) TRUE: the value holds and is not NULL."""
        return self.value if self.type == BOOL else and_(self.value, not_(self.null))

    @property
    def false(self) -> Expr:
        """(bool) FALSE: not TRUE and not NULL."""
        return and_(not_(self.value), not_(self.null))

    def canonical(self) -> Expr:
        """The value, with the type's zero where it is NULL (what a relation stores), and a
        float's -0.0 as 0.0 (x + 0.0) and every NaN as one: SQL compares floats by value,
        relations compare rows by their codes."""
        if self.stored_value is not None:
            return self.stored_value
        value = self.value
        if self.type == BOOL:
            value = if_(self.true, ONE, ZERO[INT])
        elif self.type == FLOAT and isinstance(value, Const):
            value = NAN if value.value != value.value else Const(value.value + 0.0, "float")
        elif self.type == FLOAT:
            value = if_(Call("!=", (value, value)), NAN, Call("+", (value, ZERO[FLOAT])))
        return if_(self.null, ZERO[INT] if self.type == BOOL else ZERO[self.type], value)


def boolean(true: Expr, false: Expr) -> Value:
    """The bool Value that is TRUE where `true` holds, FALSE where `false` holds, else NULL."""
    return Value(true, and_(not_(true), not_(false)), BOOL)


def constant(value) -> Value:
    """A literal as a Value (None is an untyped NULL: int until something says otherwise)."""
    if value is None:
        return Value(ZERO[INT], TRUE, INT)
    if isinstance(value, bool):
        return Value(Const(value, "bool"), FALSE, BOOL)
    if isinstance(value, int):
        return Value(Const(value, "number"), FALSE, INT)
    if isinstance(value, float):
        return Value(Const(value, "float"), FALSE, FLOAT)
    return Value(Const(str(value), "symbol"), FALSE, TEXT)


def stored(value_col: int, null_col: int | None, t: str) -> Value:
    """The Value held in plan column `value_col` (and NULL flag `null_col`, if any)."""
    column = Col(value_col, PLAN_TYPE[t])
    v = Call("=", (column, ONE)) if t == BOOL else column
    flag = None if null_col is None else Col(null_col, "number")
    null = FALSE if flag is None else Call("=", (flag, ONE))
    return Value(v, null, t, column, flag)


def null_flag(value: Value) -> Expr:
    """The number column (1 for NULL) that stores value.null."""
    if value.stored_null is not None:
        return value.stored_null
    return if_(value.null, ONE, ZERO[INT])


def cast_value(v: Value, t: str) -> Value | None:
    """v converted to SQL type t (NULL where the conversion fails: TRY_CAST's meaning), or
    None if SQL has no such conversion here."""
    if v.type == t:
        return v
    if v.null == TRUE:  # an untyped NULL takes any type
        return Value(ZERO[t], TRUE, t)
    if t == FLOAT and v.type == INT:
        return Value(Call("to_float", (v.value,)), v.null, FLOAT)
    if t == INT and v.type == FLOAT:  # NULL outside int64's range (and for NaN)
        return Value(Call("to_int", (v.value,)), or_(v.null, not_(fits_int64(v.value))), INT)
    if t == INT and v.type == BOOL:
        return Value(if_(v.value, ONE, ZERO[INT]), v.null, INT)
    if t == TEXT and v.type in (INT, FLOAT):
        return Value(Call("to_string", (v.value,)), v.null, TEXT)
    if t == BOOL and v.type in (INT, FLOAT):  # nonzero is true
        nonzero = and_(not_(v.null), Call("!=", (v.value, ZERO[v.type])))
        return Value(nonzero, v.null, BOOL)
    if t == TEXT and v.type == BOOL:
        return Value(if_(v.value, Const("true", "symbol"), Const("false", "symbol")), v.null, TEXT)
    if t == INT and v.type == TEXT:  # a decimal rounds halves away from zero, as DuckDB's; NULL where it is no number
        integer = Call("is_number", (v.value,))
        number = Call("parse_float", (v.value,))
        rounded = Call("round", (number, Const(0, "number")))
        fits = and_(Call("is_float", (v.value,)), fits_int64(rounded))
        value = if_(integer, Call("to_number", (v.value,)), Call("to_int", (rounded,)))
        return Value(value, or_(v.null, and_(not_(integer), not_(fits))), INT)
    if t == FLOAT and v.type == TEXT:  # NULL where the text is not a number
        return Value(Call("parse_float", (v.value,)), or_(v.null, not_(Call("is_float", (v.value,)))), FLOAT)
    return None


def fits_int64(x: Expr) -> Expr:
    """Whether the float x is in int64's range (NaN is not)."""
    return and_(Call(">=", (x, Const(-(2.0**63), "float"))), Call("<", (x, Const(2.0**63, "float"))))


def common_type(a: str, b: str) -> str | None:
    """The type both a and b convert to implicitly (SQL's numeric promotion), or None."""
    if a == b:
        return a
    if {a, b} == {INT, FLOAT}:
        return FLOAT
    return None
