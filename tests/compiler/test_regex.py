"""Soufflé's regex dialect (compiler.plan.regex): libstdc++'s std::regex, ECMAScript grammar.

Every expectation below was checked against `std::regex_match` of g++ 12's libstdc++ (the
library Soufflé's expected outputs come from): True/False is the match, None a pattern
std::regex rejects."""

import warnings

import pytest

from compiler import compile_datalog
from compiler.errors import CompileWarning, InvalidPatternWarning
from compiler.plan.regex import ANY_CHARACTER, escape, regex_match

CASES = [
    # repeat counts: `{` always opens one
    ("fo{2}b.*", "foobar", True),
    ("fo{2}b.*", "fooobar", False),
    ("fo{x}b.*", "fo{x}bar", None),
    ("a{,2}", "a", None),
    ("a{2,1}", "aa", None),
    ("{2}", "", None),
    ("a}", "a}", True),  # ']' and '}' alone are ordinary
    ("a]", "a]", True),
    # quantifiers follow each other; `?` after one makes it lazy
    ("a**", "aaa", True),
    ("a+?b", "aab", True),
    ("a{1,2}?", "aa", True),
    ("*a", "a", None),
    ("^*", "", None),
    # brackets
    ("[[:digit:]]+", "123", True),
    ("[[:DIGIT:]]", "1", True),
    ("[[:foo:]]", "1", None),
    ("[[:alpha:]_][[:alnum:]]*", "_x1", True),
    ("[]", "", False),
    ("[^]", "\n", True),
    ("[a-]", "-", True),
    ("[a-c-e]", "-", True),
    ("[\\d-z]", "-", None),
    ("[z-a]", "b", None),
    ("[\\b]", "\b", True),
    ("[\\B]", "B", None),
    ("[[.a.]]", "a", True),
    ("[[=b=]]", "b", True),
    ("[a", "a", None),
    # escapes
    ("\\cA", "A", True),  # libstdc++ reads \cX as X
    ("\\x41\\u0062", "Ab", True),
    ("\\x4", "A", None),
    ("\\q", "q", True),
    ("\\0", "\0", True),
    ("\\d\\w\\s", "1_ ", True),
    ("(a)\\1", "aa", True),
    ("(a)|\\1b", "b", False),  # a back-reference to a group that did not match fails
    ("(a\\1)", "aa", None),  # its group is still open
    ("\\2(a)(b)", "bab", None),
    ("a\\", "a", None),
    # assertions, `.`, the ends of the text
    ("\\B", "", True),  # Python's \B fails on an empty text
    ("a\\b", "a", True),
    ("a(?=b)b", "ab", True),
    ("(?!a).", "b", True),
    (".", "\n", False),
    (".", "\r", False),
    ("a$", "a", True),
    ("a$\n", "a\n", False),  # `$` only at the end of the text
    ("(?i)a", "a", None),
    ("(?<n>a)", "a", None),
    ("(?<=a)b", "ab", None),
    ("a)", "a", None),
    ("(a", "a", None),
    # bytes: `.` is one byte of the UTF-8 text, classes are ASCII
    ("a.", "a\u00e9", False),
    ("a..", "a\u00e9", True),
    ("\\w", "\u00e9", False),
    ("|a", "", True),
]


@pytest.mark.parametrize(("pattern", "text", "expected"), CASES)
@pytest.mark.filterwarnings("ignore::compiler.errors.InvalidPatternWarning")
def test_regex_match_is_libstdcxx_ecmascript(pattern, text, expected):
    assert regex_match(pattern, text) is expected


def test_escape_and_any_character_build_patterns_for_sql_like():
    special = "a.b*c+d?(e)[f]{g}|h^i$j\\k"
    assert regex_match(escape(special), special) is True
    assert regex_match(escape(special), "a.b*c+d?(e)[f]{g}|h^i$j\\K") is False
    assert regex_match(ANY_CHARACTER, "\u00e9") is True  # one character, two bytes
    assert regex_match(ANY_CHARACTER, "ab") is False
    assert regex_match(f"{ANY_CHARACTER}*", "a\n\u00e9b") is True


def test_an_invalid_constant_pattern_warns_at_its_line_and_matches_nothing():
    text = '.decl s(x: symbol)\ns("abc").\n.decl m(x: symbol)\nm(x) :- s(x), match("(x[a-z", x).\n.decl n(x: symbol)\nn(x) :- s(x), !match("(x[a-z", x).\n.output m, n'
    with pytest.warns(CompileWarning, match=r"match\(\): the pattern '\(x\[a-z' is no regular expression") as caught:
        program = compile_datalog(text, "p.dl")
    assert [(w.filename, w.lineno) for w in caught if w.category is CompileWarning] == [("p.dl", 4), ("p.dl", 6)]  # each use, at its line
    session = program.session()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reported by the compiler already: not again when rows meet it
        session.commit()
    assert session.read("m") == session.read("n") == []


def test_an_invalid_pattern_from_the_data_warns_once():
    program = compile_datalog(".decl s(p: symbol, x: symbol)\n.input s\n.decl m(x: symbol)\nm(x) :- s(p, x), match(p, x).\n.output m")
    session = program.session()
    session.insert("s", [("(y[a-z", "a"), ("(y[a-z", "b"), ("[a-z]", "c")])
    with pytest.warns(InvalidPatternWarning, match=r"the pattern '\(y\[a-z' is no regular expression") as caught:
        session.commit()
    assert len([w for w in caught if w.category is InvalidPatternWarning]) == 1
    assert session.read("m") == [("c",)]
