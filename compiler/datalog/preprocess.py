"""The C preprocessor in front of the Datalog parser, as Soufflé runs `cpp`.

Soufflé passes every program through the C preprocessor before parsing it, so
programs use `#include "file"`, `#define` (object- and function-like macros),
`#undef`, `#ifdef`/`#ifndef`/`#if`/`#elif`/`#else`/`#endif`. deltalog does the same
with pcpp (a C99 preprocessor in Python). Soufflé's own `.include "file"` and
`.once` (include this file at most once) are the same operations under other
names, so they are rewritten to `#include` and `#pragma once` on the way in, in
the program and in every file it includes.

A program with none of these directives is parsed as it is: the preprocessor
costs nothing then (`needs_preprocessing`).

Positions. The preprocessed text is one stream; pcpp marks where each stretch
of it came from with `#line N "file"` lines, as cpp does. `preprocess` strips
those markers and keeps, for every line of the result, the file and line it came
from (a `LineMap`). A CompileError raised on the result is moved back to the
original file and line by `LineMap.relocate`, so an error in an included file
names that file. Columns are those of the source line as long as no macro on it
expanded to text of another length; comments are kept as blanks (not squeezed to
one space) so that they do not shift the columns after them.

`RAM_DOMAIN_SIZE` is predefined as 64, the width of deltalog's numbers, as Soufflé's
driver defines it (programs choose 32- or 64-bit arithmetic by it).

Errors of the preprocessor itself -- an include file not found, `#if` without
`#endif`, a malformed `#define`, `#error` -- are PreprocessorErrors at the
directive's file and line.
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass

from compiler.errors import CompileError, PreprocessorError, Source

# Any line starting with a preprocessor or an include directive; a program without one
# skips the preprocessor.
_DIRECTIVE = re.compile(r"^[ \t]*(#|\.include\b|\.once\b)", re.M)
# Soufflé's spellings, rewritten to cpp's; each keeps the line (and its column) count.
_SOUFFLE_INCLUDE = re.compile(r"^([ \t]*)\.include\b", re.M)
_SOUFFLE_ONCE = re.compile(r"^([ \t]*)\.once\b", re.M)
RAM_DOMAIN_SIZE = 64  # predefined, as Soufflé's driver defines it for cpp
_LINE_MARKER = re.compile(r'#line (\d+)(?: "(.*)")?$')
# How messages point at a second place ("... its declaration (line 3, column 1)").
_MENTION = re.compile(r"\bline (\d+), column (\d+)")


def needs_preprocessing(text: str) -> bool:
    """Whether `text` has a directive the preprocessor acts on."""
    return _DIRECTIVE.search(text) is not None


def _cpp_spelling(text: str) -> str:
    return _SOUFFLE_ONCE.sub(r"\1#pragma once", _SOUFFLE_INCLUDE.sub(r"\1#include", text))


@dataclass(frozen=True)
class LineMap:
    """Where each line of a preprocessed text came from: `origins[i]` is the
    (file, line) of line i + 1; `texts` holds each file's text, to quote in errors."""

    origins: tuple[tuple[str, int], ...]
    texts: dict[str, str]

    def origin(self, line: int) -> tuple[str, int] | None:
        """The file and line line `line` of the preprocessed text came from."""
        return self.origins[line - 1] if 1 <= line <= len(self.origins) else None

    def relocate(self, error: CompileError) -> CompileError:
        """`error` (raised at a line of the preprocessed text) moved to its original file and line."""
        if error.line is None or self.origin(error.line) is None:
            return error
        name, line = self.origin(error.line)

        def mention(match: re.Match) -> str:  # another place the message points at
            other, at = self.origins[int(match.group(1)) - 1]
            return f"line {at}, column {match.group(2)}" if other == name else f"{other}:{at}:{match.group(2)}"

        error.message = _MENTION.sub(lambda m: mention(m) if 1 <= int(m.group(1)) <= len(self.origins) else m.group(0), error.message)
        error.args = (error.message,)
        error.source_name, error.line = name, line
        error.source_line = Source(name, self.texts.get(name, "")).line_text(line)
        return error


class _Preprocessor:
    """One run of pcpp over a program, raising the first error as a PreprocessorError."""

    def __init__(self, source_name: str, include_dirs):
        from pcpp import Preprocessor

        outer = self

        class Hooks(Preprocessor):
            def on_error(self, file, line, msg):
                raise outer.error(msg.strip(), file, line)

            def on_file_open(self, is_system_include, includepath):
                with open(includepath, encoding="utf-8") as f:
                    text = f.read()
                return io.StringIO(_cpp_spelling(text))

            def on_include_not_found(self, is_malformed, is_system_include, curdir, includepath):
                directive = self.lastdirective
                what = "malformed #include" if is_malformed else f"include file '{includepath}' not found"
                searched = ", ".join(str(d) for d in [curdir, *self.path] if d) or "no directories"
                raise outer.error(f"{what} (searched: {searched})", directive.source, directive.lineno)

            def on_directive_unknown(self, directive, toks, ifpassthru, precedingtoks):
                if directive.value == "error":
                    raise outer.error("#error " + "".join(t.value for t in toks).strip(), directive.source, directive.lineno)
                return True  # drop #warning, #pragma ... and anything cpp would not pass on either

            def on_comment(self, tok):
                tok.value = re.sub(r"[^\n]", " ", tok.value)  # blanks keep the columns after it
                return True

            def group_lines(self, input, abssource):
                outer.texts[abssource] = input
                return super().group_lines(input, abssource)

        self.cpp = Hooks()
        self.cpp.line_directive = "#line"
        self.cpp.rewrite_paths = []  # files by absolute path; `name` says how errors call them
        self.cpp.auto_pragma_once_enabled = False  # only `#pragma once` / `.once` mean once
        # Soufflé's driver tells cpp the width of its values; deltalog's are 64-bit.
        self.cpp.define(f"RAM_DOMAIN_SIZE {RAM_DOMAIN_SIZE}")
        self.top = os.path.abspath(source_name)
        self.source_name = source_name
        self.texts: dict[str, str] = {}
        for directory in include_dirs:
            self.cpp.add_path(str(directory))

    def name(self, file) -> str:
        """How errors name `file`: the program by the name it was given, an included file
        by its path from the working directory (absolute if it lies outside it)."""
        if file in (None, "", self.top):
            return self.source_name
        relative = os.path.relpath(file)
        return file if relative.startswith("..") else relative

    def error(self, message: str, file, line) -> PreprocessorError:
        name = self.name(file)
        text = self.texts.get(file, "")
        return PreprocessorError(message, line, 1, name, Source(name, text).line_text(line))

    def run(self, text: str) -> tuple[str, LineMap]:
        self.cpp.parse(_cpp_spelling(text), self.top)
        out = io.StringIO()
        self.cpp.write(out)
        lines, origins = [], []
        file, line = self.source_name, 1
        for produced in out.getvalue().split("\n"):
            marker = _LINE_MARKER.match(produced)
            if marker:
                line = int(marker.group(1))
                file = self.name(marker.group(2)) if marker.group(2) is not None else file
                continue
            lines.append(produced)
            origins.append((file, line))
            line += 1
        texts = {self.name(k): v for k, v in self.texts.items()}
        texts[self.source_name] = text
        return "\n".join(lines), LineMap(tuple(origins), texts)


def preprocess(text: str, source_name: str = "<string>", include_dirs=()) -> tuple[str, LineMap | None]:
    """The program as the parser should read it, and its LineMap (None: nothing to do,
    the text is returned as it is). `include_dirs` are searched for `#include "f"` after
    the including file's own directory (cpp's -I); a text that is not a file
    (`source_name` "<string>") includes relative to the working directory."""
    if not needs_preprocessing(text):
        return text, None
    return _Preprocessor(source_name, include_dirs).run(text)


__all__ = ["LineMap", "needs_preprocessing", "preprocess"]
