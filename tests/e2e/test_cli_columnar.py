"""The CLI at the speed of its parts: columnar writes, Arrow for every local format, visible progress.

Outputs and change logs written in every format read back equal to the
session API's answer (the oracle), through pyarrow (`--reader arrow`, which
never starts Spark) and through Spark; `.facts` and CSV inputs go through
Arrow too. Progress lines appear on a pseudo-terminal, and neither on a pipe
nor with `--quiet`; answers stay on stdout.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
from collections import Counter

import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq
import pytest

from tests.e2e.test_cli_spark import DATA, REACH, ROOT, base_session, cli, command, write_parquet

READ = {
    "parquet": lambda f: pq.read_table(f),
    "csv": lambda f: pacsv.read_csv(f),
    "jsonl": lambda f: pajson.read_json(f),
}


def read_back(directory, fmt) -> list[tuple]:
    parts = sorted(p for p in os.listdir(directory) if p.startswith("part-") and not p.endswith(".crc"))
    tables = [READ[fmt](os.path.join(directory, p)) for p in parts]
    return [tuple(r.values()) for t in tables for r in t.to_pylist()]


def changes_setup(tmp_path):
    """Change tables (one time per file for edge, own times for root) and the oracle session after them."""
    write_parquet(tmp_path / "edge" / "a.parquet", {"src": [0, 41], "dst": [41, 42], "diff": [1, 1]})
    write_parquet(tmp_path / "edge" / "b.parquet", {"src": [0, 2], "dst": [41, 4], "diff": [-1, -1]})
    write_parquet(tmp_path / "root.parquet", {"r": [41, 0], "diff": [1, -1], "time": [2, 3]})
    oracle = base_session()
    oracle.commit()
    oracle.insert("edge", [(0, 41), (41, 42)], time=1)
    oracle.remove("edge", [(0, 41), (2, 4)], time=2)
    oracle.insert("root", [(41,)], time=2)
    oracle.remove("root", [(0,)], time=3)
    oracle.advance_to(4)
    args = ["--input", f"edge={DATA}/edge.parquet", "--input", f"root={DATA}/root.parquet",
            "--changes", f"edge={tmp_path / 'edge'}", "--changes", f"root={tmp_path / 'root.parquet'}"]
    return oracle, args


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_arrow_reader_writes_every_format_without_spark(tmp_path, fmt):
    oracle, args = changes_setup(tmp_path)
    out = tmp_path / "out"
    done = cli("run", REACH, *args, "--output-dir", str(out), "--format", fmt, "--reader", "arrow", "--timings")
    assert done.returncode == 0, done.stderr
    assert "spark start" not in done.stderr and "timings: read" in done.stderr  # Spark never started
    assert sorted(read_back(out / "reach", fmt)) == oracle.read("reach")
    assert Counter(read_back(out / "reach.changes", fmt)) == Counter(row + (t, d) for row, t, d in oracle.change_log("reach"))


def test_spark_writes_csv_from_columns(tmp_path):
    oracle, args = changes_setup(tmp_path)
    out = tmp_path / "out"
    done = cli("run", REACH, *args, "--output-dir", str(out), "--format", "csv", "--timings")
    assert done.returncode == 0, done.stderr
    assert "write" in done.stderr
    # Spark started on a thread as the command began, beside the program's compile
    started = re.search(r"spark start ([0-9.]+)s \(([0-9.]+)s of it beside other stages\)", done.stderr)
    assert started and 0 < float(started[2]) <= float(started[1]), done.stderr
    assert sorted(read_back(out / "reach", "csv")) == oracle.read("reach")
    assert Counter(read_back(out / "reach.changes", "csv")) == Counter(row + (t, d) for row, t, d in oracle.change_log("reach"))


def test_facts_and_csv_inputs_through_arrow(tmp_path):
    oracle = base_session()
    oracle.commit()
    (tmp_path / "edge.csv").write_text("src,dst\n" + "".join(f"{a},{b}\n" for a, b in oracle.read("edge")))
    (tmp_path / "root.facts").write_text((ROOT / "examples" / "reach" / "root.facts").read_text())
    done = cli("run", REACH, "--input-dir", str(tmp_path), "--reader", "arrow", "--output-dir", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert sorted(read_back(tmp_path / "out" / "reach", "parquet")) == oracle.read("reach")
    (tmp_path / "root.facts").write_text("1\n2\t3\n")
    bad = cli("run", REACH, "--input-dir", str(tmp_path), "--reader", "arrow")
    assert bad.returncode == 1
    assert bad.stderr.strip() == f"deltalog: error: 'root': {tmp_path / 'root.facts'}: line 2: 2 fields (tab-separated), line 1 has 1"


def on_terminal(*args) -> tuple[str, str]:
    """(what the terminal showed on stderr, stdout) of a CLI run with stderr on a pseudo-terminal."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(command(list(args)), cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    out = proc.stdout.read().decode()
    assert proc.wait(timeout=600) == 0, shown
    os.close(master)
    return shown.decode(errors="replace"), out


def test_progress_shows_on_a_terminal_only(tmp_path):
    args = ["run", REACH, "--input-dir", DATA, "--reader", "arrow", "--output-dir", str(tmp_path / "out")]
    shown, out = on_terminal(*args)
    assert "reading edge" in shown and "reading root" in shown and "computing" in shown and "writing reach" in shown
    assert out.startswith("wrote reach to")  # answers on stdout, not on the terminal's stderr
    quiet, out = on_terminal(*args, "--quiet", "--timings")
    assert "reading" not in quiet and "computing" not in quiet and "timings: read" in quiet
    piped = cli(*args, "--timings")
    assert piped.returncode == 0 and piped.stderr.startswith("timings: read") and len(piped.stderr.splitlines()) == 1
