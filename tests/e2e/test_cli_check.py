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
