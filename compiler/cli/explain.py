"""`deltalog explain`: the logical plan and the dataflow graph, as text and as Graphviz DOT.

The logical plan is compiler.plan.explain's rendering of the optimized plan;
then the predicates pushed into Spark reads (compiler.cli.inputs.pushdown);
then the runtime dataflow a session builds for the program: one line per
operator (`#id name`, what it is about, where its output goes), grouped by
iterate scope, with each arrangement's key width and how many operators read
it (an arrangement read by more than one is shared; so is a distinct's output
trace that joins read one iteration later, as a loop variable: runtime.trace.delayed).
`--dot FILE` writes the same graph as DOT, iterate scopes as clusters and arrangements as boxes; a
FILE ending in .png or .svg gets the picture instead: the DOT text goes to
Graphviz's `dot -Tpng|-Tsvg -o FILE` on its standard input. Without `dot` on
PATH that is a one-line error (exit 1) saying so. The last line says where
the graph went and in which form.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from compiler.cli.common import UserError
from compiler.cli.inputs import pushdown


def explain_command(args) -> int:
    from compiler.cli.run import program_of

    if args.dot:
        graphviz(args.dot)  # without Graphviz, fail before printing anything
    program = program_of(args)
    graph = DataflowGraph(program.session(capture="outputs").dataflow)
    lines = ["logical plan", *("  " + l for l in program.explain().splitlines())]
    pushed = pushdown(program)
    lines.append("pushed into Spark reads" + ("" if pushed else ": nothing"))
    lines += [f"  {rel}: {pred}" for rel, pred in pushed.items()]
    lines += graph.text()
    print("\n".join(lines))
    if args.dot:
        what = write_dot(graph.dot(os.path.basename(args.program)), args.dot)
        print(f"wrote the dataflow graph to {args.dot} ({what})")
    return 0


class DataflowGraph:
    def __init__(self, dataflow):
        self.ops = list(dataflow.ops)
        self.succ: dict[int, list[int]] = {op.id: [] for op in self.ops}
        for (src, _port), subs in dataflow.subscribers.items():
            self.succ[src] += [dst.id for dst, _ in subs]
        self.scope = self._scopes()
        self.delayed = self._delayed_readers()

    def _delayed_readers(self) -> dict[int, int]:
        """reduce op id -> how many joins read its output trace one iteration later."""
        owner = {id(op.out_trace): op.id for op in self.ops if hasattr(op, "out_trace")}
        readers: dict[int, int] = {}
        for op in self.ops:
            sources = {id(t.source) for t in (getattr(op, "left_trace", None), getattr(op, "right_trace", None)) if getattr(t, "delay", 0)}
            for source in sources:
                readers[owner[source]] = readers.get(owner[source], 0) + 1
        return readers

    def _shared(self, op) -> bool:
        return (op.name == "arrange" and len(self.succ[op.id]) > 1) or op.id in self.delayed

    def _home(self, op) -> int:
        lattices = op.in_lattices if op.name == "leave" or not op.out_lattices else op.out_lattices
        return lattices[0].depth if lattices else 1

    def _scopes(self) -> dict[int, int]:
        """op id -> iterate scope number (0: the root scope), by connectivity inside loops."""
        parent = {op.id: op.id for op in self.ops}

        def find(i):
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        depth = {op.id: self._home(op) for op in self.ops}
        for src, dsts in self.succ.items():
            for dst in dsts:
                if depth[src] > 1 and depth[src] == depth[dst]:
                    parent[find(src)] = find(dst)
        numbers: dict[int, int] = {}
        scope = {}
        for op in self.ops:
            if depth[op.id] > 1:
                scope[op.id] = numbers.setdefault(find(op.id), len(numbers) + 1)
            else:
                scope[op.id] = 0
        return scope

    def describe(self, op) -> str:
        if op.name == "input":
            return f"input {op.handle.name}"
        if op.name == "arrange":
            readers = len(self.succ[op.id])
            shared = f", shared by {readers} readers" if readers > 1 else ""
            return f"arrange by {op.key_arity} key column{'s' if op.key_arity != 1 else ''}{shared}"
        joins = self.delayed.get(op.id)
        if joins:
            return f"{op.name}, its output trace shared by {joins} join{'s' if joins > 1 else ''} (read one iteration later)"
        return op.name

    def text(self) -> list[str]:
        arranges = [op for op in self.ops if op.name == "arrange" or op.id in self.delayed]
        shared = sum(1 for op in arranges if self._shared(op))
        scopes = sorted(set(self.scope.values()) - {0})
        lines = [f"dataflow: {len(self.ops)} operators, {len(arranges)} arrangements ({shared} shared), {len(scopes)} iterate scopes"]
        for s in [0] + scopes:
            indent = "  " if s == 0 else "    "
            if s:
                lines.append(f"  iterate scope {s}:")
            for op in self.ops:
                if self.scope[op.id] == s:
                    to = ", ".join(f"#{d}" for d in self.succ[op.id])
                    lines.append(f"{indent}#{op.id} {self.describe(op)}" + (f" -> {to}" if to else ""))
        return lines

    def dot(self, title: str) -> str:
        out = [f"digraph {_quote(title)} {{", "  rankdir=TB;", '  node [fontname="Helvetica", fontsize=10];']
        for s in sorted(set(self.scope.values())):
            indent = "  " if s == 0 else "    "
            if s:
                out += [f"  subgraph cluster_{s} {{", f'    label="iterate scope {s}"; style=dashed;']
            for op in self.ops:
                if self.scope[op.id] != s:
                    continue
                shape = "box" if op.name == "arrange" or op.id in self.delayed else "invhouse" if op.name == "input" else "ellipse"
                color = ', style=filled, fillcolor="#ffe9a8"' if self._shared(op) else ""
                out.append(f"{indent}n{op.id} [label={_quote(f'#{op.id} {self.describe(op)}')}, shape={shape}{color}];")
            if s:
                out.append("  }")
        for src, dsts in self.succ.items():
            for dst in dsts:
                out.append(f"  n{src} -> n{dst};")
        out.append("}")
        return "\n".join(out) + "\n"


RENDERED = {".png": "png", ".svg": "svg"}  # Graphviz output formats by file suffix; any other FILE gets the DOT text


def graphviz(path: str) -> tuple[str, str] | None:
    """(dot program, output format) when `path` asks for a picture, None for DOT text; UserError without `dot`."""
    fmt = RENDERED.get(os.path.splitext(path)[1].lower())
    if fmt is None:
        return None
    dot = shutil.which("dot")
    if dot is None:
        stem = os.path.splitext(path)[0]
        raise UserError(f"writing {path} needs Graphviz (its `dot` program is not on PATH); install it, or write the DOT text instead: --dot {stem}.dot")
    return dot, fmt


def write_dot(text: str, path: str) -> str:
    """Write the DOT text to `path`, or Graphviz's rendering of it for a .png or .svg `path`;
    what was written (`Graphviz DOT`, `PNG`, `SVG`)."""
    render = graphviz(path)
    if render is None:
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise UserError(f"cannot write {path}: {e.strerror}") from None
        return "Graphviz DOT"
    dot, fmt = render
    try:
        done = subprocess.run([dot, f"-T{fmt}", "-o", path], input=text, capture_output=True, text=True)
    except OSError as e:
        raise UserError(f"cannot run {dot}: {e.strerror}") from None
    if done.returncode:
        why = done.stderr.strip().splitlines()[0] if done.stderr.strip() else f"exit code {done.returncode}"
        raise UserError(f"Graphviz's dot could not write {path}: {why}")
    return fmt.upper()


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
