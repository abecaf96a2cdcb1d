"""`deltalog repl`: drive a session by hand, in the spirit of DDlog's command line.

Statements end with `;` (several may share a line; a line without `;` is one
statement):

    insert edge(1, 2), insert edge(2, 3);   rows at the open time
    remove edge(1, 2);
    commit;                                  close the time; print the outputs' changes
    dump reach;    dump;                     a relation's rows (dump alone: every output)
    load edge path/to/edge.parquet;          a table (Parquet, CSV, .facts) at the open time
    help;  exit;

Changes print as `reach(1, 2) +1` (or `-1`), rows as `reach(1, 2)`, strings
in double quotes. A mistake prints one `error:` line (with the input line
number when reading a script) and changes nothing; reading from a pipe, the
exit code is 1 if any statement failed. With a terminal, lines are edited
and kept in a history (readline).
"""

from __future__ import annotations

import ast
import json
import os
import sys

from compiler.cli.common import UserError, load_program, spark_provider
from compiler.cli.inputs import Loader, input_relation, pushdown
from compiler.cli.run import declared_tables, initial_inputs

HELP = """\
statements (end each with ;):
  insert REL(v, ...)[, insert REL(...)...]   add rows at the open time
  remove REL(v, ...)                         remove rows at the open time
  commit                                     close the open time and print the outputs' changes
  dump [REL]                                 print REL's rows (all outputs without REL)
  load REL PATH                              load a table (Parquet, CSV with header, .facts, JSONL)
  help                                       this text
  exit | quit                                leave"""


class Repl:
    def __init__(self, program, spark, out=sys.stdout, reader: str = "spark"):
        self.program = program
        self.session = program.session(capture="all")
        self.spark = spark
        self.loader = Loader(self.session, spark, pushdown(program), progress=False, reader=reader)
        self.out = out

    # ---- statements ----

    def execute(self, statement: str) -> bool:
        """Run one statement; False to stop."""
        words = statement.split(None, 1)
        if not words:
            return True
        verb, rest = words[0].lower(), (words[1] if len(words) > 1 else "").strip()
        if verb in ("exit", "quit"):
            return False
        if verb == "help":
            self.print(HELP)
        elif verb in ("insert", "remove"):
            self.update(statement)
        elif verb == "commit":
            if rest:
                raise UserError("commit takes no arguments")
            self.commit()
        elif verb == "dump":
            self.dump(rest)
        elif verb == "load":
            self.load(rest)
        else:
            raise UserError(f"unknown statement {verb!r} (try: help)")
        return True

    def update(self, statement: str) -> None:
        from compiler.program import SessionError

        updates = parse_updates(statement)
        for rel, _, _ in updates:
            input_relation(self.program, rel)
        # check every row before applying any: a bad statement changes nothing
        grouped: dict[tuple[str, int], list] = {}
        for rel, diff, row in updates:
            grouped.setdefault((rel, diff), []).append(row)
        try:
            for (rel, diff), rows in grouped.items():
                from compiler.program import _check_row

                for row in rows:
                    _check_row(row, self.program.relations[rel])
            for (rel, diff), rows in grouped.items():
                (self.session.insert if diff > 0 else self.session.remove)(rel, rows)
        except SessionError as e:
            raise UserError(str(e)) from None

    def commit(self) -> None:
        time = self.session.time
        changes = self.session.commit()
        count = sum(len(c) for c in changes.values())
        self.print(f"committed time {time}: {count} change{'s' if count != 1 else ''}")
        for rel, rows in changes.items():
            for row, diff in rows:
                self.print(f"{show_row(rel, row)} {diff:+d}")

    def dump(self, rest: str) -> None:
        from compiler.program import SessionError

        names = [rest] if rest else list(self.program.outputs)
        for rel in names:
            try:
                rows = self.session.read(rel)
            except SessionError as e:
                raise UserError(str(e)) from None
            for row in rows:
                self.print(show_row(rel, row))

    def load(self, rest: str) -> None:
        parts = rest.split(None, 1)
        if len(parts) != 2:
            raise UserError("load takes a relation and a path: load edge data/edge.parquet")
        rel, path = parts[0], parts[1].strip().strip("\"'")
        input_relation(self.program, rel)
        n = self.loader.load(rel, path, time=self.session.time)
        self.print(f"loaded {n} rows into {rel} at time {self.session.time}")

    def print(self, text: str) -> None:
        print(text, file=self.out, flush=True)


def show_row(rel: str, row: tuple) -> str:
    return f"{rel}({', '.join(json.dumps(v) if isinstance(v, str) else repr(v) for v in row)})"


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
            value = ast.literal_eval("(" + statement[k + 1 : end] + ",)") if statement[k + 1 : end].strip() else ()
        except (ValueError, SyntaxError):
            raise UserError(f"{verb} {rel}: cannot read the values ({statement[k + 1:end]}): use numbers and \"strings\"") from None
        updates.append((rel, 1 if verb == "insert" else -1, tuple(value)))
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
    program = load_program(args.program, declared_tables(args), args.join_plan, args.include_dirs)
    spark = spark_provider(args)
    interactive = sys.stdin.isatty()
    failed = False
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
            stop = False
            for statement in split_statements(line.split("#", 1)[0] if line.lstrip().startswith("#") else line):
                try:
                    if not shell.execute(statement):
                        stop = True
                        break
                except UserError as e:
                    failed = True
                    where = "" if interactive else f"<stdin>:{lineno}: "
                    print(f"{where}error: {e}", file=sys.stderr, flush=True)
            if stop:
                break
    finally:
        spark.stop()
    return 1 if failed and not interactive else 0


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
