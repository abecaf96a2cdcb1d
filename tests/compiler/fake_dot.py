"""A stand-in for Graphviz's `dot`, for tests of `deltalog explain --dot FILE.png|.svg`.

`install_fake_dot(directory)` writes an executable `dot` there and returns the
directory (to put on PATH). It checks the contract the CLI relies on: exactly
`-Tpng` or `-Tsvg`, then `-o FILE`, and DOT text (`digraph ...`) on stdin; it
writes the format's name and the text to FILE. Anything else exits 2 with an
error on stderr, as Graphviz does. With `fail=MESSAGE` it prints MESSAGE on
stderr and exits 1 instead, like dot rejecting its input.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

SCRIPT = '''#!{python}
import sys

FAIL = {fail!r}
args = sys.argv[1:]
if len(args) != 3 or args[0] not in ("-Tpng", "-Tsvg") or args[1] != "-o":
    sys.stderr.write(f"Error: fake dot: unexpected arguments {{args}}\\n")
    sys.exit(2)
text = sys.stdin.read()
if FAIL:
    sys.stderr.write(FAIL + "\\n")
    sys.exit(1)
if not text.startswith("digraph "):
    sys.stderr.write("Error: fake dot: no digraph on stdin\\n")
    sys.exit(2)
with open(args[2], "w") as out:
    out.write(args[0][2:] + "\\n" + text)
'''


def install_fake_dot(directory: Path, fail: str | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    dot = directory / "dot"
    dot.write_text(SCRIPT.format(python=sys.executable, fail=fail))
    dot.chmod(dot.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return directory
