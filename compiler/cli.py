"""The `deltalog` command line.

So far one command: `deltalog check PROGRAM.dl` compiles a program and reports
its static errors (exit 0 when it compiles, 1 with one `file:line:column` error
otherwise, 2 for usage errors). Running programs against tables (run, changes,
watch, repl, explain) arrives with the Spark-loaded inputs.
"""

from __future__ import annotations

import argparse
import sys

from compiler.errors import CompileError
from compiler.program import compile_file


def _check(args) -> int:
    try:
        program = compile_file(args.program)
    except CompileError as err:
        print(err, file=sys.stderr)
        return 1
    except OSError as err:
        print(f"deltalog: cannot read {args.program}: {err.strerror}", file=sys.stderr)
        return 1
    print(f"{args.program}: ok ({len(program.outputs)} outputs: {', '.join(program.outputs)})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="deltalog", description="Incremental Datalog on differential dataflow.")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="report a program's static errors")
    check.add_argument("program", help="a .dl file")
    check.set_defaults(handler=_check)
    args = parser.parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
