"""`deltalog repl`: drive a session by hand, in the spirit of DDlog's command line.

The same statements serve Datalog and SQL programs. Statements end with `;`
(several may share a line; a line without `;` is one statement); a line
starting with `#` is a comment:

    insert edge(1, 2), insert edge(2, 3);   rows at the open time
    remove edge(1, 2);
    commit;                                  close the time; print the outputs' changes
    dump reach;    dump;                     a relation's rows (dump alone: every output)
    load edge path/to/edge.parquet;          a table (Parquet, CSV, .facts) at the open time
    help;  exit;

`STATEMENTS` is the one list of statements: `help` prints it and `execute`
dispatches by it, so the help and what is accepted cannot drift apart.
Values are numbers, "strings" (or 'strings'), and for SQL tables NULL, true
and false. Changes print as `reach(1, 2) +1` (or `-1`), rows as
`reach(1, 2)`, strings in double quotes, NULL as NULL.

A mistake prints one `error:` line (with the input line number when reading
a script) and changes nothing. Reading a script, as psql does, the session
goes on after an error and exits 0; `--stop-on-error` (sqlite3's `-bail`,
psql's ON_ERROR_STOP) makes the first error end it with exit code 1. With a
terminal, lines are edited and kept in a history (readline).
"""

from __future__ import annotations

import ast
import json
import os
import sys
from typing import NamedTuple

import numpy as np

from compiler.cli.common import UserError, spark_provider
from compiler.cli.inputs import Loader, input_relation, pushdown
from compiler.cli.run import initial_inputs, program_of


class Statement(NamedTuple):
    words: tuple[str, ...]  # the verbs that start it
    usage: str
    summary: str
    method: str  # the Repl method that runs it: method(verb, rest) -> False to end the session


STATEMENTS = (
    Statement(("insert",), "insert REL(v, ...)", "add a row at the open time", "update"),
    Statement(("remove",), "remove REL(v, ...)", "remove a row at the open time", "update"),
    Statement(("commit",), "commit", "close the open time and print the outputs' changes", "commit"),
    Statement(("dump",), "dump [REL]", "print REL's rows (every output without REL)", "dump"),
    Statement(("load",), "load REL PATH", "add a table's rows at the open time (Parquet, CSV with a header, .facts, JSON lines)", "load"),
    Statement(("help",), "help", "this text", "help"),
    Statement(("exit", "quit"), "exit | quit", "leave (so does the end of the input)", "leave"),
)
WORDS = {word: statement for statement in STATEMENTS for word in statement.words}
HELP = "\n".join([
    "statements (end each with ;):",
    *(f"  {s.usage:<20} {s.summary}" for s in STATEMENTS),
    "insert and remove chain with commas: insert edge(1, 2), remove edge(2, 3).",
    "Values: numbers, \"strings\", and for SQL tables NULL, true, false. A line starting with # is a comment.",
])


class Repl:
    def __init__(self, program, spark, out=sys.stdout, reader: str = "spark"):
        self.program = program
        self.session = program.session(capture="all")
        self.spark = spark
        self.loader = Loader(self.session, spark, pushdown(program), progress=False, reader=reader)
        self.out = out

    # ---- statements ----

    def execute(self, statement: str) -> bool:
        """Run one statement; False to end the session. UserError for any mistake."""
        from compiler.program import SessionError

        words = statement.split(None, 1)
        if not words:
            return True
        verb, rest = words[0].lower(), (words[1] if len(words) > 1 else "").strip()
        known = WORDS.get(verb)
        if known is None:
            raise UserError(f"unknown statement {verb!r} (statements: {', '.join(WORDS)}; help explains them)")
        try:
            return getattr(self, known.method)(verb, rest) is not False
        except SessionError as e:  # a bad row, a closed time, a removal of what is not there, a SQL runtime error
            raise UserError(str(e)) from None

    def update(self, verb: str, rest: str) -> None:
        updates = parse_updates(f"{verb} {rest}")
        by_relation: dict[str, tuple[list, list]] = {}
        for rel, diff, row in updates:
            rows, diffs = by_relation.setdefault(input_relation(self.program, rel), ([], []))
            rows.append(row)
            diffs.append(diff)
        # encode (which checks) every row before applying any: a bad row changes nothing;
        # each relation's rows then go in as one submission, refused whole if it removes what is not there
        blocks = {rel: (self.session.encode_rows(rel, rows), diffs) for rel, (rows, diffs) in by_relation.items()}
        for rel, (block, diffs) in blocks.items():
            self.session.update_columns(rel, block, diff=np.array(diffs, dtype=np.int64))

    def help(self, verb: str, rest: str) -> None:
        self.print(HELP)

    def leave(self, verb: str, rest: str) -> bool:
        return False

    def commit(self, verb: str, rest: str) -> None:
        if rest:
            raise UserError("commit takes no arguments")
        time = self.session.time
        changes = self.session.commit()
        count = sum(len(c) for c in changes.values())
        self.print(f"committed time {time}: {count} change{'s' if count != 1 else ''}")
        for rel, rows in changes.items():
            for row, diff in rows:
                self.print(f"{show_row(rel, row, self._kinds(rel))} {diff:+d}")

    def dump(self, verb: str, rest: str) -> None:
        names = [rest] if rest else list(self.program.outputs)
        for rel in names:
            for row in self.session.read(rel):
                self.print(show_row(rel, row, self._kinds(rel)))

    def load(self, verb: str, rest: str) -> None:
        parts = rest.split(None, 1)
        if len(parts) != 2:
            raise UserError("load takes a relation and a path: load edge data/edge.parquet")
        rel, path = parts[0], parts[1].strip().strip("\"'")
        input_relation(self.program, rel)
        n = self.loader.load(rel, path, time=self.session.time)
        self.print(f"loaded {n} rows into {rel} at time {self.session.time}")

    def print(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def _kinds(self, rel: str):
        """A Datalog relation's column kinds (records and ADT values are shown as Soufflé writes them)."""
        info = self.program.relations.get(rel)
        return getattr(info, "kinds", None)


def show_row(rel: str, row: tuple, kinds=None) -> str:
    kinds = kinds or [None] * len(row)
    return f"{rel}({', '.join(_show_value(v, k) for v, k in zip(row, kinds))})"


def _show_value(value, kind=None) -> str:
    if kind is not None and not isinstance(kind, str):  # a record type or ADT
        from compiler.values import to_text

        return to_text(value, kind)
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, str) else repr(value)


SQL_WORDS = {"null": None, "true": True, "false": False}  # SQL's literals, in any case


def parse_values(text: str) -> tuple:
    """`1, -2.5, "x", NULL` -> (1, -2.5, "x", None); ValueError for anything but literals."""
    if not text.strip():
        return ()
    try:
        tree = ast.parse(f"({text},)", mode="eval").body
    except SyntaxError:
        raise ValueError(text) from None
    return tuple(_literal(node) for node in tree.elts)


def _literal(node):
    if isinstance(node, ast.Name) and node.id.lower() in SQL_WORDS:
        return SQL_WORDS[node.id.lower()]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) and isinstance(node.operand, ast.Constant):
        return ast.literal_eval(node)
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (int, float, str))):
        return node.value
    raise ValueError(ast.unparse(node))


def parse_updates(statement: str) -> list[tuple[str, int, tuple]]:
    """`insert a(1, 2), remove b("x")` -> [("a", 1, (1, 2)), ("b", -1, ("x",))]."""
    updates = []
    i, n = 0, len(statement)
    while True:
        while i < n and statement[i] in " \t\r\n,":
            i += 1
        if i >= n:
            break
        j = i
        while j < n and statement[j].isalpha():
            j += 1
        verb = statement[i:j].lower()
        if verb not in ("insert", "remove"):
            raise UserError(f"expected insert or remove, found {statement[i:i + 20]!r}")
        k = statement.find("(", j)
        if k < 0:
            raise UserError(f"{verb}: expected REL(values), found {statement[j:].strip()!r}")
        rel = statement[j:k].strip()
        if not rel.replace("_", "a").replace(".", "a").isalnum():
            raise UserError(f"{verb}: {rel!r} is not a relation name")
        end = _closing(statement, k)
        try:
            values = parse_values(statement[k + 1 : end])
        except ValueError:
            raise UserError(f"{verb} {rel}: cannot read the values ({statement[k + 1:end]}): use numbers, \"strings\", NULL, true, false") from None
        updates.append((rel, 1 if verb == "insert" else -1, values))
        i = end + 1
    return updates


def _closing(text: str, start: int) -> int:
    depth, quote, i = 0, None, start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise UserError(f"unbalanced parentheses in {text[start:].strip()!r}")


def split_statements(line: str) -> list[str]:
    """Split on `;` outside string literals."""
    parts, current, quote = [], [], None
    for c in line:
        if quote:
            current.append(c)
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
            current.append(c)
        elif c == ";":
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(c)
    tail = "".join(current).strip()
    if tail:
        parts.append(tail)
    return [p for p in parts if p]


def repl(args) -> int:
    program = program_of(args)
    spark = spark_provider(args)
    interactive = sys.stdin.isatty()
    bail = args.stop_on_error and not interactive  # at a terminal, an error only returns to the prompt
    try:
        shell = Repl(program, spark, reader=getattr(args, "reader", "spark"))
        inputs = initial_inputs(args, program)
        for rel, path in inputs:
            n = shell.loader.load(rel, path, time=0)
            shell.print(f"loaded {n} rows into {rel}")
        if interactive:
            _history()
            shell.print(f"deltalog repl: {args.program} (inputs: {', '.join(program.inputs) or 'none'};"
                        f" outputs: {', '.join(program.outputs)}). Type help; for statements.")
        lineno = 0
        while True:
            try:
                line = input(">> " if interactive else "")
            except EOFError:
                break
            lineno += 1
            if line.lstrip().startswith("#"):
                continue
            for statement in split_statements(line):
                try:
                    if not shell.execute(statement):
                        return 0
                except UserError as e:
                    where = "" if interactive else f"<stdin>:{lineno}: "
                    print(f"{where}error: {e}", file=sys.stderr, flush=True)
                    if bail:
                        return 1
    finally:
        spark.stop()
    return 0


def _history() -> None:
    try:
        import atexit
        import readline
    except ImportError:
        return
    path = os.path.join(os.path.expanduser("~"), ".deltalog_history")
    try:
        readline.read_history_file(path)
    except OSError:
        pass
    atexit.register(lambda: _save_history(readline, path))


def _save_history(readline, path: str) -> None:
    try:
        readline.write_history_file(path)
    except OSError:
        pass
