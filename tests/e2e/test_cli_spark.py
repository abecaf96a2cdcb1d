"""The deltalog CLI as a subprocess on the bundled Parquet example: run, --changes, watch
(killed, or stopped by SIGINT and SIGTERM, and restarted), repl through stdin (Datalog
and SQL, its help against what it accepts, --stop-on-error), explain --dot, the error
cases, and Spark commands without Java.

Every answer is compared with the session API's answer on the same data (the
oracle), never with numbers written here. Each command that reads tables starts
its own Spark (tens of seconds on a busy 2-core machine), so the tests that need
Spark are few: run, run --changes, six watch runs (three to kill, three to
signal), and one repl session that loads tables; the SQL run reads its Parquet
with Arrow (`--reader arrow`, no Spark: Spark's reads are the other tests'), as
do the other repl tests. The uninterrupted watch runs beside the one that gets
killed.
"""

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import compiler

ROOT = Path(__file__).resolve().parents[2]
REACH = str(ROOT / "examples" / "reach.dl")
DATA = str(ROOT / "examples" / "reach")


# Small tables: the JVM's quick (C1-only) compiler and the serial collector roughly halve
# Spark's startup and first query on a busy 2-core machine (and exercise --conf pass-through).
QUICK_JVM = ["--conf", "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"]


def command(args):
    spark = args and args[0] in ("run", "watch", "repl")
    return [sys.executable, "-m", "compiler.cli", *args, *(QUICK_JVM if spark else [])]


def cli(*args, stdin=None, timeout=600, env=None):
    return subprocess.run(command(args), capture_output=True, text=True, input=stdin, timeout=timeout, cwd=ROOT, env=env)


def start(*args, **options) -> subprocess.Popen:
    return subprocess.Popen(command(args), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **options)


def finish(proc: subprocess.Popen, timeout=600) -> subprocess.CompletedProcess:
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def base_session():
    session = compiler.compile_file(REACH).session()
    session.load_facts(DATA)  # the .facts the bundled Parquet files were made from
    return session


def parse_table(text: str, name: str) -> list[tuple]:
    """Rows of `name`'s block in `--format table` output (integers only here)."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(f"{name} ("))
    rows = []
    for line in lines[start + 3 :]:
        if not line.strip():
            break
        rows.append(tuple(int(v) for v in line.split()))
    return rows


def read_dir(path) -> list[tuple]:
    table = pq.read_table(path)
    return [tuple(r.values()) for r in table.to_pylist()]


def write_parquet(path, columns: dict, mtime=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({k: pa.array(v, pa.int64()) for k, v in columns.items()}), path)
    if mtime is not None:
        os.utime(path, (mtime, mtime))


# ---- run ----


def test_run_prints_the_answer_of_the_bundled_parquet_example():
    done = cli("run", REACH, "--input-dir", DATA)
    assert done.returncode == 0, done.stderr
    oracle = base_session()
    oracle.commit()
    assert parse_table(done.stdout, "reach") == oracle.read("reach")
    assert "Traceback" not in done.stderr and "WARN" not in done.stderr


def test_run_dispatches_sql_with_the_schema_read_from_the_tables():
    done = cli("run", str(ROOT / "examples" / "reach.sql"), "--input-dir", DATA, "--reader", "arrow")
    assert done.returncode == 0, done.stderr
    schema = {"edge": {"src": "bigint", "dst": "bigint"}, "root": {"r": "bigint"}}
    oracle = compiler.compile_sql((ROOT / "examples" / "reach.sql").read_text(), schema=schema).session()
    oracle.insert("edge", [r[:2] for r in read_dir(f"{DATA}/edge.parquet")])
    oracle.insert("root", read_dir(f"{DATA}/root.parquet"))
    oracle.commit()
    assert parse_table(done.stdout, "reach") == sorted(oracle.read("reach"))
    assert len(oracle.read("reach")) > 10


def test_run_changes_writes_change_logs_and_final_contents(tmp_path):
    # edge changes without a time column: one time per file (times 1, 2, name order);
    # root changes with a time column: their own times.
    write_parquet(tmp_path / "edge" / "a.parquet", {"src": [0, 41], "dst": [41, 42], "diff": [1, 1]})
    write_parquet(tmp_path / "edge" / "b.parquet", {"src": [0, 2], "dst": [41, 4], "diff": [-1, -1]})
    write_parquet(tmp_path / "root.parquet", {"r": [41, 0], "diff": [1, -1], "time": [2, 3]})
    out = tmp_path / "out"
    done = cli("run", REACH, "--input", f"edge={DATA}/edge.parquet", "--input", f"root={DATA}/root.parquet",
               "--changes", f"edge={tmp_path / 'edge'}", "--changes", f"root={tmp_path / 'root.parquet'}",
               "--output-dir", str(out))
    assert done.returncode == 0, done.stderr

    oracle = base_session()
    oracle.commit()
    oracle.insert("edge", [(0, 41), (41, 42)], time=1)
    oracle.remove("edge", [(0, 41), (2, 4)], time=2)
    oracle.insert("root", [(41,)], time=2)
    oracle.remove("root", [(0,)], time=3)
    oracle.advance_to(4)
    assert sorted(read_dir(out / "reach")) == oracle.read("reach")
    expected_log = Counter(row + (t, d) for row, t, d in oracle.change_log("reach"))
    assert Counter(read_dir(out / "reach.changes")) == expected_log
    assert {t for *_, t, _ in read_dir(out / "reach.changes")} == {0, 1, 2, 3}
    assert pq.read_table(out / "reach.changes").column_names == ["r", "n", "time", "diff"]


# ---- watch ----


# (relation, rows, diff) of each change file, oldest first
CHANGE_PLAN = [
    ("edge", [(0, 40), (40, 41)], 1),
    ("root", [(40,)], 1),
    ("edge", [(0, 40)], -1),
    ("edge", [(41, 42), (2, 40)], 1),
    ("root", [(2,)], -1),
]


def _change_files(directory: Path, plan=CHANGE_PLAN) -> list[tuple[str, list, int]]:
    """The change files of `plan` for `edge` and `root`, oldest first; the plan."""
    for i, (rel, rows, diff) in enumerate(plan):
        cols = {"src": [r[0] for r in rows], "dst": [r[1] for r in rows]} if rel == "edge" else {"r": [r[0] for r in rows]}
        cols["diff"] = [diff] * len(rows)
        write_parquet(directory / rel / f"{i:04d}.parquet", cols, mtime=1_000_000 + 10 * i)
    return plan


def _oracle_changes(plan) -> Counter:
    """reach's changes with one time per change file, after the initial load at time 0."""
    oracle = base_session()
    oracle.commit()
    for rel, rows, diff in plan:
        (oracle.insert if diff > 0 else oracle.remove)(rel, rows)
        oracle.commit()
    return Counter(row + (t, d) for row, t, d in oracle.change_log("reach"))


def _accumulated(out: Path) -> list[tuple]:
    """Every row of every batch's output files (Parquet or JSON lines part files)."""
    import pyarrow.json as pj

    rows = []
    for part in sorted(out.glob("reach/batch=*/part-*")):
        if part.suffix == ".json":
            rows += [(r["r"], r["n"], r["time"], r["diff"]) for r in pj.read_json(part).to_pylist()]
        elif part.suffix == ".parquet":
            rows += read_dir(part)
    return rows


def _watch_args(changes, out, checkpoint, *extra):
    return ["watch", REACH, "--input-dir", DATA, "--changes-dir", str(changes), "--output-dir", str(out),
            "--checkpoint", str(checkpoint), "--max-files-per-batch", "1", *extra]


def test_watch_killed_mid_stream_and_restarted_equals_an_uninterrupted_run(tmp_path):
    changes = tmp_path / "changes"
    plan = _change_files(changes)

    # uninterrupted (written as JSON lines; the interrupted run writes Parquet), beside the interrupted one
    args = _watch_args(changes, tmp_path / "out1", tmp_path / "cp1", "--available-now", "--format", "jsonl")
    running = start(*args, start_new_session=True)
    try:
        finished_before_kill, again = _kill_and_restart(changes, tmp_path / "out2", tmp_path / "cp2", len(plan))
        whole = finish(running)
    finally:
        if running.poll() is None:  # a failure above: do not leave its Spark behind
            os.killpg(running.pid, signal.SIGKILL)
            running.communicate()
    assert whole.returncode == 0, whole.stderr
    uninterrupted = _accumulated(tmp_path / "out1")
    assert list((tmp_path / "out1").glob("reach/batch=*/part-*.json"))
    assert again.returncode == 0, again.stderr
    assert f"recovered {finished_before_kill} batches" in again.stdout

    assert Counter(uninterrupted) == _oracle_changes(plan)

    resumed = _accumulated(tmp_path / "out2")
    assert len(resumed) == len(set(resumed))  # nothing twice
    assert Counter(resumed) == Counter(uninterrupted)  # nothing lost


def _kill_and_restart(changes, out, checkpoint, files: int) -> tuple[int, subprocess.CompletedProcess]:
    """kill -9 a watch once at least two batches are done, then restart it until done:
    (batches finished before the kill, the restarted run)."""
    proc = start(*_watch_args(changes, out, checkpoint, "--trigger", "1 second"), start_new_session=True)
    ledger = checkpoint / "deltalog" / "batches"
    _await_records(proc, ledger, 2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    finished_before_kill = len(list(ledger.glob("*.json")))
    assert 2 <= finished_before_kill < files
    return finished_before_kill, cli(*_watch_args(changes, out, checkpoint, "--available-now"))


def _await_records(proc: subprocess.Popen, ledger: Path, n: int) -> None:
    """Wait until a running watch has recorded at least `n` batches in its ledger."""
    deadline = time.time() + 400
    while time.time() < deadline and proc.poll() is None:
        if ledger.is_dir() and len(list(ledger.glob("*.json"))) >= n:
            return
        time.sleep(0.2)
    assert proc.poll() is None, proc.communicate()[1]
    raise AssertionError(f"no {n} batches recorded in {ledger} in time")


def test_watch_stops_between_batches_on_sigint_or_sigterm_and_a_restart_goes_on(tmp_path):
    """SIGINT, then after a restart SIGTERM, each once the run has recorded a batch of its own;
    a last run finishes the files. Each signal: exit code 130, one line, and every batch the run
    started was finished and recorded. Together the runs wrote what the oracle says, once."""
    changes, out, checkpoint = tmp_path / "changes", tmp_path / "out", tmp_path / "cp"
    plan = _change_files(changes, CHANGE_PLAN + [("edge", [(42, 43)], 1), ("root", [(41,)], 1), ("edge", [(41, 42)], -1)])
    ledger = checkpoint / "deltalog" / "batches"
    recorded = 0
    for sig in (signal.SIGINT, signal.SIGTERM):
        proc = start(*_watch_args(changes, out, checkpoint, "--trigger", "2 seconds"), start_new_session=True)
        try:
            _await_records(proc, ledger, recorded + 1)
            proc.send_signal(sig)
            done = finish(proc)
        finally:
            if proc.poll() is None:  # a failure above: do not leave its Spark behind
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
        assert done.returncode == 130, done.stderr
        assert done.stderr.splitlines() == [
            f"deltalog: stopped by {sig.name} between batches ({len(list(ledger.glob('*.json')))} batches done);"
            " start again with the same --checkpoint to go on"], done.stderr
        ran = sum(1 for line in done.stdout.splitlines() if line.startswith("batch "))
        assert recorded + ran == len(list(ledger.glob("*.json"))) < len(plan)  # nothing begun and left undone
        recorded += ran

    last = cli(*_watch_args(changes, out, checkpoint, "--available-now"))
    assert last.returncode == 0, last.stderr
    assert f"recovered {recorded} batches" in last.stdout
    resumed = _accumulated(out)
    assert len(resumed) == len(set(resumed))  # nothing twice
    assert Counter(resumed) == _oracle_changes(plan)  # nothing lost


# ---- repl ----


def test_repl_through_stdin_matches_the_session(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("src,dst\n1,2\n3,abc\n")
    script = "\n".join([
        f"load edge {DATA}/edge.parquet;",
        f"load root {DATA}/root.facts; commit;",
        "insert edge(0, 40), insert edge(40, 41);",
        "commit;",
        "remove edge(0, 40); commit;",
        f"load edge {bad};",
        'insert edge(1, "x");',
        "dump reach;",
    ]) + "\n"
    done = cli("repl", REACH, stdin=script)
    assert done.returncode == 0  # errors are reported and the script goes on (exit 1 only with --stop-on-error)
    errors = done.stderr.strip().splitlines()
    assert len(errors) == 2, done.stderr
    assert errors[0].startswith("<stdin>:6: error: 'edge'") and "'abc'" in errors[0] and "row 2" in errors[0], errors[0]
    assert errors[1].startswith("<stdin>:7: error: 'edge': row (1, 'x'): column 'dst'"), errors[1]

    oracle = base_session()
    first = oracle.commit()
    oracle.insert("edge", [(0, 40), (40, 41)])
    second = oracle.commit()
    oracle.remove("edge", [(0, 40)])
    third = oracle.commit()
    expected = []
    for t, changes in enumerate([first, second, third]):
        lines = [f"reach({r}, {n}) {d:+d}" for (r, n), d in changes.get("reach", [])]
        expected += [f"committed time {t}: {len(lines)} change{'s' if len(lines) != 1 else ''}", *lines]
    out = done.stdout.splitlines()
    commits = [l for l in out if not l.startswith("loaded ") and not (l.startswith("reach(") and " " not in l.split(")")[-1])]
    assert commits == expected
    dumped = [l for l in out[out.index(expected[-1]) + 1 :] if l.startswith("reach(") and not l.endswith(("+1", "-1"))]
    assert dumped == [f"reach({r}, {n})" for r, n in oracle.read("reach")]


REACH_SQL = str(ROOT / "examples" / "reach.sql")


def _parquet_rows(name: str) -> list[tuple]:
    return [tuple(r.values()) for r in pq.read_table(f"{DATA}/{name}.parquet").to_pylist()]


def _change_lines(changes: dict) -> list[str]:
    return [f"reach({r}, {'NULL' if n is None else n}) {d:+d}" for (r, n), d in changes.get("reach", [])]


def test_repl_through_a_pipe_runs_datalog_and_sql_programs_alike():
    """The same script on reach.dl and reach.sql (the bundled tables read with Arrow, no
    Spark), against each program's own session. NULL is a SQL value: the SQL program
    takes `insert edge(1, NULL)`, the Datalog program reports it and changes nothing."""
    script = "\n".join([
        "insert edge(0, 40), insert edge(40, 41), insert root(40);",
        "commit;",
        "remove edge(0, 40); commit;",
        "insert edge(1, NULL); commit;",
        'insert edge(1, "x");',
        "remove edge(98, 99);",
        "dump reach;",
    ]) + "\n"
    for path, sql in ((REACH, False), (REACH_SQL, True)):
        done = cli("repl", path, "--input-dir", DATA, "--reader", "arrow", stdin=script)
        assert done.returncode == 0, done.stderr
        errors = done.stderr.strip().splitlines()
        wanted = ([] if sql else ["<stdin>:4: error: 'edge': row (1, None)"]) + ["<stdin>:5: error: 'edge': row (1, 'x')",
                                                                                  "<stdin>:6: error: 'edge': cannot remove (98, 99)"]
        assert len(errors) == len(wanted) and all(e.startswith(w) for e, w in zip(errors, wanted)), done.stderr

        program = compiler.compile_file(path) if not sql else compiler.compile_sql(
            Path(path).read_text(), schema={"edge": {"src": "int", "dst": "int"}, "root": {"r": "int"}})
        oracle = program.session(capture="all")
        oracle.insert("edge", _parquet_rows("edge"))
        oracle.insert("root", _parquet_rows("root"))
        oracle.insert("edge", [(0, 40), (40, 41)])
        oracle.insert("root", [(40,)])
        commits = [oracle.commit()]
        oracle.remove("edge", [(0, 40)])
        commits.append(oracle.commit())
        if sql:
            oracle.insert("edge", [(1, None)])
        commits.append(oracle.commit())
        expected = []
        for t, changes in enumerate(commits):
            lines = _change_lines(changes)
            expected += [f"committed time {t}: {len(lines)} change{'s' if len(lines) != 1 else ''}", *lines]
        out = done.stdout.splitlines()
        assert out[:2] == ["loaded 50 rows into edge", "loaded 10 rows into root"]
        assert out[2 : 2 + len(expected)] == expected
        dumped = [f"reach({r}, {'NULL' if n is None else n})" for r, n in oracle.read("reach")]
        assert sorted(out[2 + len(expected) :]) == sorted(dumped)
        assert ("reach(1, NULL)" in dumped) == sql


# what each statement the help lists looks like in use; a statement added to the help must be added here
STATEMENT_EXAMPLES = {
    "insert": "insert edge(1, 2)", "remove": "remove edge(1, 2)", "commit": "commit", "dump": "dump reach",
    "load": f"load root {DATA}/root.parquet", "help": "help", "exit": "exit", "quit": "quit",
}


def _listed_statements(help_text: str) -> list[str]:
    """The statement words of the help's usage lines (`  insert REL(v, ...)   add ...`, `  exit | quit  ...`)."""
    usages = [line.strip().split("  ")[0] for line in help_text.splitlines() if line.startswith("  ")]
    return [alternative.split()[0] for usage in usages for alternative in usage.split("|")]


def test_repl_help_lists_exactly_the_statements_the_repl_accepts():
    listed = _listed_statements(cli("repl", REACH, stdin="help;\n").stdout)
    assert sorted(listed) == sorted(STATEMENT_EXAMPLES)

    # every listed statement is accepted
    leaving = {"exit", "quit"}
    script = ";\n".join(example for word, example in STATEMENT_EXAMPLES.items() if word not in leaving) + ";\n"
    done = cli("repl", REACH, "--reader", "arrow", "--stop-on-error", stdin=script)
    assert (done.returncode, done.stderr) == (0, "")
    # (the remove would fail had the insert not run; dump has nothing to show before root is loaded)
    assert done.stdout.splitlines()[:3] == ["committed time 0: 0 changes", "loaded 10 rows into root at time 1", "statements (end each with ;):"]
    for word in leaving:  # the statements after it never run: no error about them
        done = cli("repl", REACH, stdin=f"{STATEMENT_EXAMPLES[word]};\nfrobnicate;\n")
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")

    # and nothing else is: the refusal names what is accepted, which is what the help lists
    for unknown in ("frobnicate", ".quit", "\\q", "delete edge(1, 2)", "rollback"):
        done = cli("repl", REACH, stdin=unknown + ";\n")
        error = done.stderr.strip()
        assert error.startswith(f"<stdin>:1: error: unknown statement {unknown.split()[0]!r} (statements: "), error
        accepted = error.split("(statements: ")[1].split(";")[0].split(", ")
        assert accepted == listed


def test_a_piped_repl_goes_on_after_an_error_and_stops_at_it_with_stop_on_error():
    script = 'insert edge(1, "x");\ninsert edge(1, 2), insert root(1); commit;\ndump reach;\n'
    going_on = cli("repl", REACH, stdin=script)
    assert going_on.returncode == 0
    assert going_on.stderr.startswith("<stdin>:1: error: 'edge': row (1, 'x')") and len(going_on.stderr.splitlines()) == 1
    assert going_on.stdout.splitlines() == ["committed time 0: 2 changes", "reach(1, 1) +1", "reach(1, 2) +1", "reach(1, 1)", "reach(1, 2)"]

    stopped = cli("repl", REACH, "--stop-on-error", stdin=script)
    assert (stopped.returncode, stopped.stdout, stopped.stderr) == (1, "", going_on.stderr)

    # as psql does without ON_ERROR_STOP, a failing last statement is reported, and the exit code stays 0
    last_fails = cli("repl", REACH, stdin="insert root(1); commit;\ndump nosuch;\n")
    assert last_fails.returncode == 0 and last_fails.stderr.startswith("<stdin>:2: error: ")


# ---- explain ----


def test_explain_prints_plan_and_graph_and_writes_dot(tmp_path):
    dot = tmp_path / "andersen.dot"
    program = str(ROOT / "examples" / "andersen.dl")
    done = cli("explain", program, "--dot", str(dot))
    assert done.returncode == 0, done.stderr
    session = compiler.compile_file(program).session(capture="outputs")
    ops = session.dataflow.ops
    assert done.stdout.startswith("logical plan\n")
    assert compiler.compile_file(program).explain().splitlines()[0] in done.stdout
    assert f"dataflow: {len(ops)} operators" in done.stdout
    assert "iterate scope 1:" in done.stdout and "shared by" in done.stdout
    assert done.stdout.splitlines()[-1] == f"wrote the dataflow graph to {dot} (Graphviz DOT)"
    text = dot.read_text()
    assert text.startswith('digraph "andersen.dl" {') and text.rstrip().endswith("}")
    assert sum(1 for l in text.splitlines() if l.strip().startswith("n") and "[label=" in l) == len(ops)
    edges = sum(len(s) for s in session.dataflow.subscribers.values())
    assert text.count(" -> ") == edges
    assert "subgraph cluster_1" in text


# ---- errors ----


def test_program_error_has_file_line_column(tmp_path):
    bad = tmp_path / "bad.dl"
    bad.write_text(".decl edge(a: number, b: number)\n.input edge\nr(x) :- edge(x).\n")
    done = cli("run", str(bad), "--input", f"edge={DATA}/edge.parquet")
    assert done.returncode == 1
    assert done.stderr.splitlines()[0].startswith(f"{bad}:3:9: ArityError:"), done.stderr
    assert "Traceback" not in done.stderr


def test_missing_file_wrong_columns_unknown_relation_and_usage(tmp_path):
    missing = cli("run", REACH, "--input", "edge=no/such/edge.parquet")
    assert missing.returncode == 1
    assert missing.stderr.strip() == "deltalog: error: 'edge': no/such/edge.parquet: no such file or directory"

    wrong = tmp_path / "wrong.parquet"
    pq.write_table(pa.table({"a": [1], "w": [2], "b": [3]}), wrong)
    cols = cli("run", REACH, "--input", f"edge={wrong}")
    assert cols.returncode == 1
    assert cols.stderr.strip() == (
        f"deltalog: error: 'edge': {wrong}: columns (a, w, b) do not match: wanted src, dst (by name, or exactly 2 columns by position)"
    )

    unknown = cli("run", REACH, "--input", f"reach={DATA}/edge.parquet")
    assert unknown.returncode == 1 and "'reach' is not an input relation: rules of the program define it (inputs: edge, root)" in unknown.stderr

    assert cli("run", REACH, "--format", "csv").returncode == 2
    assert cli("run", REACH, "--input", "edge").returncode == 2
    assert cli("frobnicate").returncode == 2
    for done in (missing, cols, unknown):
        assert "Traceback" not in done.stderr


def test_malformed_text_tables_are_named_by_file_and_line(tmp_path):
    """Spark's own failure names neither the file's line nor the problem ("An error occurred
    while calling o109.getResult."): the message must, on both engines."""
    facts = tmp_path / "edge.facts"
    facts.write_text("1\t2\n\n3\n")
    csv = tmp_path / "edge.csv"
    csv.write_text("src,dst\n1,2\n3,4,5\n")
    jsonl = tmp_path / "edge.jsonl"
    jsonl.write_text('{"src": 1, "dst": 2}\n{"src": 3,\n')
    root = f"root={DATA}/root.parquet"
    cases = [
        (("run", REACH, "--input", f"edge={facts}", "--input", root), f"{facts}: line 3: 1 field (tab-separated), line 1 has 2"),
        (("run", REACH, "--engine", "spark", "--input", f"edge={csv}", "--input", root), f"{csv}: line 3: 3 fields, the header has 2"),
        (("run", REACH, "--input", f"edge={jsonl}", "--input", root),
         f"{jsonl}: line 2: not valid JSON (Expecting property name enclosed in double quotes, column 11)"),
    ]
    for args, where in cases:
        done = cli(*args)
        assert done.returncode == 1, done.stderr
        assert done.stderr.strip() == f"deltalog: error: 'edge': {where}", done.stderr


def test_an_output_dir_that_cannot_be_made_fails_before_the_run(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    done = cli("run", REACH, "--input-dir", DATA, "--output-dir", str(blocker / "out"))
    assert done.returncode == 1
    assert done.stderr.strip() == f"deltalog: error: --output-dir {blocker / 'out'}: cannot create it: Not a directory", done.stderr


def test_a_change_table_removing_an_edge_that_is_not_there_is_refused(tmp_path):
    write_parquet(tmp_path / "gone.parquet", {"src": [2, 7], "dst": [4, 8], "diff": [-1, -1]})  # (2, 4) is there
    done = cli("run", REACH, "--input-dir", DATA, "--changes", f"edge={tmp_path / 'gone.parquet'}")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"deltalog: error: 'edge': {tmp_path / 'gone.parquet'}: cannot remove (7, 8) at time 1: it is not there (its count would be -1)")


def test_without_java_a_spark_command_says_how_to_get_java(tmp_path):
    """Three ways to lack Java: JAVA_HOME naming a missing directory (and no java on PATH),
    neither JAVA_HOME nor java on PATH, and a java that cannot run Spark (a stand-in that
    exits at once, as Java 8 does on Spark 4's classes). One line each, never PySpark's
    [JAVA_GATEWAY_EXITED]; and --reader arrow, which the line suggests, runs without Java."""
    path_without_java = os.pathsep.join(
        d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not os.access(os.path.join(d, "java"), os.X_OK))
    old_java = tmp_path / "jdk8" / "bin" / "java"
    old_java.parent.mkdir(parents=True)
    old_java.write_text('#!/bin/sh\necho \'openjdk version "1.8.0_392"\' >&2\nexit 1\n')
    old_java.chmod(0o755)
    no_java_home = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    missing = tmp_path / "no-such-jdk"
    cases = [
        (dict(no_java_home, JAVA_HOME=str(missing), PATH=path_without_java), f"JAVA_HOME is {missing}, which has no bin/java: "),
        (dict(no_java_home, PATH=path_without_java), "JAVA_HOME is not set and there is no java on PATH: "),
        (dict(no_java_home, JAVA_HOME=str(old_java.parents[1])), f'its JVM exited at startup ({old_java}: openjdk version "1.8.0_392"): '),
    ]
    for env, why in cases:
        done = cli("run", REACH, "--input-dir", DATA, env=env)
        assert (done.returncode, done.stdout) == (1, ""), done.stderr
        lines = done.stderr.splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith(f"deltalog: error: Spark needs Java 17 (or 21), but {why}"), lines[0]
        assert "point JAVA_HOME at" in lines[0] and "export JAVA_HOME=" in lines[0]
        assert lines[0].endswith("; for local Parquet inputs, --reader arrow needs no Java"), lines[0]
    arrow = cli("run", REACH, "--input-dir", DATA, "--reader", "arrow", env=cases[0][0])
    assert (arrow.returncode, arrow.stderr) == (0, "")
    assert parse_table(arrow.stdout, "reach")
