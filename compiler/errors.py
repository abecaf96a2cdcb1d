"""Compile errors: one hierarchy for every front end.

A CompileError says what is wrong and where: `line` and `column` (1-based) of
the offending thing in the source named `source_name`, plus the text of that
source line, so `str(err)` reads like a compiler diagnostic with a caret under
the column. Each kind of mistake has its own subclass so callers (and tests)
can tell them apart without parsing messages. Compilation either returns a
finished result or raises one of these; nothing is half-compiled.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "located_text",
    "Source",
    "CompileError",
    "ParseError",
    "ArityError",
    "UnsafeVariableError",
    "TypeMismatchError",
    "StratificationError",
    "UnknownRelationError",
    "DeclarationError",
    "UnsupportedError",
    "InlineError",
    "SubsumptionError",
    "UnknownFunctorError",
    "PreprocessorError",
    "ComponentError",
    "UnknownComponentError",
    "TypeArgumentError",
    "OverrideError",
    "NameClashError",
    "CompileWarning",
]


@dataclass(frozen=True)
class Source:
    """A named source text, kept so errors raised late can still quote it."""

    name: str
    text: str

    def line_text(self, line: int) -> str:
        lines = self.text.splitlines()
        return lines[line - 1] if 1 <= line <= len(lines) else ""


class CompileError(Exception):
    """Root of all compile errors."""

    def __init__(
        self,
        message: str,
        line: int | None = None,
        column: int | None = None,
        source_name: str = "<string>",
        source_line: str | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.source_name = source_name
        self.source_line = source_line

    @classmethod
    def at(cls, message: str, span, source: Source | None) -> "CompileError":
        """An error located at the start of `span` (anything with .line/.column)."""
        line, column = span.line, span.column
        if source is None:
            return cls(message, line, column)
        return cls(message, line, column, source.name, source.line_text(line))

    def __reduce__(self):
        return (type(self), (self.message, self.line, self.column, self.source_name, self.source_line))

    def __str__(self) -> str:
        return located_text(type(self).__name__, self.message, self.source_name, self.line, self.column, self.source_line)


def located_text(kind: str, message: str, source_name: str, line: int | None, column: int | None, source_line: str | None) -> str:
    """`file:line:column: Kind: message`, then the source line with a caret under the column."""
    where = source_name
    if line is not None:
        where += f":{line}:{column}"
    text = f"{where}: {kind}: {message}"
    if source_line is not None and column is not None and column >= 1:
        # Keep tabs so the caret lines up under tab-indented source.
        pad = "".join("\t" if ch == "\t" else " " for ch in source_line[: column - 1])
        text += f"\n  {source_line}\n  {pad}^"
    return text


class ParseError(CompileError):
    """The text is not in the language's grammar."""


class ArityError(CompileError):
    """A relation or functor is used with the wrong number of arguments."""


class UnsafeVariableError(CompileError):
    """A variable (or `_`) is not grounded by a positive body atom."""


class TypeMismatchError(CompileError):
    """A term's inferred type conflicts with another use of the same column or variable."""


class StratificationError(CompileError):
    """Negation or a non-monotone aggregate inside a recursive cycle."""


class UnknownRelationError(CompileError):
    """A relation name that the program (or session) does not know."""


class DeclarationError(CompileError):
    """A malformed declaration: duplicate, unknown type, unknown column, ..."""


class UnsupportedError(CompileError):
    """Valid in the source language, but not (yet) supported by deltalog."""


class InlineError(CompileError):
    """A relation declared `inline` that cannot be inlined (compiler.datalog.inline)."""


class SubsumptionError(CompileError):
    """A subsumptive rule (`r(..) <= r(..) :- body.`) that means nothing."""


class UnknownFunctorError(CompileError):
    """A call `@f(...)` of a functor no `.functor` declares, or no Python callable implements."""


class ComponentError(CompileError):
    """A Soufflé component that cannot be instantiated (compiler.datalog.components): an
    inheritance cycle, an instantiation nested without end; the subclasses below for the rest."""


class UnknownComponentError(ComponentError):
    """`.init` or a base list names a component that is not in scope."""


class TypeArgumentError(ComponentError):
    """A component is given a different number of type arguments than it has parameters."""


class OverrideError(ComponentError):
    """`.override` of a relation that is not inherited, or not declared `overridable`."""


class NameClashError(ComponentError):
    """Two components, instances, relations or types of one scope share a name."""


class PreprocessorError(CompileError):
    """The C preprocessor failed: an include file not found, `#if` without `#endif`,
    a malformed directive, `#error` (at the directive's file and line)."""


class CompileWarning(UserWarning):
    """Something the compiler accepted but ignores (e.g. an unknown `.pragma` key, a
    `match` pattern that is no regular expression), issued with `warnings.warn_explicit`
    at the program's file and line."""


class InvalidPatternWarning(UserWarning):
    """A `match` pattern read from the data is no regular expression: it matches nothing
    (and `!match` is false too), as in Soufflé, which warns likewise; once per pattern."""
