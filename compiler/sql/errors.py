"""SQL compile errors, and where in the source a sqlglot node is.

The SQL front end raises the same CompileError hierarchy as Datalog
(compiler.errors), with two kinds of its own: `UnsupportedSQLError` -- valid
SQL that deltalog does not (yet) compile, naming the construct -- and
`UnknownColumnError`. sqlglot records, on identifiers, literals and function
names, the character offsets of the token they came from; `position(node,
source)` turns the earliest offset inside a node into a 1-based line and
column, so every error points at the SQL text that caused it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp

from compiler.errors import CompileError, Source, UnsupportedError

__all__ = ["UnsupportedSQLError", "UnknownColumnError", "Span", "position", "error_at"]


class UnsupportedSQLError(UnsupportedError):
    """Valid SQL that deltalog does not compile; the message names the construct."""


class UnknownColumnError(CompileError):
    """A column name that no table, view or subquery in scope has."""


@dataclass(frozen=True)
class Span:
    line: int
    column: int


def offset_position(text: str, offset: int) -> Span:
    """The 1-based line and column of character `offset` of `text`."""
    before = text[:offset]
    line = before.count("\n") + 1
    return Span(line, offset - (before.rfind("\n") + 1) + 1)


def position(node, source: Source) -> Span | None:
    """Where `node` starts in the source: its earliest token that sqlglot located."""
    if node is None:
        return None
    best = None
    for n in node.walk() if isinstance(node, exp.Expression) else ():
        meta = n._meta if hasattr(n, "_meta") else None
        if meta and "start" in meta:
            if best is None or meta["start"] < best:
                best = meta["start"]
    if best is None:
        parent = node.parent if isinstance(node, exp.Expression) else None
        return position(parent, source) if parent is not None else None
    return offset_position(source.text, best)


def error_at(cls, message: str, node, source: Source) -> CompileError:
    span = position(node, source)
    if span is None:
        return cls(message, None, None, source.name, None)
    return cls.at(message, span, source)


_LOCATED = re.compile(r"Line: (\d+), Col: (\d+)")


def located_message(message: str, source: Source, name: str | None = None) -> tuple[str, Span | None]:
    """sqlglot's 'Line: L, Col: C' (C is where the token *ends*) as a Span where it starts."""
    m = _LOCATED.search(message)
    if m is None:
        return message, None
    line, end = int(m.group(1)), int(m.group(2))
    start = end - len(name) + 1 if name else end
    return message[: m.start()].rstrip(" .,") , Span(line, max(start, 1))
