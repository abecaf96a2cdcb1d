"""Soufflé's regular expressions: C++ std::regex (ECMAScript grammar, libstdc++) in Python.

Soufflé's `match(pattern, text)` is `std::regex_match(text, std::regex(pattern))`: the
whole text must match, and a pattern std::regex rejects makes both `match` and `!match`
false (Soufflé prints a warning). The dialect is libstdc++'s ECMAScript, which differs
from Python's `re` in ways that change answers, so `translate` parses the pattern as
libstdc++ does and writes an equivalent Python pattern, or returns None where libstdc++
throws:

- std::regex works on the bytes of a std::string (UTF-8 here): `.` is one byte, classes
  are the C locale's (ASCII). The translation is a bytes pattern, matched against the
  text's UTF-8 bytes; every literal is written as `\\xHH`, so nothing is read twice.
- `.` matches any byte but `\\n` and `\\r`; `^`/`$` only at the ends of the text.
- Brackets: POSIX classes `[[:digit:]]`, `[[.c.]]`, `[[=c=]]`; `[]` matches nothing and
  `[^]` any byte; `-` after a range or class is literal; `\\b` is backspace inside.
- Escapes: `\\0 \\f \\n \\r \\t \\v`, `\\xHH`, `\\uHHHH` (its low byte: a char holds one),
  `\\cX` is X itself (libstdc++'s reading), digits are a back-reference to a closed
  group, any other escaped character is itself.
- A `{` always opens a repeat count (`fo{x}` is an error, where Python reads a literal);
  quantifiers may follow each other (`a**`), each applying to the previous repetition;
  a trailing `?` makes one lazy. Inline flags, named groups, lookbehind are errors.

Limits: collating names longer than one character (`[[.space.]]`) are treated as
errors; libstdc++'s cap on the automaton's size (huge repeat counts) is not modelled.
"""

from __future__ import annotations

import re
import warnings
from functools import lru_cache

from compiler.errors import InvalidPatternWarning

_SPECIAL = b"^$\\.*+?()[]{}|"
_ESCAPED_CHARS = {ord("0"): 0, ord("f"): 12, ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("v"): 11}
_CLASS_ESCAPES = b"dDsSwW"
_HEX = b"0123456789abcdefABCDEF"


def _ascii_ranges(*spans: str) -> str:
    """A Python bracket body for the characters of `spans` ("a-z", "_", ...), as \\xHH."""
    out = []
    for span in spans:
        if len(span) == 3 and span[1] == "-":
            out.append(f"\\x{ord(span[0]):02x}-\\x{ord(span[2]):02x}")
        else:
            out.extend(f"\\x{ord(c):02x}" for c in span)
    return "".join(out)


# The C locale's classes (libstdc++'s regex_traits::lookup_classname names; ASCII only).
_POSIX_CLASSES = {
    "alnum": _ascii_ranges("0-9", "A-Z", "a-z"),
    "alpha": _ascii_ranges("A-Z", "a-z"),
    "blank": _ascii_ranges(" \t"),
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": _ascii_ranges("0-9"),
    "d": _ascii_ranges("0-9"),
    "graph": "\\x21-\\x7e",
    "lower": _ascii_ranges("a-z"),
    "print": "\\x20-\\x7e",
    "punct": "\\x21-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7e",
    "space": _ascii_ranges(" \t\n\r\x0b\x0c"),
    "s": _ascii_ranges(" \t\n\r\x0b\x0c"),
    "upper": _ascii_ranges("A-Z"),
    "xdigit": _ascii_ranges("0-9", "A-F", "a-f"),
    "w": _ascii_ranges("0-9", "A-Z", "a-z", "_"),
}


class _Invalid(Exception):
    """std::regex would throw regex_error for this pattern."""


def _byte(b: int) -> str:
    return f"\\x{b:02x}"


class _Translator:
    """Recursive descent over libstdc++'s ECMAScript grammar (disjunction, alternative,
    term = assertion | atom quantifier*), writing Python regex source as it goes."""

    def __init__(self, pattern: bytes):
        self.p = pattern
        self.i = 0
        self.groups = 0  # capturing groups opened so far
        self.open_groups: list[int] = []

    def peek(self, k: int = 0):
        j = self.i + k
        return self.p[j] if j < len(self.p) else None

    def take(self) -> int:
        if self.i >= len(self.p):
            raise _Invalid
        b = self.p[self.i]
        self.i += 1
        return b

    def translate(self) -> str:
        out = self.disjunction()
        if self.i != len(self.p):  # an unmatched ')' (or a quantifier with nothing to repeat)
            raise _Invalid
        return out

    def disjunction(self) -> str:
        parts = [self.alternative()]
        while self.peek() == ord("|"):
            self.i += 1
            parts.append(self.alternative())
        return "|".join(parts)

    def alternative(self) -> str:
        out = []
        while True:
            term = self.term()
            if term is None:
                return "".join(out)
            out.append(term)

    def term(self):
        b = self.peek()
        if b is None or b in b"|)*+?{":
            return None  # the caller decides whether this ends the alternative or is an error
        if b == ord("^"):
            self.i += 1
            return "\\A"
        if b == ord("$"):
            self.i += 1
            return "\\Z"
        if b == ord("\\") and self.peek(1) in (ord("b"), ord("B")):
            self.i += 2
            # Python's \B never matches in an empty text, libstdc++'s does: not a \b.
            return "\\b" if self.p[self.i - 1] == ord("b") else "(?!\\b)"
        if b == ord("(") and self.peek(1) == ord("?") and self.peek(2) in (ord("="), ord("!")):
            sign = chr(self.p[self.i + 2])
            self.i += 3
            return f"(?{sign}{self.closed_group()})"  # an assertion: no quantifier may follow
        atom = self.atom()
        while (quantifier := self.quantifier()) is not None:
            atom = f"(?:{atom}){quantifier}"
        return atom

    def closed_group(self) -> str:
        inner = self.disjunction()
        if self.peek() != ord(")"):
            raise _Invalid
        self.i += 1
        return inner

    def quantifier(self):
        b = self.peek()
        if b in (ord("*"), ord("+"), ord("?")):
            self.i += 1
            q = chr(b)
        elif b == ord("{"):
            self.i += 1
            low = self.count()
            if low is None:
                raise _Invalid
            q = "{%d" % low
            if self.peek() == ord(","):
                self.i += 1
                high = self.count()
                if high is not None and high < low:
                    raise _Invalid
                q += "," + ("" if high is None else str(high))
            if self.peek() != ord("}"):
                raise _Invalid
            self.i += 1
            q += "}"
        else:
            return None
        if self.peek() == ord("?"):
            self.i += 1
            q += "?"
        return q

    def count(self):
        start = self.i
        while self.peek() is not None and ord("0") <= self.peek() <= ord("9"):
            self.i += 1
        return int(self.p[start : self.i]) if self.i > start else None

    def atom(self) -> str:
        b = self.take()
        if b == ord("."):
            return "[^\\n\\r]"
        if b == ord("("):
            if self.peek() == ord("?"):
                if self.peek(1) != ord(":"):
                    raise _Invalid  # (?i), (?<name>...), (?<=...): not ECMAScript in libstdc++
                self.i += 2
                return f"(?:{self.closed_group()})"
            self.groups += 1
            self.open_groups.append(self.groups)
            inner = self.closed_group()
            self.open_groups.pop()
            return f"({inner})"
        if b == ord("["):
            return self.bracket()
        if b == ord("\\"):
            kind, value = self.escape(in_bracket=False)
            if kind == "backref":
                if value > self.groups or value in self.open_groups:
                    raise _Invalid
                return f"(?:\\{value})"
            return value if kind == "class" else _byte(value)
        if b in b"^$*+?{|)":  # handled by term; here only when nothing precedes a quantifier
            raise _Invalid
        return _byte(b)  # ']' and '}' are ordinary characters in libstdc++

    def escape(self, in_bracket: bool):
        """After a backslash: ("char", byte), ("class", Python class) or ("backref", n)."""
        b = self.take()
        if b in _ESCAPED_CHARS:
            return "char", _ESCAPED_CHARS[b]
        if b == ord("b"):  # word boundaries are read by term; in a bracket it is backspace
            if not in_bracket:
                raise AssertionError("\\b outside a bracket is an assertion")
            return "char", 8
        if b == ord("B") and in_bracket:
            raise _Invalid
        if b in _CLASS_ESCAPES:
            return "class", "\\" + chr(b)
        if b == ord("c"):
            return "char", self.take()
        if b in (ord("x"), ord("u")):
            digits = bytes(self.take() for _ in range(2 if b == ord("x") else 4))
            if any(d not in _HEX for d in digits):
                raise _Invalid
            return "char", int(digits, 16) & 0xFF
        if ord("0") <= b <= ord("9"):
            start = self.i - 1
            while self.peek() is not None and ord("0") <= self.peek() <= ord("9"):
                self.i += 1
            if in_bracket:
                raise _Invalid
            return "backref", int(self.p[start : self.i])
        return "char", b

    def bracket(self) -> str:
        """After '[': libstdc++'s _M_insert_bracket_matcher. `last` is the element a dash
        would start a range from: a byte, "class" (no range may start there) or None
        (after a range, where a dash is a literal)."""
        negated = self.peek() == ord("^")
        if negated:
            self.i += 1
        items: list[str] = []
        last = None

        def push(element):
            nonlocal last
            if isinstance(last, int):
                items.append(_byte(last))
            last = element

        start = self.i
        kind, value = self.bracket_token()
        if kind in ("char", "dash"):  # a leading dash is a literal
            last = value if kind == "char" else ord("-")
        else:
            self.i = start
        while True:
            kind, value = self.bracket_token()
            if kind == "end":
                break
            if kind == "char":
                push(value)
            elif kind == "class":
                push("class")
                items.append(value)
            else:
                after_dash = self.i
                next_kind, next_value = self.bracket_token()
                if next_kind == "end":  # "-]": a literal dash
                    push(ord("-"))
                    break
                if last == "class":
                    raise _Invalid
                if last is None:  # a dash after a range is a literal character
                    self.i = after_dash
                    push(ord("-"))
                    continue
                if next_kind == "class":
                    raise _Invalid
                items.append(_range(last, next_value if next_kind == "char" else ord("-")))
                last = None
        if isinstance(last, int):
            items.append(_byte(last))
        if not items:
            return "[\\x00-\\xff]" if negated else "(?!)"
        return f"[{'^' if negated else ''}{''.join(items)}]"

    def bracket_token(self):
        """("end", None), ("dash", None), ("char", byte) or ("class", Python bracket body)."""
        b = self.take()  # the end of the pattern inside a bracket is an error
        if b == ord("]"):
            return "end", None
        if b == ord("-"):
            return "dash", None
        if b == ord("[") and self.peek() in (ord(":"), ord("."), ord("=")):
            delimiter = self.take()
            end = self.p.find(bytes([delimiter, ord("]")]), self.i)
            if end < 0:
                raise _Invalid
            name = self.p[self.i : end]
            self.i = end + 2
            if delimiter == ord(":"):
                body = _POSIX_CLASSES.get(name.decode("latin-1").lower())
                if body is None:
                    raise _Invalid
                return "class", body
            if len(name) != 1:
                raise _Invalid
            # A collating element [.c.] is a character; an equivalence class [=c=] a class.
            return ("char", name[0]) if delimiter == ord(".") else ("class", _byte(name[0]))
        if b == ord("\\"):
            kind, value = self.escape(in_bracket=True)
            return kind, value
        return "char", b


def _signed(b: int) -> int:
    return b - 256 if b >= 128 else b


def _range(low: int, high: int) -> str:
    """A bracket range as libstdc++ has it: bounds compared as (signed) chars, so
    [\\x00-\\xff] is an error and [\\xff-a] holds 0xff and 0x00..'a'."""
    if _signed(low) > _signed(high):
        raise _Invalid
    if _signed(low) < 0 <= _signed(high):
        return f"{_byte(low)}-\\xff\\x00-{_byte(high)}"
    return f"{_byte(low)}-{_byte(high)}"


@lru_cache(maxsize=512)
def translate(pattern: str) -> re.Pattern | None:
    """The compiled Python bytes regex equivalent to std::regex(pattern), or None where
    std::regex would throw. Match it against `text.encode()` with `fullmatch`."""
    try:
        return re.compile(_Translator(pattern.encode("utf-8")).translate().encode("ascii"))
    except (_Invalid, re.error):
        return None


# Invalid patterns already reported: a program's own constants by the compiler (at their
# line), patterns read from the data here, each once.
_REPORTED: set[str] = set()


def regex_match(pattern: str, text: str):
    """Soufflé's match(pattern, text): True or False, or None for an invalid pattern (then
    both `match` and `!match` are false, and the pattern is reported once)."""
    regex = translate(pattern)
    if regex is None:
        if pattern not in _REPORTED:
            _REPORTED.add(pattern)
            message = f"match(): the pattern {pattern!r} is no regular expression (C++ std::regex, ECMAScript): it matches nothing"
            warnings.warn_explicit(message, InvalidPatternWarning, "<data>", 0)
        return None
    return regex.fullmatch(text.encode("utf-8")) is not None


def report_invalid_constant(pattern: str) -> bool:
    """Whether `pattern` (a program's constant) is no regular expression; if so, the
    caller warns at its position and it is not reported again when the data meets it."""
    if translate(pattern) is not None:
        return False
    _REPORTED.add(pattern)
    return True


# One UTF-8 encoded character (a lead byte and its continuation bytes), in this dialect.
ANY_CHARACTER = "(?:[\\x00-\\x7f]|[\\xc0-\\xff][\\x80-\\xbf]*)"


def escape(text: str) -> str:
    """A pattern matching exactly `text`: each special character behind a backslash."""
    return "".join("\\" + c if c.encode() in _SPECIAL else c for c in text)


__all__ = ["translate", "regex_match", "report_invalid_constant", "escape", "ANY_CHARACTER"]
