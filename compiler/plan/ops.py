"""The operations of plan expressions: their types and their meaning.

An op is a named function over columns. `result_type(op, arg_types)` is its
typing rule (PlanError if the arguments do not fit), and `apply(op, ...)` is
its meaning, vectorised: it takes one *natural* numpy array per argument
(number: int64, unsigned: uint64, float: float64, symbol: int64 ids of a
SymbolTable, bool: bool) and returns the natural array of the result.
Integer arithmetic wraps at 64 bits.

Every op is total, so expressions can be moved, merged and dropped freely.
Where Soufflé would abort -- integer division or remainder by zero, a
negative integer exponent, `to_number` of a string that is not an integer,
`substr` outside the string -- the op returns a placeholder (0, or "");
compiler.plan.expr.domain gives the conditions under which an expression
means something, and front ends filter on them, so a rule simply does not
fire for such a row (`is_number` is the op that domain needs for to_number).

Symbol ops (cat, strlen, substr, to_number, to_string, contains, match) run
Python code once per *distinct* argument tuple of a batch, then spread the
results with numpy: a batch of a million rows over a hundred distinct strings
costs a hundred Python calls. Ordering comparisons (<, <=, >, >=) of symbols
compare the strings in code point order (UTF-8 byte order, as DuckDB and
Spark do), not the ids, which number strings in order of arrival: the
distinct ids of a batch are decoded and ranked once (`string_ranks`), then
compared as numbers.

Records (Soufflé's records and ADT values, compiler.values) are `record`
columns: int64 ids of the dataflow's record table (runtime.symbols.RecordTable,
reached as `symbols.records`), compared by id, which is comparing them
field by field since equal records share an id. `pack(a, b, ...)` interns the
record of its arguments' stored values; `field_<type>(r, i)` is field i of
record r as a value of that type (a placeholder 0 where r has no field i: the
front end filters such rows out first). Having no meaning without a dataflow's
table, they are never folded into constants (`RECORD_OPS`).

A `ColumnOp` is an op a lowering defines as an object over whole columns, for what
needs more than plan types say (compiler.lowering.choice orders record values by
their kind); it is never folded into a constant.

Both the lowering (compiler.lowering.columns) and constant folding
(compiler.plan.rewrites.fold) evaluate ops through `apply`, so there is one
definition of what each op means. `match`/`not_match` take Soufflé's regexes
(std::regex's ECMAScript, compiler.plan.regex), not Python's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from runtime.symbols import decode_floats, encode_floats

from compiler.plan.errors import PlanError
from compiler.plan.regex import regex_match

NUMBER, UNSIGNED, FLOAT, SYMBOL, RECORD, BOOL = "number", "unsigned", "float", "symbol", "record", "bool"
COLUMN_TYPES = (NUMBER, UNSIGNED, FLOAT, SYMBOL, RECORD)  # types a relation column may have
ORDERED_TYPES = (NUMBER, UNSIGNED, FLOAT, SYMBOL)  # what `<` compares (records only compare equal or not)
NUMERIC = (NUMBER, UNSIGNED, FLOAT)
INTEGRAL = (NUMBER, UNSIGNED)
NATURAL_DTYPE = {NUMBER: np.int64, UNSIGNED: np.uint64, FLOAT: np.float64, SYMBOL: np.int64, RECORD: np.int64, BOOL: np.bool_}
FIELD_OPS = {f"field_{t}": t for t in COLUMN_TYPES}  # field_<type>(record, index): a field as a value of <type>
RECORD_OPS = frozenset({"pack", *FIELD_OPS})

ARITHMETIC = ("+", "-", "*", "/", "%", "^")
BITWISE = ("band", "bor", "bxor", "bshl", "bshr", "bshru", "land", "lor", "lxor")
COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")
STRING_OPS = ("cat", "strlen", "substr", "substr_c", "to_number", "to_string", "to_string_c", "contains", "match", "not_match", "is_number",
              "lower", "upper", "parse_float", "is_float")  # fmt: skip
# Soufflé's numeric conversions: "to_float" (any numeric as a float), "to_unsigned" (a number's
# bits, a float truncated), "to_number" of a numeric (an unsigned's bits, a float truncated; of a
# symbol it parses), as C++'s static_cast (a float out of range, or nan, gives 0); "ord" (a
# symbol's interned id -- Soufflé's symbol table index -- or a number's own bits);
# "float_of_bits" (the float whose 64 bits a number or unsigned has: Soufflé's as(x, float)).
# "to_string" writes a number as SQL does (a float's shortest exact text), "to_string_c" as
# Soufflé's to_string does (C++'s std::to_string: a float with six decimals). "substr_c" is
# Soufflé's substr, C++'s std::string::substr: a start outside the string gives "" (Soufflé
# warns), a negative length (a huge size_t) the rest of the string; "substr" is partial (above).
# Everything else: "neg", "bnot", "lnot" (unary), "min", "max" (variadic), "and", "or", "not",
# and for SQL: "if" (condition, then, else), "to_float" (a number as a float), "to_int" (a float
# rounded half to even, as DuckDB casts a double; 0 if it does not fit), "floor" and "ceil" of
# a float, and "round" (a float, a number of decimals; negative: tens, hundreds...), which
# rounds the float's exact value, halves away from zero, as DuckDB's round (2.675 is below
# 2.675 as a double: 2.67; 0.125 is exact: 0.13).


@dataclass(frozen=True)
class PythonFunctor:
    """An op that is a Python function: a user-defined functor (Datalog's `.functor f(...)`,
    given to compile_datalog as `functors={"f": callable}`). It is called once per distinct
    argument tuple of a batch with Python values (int, float, str) and must return a value
    of its result type; like every op it must be a function of its arguments."""

    name: str
    param_types: tuple[str, ...]
    result_type: str
    function: object

    def __str__(self) -> str:
        return f"@{self.name}"


class ColumnOp:
    """An op defined over whole natural columns by its object (see the module)."""

    def type_of(self, arg_types: tuple[str, ...]) -> str:
        """The result type; PlanError if the arguments do not fit."""
        raise NotImplementedError

    def evaluate(self, arg_types: tuple[str, ...], args: list[np.ndarray], symbols) -> np.ndarray:
        """The natural array of the result."""
        raise NotImplementedError


def result_type(op, arg_types: tuple[str, ...]) -> str:
    """The type of `op` applied to arguments of `arg_types`; PlanError if they do not fit."""
    if isinstance(op, ColumnOp):
        return op.type_of(tuple(arg_types))
    if isinstance(op, PythonFunctor):
        if tuple(arg_types) != op.param_types:
            raise PlanError(f"functor @{op.name} takes ({', '.join(op.param_types)}), not ({', '.join(arg_types)})")
        return op.result_type
    n = len(arg_types)
    first = arg_types[0] if n else None
    same = n > 0 and all(t == first for t in arg_types)
    if op in ARITHMETIC and n == 2 and same and first in NUMERIC:
        return first
    if op in BITWISE and n == 2 and same and first in INTEGRAL:
        return first
    if op == "neg" and n == 1 and first in NUMERIC:
        return first
    if op in ("bnot", "lnot") and n == 1 and first in INTEGRAL:
        return first
    if op in ("min", "max") and n >= 1 and same and first in ORDERED_TYPES:
        return first
    if op in ("=", "!=") and n == 2 and same and first in COLUMN_TYPES:
        return BOOL
    if op in ("<", "<=", ">", ">=") and n == 2 and same and first in ORDERED_TYPES:
        return BOOL
    if op == "pack" and n >= 1 and all(t in COLUMN_TYPES for t in arg_types):
        return RECORD
    if op in FIELD_OPS and arg_types == (RECORD, NUMBER):
        return FIELD_OPS[op]
    if op in ("and", "or") and n >= 1 and same and first == BOOL:
        return BOOL
    if op == "not" and arg_types == (BOOL,):
        return BOOL
    if op == "cat" and n >= 1 and same and first == SYMBOL:
        return SYMBOL
    if op == "if" and n == 3 and first == BOOL and arg_types[1] == arg_types[2] and arg_types[1] in COLUMN_TYPES + (BOOL,):
        return arg_types[1]
    if op == "to_float" and n == 1 and first in NUMERIC:
        return FLOAT
    if op == "to_unsigned" and n == 1 and first in NUMERIC:
        return UNSIGNED
    if op == "to_number" and n == 1 and first in NUMERIC:
        return NUMBER
    if op == "ord" and n == 1 and first in COLUMN_TYPES:
        return NUMBER
    if op == "float_of_bits" and n == 1 and first in (NUMBER, UNSIGNED):
        return FLOAT
    if op == "to_int" and n == 1 and first in NUMERIC:
        return NUMBER
    if op in ("floor", "ceil") and arg_types == (FLOAT,):
        return FLOAT
    if op == "round" and arg_types == (FLOAT, NUMBER):
        return FLOAT
    if op in ("lower", "upper") and arg_types == (SYMBOL,):
        return SYMBOL
    fixed = {
        "strlen": ((SYMBOL,), NUMBER),
        "substr": ((SYMBOL, NUMBER, NUMBER), SYMBOL),
        "substr_c": ((SYMBOL, NUMBER, NUMBER), SYMBOL),
        "to_number": ((SYMBOL,), NUMBER),
        "contains": ((SYMBOL, SYMBOL), BOOL),
        "match": ((SYMBOL, SYMBOL), BOOL),
        "not_match": ((SYMBOL, SYMBOL), BOOL),  # Soufflé's !match: false too for a bad pattern
        "is_number": ((SYMBOL,), BOOL),  # whether to_number is defined
        "parse_float": ((SYMBOL,), FLOAT),  # SQL's CAST of a text to a double (0.0 where it is not one)
        "is_float": ((SYMBOL,), BOOL),  # whether parse_float is defined
    }
    if op in fixed and arg_types == fixed[op][0]:
        return fixed[op][1]
    if op in ("to_string", "to_string_c") and n == 1 and first in NUMERIC:
        return SYMBOL
    raise PlanError(f"op {op!r} does not apply to ({', '.join(arg_types)})")


def apply(op, arg_types: tuple[str, ...], args: list[np.ndarray], symbols) -> np.ndarray:
    """The natural array of `op` over natural arrays; `symbols` interns strings."""
    if isinstance(op, PythonFunctor):
        return _per_distinct(op, arg_types, args, symbols)
    if isinstance(op, ColumnOp):
        return op.evaluate(tuple(arg_types), args, symbols)
    if op in ("to_number", "to_unsigned") and arg_types[0] != SYMBOL:
        whole = _float_to_int(args[0], np.trunc) if arg_types[0] == FLOAT else args[0]
        return whole.astype(np.int64 if op == "to_number" else np.uint64)  # wraps, as static_cast
    if op in STRING_OPS:
        return _string_op(op, arg_types, args, symbols)
    if op in RECORD_OPS:
        return _record_op(op, arg_types, args, symbols.records)
    if op == "if":
        return np.where(args[0], args[1], args[2])
    if op == "to_float":
        return args[0].astype(np.float64)
    if op == "ord":
        return args[0].view(np.int64)
    if op == "float_of_bits":
        return args[0].view(np.float64)
    if op == "to_int":
        return _float_to_int(args[0])
    if op in ("floor", "ceil"):
        return (np.floor if op == "floor" else np.ceil)(args[0])
    if op == "round":
        return _round_decimals(args[0], args[1])
    t = arg_types[0]
    if op in COMPARISONS and t == SYMBOL and op not in ("=", "!="):
        ranks = string_ranks(np.concatenate([args[0], args[1]]), symbols)
        return _total(op, NUMBER, [ranks[: len(args[0])], ranks[len(args[0]) :]])
    if op in ("min", "max") and t == SYMBOL:  # by code point order, as `<` compares symbols
        ids = np.stack(args)
        ranks = string_ranks(ids.reshape(-1), symbols).reshape(ids.shape)
        return ids[(np.argmin if op == "min" else np.argmax)(ranks, axis=0), np.arange(ids.shape[1])]
    with np.errstate(all="ignore"):  # integer wrap-around and float inf/nan are the semantics
        if op in ("/", "%", "^"):
            return _guarded_arithmetic(op, t, args[0], args[1])
        return _total(op, t, args)


def _total(op: str, t: str, args: list[np.ndarray]) -> np.ndarray:
    a = args[0]
    b = args[1] if len(args) > 1 else None
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "neg":
        return -a
    if op == "band":
        return a & b
    if op == "bor":
        return a | b
    if op == "bxor":
        return a ^ b
    if op in ("bshl", "bshr", "bshru"):
        shift = np.clip(b, 0, 63).astype(a.dtype)
        if op == "bshl":
            return a << shift
        if op == "bshr" or t == UNSIGNED:  # `>>` on int64 is arithmetic, on uint64 logical
            return a >> shift
        return (a.view(np.uint64) >> shift.view(np.uint64)).view(np.int64)
    if op == "bnot":
        return ~a
    if op in ("land", "lor", "lxor", "lnot"):
        x = a != 0
        y = None if b is None else b != 0
        out = {"land": lambda: x & y, "lor": lambda: x | y, "lxor": lambda: x ^ y, "lnot": lambda: ~x}[op]()
        return out.astype(a.dtype)
    if op == "min":
        return np.minimum.reduce(args) if len(args) > 1 else a
    if op == "max":
        return np.maximum.reduce(args) if len(args) > 1 else a
    if op in COMPARISONS:
        return {"=": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}[op](a, b)
    if op == "and":
        return np.logical_and.reduce(args)
    if op == "or":
        return np.logical_or.reduce(args)
    if op == "not":
        return ~a
    raise PlanError(f"unknown op {op!r}")


def _guarded_arithmetic(op: str, t: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """/, % and ^; outside their domain integers give 0 (front ends filter those rows out)."""
    if t == FLOAT:  # IEEE: x / 0 is inf, fmod(x, 0) is nan; defined
        return {"/": np.divide, "%": np.fmod, "^": np.power}[op](a, b)
    if op == "^":
        if t == NUMBER:
            return np.where(b >= 0, _int_power(a, np.where(b >= 0, b, 0)), 0)
        return _int_power(a, b)
    ok = b != 0
    safe = np.where(ok, b, 1).astype(a.dtype)
    if t == UNSIGNED:
        out = a // safe if op == "/" else a % safe
    elif op == "%":
        out = np.fmod(a, safe)  # C: the remainder has the sign of the dividend
    else:
        out = a // safe  # floor; C truncates toward zero
        out = out + ((out * safe != a) & ((a < 0) != (safe < 0)))
    return np.where(ok, out, 0).astype(a.dtype)


def _round_decimals(x: np.ndarray, digits: np.ndarray) -> np.ndarray:
    """x rounded to `digits` decimals by its exact value, halves away from zero. x scaled by
    10**digits is rounded as a float; where that gives exactly a half, the scaling's rounding
    error (exact, by Dekker's product) tells which side of the half x really is. Where the
    scaling overflows, x itself."""
    with np.errstate(all="ignore"):
        up = digits >= 0
        scale = 10.0 ** np.abs(digits).astype(np.float64)
        scaled = np.where(up, x * scale, x / scale)
        # The exact x * scale - scaled (up), or x - scaled * scale (down), by Dekker's product.
        factor = np.where(up, x, scaled)
        product = factor * scale
        error = _product_error(factor, scale, product)
        beyond = np.where(up, (product - scaled) + error, (x - product) - error)
        whole = np.trunc(scaled)
        half = np.abs(scaled - whole)
        away = (half > 0.5) | ((half == 0.5) & ~(beyond * np.sign(scaled) < 0))
        rounded = whole + np.where(away, np.sign(scaled), 0.0)
        out = np.where(up, rounded / scale, rounded * scale)
        return np.where(np.isfinite(out) | ~np.isfinite(x), out, x)


def _product_error(a: np.ndarray, b: np.ndarray, product: np.ndarray) -> np.ndarray:
    """a * b - product exactly (Dekker's TwoProduct; product is a * b rounded)."""
    def split(v):
        c = 134217729.0 * v  # 2**27 + 1
        high = c - (c - v)
        return high, v - high

    ah, al = split(a)
    bh, bl = split(b)
    return ((ah * bh - product) + ah * bl + al * bh) + al * bl


def _to_float(s: str) -> float | None:
    """The double a text spells (blanks around it allowed; inf, nan; _ between digits, as
    DuckDB reads 1_000), or None."""
    try:
        return float(s)
    except ValueError:
        return None


def _float_to_int(a: np.ndarray, rounding=np.rint) -> np.ndarray:
    """Floats to int64 by `rounding` (rint: half to even; trunc: toward zero); values that
    do not fit (and nan) give 0. Integer arrays are only cast."""
    if a.dtype != np.float64:
        return a.astype(np.int64)
    with np.errstate(all="ignore"):
        r = rounding(a)
        ok = np.isfinite(r) & (np.abs(r) < 2.0**63)
        return np.where(ok, r, 0).astype(np.int64)


def _int_power(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """base ** exponent wrapping at 64 bits, by repeated squaring (numpy's power may raise)."""
    result = np.ones_like(base)
    base = base.copy()
    exponent = exponent.copy()
    while exponent.size and exponent.max() > 0:
        odd = (exponent & 1).astype(bool)
        result = np.where(odd, result * base, result)
        base = base * base
        exponent = exponent >> 1
    return result


# ---- record ops: over the record table's stored values ------------------------------------


def _record_op(op: str, arg_types, args, records) -> np.ndarray:
    if op == "pack":
        return records.pack(np.stack([_stored(a, t) for a, t in zip(args, arg_types)]))
    ids, index = args
    out = np.zeros(len(ids), dtype=np.int64)
    for i in np.unique(index).tolist():  # one index in practice: a constant
        at = index == i
        out[at] = records.field(ids[at], i)
    return _natural(out, FIELD_OPS[op])


def _stored(values: np.ndarray, t: str) -> np.ndarray:
    """Natural values as the int64 the runtime stores (runtime.symbols)."""
    if t == FLOAT:
        return encode_floats(values)
    return values.view(np.int64) if t == UNSIGNED else values.astype(np.int64, copy=False)


def _natural(stored: np.ndarray, t: str) -> np.ndarray:
    if t == FLOAT:
        return decode_floats(stored)
    return stored.view(np.uint64) if t == UNSIGNED else stored


# ---- symbol ops: Python per distinct argument tuple -------------------------------------


def string_ranks(ids: np.ndarray, symbols) -> np.ndarray:
    """For symbol ids, int64 ranks that order like their strings (equal strings, equal ranks).

    Ranks are only comparable within one call: they number the distinct strings given."""
    uniques, inverse = np.unique(ids, return_inverse=True)
    strings = symbols.strings(uniques)
    rank = np.empty(len(uniques), dtype=np.int64)
    rank[sorted(range(len(strings)), key=strings.__getitem__)] = np.arange(len(strings))
    return rank[inverse.reshape(-1)]


_INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*")


def _to_number(s: str):
    """The integer `s` spells (surrounding blanks allowed) if it fits in 64 bits, else None."""
    value = int(s) if _INTEGER.fullmatch(s) else None
    return value if value is not None and -(2**63) <= value < 2**63 else None


def _number_text(value, t: str) -> str:
    return repr(float(value)) if t == FLOAT else str(int(value))


def c_number_text(value, t: str) -> str:
    """A number as C++'s std::to_string writes it (Soufflé's to_string): floats as `%f`."""
    return "%f" % value if t == FLOAT else str(int(value))


def _string_op(op: str, arg_types, args, symbols):
    """Evaluate a symbol op once per distinct argument tuple, then take the results."""
    return _per_distinct(op, arg_types, args, symbols)


def _per_distinct(op, arg_types, args, symbols):
    """Evaluate a Python-level op (a symbol op, a PythonFunctor) once per distinct argument
    tuple, then spread the results."""
    out_type = result_type(op, tuple(arg_types))
    if not args:  # a functor of no arguments: one value (callers spread it over their rows)
        value = _checked_result(op, (), op.function())
        return np.array([symbols.intern(value) if out_type == SYMBOL else value], dtype=NATURAL_DTYPE[out_type])
    n = len(args[0])
    if n == 0:
        return np.zeros(0, NATURAL_DTYPE[out_type])
    if len(args) == 1:
        uniques, inverse = np.unique(args[0], return_inverse=True)
        columns = [uniques]
    else:
        keys = np.stack([a.view(np.int64) if a.dtype != np.bool_ else a.astype(np.int64) for a in args])
        uniq, inverse = np.unique(keys, axis=1, return_inverse=True)
        columns = [uniq[i].view(args[i].dtype) if args[i].dtype != np.bool_ else uniq[i].astype(bool) for i in range(len(args))]
    inverse = inverse.reshape(-1)
    decoded = [symbols.strings(c) if t == SYMBOL else c.tolist() for c, t in zip(columns, arg_types)]
    if isinstance(op, PythonFunctor):
        values = [_checked_result(op, row, op.function(*row)) for row in zip(*decoded)]
    else:
        values = [_string_scalar(op, arg_types, row) for row in zip(*decoded)]
    if out_type == SYMBOL:
        table = np.array([symbols.intern(v) for v in values], dtype=np.int64)
    else:
        table = np.array(values, dtype=NATURAL_DTYPE[out_type])
    return table[inverse]


_RESULT_CHECKS = {NUMBER: lambda v: isinstance(v, (int, np.integer)) and -(2**63) <= v < 2**63,
                  UNSIGNED: lambda v: isinstance(v, (int, np.integer)) and 0 <= v < 2**64,
                  FLOAT: lambda v: isinstance(v, (int, float, np.integer, np.floating)),
                  SYMBOL: lambda v: isinstance(v, str)}  # fmt: skip


def _checked_result(op: PythonFunctor, args: tuple, value):
    if isinstance(value, (bool, np.bool_)) or not _RESULT_CHECKS[op.result_type](value):
        raise FunctorError(f"functor @{op.name}{args!r} returned {value!r}, which is not a {op.result_type}")
    return value


class FunctorError(ValueError):
    """A user-defined functor returned a value that is not of its declared result type."""


def _string_scalar(op: str, arg_types, row):
    """One application of a symbol op to Python values (placeholders outside the domain)."""
    if op == "cat":
        return "".join(row)
    if op == "strlen":
        return len(row[0])
    if op == "substr":
        s, start, length = row
        if start < 0 or length < 0 or start > len(s):
            return ""
        return s[start : start + length]
    if op == "substr_c":
        s, start, length = row
        if start < 0 or start > len(s):
            return ""
        return s[start:] if length < 0 else s[start : start + length]
    if op == "to_number":
        value = _to_number(row[0])
        return 0 if value is None else value
    if op == "is_number":
        return _to_number(row[0]) is not None
    if op in ("parse_float", "is_float"):
        value = _to_float(row[0])
        return (value is not None) if op == "is_float" else (0.0 if value is None else value)
    if op == "to_string":
        return _number_text(row[0], arg_types[0])
    if op == "to_string_c":
        return c_number_text(row[0], arg_types[0])
    if op == "contains":
        return row[0] in row[1]
    if op == "lower":
        return row[0].lower()
    if op == "upper":
        return row[0].upper()
    if op in ("match", "not_match"):
        matched = regex_match(row[0], row[1])
        return matched is not None and matched == (op == "match")
    raise PlanError(f"unknown symbol op {op!r}")
