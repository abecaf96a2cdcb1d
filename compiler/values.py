"""Records and ADT values: stored as record ids, read and written as Python values and text.

The runtime stores a record `[1, "a"]` as the int64 id its record table gives the
tuple of the fields' stored values (runtime.symbols.RecordTable; a symbol field is
its symbol id, a record field its record id), and `nil` as 0. A value of an
*enum* ADT (no branch has fields) is its branch's number, as in Soufflé (branches
are numbered in name order, compiler.datalog.types); any other ADT value is the
record of its branch's number followed by its fields (Soufflé nests the fields in
a record of their own; ids are not observable but through `ord`). Which of these a
column holds is its kind (a RecordType or ADTType); this module converts, column
by column, between the stored ids and:

- Python values: a record is a tuple of its fields' values (nested records nested
  tuples), `nil` is None, and an ADT value is a `Branch`, `Branch("Add", (x, y))`;
- Soufflé's text, as its fact files hold it: `[1, [2, nil]]`, `$Add($Num(1), $Zero)`,
  with symbols as they are, except that in a record a symbol that holds `,`, `]` or
  `)` (or starts with `"` or a blank) is written in double quotes, so that it reads
  back (Soufflé's writer does not quote, and its reader then stops at the `,`);
- Arrow: a record is a struct of its fields (nil is null), an enum ADT value its
  branch's name, another ADT value a struct with the `branch` name and, for each
  branch with fields, a struct of them named after it (null but for its own branch).
  A recursive type is nested as deep as the values go.

Each distinct id of a column is converted once, so a column of a million rows
over a thousand records costs a thousand conversions.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from runtime.symbols import SymbolTable, decode_floats, encode_floats

from compiler.datalog.types import ADTType, Kind, RecordType, is_structured


# The stored fields of the empty record `[]` (a record type with no fields): one 0, since records
# are packed column by column (runtime.symbols.RecordTable.pack) and no columns have no rows.
EMPTY_RECORD = (0,)


@dataclass(frozen=True)
class Branch:
    """A value of an algebraic data type: its branch (constructor) and the branch's fields,
    `Branch("Add", (x, y))` for `$Add(x, y)`, `Branch("Zero")` for `$Zero`."""

    name: str
    args: tuple = ()

    def __repr__(self) -> str:
        return f"${self.name}" + (f"({', '.join(map(repr, self.args))})" if self.args else "")


class BadValue(ValueError):
    """A value that is not of the kind it should be, or text that spells none (the message says how)."""


# ---- stored ids -> Python values -------------------------------------------------------


def decode(ids: np.ndarray, kind: Kind, symbols: SymbolTable) -> list:
    """The Python values of a column of stored values of `kind` (any kind, primitives too)."""
    ids = np.asarray(ids, dtype=np.int64)
    if not is_structured(kind):
        return _decode_primitive(ids, kind, symbols)
    if len(ids) == 0:  # also where a recursive type's values end
        return []
    uniques, inverse = np.unique(ids, return_inverse=True)
    values = _decode_structured(uniques, kind, symbols)
    return [values[i] for i in inverse.reshape(-1).tolist()]


def _decode_primitive(codes: np.ndarray, kind: str, symbols: SymbolTable) -> list:
    if kind == "symbol":
        return symbols.strings(codes)
    if kind == "float":
        return decode_floats(codes).tolist()
    if kind == "unsigned":
        return codes.view(np.uint64).tolist()
    return codes.tolist()


def _decode_structured(ids: np.ndarray, kind: Kind, symbols: SymbolTable) -> list:
    """Values of distinct ids (records or ADT values)."""
    records = symbols.records
    if isinstance(kind, RecordType):
        values = [None] * len(ids)
        present = np.flatnonzero(ids != records.NIL)
        fields = [decode(records.field(ids[present], j), k, symbols) for j, (_, k) in enumerate(kind.fields)]
        for row, value in zip(present.tolist(), zip(*fields) if fields else [()] * len(present)):
            values[row] = tuple(value)
        return values
    if kind.enum:
        return [Branch(kind.branches[i].name) for i in ids.tolist()]
    numbers = records.field(ids, 0)
    values = [None] * len(ids)
    for branch in kind.branches:
        rows = np.flatnonzero(numbers == branch.index)
        fields = [decode(records.field(ids[rows], j + 1), k, symbols) for j, (_, k) in enumerate(branch.fields)]
        for row, args in zip(rows.tolist(), zip(*fields) if fields else [()] * len(rows)):
            values[row] = Branch(branch.name, tuple(args))
    return values


# ---- Python values -> stored ids --------------------------------------------------------


def encode(values: list, kind: Kind, symbols: SymbolTable) -> np.ndarray:
    """The stored values of a column of Python values of `kind`; BadValue for a value
    that is not of it (saying where in the value)."""
    if not is_structured(kind):
        return _encode_primitive(values, kind, symbols)
    records = symbols.records
    out = np.zeros(len(values), dtype=np.int64)
    if not values:  # also where a recursive type's values end
        return out
    if isinstance(kind, RecordType):
        present = [i for i, v in enumerate(values) if v is not None]
        for i in present:
            value = values[i]
            if not isinstance(value, (tuple, list)) or len(value) != kind.arity:
                raise BadValue(f"{value!r} is not a record of type '{kind.name}' ({kind.arity} fields, or None for nil)")
        if present:
            columns = [_field(values, present, j, k, f"field '{name}' of '{kind.name}'", symbols) for j, (name, k) in enumerate(kind.fields)]
            columns = columns or [np.full(len(present), v, dtype=np.int64) for v in EMPTY_RECORD]
            out[present] = records.pack(np.stack(columns))
        return out
    by_name = {b.name: b for b in kind.branches}
    for value in values:
        if not isinstance(value, Branch) or value.name not in by_name or len(value.args) != len(by_name[value.name].fields):
            raise BadValue(f"{value!r} is not a value of the ADT '{kind.name}' (a Branch of {', '.join(by_name)} with its fields)")
    if kind.enum:
        return np.array([by_name[v.name].index for v in values], dtype=np.int64)
    for branch in kind.branches:
        rows = [i for i, v in enumerate(values) if v.name == branch.name]
        if not rows:
            continue
        args = [v.args for v in (values[i] for i in rows)]
        columns = [np.full(len(rows), branch.index, dtype=np.int64)]
        columns += [_field(args, range(len(rows)), j, k, f"field '{name}' of ${branch.name}", symbols) for j, (name, k) in enumerate(branch.fields)]
        out[rows] = records.pack(np.stack(columns))
    return out


def _field(values, rows, j: int, kind: Kind, what: str, symbols) -> np.ndarray:
    try:
        return encode([values[i][j] for i in rows], kind, symbols)
    except BadValue as e:
        raise BadValue(f"{what}: {e}") from None


def _encode_primitive(values: list, kind: str, symbols: SymbolTable) -> np.ndarray:
    for v in values:
        if not fits(v, kind):
            raise BadValue(f"{v!r} is not {'an' if kind[0] in 'aeiou' else 'a'} {kind}")
    if kind == "symbol":
        return symbols.intern_many(values)
    if kind == "float":
        return encode_floats(np.array(values, dtype=np.float64))
    if kind == "unsigned":
        return np.array(values, dtype=np.uint64).view(np.int64)
    return np.array(values, dtype=np.int64)


def fits(value, kind: str) -> bool:
    """Whether a Python value is one of a primitive kind (an int in range for number and unsigned)."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if kind == "symbol":
        return isinstance(value, str)
    if kind == "float":
        return isinstance(value, (int, float, np.integer, np.floating))
    if not isinstance(value, (int, np.integer)):
        return False
    return 0 <= value < 2**64 if kind == "unsigned" else -(2**63) <= value < 2**63


# ---- text --------------------------------------------------------------------------------


def to_text(value, kind: Kind, float_text=repr, quote_symbols: bool = False) -> str:
    """A value in Soufflé's text form (`float_text` writes floats; `quote_symbols`: every symbol
    inside a record or ADT value in double quotes, as Soufflé writes them with rfc4180=true)."""
    if isinstance(kind, RecordType):
        if value is None:
            return "nil"
        return "[" + ", ".join(_field_text(v, k, float_text, ",]", quote_symbols) for v, (_, k) in zip(value, kind.fields)) + "]"
    if isinstance(kind, ADTType):
        branch = next(b for b in kind.branches if b.name == value.name)
        args = ", ".join(_field_text(v, k, float_text, ",)", quote_symbols) for v, (_, k) in zip(value.args, branch.fields))
        return f"${value.name}" + (f"({args})" if branch.fields else "")
    if kind == "float":
        return float_text(float(value))
    return str(value)


def _field_text(value, kind: Kind, float_text, stops: str, quote_symbols: bool) -> str:
    """A field inside a record or ADT value: a symbol that would end it early is quoted."""
    if kind == "symbol" and (quote_symbols or any(c in value for c in stops) or value.startswith('"') or value != value.strip()):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return to_text(value, kind, float_text, quote_symbols)


_INTEGER = re.compile(r"[+-]?(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)")
_FLOAT = re.compile(r"[+-]?(inf(inity)?|nan|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)", re.IGNORECASE)
_NAME = re.compile(r"[A-Za-z0-9_?.]+")


def from_text(text: str, kind: Kind):
    """The Python value Soufflé's text form spells (as its fact file reader reads it);
    BadValue saying where it does not fit."""
    reader = _Reader(text)
    value = reader.value(kind, "")
    reader.blank()
    if reader.at < len(text):
        raise BadValue(f"unexpected {text[reader.at:]!r} after the value")
    return value


class _Reader:
    def __init__(self, text: str):
        self.text, self.at = text, 0

    def blank(self) -> None:
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def expect(self, char: str) -> None:
        self.blank()
        if not self.text.startswith(char, self.at):
            found = repr(self.text[self.at]) if self.at < len(self.text) else "the end"
            raise BadValue(f"expected '{char}' at character {self.at + 1}, found {found}")
        self.at += 1

    def value(self, kind: Kind, stops: str):
        self.blank()
        if isinstance(kind, RecordType):
            if self.text.startswith("nil", self.at):
                self.at += 3
                return None
            self.expect("[")
            return self.fields(kind.fields, "]")
        if isinstance(kind, ADTType):
            self.expect("$")
            match = _NAME.match(self.text, self.at)
            name = match.group() if match else ""
            branch = next((b for b in kind.branches if b.name == name), None)
            if branch is None:
                raise BadValue(f"'${name}' is not a branch of the ADT '{kind.name}' ({', '.join('$' + b.name for b in kind.branches)})")
            self.at = match.end()
            if not branch.fields:
                return Branch(name)
            self.expect("(")
            return Branch(name, self.fields(branch.fields, ")"))
        if kind == "symbol":
            return self.symbol(stops)
        pattern = _FLOAT if kind == "float" else _INTEGER
        match = pattern.match(self.text, self.at)
        if match is None:
            raise BadValue(f"expected {'a float' if kind == 'float' else 'an integer'} at character {self.at + 1}")
        self.at = match.end()
        token = match.group()
        if kind == "float":
            return float(token)
        value = int(token, 0) if token.lstrip("+-")[:2].lower() in ("0x", "0b") else int(token)
        if not fits(value, kind):
            raise BadValue(f"{token} does not fit in {'an' if kind[0] in 'aeiou' else 'a'} {kind}")
        return value

    def fields(self, fields, close: str) -> tuple:
        """Values of `fields` ((name, kind) pairs) separated by commas, then `close`."""
        values = []
        for j, (_, kind) in enumerate(fields):
            if j:
                self.expect(",")
            values.append(self.value(kind, "," + close))
        self.expect(close)
        return tuple(values)

    def symbol(self, stops: str) -> str:
        """A quoted symbol (with backslash escapes), else the text up to a stop character;
        at the top of a field (no stops), the whole text."""
        if not stops:
            value, self.at = self.text[self.at :], len(self.text)
            return value
        if self.text.startswith('"', self.at):
            out, i = [], self.at + 1
            while i < len(self.text) and self.text[i] != '"':
                if self.text[i] == "\\" and i + 1 < len(self.text):
                    i += 1
                out.append(self.text[i])
                i += 1
            if i >= len(self.text):
                raise BadValue("a quoted symbol has no closing '\"'")
            self.at = i + 1
            return "".join(out)
        end = min((i for i in (self.text.find(c, self.at) for c in stops) if i >= 0), default=-1)
        if end < 0:
            raise BadValue(f"expected one of {' '.join(repr(c) for c in stops)} after the symbol at character {self.at + 1}")
        value, self.at = self.text[self.at : end], end
        return value


def encode_text(texts: list[str], kind: Kind, symbols: SymbolTable) -> np.ndarray:
    """The stored values of a column of Soufflé text (a fact file's fields) of a record or
    ADT kind; BadValue naming the first row (1-based) that does not parse."""
    distinct = list(dict.fromkeys(texts))
    parsed = []
    for text in distinct:
        try:
            parsed.append(from_text(text, kind))
        except BadValue as e:
            raise BadValue(f"row {texts.index(text) + 1}: {text!r}: {e}") from None
    ids = encode(parsed, kind, symbols)
    position = {text: i for i, text in enumerate(distinct)}
    return ids[np.fromiter((position[t] for t in texts), dtype=np.intp, count=len(texts))]


# ---- ordering ------------------------------------------------------------------------------


def sort_key(value, kind: Kind):
    """A key ordering values of `kind` totally (nil first; ADT values by branch number,
    then fields), for listing rows in a stable order."""
    if isinstance(kind, RecordType):
        return (0,) if value is None else (1, *(sort_key(v, k) for v, (_, k) in zip(value, kind.fields)))
    if isinstance(kind, ADTType):
        branch = next(b for b in kind.branches if b.name == value.name)
        return (branch.index, *(sort_key(v, k) for v, (_, k) in zip(value.args, branch.fields)))
    if kind == "float" and math.isnan(value):
        return math.inf
    return value


# ---- Arrow ---------------------------------------------------------------------------------


def to_arrow(values: list, kind: Kind):
    """A pyarrow array of Python values of a record or ADT kind (see the module)."""
    import pyarrow as pa

    plain = [_plain(v, kind) for v in values]
    depth = max((_depth(p) for p in plain), default=0)
    return pa.array(plain, type=arrow_type(kind, depth))


def _plain(value, kind: Kind):
    """A value as Arrow's Python conversion takes it: dicts for structs."""
    if isinstance(kind, RecordType):
        return None if value is None else {name: _plain(v, k) for v, (name, k) in zip(value, kind.fields)}
    if isinstance(kind, ADTType):
        if kind.enum:
            return value.name
        branch = next(b for b in kind.branches if b.name == value.name)
        plain = {"branch": value.name}
        if branch.fields:
            plain[branch.name] = {name: _plain(v, k) for v, (name, k) in zip(value.args, branch.fields)}
        return plain
    return value


def from_arrow(column, kind: Kind, symbols: SymbolTable) -> np.ndarray:
    """The stored values of an Arrow column of a record or ADT kind: Soufflé's text (strings),
    or the structs `to_arrow` makes; BadValue for a value that fits neither."""
    import pyarrow as pa

    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        if column.null_count:
            raise BadValue(f"{column.null_count} empty (null) values")
        texts = column.to_pylist()
        if isinstance(kind, ADTType) and kind.enum:  # `to_arrow` writes an enum's values by name, without `$`
            texts = [t if t.lstrip().startswith("$") else "$" + t for t in texts]
        return encode_text(texts, kind, symbols)
    return encode([_from_plain(v, kind) for v in column.to_pylist()], kind, symbols)


def _from_plain(plain, kind: Kind):
    """A value from the Python form of its Arrow struct (the inverse of `_plain`)."""
    if isinstance(kind, RecordType):
        if plain is None:
            return None
        if not isinstance(plain, dict):
            raise BadValue(f"{plain!r} is not a record of type '{kind.name}'")
        return tuple(_from_plain(plain.get(name), k) for name, k in kind.fields)
    if isinstance(kind, ADTType):
        name = plain if isinstance(plain, str) else plain.get("branch") if isinstance(plain, dict) else None
        branch = next((b for b in kind.branches if b.name == name), None)
        if branch is None:
            raise BadValue(f"{plain!r} is not a value of the ADT '{kind.name}'")
        fields = (plain.get(name) or {}) if isinstance(plain, dict) else {}
        return Branch(name, tuple(_from_plain(fields.get(f), k) for f, k in branch.fields))
    return plain


def _depth(plain) -> int:
    if isinstance(plain, dict):
        return 1 + max((_depth(v) for v in plain.values()), default=0)
    return 0


def arrow_type(kind: Kind, depth: int = 64):
    """The Arrow type of values of `kind` nested at most `depth` structs deep (deeper: null)."""
    import pyarrow as pa

    if not is_structured(kind):
        return {"number": pa.int64(), "unsigned": pa.uint64(), "float": pa.float64(), "symbol": pa.string()}[kind]
    if isinstance(kind, ADTType) and kind.enum:
        return pa.string()
    if depth <= 0:
        return pa.null()
    if isinstance(kind, RecordType):
        return pa.struct([(name, arrow_type(k, depth - 1)) for name, k in kind.fields])
    branches = [(b.name, pa.struct([(name, arrow_type(k, depth - 2)) for name, k in b.fields])) for b in kind.branches if b.fields]
    return pa.struct([("branch", pa.string()), *branches])
