"""Scalar SQL expressions as Values over a relation's columns.

`Env` is where an expression is evaluated: the rows of a Rel, and after
GROUP BY the grouped expressions and aggregates that are available as
columns (`grouped`: sqlglot expression -> Value). `translate(env, e)` turns
a qualified sqlglot expression into a Value (compiler.sql.values), following
SQL's rules: an operator on a NULL is NULL, comparisons and logic are
three-valued, integers are promoted to floats beside floats, texts order
by code point (UTF-8 bytes, DuckDB's default collation; compiler.plan.ops), `/` divides as
floats (`//` as integers, truncating). An integer division or remainder by
zero, and integer arithmetic whose result does not fit in 64 bits, is an
error at commit time (a check: compiler.sql.translator), as in DuckDB, on the
rows where it is evaluated: a CASE branch on the rows that take it, the right
side of AND / OR where the left does not decide. Anything outside the
supported language raises UnsupportedSQLError naming the construct; mismatched types raise
TypeMismatchError. Subqueries in expressions are handed to
compiler.sql.subquery.
"""

from __future__ import annotations


from contextlib import contextmanager

from sqlglot import exp

from compiler.errors import TypeMismatchError
from compiler.plan import Join
from compiler.plan.expr import TRUE, Call, Const, columns, remap
from compiler.plan.regex import ANY_CHARACTER, escape
from compiler.sql.errors import UnknownColumnError, UnsupportedSQLError
from compiler.sql.relation import Rel
from compiler.sql.values import (
    BOOL,
    FALSE,
    FLOAT,
    INT,
    PLAN_TYPE,
    TEXT,
    TYPE_NAMES,
    ZERO,
    Value,
    and_,
    boolean,
    cast_value,
    common_type,
    constant,
    if_,
    not_,
    or_,
)

AGGREGATE_TYPES = (exp.Count, exp.Sum, exp.Min, exp.Max, exp.Avg, exp.LogicalAnd, exp.LogicalOr)


class Env:
    """Where expressions are evaluated: rel's rows (grouped: the GROUP BY values and aggregates)."""

    def __init__(self, t, rel: Rel, grouped: dict | None = None):
        self.t, self.rel, self.grouped = t, rel, grouped
        self.evaluated = TRUE  # on which rows the expression being translated is evaluated (see `evaluated_where`)


def translate(env: Env, e) -> Value:
    if env.grouped is not None:
        found = env.grouped.get(e)
        if found is not None:
            return found
    handler = _HANDLERS.get(type(e))
    if handler is None:
        raise env.t.error(UnsupportedSQLError, f"{_describe(e)} is not supported", e)
    return handler(env, e)


def condition(env: Env, e) -> Value:
    """A predicate: a bool Value (a WHERE, ON, HAVING or CASE WHEN condition)."""
    v = translate(env, e)
    if v.type != BOOL:
        if v.null == TRUE:  # an untyped NULL is a NULL bool
            return Value(FALSE, TRUE, BOOL)
        raise env.t.error(TypeMismatchError, f"a condition must be a boolean, but {show(e)} is {_type_word(v.type)}", e)
    return v


def _describe(e) -> str:
    name = type(e).__name__
    if isinstance(e, exp.Anonymous):
        return f"function {e.name}()"
    if isinstance(e, exp.Func):
        return f"function {e.sql_name()}()" if hasattr(e, "sql_name") else f"function {name}"
    return f"SQL construct {name}"


def show(e) -> str:
    """The expression as SQL text for a message (cut at 40 characters)."""
    try:
        text = e.sql(dialect="duckdb")  # the default renders `a // b` as a CAST of `a / b`
    except Exception:  # noqa: BLE001 - only for messages
        text = type(e).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _type_word(t: str) -> str:
    return {INT: "an integer", FLOAT: "a float", TEXT: "a text", BOOL: "a boolean"}[t]


# ---- leaves ---------------------------------------------------------------------------------


def _column(env: Env, e: exp.Column) -> Value:
    table = e.table or None
    # After GROUP BY only a correlated subquery's outer columns are still columns (one value per group).
    found = env.rel.find(table, e.name) if env.grouped is None else []
    level = table
    for _ in range(8):  # a correlated subquery's outer columns: one level out per enclosing query
        if found or table is None:
            break
        level = ("outer", level)
        found = env.rel.find(level, e.name)
    if not found and env.grouped is not None:
        raise env.t.error(UnknownColumnError, f"column {show(e)} must appear in GROUP BY or be used in an aggregate", e)
    if not found:
        raise env.t.error(UnknownColumnError, f"unknown column {show(e)}", e)
    if len(found) > 1:
        raise env.t.error(UnknownColumnError, f"column {show(e)} is ambiguous", e)
    return env.rel.value(found[0])


def _literal(env: Env, e: exp.Literal) -> Value:
    if e.is_string:
        return constant(e.this)
    text = e.this
    try:
        return constant(int(text))
    except ValueError:
        return constant(float(text))


def _number(v: Value, env: Env, e) -> None:
    if v.type not in (INT, FLOAT) and v.null != TRUE:
        raise env.t.error(TypeMismatchError, f"{show(e)} is {_type_word(v.type)}, not a number", e)


def _unify(env: Env, values: list[Value], nodes) -> list[Value]:
    """The values converted to one common type (an untyped NULL takes the others' type)."""
    typed = [v for v in values if v.null != TRUE]
    t = typed[0].type if typed else INT
    for v, n in zip(values, nodes):
        if v.null == TRUE:
            continue
        common = common_type(t, v.type)
        if common is None:
            raise env.t.error(TypeMismatchError, f"{show(n)} is {_type_word(v.type)}, which does not go with {_type_word(t)}", n)
        t = common
    return [cast_value(v, t) for v in values]


# ---- arithmetic -------------------------------------------------------------------------------

_ARITH = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*"}
INT64_MIN = Const(-(2**63), "number")
# An int64 result computed again in floats is off by float rounding alone (< 2**12) when it
# fits, and by a multiple of 2**64 (give or take that rounding) when it wrapped around.
_WRAPPED_ABOVE, _WRAPPED_BELOW = Const(2.0**32, "float"), Const(-(2.0**32), "float")


def _arith(env: Env, e) -> Value:
    a, b = translate(env, e.this), translate(env, e.expression)
    _number(a, env, e.this)
    _number(b, env, e.expression)
    a, b = _unify(env, [a, b], [e.this, e.expression])
    op = _ARITH[type(e)]
    result = Value(Call(op, (a.value, b.value)), or_(a.null, b.null), a.type)
    if a.type == INT:
        in_floats = Call(op, (Call("to_float", (a.value,)), Call("to_float", (b.value,))))
        overflow_check(env, and_(not_(result.null), wrapped_around(result.value, in_floats)), e)
    return result


def wrapped_around(result, in_floats):
    """Whether `result`, an int64 computed with wrap-around, is not the true result that
    `in_floats` computes again in floats."""
    off = Call("-", (Call("to_float", (result,)), in_floats))
    return or_(Call(">", (off, _WRAPPED_ABOVE)), Call("<", (off, _WRAPPED_BELOW)))


def overflow_check(env: Env, wrong, e) -> None:
    """An error at commit time wherever a row of env.rel evaluates `e` and `wrong` holds:
    the integer result does not fit in 64 bits."""
    runtime_check(env, wrong, e, f"integer overflow: {show(e)} does not fit in a 64-bit integer")


def runtime_check(env: Env, wrong, e, message: str) -> None:
    """An error at commit time, at `e`, wherever a row of env.rel evaluates `e` and `wrong` holds."""
    if wrong == FALSE:
        return
    node, where = _narrowest(env.rel.node, and_(env.evaluated, wrong))
    env.t.check(node, message, env.t.span(e), where)


def _narrowest(node, predicate):
    """(node, predicate) narrowed to the side of a cross join the predicate reads, if it reads
    one: an ON condition is evaluated over the cross product of the join's sides, which the
    plan never builds when the condition equates them (and a check must not either)."""
    while isinstance(node, Join) and not node.keys:
        used, split = columns(predicate), node.left.arity
        if all(c < split for c in used):
            node = node.left
        elif all(c >= split for c in used):
            predicate = remap(predicate, {c: c - split for c in used})
            node = node.right
        else:
            break
    return node, predicate


@contextmanager
def evaluated_where(env: Env, condition_):
    """While translating what is evaluated only on the rows where `condition_` holds."""
    outer = env.evaluated
    env.evaluated = and_(outer, condition_)
    try:
        yield
    finally:
        env.evaluated = outer


def _div(env: Env, e) -> Value:
    a, b = translate(env, e.this), translate(env, e.expression)
    _number(a, env, e.this)
    _number(b, env, e.expression)
    if isinstance(e, exp.IntDiv) or (e.args.get("typed") and a.type == INT and b.type == INT):
        a, b = _unify(env, [a, b], [e.this, e.expression])
        if a.type == INT:
            _division_by_zero_check(env, a, b, e)
            minus_one = Const(-1, "number")  # the one quotient that does not fit
            wrapped = and_(Call("=", (a.value, INT64_MIN)), Call("=", (b.value, minus_one)))
            overflow_check(env, and_(not_(or_(a.null, b.null)), wrapped), e)
        return Value(Call("/", (a.value, b.value)), or_(a.null, b.null), a.type)
    a, b = cast_value(a, FLOAT), cast_value(b, FLOAT)
    return Value(Call("/", (a.value, b.value)), or_(a.null, b.null), FLOAT)


def _mod(env: Env, e) -> Value:
    a, b = translate(env, e.this), translate(env, e.expression)
    _number(a, env, e.this)
    _number(b, env, e.expression)
    a, b = _unify(env, [a, b], [e.this, e.expression])
    if a.type == INT:
        _division_by_zero_check(env, a, b, e)
    return Value(Call("%", (a.value, b.value)), or_(a.null, b.null), a.type)


def _division_by_zero_check(env: Env, a: Value, b: Value, e) -> None:
    """An integer division or remainder by zero is an error where it is evaluated, as in
    DuckDB and PostgreSQL (a float's is inf or NaN)."""
    zero = and_(not_(or_(a.null, b.null)), Call("=", (b.value, ZERO[INT])))
    runtime_check(env, zero, e, f"division by zero in {show(e)}")


def _neg(env: Env, e) -> Value:
    a = translate(env, e.this)
    _number(a, env, e.this)
    _smallest_int_check(env, a, e)
    return Value(Call("neg", (a.value,)), a.null, a.type)


def _smallest_int_check(env: Env, a: Value, e) -> None:
    """-a and abs(a) do not fit for the least int64."""
    if a.type == INT:
        overflow_check(env, and_(not_(a.null), Call("=", (a.value, INT64_MIN))), e)


def _abs(env: Env, e) -> Value:
    a = translate(env, e.this)
    _number(a, env, e.this)
    _smallest_int_check(env, a, e)
    return Value(if_(Call("<", (a.value, ZERO[a.type])), Call("neg", (a.value,)), a.value), a.null, a.type)


def _rounding(op: str):
    """FLOOR and CEIL (of an integer: it, as a float, as DuckDB's), ROUND(x[, n]) to n
    decimals, n an integer constant (negative: to tens, hundreds, ...), halves away from zero
    (compiler.plan.ops); ROUND of an integer is an integer."""

    def fn(env: Env, e) -> Value:
        a = translate(env, e.this)
        _number(a, env, e.this)
        if op != "round":
            return Value(Call(op, (cast_value(a, FLOAT).value,)), a.null, FLOAT)
        digits = e.args.get("decimals")
        n = _integer_constant(digits) if digits is not None else 0
        if n is None:
            raise env.t.error(UnsupportedSQLError, f"ROUND's number of decimals must be an integer constant, not {show(digits)}", digits)
        if a.type == FLOAT:
            return Value(Call("round", (a.value, Const(n, "number"))), a.null, FLOAT)
        if n >= 0:
            return a
        if n < -18:  # 10**19 does not fit: every int64 rounds to 0
            return Value(ZERO[INT], a.null, INT)
        scale = Const(10 ** -n, "number")
        quotient, remainder = Call("/", (a.value, scale)), Call("%", (a.value, scale))  # both truncate, as C
        away = Call(">=", (Call("*", (if_(Call("<", (remainder, ZERO[INT])), Call("neg", (remainder,)), remainder), Const(2, "number"))), scale))
        sign = if_(Call("<", (a.value, ZERO[INT])), Const(-1, "number"), Const(1, "number"))
        units = Call("+", (quotient, if_(away, sign, ZERO[INT])))  # of `scale`, rounded
        rounded = Call("*", (units, scale))
        in_floats = Call("*", (Call("to_float", (units,)), Call("to_float", (scale,))))
        overflow_check(env, and_(not_(a.null), wrapped_around(rounded, in_floats)), e)
        return Value(rounded, a.null, INT)

    return fn


def _integer_constant(e) -> int | None:
    if isinstance(e, exp.Literal) and e.is_int:
        return int(e.this)
    if isinstance(e, exp.Neg) and isinstance(e.this, exp.Literal) and e.this.is_int:
        return -int(e.this.this)
    return None


def _extreme(env: Env, e) -> Value:
    """GREATEST / LEAST of numbers or texts: NULLs are ignored (NULL only if all are)."""
    nodes = [e.this] + list(e.expressions)
    values = _unify(env, [translate(env, n) for n in nodes], nodes)
    if values[0].type != TEXT:
        for v, n in zip(values, nodes):
            _number(v, env, n)
    greatest = isinstance(e, exp.Greatest)
    result = values[0]
    for v in values[1:]:
        if v.type == TEXT:  # no min/max op on symbols: pick by the string order
            both = if_(Call(">" if greatest else "<", (result.value, v.value)), result.value, v.value)
        elif v.type == FLOAT:  # NaN is the greatest float (`float_test`)
            both = if_(float_test(">" if greatest else "<", result.value, v.value), result.value, v.value)
        else:
            both = Call("max" if greatest else "min", (result.value, v.value))
        value = if_(result.null, v.value, if_(v.null, result.value, both))
        result = Value(value, and_(result.null, v.null), result.type)
    return result


# ---- comparison and logic -----------------------------------------------------------------------

_COMPARE = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}


def compare(env: Env, op: str, a: Value, b: Value, node) -> Value:
    a, b = _unify(env, [a, b], [node, node])
    if op not in ("=", "!=") and a.type not in (INT, FLOAT, TEXT):
        raise env.t.error(UnsupportedSQLError, f"ordering comparison ({op}) of boolean values is not supported", node)
    known = not_(or_(a.null, b.null))
    if a.type == BOOL:  # a bool Value's `value` is a condition: equal when both hold or neither
        test = or_(and_(a.value, b.value), and_(not_(a.value), not_(b.value)))
        test = test if op == "=" else not_(test)
    elif a.type == FLOAT:
        test = float_test(op, a.value, b.value)
    else:
        test = Call(op, (a.value, b.value))
    return boolean(and_(known, test), and_(known, not_(test)))


def float_test(op: str, a, b):
    """op on floats in DuckDB's order (a total one, as rows are sorted and joined by their
    codes): NaN equals NaN and is above every other float."""
    nan_a, nan_b = Call("!=", (a, a)), Call("!=", (b, b))
    both_nan = and_(nan_a, nan_b)
    return {
        "=": lambda: or_(Call("=", (a, b)), both_nan),
        "!=": lambda: not_(or_(Call("=", (a, b)), both_nan)),
        "<": lambda: or_(Call("<", (a, b)), and_(not_(nan_a), nan_b)),
        "<=": lambda: or_(Call("<=", (a, b)), nan_b),
        ">": lambda: or_(Call(">", (a, b)), and_(nan_a, not_(nan_b))),
        ">=": lambda: or_(Call(">=", (a, b)), nan_a),
    }[op]()


def _comparison(env: Env, e) -> Value:
    if isinstance(e.expression, (exp.Any, exp.All)):  # x op ANY / ALL (subquery)
        from compiler.sql.subquery import membership_value

        return membership_value(env, e)
    return compare(env, _COMPARE[type(e)], translate(env, e.this), translate(env, e.expression), e)


def _distinct_from(env: Env, e) -> Value:
    """a IS [NOT] DISTINCT FROM b: = with NULL equal to NULL and unequal to any value; never NULL."""
    a, b = translate(env, e.this), translate(env, e.expression)
    equal = compare(env, "=", a, b, e)
    same = or_(and_(a.null, b.null), equal.true)
    return boolean(not_(same), same) if isinstance(e, exp.NullSafeNEQ) else boolean(same, not_(same))


def _and(env: Env, e) -> Value:
    a = condition(env, e.this)
    with evaluated_where(env, not_(a.false)):
        b = condition(env, e.expression)
    return boolean(and_(a.true, b.true), or_(a.false, b.false))


def _or(env: Env, e) -> Value:
    a = condition(env, e.this)
    with evaluated_where(env, not_(a.true)):
        b = condition(env, e.expression)
    return boolean(or_(a.true, b.true), and_(a.false, b.false))


def _not(env: Env, e) -> Value:
    a = condition(env, e.this)
    return boolean(a.false, a.true)


def _is(env: Env, e) -> Value:
    a = translate(env, e.this)
    target = e.expression
    if isinstance(target, exp.Null):
        return Value(a.null, FALSE, BOOL)
    if isinstance(target, exp.Boolean) and a.type == BOOL:
        return Value(a.true if target.this else a.false, FALSE, BOOL)
    raise env.t.error(UnsupportedSQLError, f"IS {show(target)} is not supported", e)


def _between(env: Env, e) -> Value:
    x = translate(env, e.this)
    low = compare(env, ">=", x, translate(env, e.args["low"]), e)
    high = compare(env, "<=", x, translate(env, e.args["high"]), e)
    return boolean(and_(low.true, high.true), or_(low.false, high.false))


def _in(env: Env, e) -> Value:
    if e.args.get("unnest") is not None:
        raise env.t.error(UnsupportedSQLError, "IN UNNEST(...) is not supported", e)
    if e.args.get("query") is not None:
        from compiler.sql.subquery import membership_value

        return membership_value(env, e)
    x = translate(env, e.this)
    tests = [compare(env, "=", x, translate(env, item), item) for item in e.expressions]
    return boolean(or_(*(t.true for t in tests)), and_(*(t.false for t in tests)))


def _like(env: Env, e, escape_char: str | None = None) -> Value:
    s = translate(env, e.this)
    pattern = e.expression
    if not (isinstance(pattern, exp.Literal) and pattern.is_string):
        raise env.t.error(UnsupportedSQLError, "LIKE needs a constant string pattern", pattern)
    if s.type != TEXT:
        raise env.t.error(TypeMismatchError, f"LIKE needs a text, but {show(e.this)} is {_type_word(s.type)}", e.this)
    text, value = pattern.this, s.value
    if isinstance(e, exp.ILike):
        text, value = text.lower(), Call("lower", (value,))
    # The pattern is the `match` op's: Soufflé's regex dialect, over UTF-8 bytes.
    parts, chars = [], iter(text)
    for ch in chars:
        if ch == escape_char:  # the next character as itself
            ch = next(chars, None)
            if ch is None:
                raise env.t.error(UnsupportedSQLError, "a LIKE pattern cannot end with its ESCAPE character", pattern)
            parts.append(escape(ch))
        else:
            parts.append(f"{ANY_CHARACTER}*" if ch == "%" else ANY_CHARACTER if ch == "_" else escape(ch))
    test = Call("match", (Const("".join(parts), "symbol"), value))
    known = not_(s.null)
    result = boolean(and_(known, test), and_(known, not_(test)))
    return boolean(result.false, result.true) if e.args.get("negate") else result


def _like_escape(env: Env, e) -> Value:
    """x LIKE pattern ESCAPE 'c': c makes the character after it, % and _ too, itself."""
    char = e.expression
    if not isinstance(e.this, (exp.Like, exp.ILike)) or not (isinstance(char, exp.Literal) and char.is_string and len(char.this) == 1):
        raise env.t.error(UnsupportedSQLError, "ESCAPE needs a LIKE and one constant character", e)
    return _like(env, e.this, char.this)


# ---- conditionals -------------------------------------------------------------------------------


def _choose(env: Env, branches, default, nodes) -> Value:
    """CASE: the first branch whose condition (a bool Value) is TRUE, else default."""
    values = _unify(env, [v for _, v in branches] + [default], nodes)
    result = values[-1]
    for (cond, _), v in zip(reversed(branches), reversed(values[:-1])):
        result = Value(if_(cond.true, v.value, result.value), if_(cond.true, v.null, result.null), v.type)
    return result


def _case(env: Env, e) -> Value:
    operand = e.this
    subject = translate(env, operand) if operand is not None else None
    branches, nodes = [], []
    taken = FALSE  # an earlier branch's condition holds
    for branch in e.args.get("ifs") or []:
        with evaluated_where(env, not_(taken)):
            if subject is not None:
                cond = compare(env, "=", subject, translate(env, branch.this), branch.this)
            else:
                cond = condition(env, branch.this)
            with evaluated_where(env, cond.true):
                branches.append((cond, translate(env, branch.args["true"])))
        taken = or_(taken, cond.true)
        nodes.append(branch.args["true"])
    default = e.args.get("default")
    nodes.append(default if default is not None else e)
    with evaluated_where(env, not_(taken)):
        otherwise = translate(env, default) if default is not None else constant(None)
    return _choose(env, branches, otherwise, nodes)


def _if(env: Env, e) -> Value:
    cond = condition(env, e.this)
    other = e.args.get("false")
    nodes = [e.args["true"], other if other is not None else e]
    with evaluated_where(env, cond.true):
        then = translate(env, e.args["true"])
    with evaluated_where(env, not_(cond.true)):
        otherwise = translate(env, other) if other is not None else constant(None)
    return _choose(env, [(cond, then)], otherwise, nodes)


def _coalesce(env: Env, e) -> Value:
    nodes = [e.this] + list(e.expressions)
    translated, earlier_null = [], TRUE  # each argument is evaluated where those before it are NULL
    for n in nodes:
        with evaluated_where(env, earlier_null):
            translated.append(translate(env, n))
        earlier_null = and_(earlier_null, translated[-1].null)
    values = _unify(env, translated, nodes)
    result = values[-1]
    for v in reversed(values[:-1]):
        result = Value(if_(v.null, result.value, v.value), and_(v.null, result.null), v.type)
    return result


def _nullif(env: Env, e) -> Value:
    a, b = translate(env, e.this), translate(env, e.expression)
    same = compare(env, "=", a, b, e)
    return Value(a.value, or_(a.null, same.true), a.type)


# ---- casts and strings --------------------------------------------------------------------------


def cast_target(env: Env, to) -> str:
    name = to.this.name.lower() if hasattr(to.this, "name") else str(to.this).lower()
    t = TYPE_NAMES.get(name.split(".")[-1])
    if t is None:
        raise env.t.error(UnsupportedSQLError, f"CAST to {to.sql()} is not supported", to)
    return t


def _cast(env: Env, e) -> Value:
    v = translate(env, e.this)
    t = cast_target(env, e.args["to"])
    safe = isinstance(e, exp.TryCast) or e.args.get("safe")
    out = cast_value(v, t)
    if out is None:
        raise env.t.error(UnsupportedSQLError, f"CAST of {_type_word(v.type)} to {_type_word(t)} is not supported", e)
    if safe or out.null == v.null:
        return out
    # A conversion that can fail (a float outside int64, a text that is no number): an error where it does.
    fails = and_(not_(v.null), out.null)
    if v.type == FLOAT:
        overflow_check(env, fails, e)
    else:
        runtime_check(env, fails, e, f"{show(e)}: a text that is not {_type_word(t)}")
    return Value(out.value, v.null, t)


def _text(env: Env, node) -> Value:
    v = translate(env, node)
    if v.null == TRUE:
        return Value(ZERO[TEXT], TRUE, TEXT)
    if v.type != TEXT:
        raise env.t.error(TypeMismatchError, f"{show(node)} is {_type_word(v.type)}, not a text", node)
    return v


def _concat(env: Env, e) -> Value:
    """|| and concat(): numbers and booleans are written as CAST writes them, as DuckDB's."""
    nodes = [e.this, e.expression] if isinstance(e, exp.DPipe) else list(e.expressions)
    parts = []
    for n in nodes:
        v = translate(env, n)
        parts.append(Value(ZERO[TEXT], TRUE, TEXT) if v.null == TRUE else v if v.type == TEXT else cast_value(v, TEXT))
    if isinstance(e, exp.Concat) and e.args.get("coalesce"):  # concat() skips NULLs
        return Value(Call("cat", tuple(if_(p.null, ZERO[TEXT], p.value) for p in parts)), FALSE, TEXT)
    return Value(Call("cat", tuple(p.value for p in parts)), or_(*(p.null for p in parts)), TEXT)


def _case_fn(op):
    def fn(env: Env, e) -> Value:
        s = _text(env, e.this)
        return Value(Call(op, (s.value,)), s.null, TEXT)

    return fn


def _length(env: Env, e) -> Value:
    s = _text(env, e.this)
    return Value(Call("strlen", (s.value,)), s.null, INT)


_FAR, _FAR_BACK = Const(2**40, "number"), Const(-(2**40), "number")


def _substring(env: Env, e) -> Value:
    s = _text(env, e.this)
    start = translate(env, e.args["start"]) if e.args.get("start") is not None else constant(1)
    length = translate(env, e.args["length"]) if e.args.get("length") is not None else None
    for v, n in ((start, e.args.get("start")), (length, e.args.get("length"))):
        if v is not None and v.type != INT and v.null != TRUE:
            raise env.t.error(TypeMismatchError, f"{show(n)} is {_type_word(v.type)}, not an integer", n)
    one, zero = Const(1, "number"), Const(0, "number")
    # As DuckDB's: a negative start counts from the end (-1 is the last character), and a
    # negative length takes the characters before the start. Both are clamped far past any
    # string's length first, so that adding them cannot wrap around.
    start, length = (None if v is None else Value(Call("max", (Call("min", (v.value, _FAR)), _FAR_BACK)), v.null, INT) for v in (start, length))
    first = if_(Call("<", (start.value, zero)), Call("+", (Call("strlen", (s.value,)), Call("+", (start.value, one)))), start.value)
    if length is None:
        low, end = first, Call("strlen", (s.value,))
        null = or_(s.null, start.null)
    else:
        past = Call("+", (first, length.value))  # 1-based, the first character not taken
        low, end = Call("min", (first, past)), Call("-", (Call("max", (first, past)), one))
        null = or_(s.null, start.null, length.null)
    begin = Call("max", (Call("-", (low, one)), zero))  # 0-based first character
    count = Call("max", (Call("-", (end, begin)), zero))
    return Value(Call("substr", (s.value, begin, count)), null, TEXT)


def _paren(env: Env, e) -> Value:
    return translate(env, e.this)


def _aggregate_here(env: Env, e) -> Value:
    raise env.t.error(UnsupportedSQLError if env.grouped is not None else UnsupportedSQLError, f"aggregate {show(e)} is not allowed here", e)


def _subquery(env: Env, e) -> Value:
    from compiler.sql.subquery import scalar_subquery

    return scalar_subquery(env, e)


def _exists(env: Env, e) -> Value:
    from compiler.sql.subquery import membership_value

    return membership_value(env, e)


_HANDLERS = {
    exp.Column: _column,
    exp.Literal: _literal,
    exp.Null: lambda env, e: constant(None),
    exp.Boolean: lambda env, e: constant(bool(e.this)),
    exp.Paren: _paren,
    exp.Add: _arith,
    exp.Sub: _arith,
    exp.Mul: _arith,
    exp.Div: _div,
    exp.IntDiv: _div,
    exp.Mod: _mod,
    exp.Neg: _neg,
    exp.Abs: _abs,
    exp.Greatest: _extreme,
    exp.Least: _extreme,
    **{cls: _comparison for cls in _COMPARE},
    exp.Floor: _rounding("floor"),
    exp.Ceil: _rounding("ceil"),
    exp.Round: _rounding("round"),
    exp.NullSafeEQ: _distinct_from,
    exp.Escape: _like_escape,
    exp.NullSafeNEQ: _distinct_from,
    exp.And: _and,
    exp.Or: _or,
    exp.Not: _not,
    exp.Is: _is,
    exp.Between: _between,
    exp.In: _in,
    exp.Like: _like,
    exp.ILike: _like,
    exp.Case: _case,
    exp.If: _if,
    exp.Coalesce: _coalesce,
    exp.Nullif: _nullif,
    exp.Cast: _cast,
    exp.TryCast: _cast,
    exp.DPipe: _concat,
    exp.Concat: _concat,
    exp.Lower: _case_fn("lower"),
    exp.Upper: _case_fn("upper"),
    exp.Length: _length,
    exp.Substring: _substring,
    exp.Subquery: _subquery,
    exp.Exists: _exists,
    **{cls: _aggregate_here for cls in AGGREGATE_TYPES},
}

__all__ = ["Env", "translate", "condition", "compare", "AGGREGATE_TYPES", "PLAN_TYPE"]
