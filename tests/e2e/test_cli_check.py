"""`deltalog check` as a subprocess: exit codes and the one-line error."""

import subprocess
import sys


def run(*args):
    return subprocess.run([sys.executable, "-m", "compiler.cli", *args], capture_output=True, text=True)


def test_check_accepts_a_valid_program():
    done = run("check", "examples/tc.dl")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("examples/tc.dl: ok")


def test_check_reports_file_line_column(tmp_path):
    bad = tmp_path / "bad.dl"
    bad.write_text("edge(1, 2).\npath(x, y) :- edge(x, y), edge(y).\n")
    done = run("check", str(bad))
    assert done.returncode == 1
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"{bad}:2:27: ArityError:"), first
    assert "Traceback" not in done.stderr


def test_check_missing_file_and_usage():
    done = run("check", "no/such.dl")
    assert done.returncode == 1 and "cannot read no/such.dl" in done.stderr
    assert run().returncode == 2


def test_printsize_prints_sizes_and_rows_only_of_outputs(tmp_path):
    program = tmp_path / "sizes.dl"
    program.write_text(
        "e(1, 2). e(2, 1). e(2, 3).\n"
        ".decl p(x: number, y: number)\n.printsize p\n"
        ".decl q(x: number)\n.output q\n.printsize q\n"
        "p(x, y) :- e(x, y).\np(x, z) :- p(x, y), e(y, z).\nq(x) :- p(x, x).\n"
    )
    done = run("run", str(program))  # facts only: Spark never starts
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["q (2 rows)", "x", "-", "1", "2", "p\t6", "q\t2"]
    on_spark = run("run", str(program), "--engine", "spark")
    assert on_spark.returncode == 0, on_spark.stderr
    assert on_spark.stdout.splitlines() == done.stdout.splitlines()
