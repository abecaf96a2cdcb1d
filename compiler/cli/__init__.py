"""The `deltalog` command line.

    deltalog run PROGRAM.dl|.sql --input rel=PATH ... [--changes rel=PATH ...] [--output-dir DIR] [--format F]
    deltalog run PROGRAM --engine spark [--master URL] --input rel=PATH ... [--output-dir DIR]
    deltalog watch PROGRAM --input ... --changes-dir DIR --output-dir DIR --checkpoint DIR
    deltalog repl PROGRAM [--input ...] [--stop-on-error]
    deltalog explain PROGRAM [--dot FILE]
    deltalog check PROGRAM

Every command that takes a PROGRAM takes `-I DIR` too: where the Datalog
program's `#include` files are searched (compiler.datalog.preprocess).

Each command lives in its own module here (run, watch, repl, explain). Exit
codes: 0 success; 1 a user error -- a program that does not compile, a missing
file, a table whose columns or values do not fit -- reported as one line
(`file:line:column: ...` where it applies, then the source excerpt for
compile errors, and for SQL errors the data causes, such as a UNION ALL or MIN/MAX recursion
past --recursion-limit); 2 a bad command line; 130 stopped by Ctrl-C (SIGINT; for
watch, SIGTERM too: see compiler.cli.watch). No traceback for user errors; an
unexpected failure prints one line too (`--debug` shows the traceback).
Spark starts only when a command reads or writes a table; without a usable
Java it cannot, and the command says what Spark needs (runtime.spark.session).
"""

from __future__ import annotations

import argparse
import atexit
import os
import sys

from compiler.cli.common import UsageError, UserError
from compiler.errors import CompileError


def _check(args) -> int:
    from compiler.cli.run import program_of

    program = program_of(args)
    print(f"{args.program}: ok ({len(program.outputs)} outputs: {', '.join(program.outputs)})")
    return 0


def _run(args) -> int:
    from compiler.cli.run import run

    return run(args)


def _watch(args) -> int:
    from compiler.cli.watch import watch

    return watch(args)


def _repl(args) -> int:
    from compiler.cli.repl import repl

    return repl(args)


def _explain(args) -> int:
    from compiler.cli.explain import explain_command

    return explain_command(args)


def _schema_options(p) -> None:
    p.add_argument("--input", action="append", metavar="REL=PATH", help="a table of a SQL program (its schema is read from it)")
    p.add_argument("--input-dir", metavar="DIR", help="the tables of a SQL program: DIR/NAME.parquet|.csv|.jsonl or DIR/NAME/")


def _program_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("program", help="a .dl or .sql file")
    p.add_argument("-I", "--include-dir", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="search DIR for the Datalog program's #include files (after the including file's directory); repeatable")


def _join_plan_option(p: argparse.ArgumentParser) -> None:
    """The options of how a program is compiled (every command that loads one has them)."""
    from compiler.sql.program import RECURSION_LIMIT

    p.add_argument("--join-plan", choices=("auto", "binary", "delta"), default="auto",
                   help="multiway joins as delta queries (delta), as binary joins (binary), or delta for cyclic joins and where the cost model finds it cheaper (auto, the default; explain shows each choice)")
    p.add_argument("--recursion-limit", type=_positive, default=RECURSION_LIMIT, metavar="N",
                   help=f"SQL: iterations a UNION ALL recursive CTE, or one with MIN/MAX, may take before it is an error (default {RECURSION_LIMIT:,})")


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"not a positive integer: {text!r}")
    return n


def parser() -> argparse.ArgumentParser:
    from compiler.cli.run import add_input_options, add_output_options

    p = argparse.ArgumentParser(prog="deltalog", description="Incremental Datalog and SQL on differential dataflow.")
    p.add_argument("--debug", action="store_true", help="show tracebacks of unexpected errors")
    commands = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser("check", help="report a program's static errors")
    _program_argument(check)
    _join_plan_option(check)
    _schema_options(check)
    check.set_defaults(handler=_check)

    run = commands.add_parser("run", help="compute a program's outputs from input tables")
    _program_argument(run)
    _join_plan_option(run)
    add_input_options(run)
    run.add_argument("--allow-missing", action="store_true",
                     help="take an .input relation without a table as empty (listed on stderr) instead of failing")
    run.add_argument("--changes", action="append", metavar="REL=PATH", help="a change table for REL (columns, diff[, time]) applied after the load")
    add_output_options(run)
    run.add_argument("--engine", choices=("inprocess", "spark"), default="inprocess",
                     help="evaluate in this process (default; keeps answers up to date under --changes) or as Spark jobs"
                          " (a semi-naive fixpoint over DataFrames, for data beyond one machine; with --master for a cluster)")
    run.add_argument("--timings", action="store_true", help="print where the time went, stage by stage (stderr)")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress lines on a terminal (there are none on a pipe)")
    run.set_defaults(handler=_run)

    watch = commands.add_parser("watch", help="follow a directory of change files (Spark Structured Streaming)")
    _program_argument(watch)
    _join_plan_option(watch)
    add_input_options(watch)
    watch.add_argument("--changes-dir", required=True, metavar="DIR", help="change files arrive in DIR/REL/ (columns, diff[, time])")
    watch.add_argument("--output-dir", "-D", required=True, metavar="DIR", help="output changes go to DIR/REL/batch=N/")
    watch.add_argument("--format", choices=("parquet", "csv", "jsonl"), default="parquet")
    watch.add_argument("--checkpoint", required=True, metavar="DIR", help="where progress is kept for exactly-once restarts")
    watch.add_argument("--trigger", default="1 second", metavar="INTERVAL", help="micro-batch interval (default: 1 second)")
    watch.add_argument("--available-now", action="store_true", help="process the files present now, then stop")
    watch.add_argument("--max-files-per-batch", type=int, metavar="N", help="at most N new files per micro-batch")
    watch.set_defaults(handler=_watch)

    repl = commands.add_parser("repl", help="interactive: insert, remove, commit, dump, load")
    _program_argument(repl)
    _join_plan_option(repl)
    add_input_options(repl)
    repl.add_argument("--stop-on-error", action="store_true",
                      help="reading a script (not a terminal), stop at the first statement that fails, with exit code 1"
                           " (without it, errors are reported and the script goes on; exit code 0)")
    repl.set_defaults(handler=_repl)

    explain = commands.add_parser("explain", help="print the logical plan and the dataflow graph")
    _program_argument(explain)
    _join_plan_option(explain)
    _schema_options(explain)
    explain.add_argument("--dot", metavar="FILE", help="also write the dataflow as Graphviz DOT (FILE.png/.svg renders it when Graphviz is installed)")
    explain.set_defaults(handler=_explain)
    return p


def _spark_unavailable(err: Exception) -> bool:
    """Whether Spark could not start for want of Java (runtime.spark.session.SparkUnavailable).
    Looked up, not imported: importing Spark I/O costs every command a fifth of a second, and
    a command that never imported it never started Spark."""
    session = sys.modules.get("runtime.spark.session")
    return session is not None and isinstance(err, session.SparkUnavailable)


def _sql_runtime_error(err) -> bool:
    """Checked without importing SQL's compiler (and the runtime) for commands that never load it."""
    program = sys.modules.get("compiler.sql.program")
    return program is not None and isinstance(err, program.SQLRuntimeError)


def _without_java(args) -> str:
    """What the command could do without Java: run and repl read local Parquet with Arrow.
    Nothing to offer when the reader is Arrow already (Spark was needed for another format
    or to write), to the Spark engine, or to watch (Spark follows the change files)."""
    if args.command not in ("run", "repl") or args.reader == "arrow" or getattr(args, "engine", None) == "spark":
        return ""
    return "; for local Parquet inputs, --reader arrow needs no Java"


def _interrupted(err: BaseException) -> bool:
    """Ctrl-C arrived while a compiled kernel ran: Python raises the KeyboardInterrupt as the
    kernel returns, and the kernel's caller reports it as the cause of a SystemError."""
    while err is not None:
        if isinstance(err, KeyboardInterrupt):
            return True
        err = err.__cause__ or err.__context__
    return False


def main(argv: list[str] | None = None) -> int:
    from compiler.cli.common import compile_options

    args = parser().parse_args(argv)  # exits 2 on a bad command line
    try:
        with compile_options(recursion_limit=args.recursion_limit):
            return args.handler(args)
    except CompileError as err:  # the program is wrong: file:line:column
        print(err, file=sys.stderr)
        return 1
    except UserError as err:
        print(f"deltalog: error: {err}", file=sys.stderr)
        return 1
    except UsageError as err:
        print(f"deltalog {args.command}: usage error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head and the like
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("deltalog: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # a bug or an environment problem: one line unless --debug
        if _interrupted(err):
            print("deltalog: interrupted", file=sys.stderr)
            return 130
        if _sql_runtime_error(err):  # the data a SQL program is run on makes it an error: file:line:column
            print(err, file=sys.stderr)
            return 1
        if _spark_unavailable(err):
            print(f"deltalog: error: {err}{_without_java(args)}", file=sys.stderr)
            return 1
        if args.debug:
            raise
        message = str(err).strip().splitlines()[0] if str(err).strip() else ""
        print(f"deltalog: internal error: {type(err).__name__}: {message} (run with --debug for the traceback)", file=sys.stderr)
        return 1


def entry() -> None:
    """The `deltalog` command: `main()`, then the process ends without tearing the interpreter
    down. Exit handlers still run and the standard streams are flushed; what is skipped is
    unloading the compiled kernels and freeing the session's arrays one object at a time,
    0.3-0.5 s after the answer was written (the kernel frees the memory at once)."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`) or a closed stream
            pass
    atexit._run_exitfuncs()
    os._exit(code)


__all__ = ["entry", "main", "parser"]
