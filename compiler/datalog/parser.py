"""Datalog text to AST: lark's LALR(1) parser over grammars/datalog.lark.

`parse_datalog(text)` returns a Program or raises a CompileError; lark's own
exceptions never escape. A syntax error is reported as a ParseError that says
what was found and, in words, what the parser could have accepted there
(groups such as "a term" or "an operator" stand for their many tokens).
Where the parser stops at Soufflé syntax for a feature deltalog lacks
(functors such as `lower`), the error is instead an
UnsupportedError naming the feature at its first token, which may lie well
before where parsing stopped.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from pathlib import Path
import re

from lark import Lark
from lark.exceptions import UnexpectedInput, UnexpectedToken, VisitError
from lark.lexer import PatternStr

from compiler.datalog.ast import Program
from compiler.datalog.builder import Builder, unsupported_directive_message
from compiler.datalog.components import instantiate_components
from compiler.errors import CompileError, ParseError, Source, UnsupportedError

_WORDS = {
    "IDENT": "an identifier",
    "INT": "a number",
    "FLOAT": "a float",
    "UNSIGNED": "an unsigned number",
    "STRING": "a string",
    "DECL": "'.decl'",
    "TYPE": "'.type'",
    "NUMBER_TYPE": "'.number_type'",
    "SYMBOL_TYPE": "'.symbol_type'",
    "IO_KIND": "'.input' '.output'",
    "COMP": "'.comp'",
    "INIT": "'.init'",
    "OVERRIDE": "'.override'",
    "FUNCTOR": "'.functor'",
    "CHOICE_DOMAIN": "'choice-domain'",
    "STATEFUL": "'stateful'",
    "QUALIFIED_NAME": None,  # where it fits, so does an identifier, which the message names
    "IPV4": None,  # an address is a number literal: where it fits, so does a number
    "HINT": "a qualifier such as 'btree'",
    "$END": "end of input",
    "UNSUPPORTED_DIRECTIVE": None,  # recognised only to reject it; never suggest it
    "PRAGMA": None,  # an option, not part of the language a message should teach
    "PLAN": None,  # a hint, likewise
}
_FOUND = {"INT": "number", "IPV4": "IPv4 address", "FLOAT": "float", "UNSIGNED": "unsigned number", "STRING": "string"}

_BINARY_OPERATORS = "+ - * / % ^ band bor bxor bshl bshr bshru land lor lxor".split()
_COMPARISONS = "= != < <= > >=".split()
_TERM_STARTS = (
    "an identifier, '_', a number, a float, an unsigned number, a string, 'nil', '[', '$', '(', '-', 'bnot', 'lnot', "
    "'cat', 'strlen', 'substr', 'to_number', 'to_string', 'to_float', 'to_unsigned', 'ord', 'range', 'autoinc', 'as', "
    "'count', 'sum', 'min', 'max', 'mean', '@'"
).split(", ")
# Whole groups of expected tokens are named by one word, checked in this order.
_GROUPS = (
    ("a term", set(_TERM_STARTS)),
    ("an operator", {f"'{op}'" for op in _BINARY_OPERATORS}),
    ("a comparison operator", {f"'{op}'" for op in _COMPARISONS}),
)


def read_grammar(name: str) -> str:
    """The text of grammars/<name>, shipped as package data of the `grammars` directory."""
    try:
        return files("grammars").joinpath(name).read_text(encoding="utf-8")
    except NotADirectoryError:
        # setuptools' editable installs add a non-directory path hook to a namespace
        # package's __path__, which importlib.resources rejects on Python 3.11.
        import grammars

        for entry in grammars.__path__:
            path = Path(entry) / name
            if path.is_file():
                return path.read_text(encoding="utf-8")
        raise


@lru_cache(maxsize=1)
def _lark() -> Lark:
    grammar = read_grammar("datalog.lark")
    # cache=True: the LALR tables (0.5 s of every process's first parse) are kept in a
    # file of the temp directory, keyed by the grammar and the options.
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True, cache=True)


def parse_datalog(text: str, source_name: str = "<string>") -> Program:
    """Parse Datalog source text into a Program (rules in disjunctive normal form), its
    components instantiated (compiler.datalog.components)."""
    source = Source(source_name, text)
    parser = _lark()
    try:
        tree = parser.parse(text)
    except UnexpectedInput as exc:
        raise _parse_error(exc, source, parser) from None
    try:
        program = Builder(source).transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, CompileError):
            raise exc.orig_exc from None
        raise
    return instantiate_components(program)


FUNCTORS = ("cat", "strlen", "substr", "to_number", "to_string", "to_float", "to_unsigned", "ord", "range", "min", "max")


# Soufflé functors deltalog lacks; a call of any other unknown name is a ParseError.
_SOUFFLE_FUNCTORS = {
    **{name: f"the functor '{name}' is not supported" for name in ("lower", "upper")},
}
_NOT_CODE = re.compile(r'"(\\.|[^"\\\n])*"|//[^\n]*|/\*(.|\n)*?\*/')


def _code_only(text: str) -> str:
    """`text` with strings and comments blanked (newlines kept): offsets stay valid."""
    return _NOT_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


@lru_cache(maxsize=1)
def _directive_pattern() -> re.Pattern:
    """A line starting with a directive the grammar's UNSUPPORTED_DIRECTIVE recognises."""
    return re.compile(r"(?m)^[ \t]*(" + _lark().get_terminal("UNSUPPORTED_DIRECTIVE").pattern.value + ")")


def _unsupported_feature(text: str, offset: int) -> tuple[str, int] | None:
    """Soufflé syntax deltalog lacks that explains a parse error at `offset`: what it is
    and the offset of its first token. An unsupported directive anywhere before the
    error comes first: a component's body parses as statements until its closing `}`."""
    code = _code_only(text)
    directive = _directive_pattern().search(code, 0, offset + 1)
    if directive:
        return unsupported_directive_message(directive.group(1).split()[0]), directive.start(1)
    here = code[offset : offset + 1]
    before = code[:offset].rstrip()
    if here == "(":
        call = re.search(r"([A-Za-z_?][A-Za-z0-9_?]*)\s*$", before)
        if call and call.group(1) in _SOUFFLE_FUNCTORS:
            return _SOUFFLE_FUNCTORS[call.group(1)], call.start(1)
    return None


def _describe_terminal(name: str, parser: Lark) -> str:
    if name in _WORDS:
        return _WORDS[name]
    pattern = parser.get_terminal(name).pattern
    return f"'{pattern.value}'" if isinstance(pattern, PatternStr) else name.lower()


def _describe_expected(names, parser: Lark) -> str:
    items = {_describe_terminal(n, parser) for n in names} - {None}
    words = []
    for label, members in _GROUPS:
        if members <= items:
            items -= members
            words.append(label)
    tokens = sorted(i for i in items if i.startswith("'"))
    words += sorted(i for i in items if not i.startswith("'"))
    spoken = ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else "".join(words)
    if not tokens:
        return spoken
    if len(tokens) == 1 and not words:
        return tokens[0]
    return "one of " + " ".join(tokens) + (" or " + spoken if words else "")


def _describe_found(token, text: str, parser: Lark) -> str:
    if token.type == "IDENT":
        return f"identifier '{token.value}'"
    if token.type in _FOUND:  # literals show as written: number 12, string "a"
        return f"{_FOUND[token.type]} {token.value}"
    # The contextual lexer only tries tokens the parser could take, so where `:-` is
    # out of place it reads `:`; say what the text has, the longest literal there.
    here = text[token.start_pos :]
    literals = (t.pattern.value for t in parser.terminals if isinstance(t.pattern, PatternStr))
    return "'" + max((lit for lit in literals if here.startswith(lit)), key=len, default=token.value) + "'"


def _end_position(text: str) -> tuple[int, int]:
    """Just after the last non-blank character: where "end of input" was found."""
    body = text.rstrip()
    line = body.count("\n") + 1
    return line, len(body) - (body.rfind("\n") + 1) + 1


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _parse_error(exc: UnexpectedInput, source: Source, parser: Lark) -> CompileError:
    offset = exc.pos_in_stream
    if isinstance(exc, UnexpectedToken):
        offset = len(source.text) if exc.token.type == "$END" else exc.token.start_pos
    unsupported = _unsupported_feature(source.text, offset) if offset is not None else None
    if unsupported:
        message, start = unsupported
        line, column = _position(source.text, start)
        return UnsupportedError(message, line, column, source.name, source.line_text(line))
    rest = source.text[exc.pos_in_stream :] if exc.pos_in_stream is not None else ""
    if rest.startswith("/*"):
        message = "unterminated comment ('/*' without '*/')"
        line, column = exc.line, exc.column
    elif isinstance(exc, UnexpectedToken):
        token = exc.token
        if token.type == "$END":
            line, column = _end_position(source.text)
            found = "end of input"
        else:
            line, column = token.line, token.column
            found = _describe_found(token, source.text, parser)
        # `accepts` replays the parser on each candidate; `expected` holds LALR's merged
        # lookaheads, which include tokens that cannot actually come next.
        expected = exc.accepts or exc.expected
        message = f"expected {_describe_expected(expected, parser)} but found {found}"
        call = re.search(r"(?<![.\w?])([A-Za-z_][A-Za-z0-9_?]*)\s*$", source.text[: token.start_pos]) if token.value == "(" else None
        if call:  # `name(` where only a term fits: a call of a functor we lack (not `.directive (`)
            message = f"unknown functor '{call.group(1)}' (the functors: {', '.join(FUNCTORS)})"
            if "\n" not in source.text[call.start(1) : token.start_pos]:
                column -= token.start_pos - call.start(1)
    else:
        line, column = exc.line, exc.column
        if rest.startswith('"'):
            message = "unterminated string (strings end with '\"' on the same line)"
        else:
            message = f"unexpected character '{exc.char}'"
    return ParseError(message, line, column, source.name, source.line_text(line))
