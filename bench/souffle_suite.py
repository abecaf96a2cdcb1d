"""Soufflé's own positive tests, run through deltalog's Python API: the fidelity judge.

A *suite run* is one positive test of Soufflé's `tests/evaluation` or
`tests/example` with one facts directory (the CMakeLists.txt of each category
lists them: `positive_test(NAME)`, and `souffle_positive_multi_test` for a test
with several facts directories, whose expected files live in that directory).
Each run is judged twice, in a subprocess of its own with a timeout per phase,
so a hang or a crash costs one run and not the suite:

- batch: `compile_file(NAME.dl)`, `session.load_facts(FACTS)`, `commit()`; then
  the outputs, rendered as Soufflé writes them, must equal the expected files.
- incremental: in the same session, remove ~20% (a seeded sample) of the rows of
  the largest input relation and commit: every output must equal a recomputation
  (a fresh session over the reduced facts, computed first); insert the rows back
  and commit: the outputs must equal the expected files again. When that
  recomputation does not finish within the timeout (a program whose recursion
  the removed rows bounded, such as `up_to_size(x + 1) :- up_to_size(x),
  !size(x).` without its one `size` row, has no finite answer, in Soufflé
  either), the incremental phase is not applicable: there is nothing to compare.

How Soufflé's harness compares (cmake/check_test_results.py, common.py): every
`.output` file of the program is written to the output directory as `<rel>.csv`
(`filename=` overrides it); their number must equal the number of expected
`*.csv`, and each file's lines, right-stripped and sorted, must equal the
expected file's. stdout (`.printsize` lines `rel<TAB>n`, `IO=stdout` tables) is
compared the same way with `NAME.out`. Files are written with `delimiter=`
(default a tab), symbols unquoted, numbers in decimal, unsigned numbers as
unsigned, floats as C++ streams them at `max_digits10` (`%.17g`), an empty
tuple as `()`, and `headers=true` puts the attribute names first. Those are
the rules `render` follows, so a pass here is a pass there.

Not applicable (counted apart, never as passes): a test that needs a C++
functor library (`souffle_positive_functor_test`, or `.functor` in its .dl),
and a test one of whose expected files is missing from the checkout; and the
incremental phase of a run whose recomputation over the reduced facts does not
finish (above).

    python bench/souffle_suite.py --souffle ~/src/souffle [--json out.json] [--timeout 60] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import random
import re
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

CATEGORIES = ("evaluation", "example")
REMOVED_FRACTION = 0.2
RECOMPUTING = "recomputing"  # the incremental phase's stage that computes the answer to compare with
SEED = 20
_FORK = multiprocessing.get_context("fork")


@dataclass(frozen=True)
class SuiteRun:
    """One positive test with one facts directory; `check_dir` holds its expected files."""

    label: str  # category/name, plus /facts-dir for a multi-test
    program: str  # the .dl file
    facts_dir: str
    check_dir: str
    functor_library: bool  # declared with souffle_positive_functor_test


# ---- discovering the runs -------------------------------------------------

_POSITIVE = re.compile(r"^\s*positive_test\(\s*([\w.-]+)", re.M)
_MULTI = re.compile(r"^\s*souffle_positive_multi_test\(\s*TEST_NAME\s+([\w.-]+).*?FACTS_DIR_NAMES\s+([^)]*)\)", re.M)
_FUNCTOR = re.compile(r"^\s*souffle_positive_functor_test\(\s*([\w.-]+)", re.M)


def discover(souffle: Path) -> list[SuiteRun]:
    """The positive runs the CMakeLists.txt of each category declares, in file order."""
    runs = []
    for category in CATEGORIES:
        base = souffle / "tests" / category
        cmake = (base / "CMakeLists.txt").read_text()

        def single(name: str, functor_library: bool = False) -> SuiteRun:
            test = base / name
            return SuiteRun(f"{category}/{name}", str(test / f"{name}.dl"), str(test / "facts"), str(test), functor_library)

        found = [(m.start(), single(m.group(1))) for m in _POSITIVE.finditer(cmake)]
        found += [(m.start(), single(m.group(1), functor_library=True)) for m in _FUNCTOR.finditer(cmake)]
        for m in _MULTI.finditer(cmake):
            name, test = m.group(1), base / m.group(1)
            for facts in m.group(2).split():
                found.append((m.start(), SuiteRun(f"{category}/{name}/{facts}", str(test / f"{name}.dl"), str(test / facts), str(test / facts), False)))
        runs += [run for _, run in sorted(found, key=lambda pair: pair[0])]
    return runs


# ---- rendering outputs as Soufflé writes them -----------------------------


class NotApplicable(Exception):
    """The run cannot judge deltalog (a functor library, a missing expected file)."""


class Mismatch(Exception):
    """An output differs from what it should be; the message says which and how."""


def _unquoted(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value


def _option(options: dict, key: str, default: str) -> str:
    return _unquoted(str(options.get(key, default)))


def _float(value: float) -> str:
    return format(value, ".17g")  # C++ ostream at max_digits10, like Soufflé's writers


def _value(value, kind) -> str:
    from compiler.values import to_text

    return to_text(value, kind, _float)  # records and ADT values as `[1, nil]`, `$Add($Zero, $Zero)`


def _row(row: tuple, kinds, delimiter: str) -> str:
    return delimiter.join(_value(v, k) for v, k in zip(row, kinds)) if row else "()"


def render(program, session) -> dict[str, list[str]]:
    """{file name: its lines, sorted} for every file Soufflé would write, plus "stdout"."""
    files: dict[str, list[str]] = {}
    stdout: list[str] = [f"{rel}\t{len(session.read(rel))}" for rel in program.printsizes]
    for name, info in program.relations.items():
        for options in info.outputs:
            io = _option(options, "IO", "file")
            delimiter = _option(options, "delimiter", "\t").encode().decode("unicode_escape")
            header = [delimiter.join(info.attribute_names)] if _option(options, "headers", "false") == "true" else []
            # A symbol holding a newline is written as it is: the file has a line more.
            lines = [line for text in header + [_row(row, info.kinds, delimiter) for row in session.read(name)] for line in text.split("\n")]
            if io == "stdout":
                stdout += ["---------------", name, "===============", *lines, "==============="]
            elif io == "file":
                files[_option(options, "filename", f"{name}.csv")] = lines
            else:
                raise NotApplicable(f"output '{name}' uses IO={io}, which the harness does not compare as a csv")
    files["stdout"] = stdout
    return {name: sorted(line.rstrip() for line in lines) for name, lines in files.items()}


def expected_files(run: SuiteRun, program) -> dict[str, list[str]]:
    """The expected files of `run`, read as the harness reads them (lines right-stripped, sorted)."""
    check = Path(run.check_dir)
    wanted = {p.name for p in check.glob("*.csv")}
    for name, info in program.relations.items():
        for options in info.outputs:
            filename = _option(options, "filename", f"{name}.csv")
            if _option(options, "IO", "file") == "file" and filename not in wanted:
                raise NotApplicable(f"expected output missing: {filename}")
    out = check / f"{Path(run.program).stem}.out"
    files = {name: (check / name).read_text(encoding="utf-8").splitlines() for name in wanted}
    files["stdout"] = out.read_text(encoding="utf-8").splitlines() if out.is_file() else []
    return {name: sorted(line.rstrip() for line in lines) for name, lines in files.items()}


def compare(actual: dict[str, list[str]], expected: dict[str, list[str]], what: str) -> None:
    """Raise Mismatch naming the first file (in name order) whose sorted lines differ."""
    for name in sorted(expected.keys() | actual.keys()):
        if name not in actual:
            raise Mismatch(f"{what}: {name} is not written (no .output names it)")
        if name not in expected:
            raise Mismatch(f"{what}: {name} is written but not expected")
        got, want = collections.Counter(actual[name]), collections.Counter(expected[name])
        if got != want:
            missing, extra = sum((want - got).values()), sum((got - want).values())
            example = next(iter((want - got) or (got - want)))
            raise Mismatch(f"{what}: {name}: {missing} lines missing, {extra} extra (e.g. {example!r}; expected {len(expected[name])} lines)")


# ---- one run (in a child process) ------------------------------------------


def _failure(exc: BaseException) -> str:
    """The error's class and the first line of its message (a CompileError's without its position)."""
    message = str(getattr(exc, "message", exc)).strip()
    return f"{type(exc).__name__}: {message.splitlines()[0] if message else ''}"


def _where(exc: BaseException) -> str | None:
    line = getattr(exc, "line", None)
    return f"{Path(exc.source_name).name}:{line}:{exc.column}" if line is not None else None


def _largest_input(program, session, facts_dir: str, loaded: dict[str, int]) -> tuple[str, list[tuple]] | None:
    """The input relation with the most rows in the facts directory, and those rows
    (read as `load_facts` reads them, decoded by the session's symbols)."""
    from compiler.program import facts_file, read_fact_blocks
    from compiler.values import decode

    if not any(loaded.values()):
        return None
    name = max(loaded, key=lambda rel: (loaded[rel], rel))
    info = program.relations[name]
    symbols = session.dataflow.symbols
    blocks = read_fact_blocks(info, str(facts_file(facts_dir, info)), symbols)
    return name, [row for block, _ in blocks for row in zip(*(decode(block[j], kind, symbols) for j, kind in enumerate(info.kinds)))]


def run_child(run: SuiteRun, verdicts) -> None:
    """Judge one run; send a record per phase to the pipe end `verdicts`:
    {"phase", "status", "reason", "seconds"}."""
    import compiler

    _emit = verdicts.send

    if run.functor_library or ".functor" in Path(run.program).read_text(encoding="utf-8", errors="replace"):
        _emit({"phase": "batch", "status": "n/a", "reason": "needs a C++ functor library (.functor)"})
        return
    phase, started = "batch", time.perf_counter()
    try:
        program = compiler.compile_file(run.program)
        expected = expected_files(run, program)
        session = program.session()
        loaded = session.load_facts(run.facts_dir)
        session.commit()
        compare(render(program, session), expected, "batch")
        _emit({"phase": phase, "status": "pass", "seconds": time.perf_counter() - started})

        phase, started = "incremental", time.perf_counter()
        largest = _largest_input(program, session, run.facts_dir, loaded)
        if largest is None:
            _emit({"phase": phase, "status": "n/a", "reason": "no input rows to remove"})
            return
        relation, rows = largest
        removed = random.Random(SEED).sample(rows, max(1, round(len(rows) * REMOVED_FRACTION)))
        # The recomputation first: a timeout in it means there is no answer to compare with.
        _emit({"stage": RECOMPUTING})
        fresh = program.session()
        fresh.load_facts(run.facts_dir)
        fresh.remove(relation, removed)
        fresh.commit()
        _emit({"stage": "incremental"})
        session.remove(relation, removed)
        session.commit()
        compare(render(program, session), render(program, fresh), f"after removing {len(removed)} of {len(rows)} '{relation}' rows, against a recomputation")
        session.insert(relation, removed)
        session.commit()
        compare(render(program, session), expected, f"after inserting the {len(removed)} '{relation}' rows back")
        _emit({"phase": phase, "status": "pass", "seconds": time.perf_counter() - started, "relation": relation, "removed": len(removed)})
    except NotApplicable as exc:
        _emit({"phase": phase, "status": "n/a", "reason": str(exc)})
    except Exception as exc:  # any failure is this run's verdict, named by its class and first line
        feature = feature_of(getattr(exc, "source_line", None), Path(run.program).read_text(encoding="utf-8")) if isinstance(exc, compiler.ParseError) else None
        _emit({"phase": phase, "status": "fail", "reason": _failure(exc), "where": _where(exc), "feature": feature, "seconds": time.perf_counter() - started,
               "traceback": traceback.format_exc(limit=-3)})


# ---- the parent: runs, timeouts, the report ----------------------------------


def judge(run: SuiteRun, timeout: float) -> dict:
    """Judge `run` in a forked child (which inherits the imported, JIT-warm compiler and
    runtime, so a run does not pay Python's start-up); kill it when a phase (batch,
    incremental) takes over `timeout` seconds.
    {"label", "seconds", "batch": {...}, "incremental": {...}}."""
    result = {"label": run.label}
    receive, send = multiprocessing.Pipe(duplex=False)
    child = _FORK.Process(target=run_child, args=(run, send), daemon=True)
    started = time.perf_counter()
    child.start()
    send.close()
    deadline = started + timeout
    stage = None  # where the incremental phase is, as the child last said
    while True:
        left = deadline - time.perf_counter()
        if left <= 0 or not receive.poll(left):
            break
        try:
            record = receive.recv()
        except EOFError:  # the child is gone
            break
        if "stage" in record:
            stage = record["stage"]
            continue
        result[record.pop("phase")] = record
        deadline = time.perf_counter() + timeout  # each phase has the whole timeout
    timed_out = child.is_alive()
    child.kill()
    child.join()
    if timed_out and stage == RECOMPUTING:
        result["incremental"] = {"status": "n/a", "reason": (
            f"no answer to compare with: a recomputation from scratch over the reduced facts did not finish in {timeout:g} s")}
    ended = "Timeout: over {:g} s".format(timeout) if timed_out else f"Crash: the child process ended with exit code {child.exitcode}"
    for phase in ("batch", "incremental"):
        if phase not in result and result.get("batch", {}).get("status", "pass") == "pass":
            result[phase] = {"status": "fail", "reason": ended}
    result["seconds"] = round(time.perf_counter() - started, 2)
    return result


def warm_up() -> None:
    """Compile and run one small recursive program, so forked runs start with the
    runtime's kernels compiled."""
    import compiler

    session = compiler.compile_datalog("p(1, 2). p(2, 3). t(x, y) :- p(x, y). t(x, z) :- t(x, y), p(y, z). n(c) :- c = count : t(_, _).").session()
    session.commit()


# Soufflé features a failure can be laid at, tried on the failing line and then on the whole
# program (a component's parse error is at its closing brace, far from `.comp`).
FEATURES = (
    ("several relations in one .decl", re.compile(r"^\s*\.decl\s+[\w.?]+\s*,", re.M)),
    ("records", re.compile(r"\[")),
    ("ADTs", re.compile(r"\.type\s+\w+\s*=\s*\$?\w+\s*\{|\$\w")),
    ("components", re.compile(r"\.comp\b|\.init\b")),
    ("ord", re.compile(r"\bord\s*\(")),
    # Last: in a whole program these are rarely what the parser stopped at.
    (".pragma", re.compile(r"^\s*\.pragma\b", re.M)),
    ("C preprocessor", re.compile(r"^\s*#\s*(include|define|if|ifdef|ifndef)\b", re.M)),
)


def feature_of(line: str | None, program_text: str) -> str | None:
    """The Soufflé feature behind a parse error at `line` of a program."""
    for text in (line or "", program_text):
        for name, pattern in FEATURES:
            if pattern.search(text):
                return name
    return None


def reason_group(record: dict) -> str:
    """The failure's kind for the summary table: the Soufflé feature it is laid at, else
    its class and first line without the specifics (names, numbers), so equal causes
    count together."""
    reason = record["reason"]
    functor = re.search(r"unknown functor '(\w+)'", reason)
    if functor:
        return f"functor {functor.group(1)} ({reason.split(':')[0]})"
    if record.get("feature"):
        return f"{record['feature']} ({reason.split(':')[0]})"
    text = re.sub(r"'[^'.][^']*'|\"[^\"]*\"", "'…'", reason)
    text = re.sub(r"\b\d+(\.\d+)?\b", "N", text)
    return text[:110]


def summarize(results: list[dict]) -> str:
    lines = []
    for phase in ("batch", "incremental"):
        counts = collections.Counter(r[phase]["status"] for r in results if phase in r)
        lines.append(f"{phase}: {counts['pass']} passed, {counts['fail']} failed, {counts['n/a']} not applicable")
    batch = collections.Counter(r["batch"]["status"] for r in results)
    lines.append(f"{batch['pass']} passed, {batch['fail']} failed")
    for phase, status, title in (("batch", "fail", "batch failures"), ("incremental", "fail", "incremental failures"),
                                 ("batch", "n/a", "not applicable"), ("incremental", "n/a", "incremental not applicable")):
        groups = collections.Counter(reason_group(r[phase]) for r in results if r.get(phase, {}).get("status") == status)
        if groups:
            lines += ["", f"| {title} by reason | runs |", "|---|---:|"]
            lines += [f"| {reason.replace('|', '¦')} | {n} |" for reason, n in groups.most_common()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--souffle", type=Path, help="a checkout of souffle-lang/souffle (its tests/ folder is what is read)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per phase of a run, batch and incremental (default 60)")
    p.add_argument("--only", nargs="+", metavar="LABEL", help="runs whose label contains one of these")
    p.add_argument("--json", type=Path, metavar="FILE", help="write every run's verdicts to FILE")
    args = p.parse_args(argv)
    if args.souffle is None:
        p.error("--souffle is required")
    runs = discover(args.souffle)
    if args.only:
        runs = [r for r in runs if any(word in r.label for word in args.only)]
    warm_up()
    results = []
    for i, run in enumerate(runs, 1):
        result = judge(run, args.timeout)
        results.append(result)
        verdicts = "  ".join(f"{phase} {result[phase]['status']}" for phase in ("batch", "incremental") if phase in result)
        reason = next((result[ph]["reason"] for ph in ("batch", "incremental") if result.get(ph, {}).get("status") == "fail"), "")
        print(f"[{i}/{len(runs)}] {run.label}: {verdicts} ({result['seconds']:.1f} s) {reason}", file=sys.stderr, flush=True)
    print(summarize(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
