"""`deltalog run`: the answer of a program on tables, and optionally its change log.

Inputs come from `--input rel=PATH` (Parquet, CSV with a header, .facts or
JSON lines; a file or a directory), `--input-dir DIR` (`DIR/<rel>.parquet`,
`.csv`, `.jsonl`, `.facts` or `DIR/<rel>/`) and `--facts-dir DIR`
(`DIR/<rel>.facts`, as Soufflé's -F); an explicit `--input` wins. As Soufflé
fails on a missing fact file, a relation named by `.input` that gets no table
from these (nor a `--changes` table) is an error saying where it was looked
for, unless `--allow-missing` takes it as empty (and says so on stderr); the
other inputs (only declared, or with facts) are read when a table is there.
Everything is loaded at time 0 and committed. Then each `--changes rel=PATH` table (the
relation's columns plus `diff`, and optionally `time`) is applied: rows with a
`time` at that time (times start at 1; 0 is the initial load), and tables
without one at one new time per file, in command-line order and, within a
directory, file-name order. The outputs' final contents are written to
`OUTPUT_DIR/<rel>/` and, with changes, their change logs (columns, `time`,
`diff`, time 0 included) to `OUTPUT_DIR/<rel>.changes/`; `--format table`
(the default without `--output-dir`) prints them instead. `--engine spark`
evaluates the program as Spark jobs instead (compiler.cli.spark_engine).

Outputs go from the session's columns (compiler.results) to Arrow to the
writer, never through Python tuples: through Spark as one Arrow-backed
DataFrame (one part file per core; `--single-file` for one), or, with
`--reader arrow` (nothing then starts Spark), written by pyarrow. On a
terminal each stage shows a status line on stderr (compiler.cli.progress;
`--quiet` hides it); `--timings` prints the stages' times.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import warnings

from compiler.cli import souffle_output
from compiler.errors import CompileWarning
from compiler.cli.common import UsageError, UserError, load_program, parse_assignments, print_sizes, shown_outputs, spark_provider
from compiler.cli.inputs import Loader, dir_candidates, dir_inputs, facts_inputs, input_relation, precheck, pushdown
from compiler.cli.progress import Stages


def add_input_options(p) -> None:
    p.add_argument("--input", action="append", metavar="REL=PATH", help="load input relation REL from PATH")
    p.add_argument("--input-dir", metavar="DIR", help="load each input REL from DIR/REL.parquet|.csv|.jsonl|.facts or DIR/REL/")
    p.add_argument("--facts-dir", "-F", metavar="DIR", help="load each input REL from DIR/REL.facts (Soufflé's format)")
    p.add_argument("--no-pushdown", action="store_true", help="do not push the plan's filters into the Spark reads")
    p.add_argument("--reader", choices=("spark", "arrow"), default="spark",
                   help="read (and write) local tables with Spark (default) or directly with Arrow (faster on one machine; no Spark)")
    add_spark_options(p)


def add_spark_options(p) -> None:
    p.add_argument("--master", metavar="URL", help="Spark master (default: local[*], embedded)")
    p.add_argument("--conf", action="append", metavar="KEY=VALUE", help="a Spark configuration setting (repeatable)")


def add_output_options(p) -> None:
    p.add_argument("--output-dir", "-D", metavar="DIR", help="write each output to DIR/REL/")
    p.add_argument("--format", choices=("parquet", "csv", "jsonl", "table"), help="output format (default: parquet with --output-dir, else table)")
    p.add_argument("--single-file", action="store_true", help="write each output as one part file (Spark: one write task)")


def output_format(args) -> str:
    fmt = args.format or ("parquet" if args.output_dir else "table")
    if fmt != "table" and not args.output_dir:
        raise UsageError(f"--format {fmt} needs --output-dir")
    if getattr(args, "single_file", False) and not args.output_dir:
        raise UsageError("--single-file needs --output-dir (it says how outputs are written there)")
    return fmt


def check_output_dir(path: str, option: str = "--output-dir") -> None:
    """Create a local output directory now, so a path that cannot take the results fails
    before the computation instead of losing its answer at the end."""
    from runtime.spark.read import is_local, local_path

    if not is_local(path):
        return  # a cluster path (hdfs://, s3a://): Spark reports it when writing
    local = local_path(path)
    try:
        os.makedirs(local, exist_ok=True)
    except OSError as err:
        raise UserError(f"{option} {path}: cannot create it: {err.strerror}") from None
    if not os.access(local, os.W_OK | os.X_OK):
        raise UserError(f"{option} {path}: not writable")


def declared_tables(args) -> list[tuple[str, str]]:
    """(name, path) of the tables the command line names: what a SQL program's schema is read from."""
    tables: dict[str, str] = {}
    directory = getattr(args, "input_dir", None)
    if directory and os.path.isdir(directory):
        for entry in sorted(os.listdir(directory)):
            if entry.startswith((".", "_")):
                continue
            stem, suffix = os.path.splitext(entry)
            if suffix.lower() in (".parquet", ".csv", ".jsonl", ".json") or (not suffix and os.path.isdir(os.path.join(directory, entry))):
                tables.setdefault(stem, os.path.join(directory, entry))
    for rel, path in parse_assignments(getattr(args, "input", None), "--input"):
        tables[rel] = path
    return list(tables.items())


def program_of(args):
    """The command's program: load_program with the tables its options name (a SQL program's
    schema is read from them) and its -I and --join-plan."""
    return load_program(args.program, declared_tables(args), args.join_plan, args.include_dirs, untyped_tables(args))


def untyped_tables(args) -> dict[str, str]:
    """name -> path of the .facts files in --input-dir and --facts-dir: tables a SQL program
    cannot read (no column names or types), for the error that names one it asks for."""
    found: dict[str, str] = {}
    for directory in (getattr(args, "input_dir", None), getattr(args, "facts_dir", None)):
        if directory and os.path.isdir(directory):
            for entry in sorted(os.listdir(directory)):
                stem, suffix = os.path.splitext(entry)
                if suffix.lower() == ".facts":
                    found.setdefault(stem, os.path.join(directory, entry))
    return found


def initial_inputs(args, program) -> list[tuple[str, str]]:
    chosen: dict[str, str] = {}
    if getattr(args, "facts_dir", None):
        if not os.path.isdir(args.facts_dir):
            raise UserError(f"--facts-dir {args.facts_dir}: no such directory")
        chosen.update(facts_inputs(program, args.facts_dir))
    if getattr(args, "input_dir", None):
        if not os.path.isdir(args.input_dir):
            raise UserError(f"--input-dir {args.input_dir}: no such directory")
        chosen.update(dir_inputs(program, args.input_dir))
    for rel, path in parse_assignments(args.input, "--input"):
        chosen[input_relation(program, rel)] = path
    return list(chosen.items())


def require_inputs(args, program, changes) -> None:
    """Every `.input` relation has a table, else UserError naming it and where it was looked
    for; with --allow-missing, the inputs without one are listed on stderr as taken empty."""
    inputs = initial_inputs(args, program)
    precheck(program, inputs, changes)  # a table given but unreadable is the first thing to say
    given = {rel for rel, _ in inputs} | {rel for rel, _ in changes}
    _warn_unfed(program, given)
    missing = [rel for rel in getattr(program, "required_inputs", ()) if rel not in given]
    if not missing:
        return
    if getattr(args, "allow_missing", False):
        print(f"deltalog: note: no table for {_quoted(missing)}: taken as empty (--allow-missing)", file=sys.stderr)
        return
    rel = missing[0]
    others = f" (nor have {_quoted(missing[1:])})" if missing[1:] else ""
    raise UserError(f"input '{rel}' has no table: {_looked_for(args, program, rel)}{others};"
                    f" give --input {rel}=PATH, or --allow-missing to take it as empty")


def _warn_unfed(program, given) -> None:
    """A CompileWarning at the declaration of each Datalog relation that nothing fills -- no
    rule, fact, `.input` or table -- as Soufflé warns: with -F (--facts-dir), a relation that
    lacks its `.input` is not read, and would be quietly empty."""
    checked = getattr(program, "checked", None)
    if checked is None:  # SQL: its tables are all given (the schema is read from them)
        return
    with_facts = {fact.relation for fact in checked.facts}
    for rel in program.inputs:
        if rel not in given and rel not in program.required_inputs and rel not in with_facts:
            line = program.relations[rel].span.line
            warnings.warn_explicit(f"relation '{rel}' has no rules, facts, .input or table: it is empty",
                                   CompileWarning, checked.source.name if checked.source else "<string>", line)


def _quoted(names) -> str:
    return ", ".join(f"'{n}'" for n in names)


def _looked_for(args, program, rel: str) -> str:
    from compiler.program import facts_file

    places = []
    if getattr(args, "facts_dir", None):
        places.append(f"{facts_file(args.facts_dir, program.relations[rel])} (--facts-dir)")
    if getattr(args, "input_dir", None):
        places.append(", ".join(os.path.join(args.input_dir, n) for n in dir_candidates(program, rel)) + " (--input-dir)")
    if not places:
        return "no --input, --input-dir or --facts-dir gives one"
    return "there is no " + " nor ".join(places)


def open_session(args, program, spark, changes=(), stages=None):
    """A session with the initial inputs loaded at time 0 (not committed); `stages`
    (compiler.cli.progress) shows and times each table's read."""
    inputs = initial_inputs(args, program)
    precheck(program, inputs, changes)
    session = program.session(capture="outputs")
    loader = Loader(session, spark, {} if getattr(args, "no_pushdown", False) else pushdown(program), reader=getattr(args, "reader", "spark"),
                    progress=False if stages is not None else None)
    for rel, path in inputs:
        if stages is None:
            loader.load(rel, path, time=0)
            continue
        stage, loader.on_rows = stages.reading(rel)
        with stage:
            loader.load(rel, path, time=0)
    return session, loader


def run(args) -> int:
    fmt = output_format(args)
    changes = parse_assignments(args.changes, "--changes")
    if changes and args.engine == "spark":
        raise UsageError("--changes needs the in-process engine: the Spark engine evaluates the tables as they are"
                         " (keeping answers up to date as tables change stays with the in-process runtime)")
    spark = None
    if args.engine != "spark":
        spark = spark_provider(args)
        if spark_needed(args, changes):
            spark.start_in_background()  # the JVM starts while the program compiles and its runtime loads
    program = program_of(args)
    require_inputs(args, program, changes)
    if args.output_dir:
        check_output_dir(args.output_dir)
    if args.engine == "spark":
        from compiler.cli.spark_engine import run_spark_engine

        return run_spark_engine(args, program, fmt, initial_inputs)
    for rel, _ in changes:
        input_relation(program, rel)
    stages = Stages.for_terminal(args.quiet)
    spark.starting = lambda: stages.stage("spark start", "starting Spark")
    try:
        session, loader = open_session(args, program, spark, changes, stages)
        with stages.computing(session):
            session.commit()
        if changes:
            with stages.computing(session, "changes", "applying changes"):
                apply_changes(session, loader, changes)
        with stages.stage("write", "writing"):
            write_results(program, session, spark, args.output_dir, fmt, with_changes=bool(changes),
                          through_spark=args.reader != "arrow", single_file=args.single_file, stages=stages)
    finally:
        stages.close()
        spark.stop()
    if args.timings:
        if spark.startup_seconds is not None:
            stages.ran_beside("spark start", spark.startup_seconds)
        print(stages.summary(), file=sys.stderr)
    return 0


def spark_needed(args, changes) -> bool:
    """Whether the in-process run reads or writes a table through Spark, judged from the
    command line alone (Soufflé fact files are read without Spark)."""
    if args.reader == "arrow":
        return False
    paths = [path for _, path in declared_tables(args)] + [path for _, path in changes]
    return bool(args.output_dir) or any(not path.endswith(".facts") for path in paths)


def apply_changes(session, loader, changes) -> None:
    """Apply change tables after the initial commit; close every time they use."""
    from runtime.spark.read import is_local, read_dataframe

    next_time = session.time
    last = session.time - 1
    for rel, path in changes:
        source = loader.source(rel, path, changes=True)
        if loader.reader == "arrow" and is_local(path):
            table = loader.read(source)
            columns = table.column_names
        else:
            try:
                columns = read_dataframe(loader.spark.get(), source).columns
            except Exception as e:
                raise UserError(str(e)) from None
            table = None
        if "time" in columns:
            table = table if table is not None else loader.read(source)
            if table.num_rows:
                times = table.column("time").to_numpy(zero_copy_only=False)
                if int(times.min()) < session.time:
                    raise UserError(f"'{rel}': {path}: time {int(times.min())} is before 1 (time 0 is the initial load)")
                last = max(last, int(times.max()))
            loader.feed(source, table)
            continue
        for file in data_files(path):
            part = dataclasses.replace(source, path=file)
            loader.feed(part, loader.read(part), time=next_time)
            last = max(last, next_time)
            next_time += 1
    session.advance_to(max(last + 1, session.time))


def data_files(path: str) -> list[str]:
    """The data files of a local directory in name order (hidden and _-files skipped); else [path]."""
    if not os.path.isdir(path):
        return [path]
    found = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        found += [os.path.join(root, f) for f in sorted(files) if not f.startswith((".", "_")) and not f.endswith(".crc")]
    return sorted(found)


def write_results(program, session, spark, output_dir, fmt, with_changes: bool, through_spark: bool = True,
                  single_file: bool = False, stages=None) -> None:
    """Print or write each shown output (and with changes its change log) from the session's
    columns: through Spark, or by pyarrow when `through_spark` is off and the directory is local."""
    from runtime.spark.read import is_local
    from runtime.spark.write import write_arrow, write_table

    blocks = []
    written = []  # outputs written to output_dir in fmt
    fact_files = []  # (output, the Soufflé fact file it went to)
    for rel in shown_outputs(program):
        results = [(rel, session.table(rel))]
        if with_changes:
            results.append((f"{rel}.changes", session.changes(rel)))
        for name, result in results:
            if stages is not None:
                stages.show(f"writing {name}: {len(result):,} rows")
            directives = souffle_output.directives(program, name)
            printed = [o for o in directives if souffle_output.printed(o)] or ([{}] if fmt == "table" else [])
            blocks += [souffle_output.printed_text(program, name, o, result) for o in printed]
            if fmt == "table":
                continue
            for options in filter(souffle_output.to_fact_file, directives):
                fact_files.append((name, souffle_output.write_fact_file(program, name, options, result, output_dir)))
            if all(souffle_output.printed(o) or souffle_output.to_fact_file(o) for o in directives):
                continue  # no `.output` of it asks for the command's format
            if name == rel:
                written.append(name)
            # Records and ADT values: structs in Parquet written by Arrow; Soufflé's text in CSV,
            # JSON lines and what Spark writes (its writer here takes flat columns only).
            by_arrow = not through_spark and is_local(output_dir)
            table = result.arrow(ordered=False, records_as_text=not (by_arrow and fmt == "parquet"))  # a file's rows need no order: no sort
            if by_arrow:
                write_arrow(table, os.path.join(output_dir, name), fmt)
            else:
                write_table(spark.get(), table, os.path.join(output_dir, name), fmt, single_file=single_file)
    if blocks:
        print("\n\n".join(blocks))
    if written:
        print(f"wrote {', '.join(written)} to {output_dir} ({fmt})")
    if fact_files:
        print("wrote " + ", ".join(f"{name} to {path}" for name, path in fact_files))
    print_sizes(program, lambda rel: len(session.table(rel)))
