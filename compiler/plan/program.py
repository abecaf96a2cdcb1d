"""A whole plan: inputs, then steps that define named relations, in order.

A `Plan` declares its inputs (name and column types) and a sequence of steps.
A step is a `Binding` (a name defined by a node over inputs and earlier
bindings) or a `Fixpoint`: several bindings defined together, whose nodes may
`Ref` any binding of the same Fixpoint. A Fixpoint means the least fixpoint of
its bindings taken together, computed from empty relations by applying all
bodies at once until nothing changes (for Datalog: one strongly connected
component of rules; for SQL: one `WITH RECURSIVE` group). Every binding's
value is a set -- front ends end each body with a Distinct or an Aggregate --
which is what makes the iteration converge for monotone bodies.

Names: `Scan` reads an input, `Ref` reads a binding; the two namespaces are
separate, so a relation that is both fed from outside and derived by rules is
an input and a binding of the same name. `Plan.__post_init__` checks that
every name is defined before it is used, with matching types.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from compiler.plan.errors import PlanError
from compiler.plan.nodes import Node, Ref, Scan, walk


@dataclass(frozen=True, eq=False)
class Binding:
    name: str
    body: Node
    span: object = field(default=None, compare=False, repr=False, kw_only=True)

    @property
    def types(self) -> tuple[str, ...]:
        return self.body.types


@dataclass(frozen=True, eq=False)
class Fixpoint:
    bindings: tuple[Binding, ...]
    # The iterations it may take, or None: a front end's guard on a recursion that need not
    # reach a fixpoint (SQL's MIN/MAX over a recursive CTE); one more is an error at run time.
    round_limit: int | None = field(default=None, kw_only=True)

    def __post_init__(self):
        object.__setattr__(self, "bindings", tuple(self.bindings))
        names = [b.name for b in self.bindings]
        if not names or len(set(names)) != len(names):
            raise PlanError(f"Fixpoint needs distinct binding names, got {names}")


Step = Binding | Fixpoint


@dataclass(frozen=True, eq=False)
class Plan:
    inputs: dict[str, tuple[str, ...]]  # name -> column types, in declaration order
    steps: tuple[Step, ...]
    outputs: tuple[str, ...]  # names of bindings (or inputs) the caller wants
    # How the planner ran each multiway join and why (compiler.plan.rewrites.delta.JoinChoice), for explain.
    join_choices: tuple = field(default=(), kw_only=True)

    def __post_init__(self):
        object.__setattr__(self, "steps", tuple(self.steps))
        defined: dict[str, tuple[str, ...]] = {}
        for step in self.steps:
            group = step.bindings if isinstance(step, Fixpoint) else (step,)
            visible = dict(defined)
            if isinstance(step, Fixpoint):
                visible.update((b.name, b.types) for b in group)
            for b in group:
                if b.name in defined:
                    raise PlanError(f"binding {b.name!r} is defined twice")
                self._check_names(b, visible)
            defined.update((b.name, b.types) for b in group)
        for name in self.outputs:
            if name not in defined and name not in self.inputs:
                raise PlanError(f"output {name!r} is neither a binding nor an input")

    def _check_names(self, binding: Binding, visible) -> None:
        for n in walk(binding.body):
            if isinstance(n, Scan) and self.inputs.get(n.name) != n.types:
                raise PlanError(f"{binding.name}: Scan of unknown input {n.name!r} or with other types")
            if isinstance(n, Ref) and visible.get(n.name) != n.types:
                raise PlanError(f"{binding.name}: Ref {n.name!r} is not defined before, or has other types")

    def bindings(self) -> list[Binding]:
        return [b for step in self.steps for b in (step.bindings if isinstance(step, Fixpoint) else (step,))]

    def map_bodies(self, fn) -> "Plan":
        """The same plan with every binding's body replaced by fn(body).

        Names are not checked again: rewrites keep every Scan and Ref as they are
        (the nodes themselves check everything else when they are made)."""
        steps = []
        for step in self.steps:
            if isinstance(step, Fixpoint):
                steps.append(replace(step, bindings=tuple(replace(b, body=fn(b.body)) for b in step.bindings)))
            else:
                steps.append(replace(step, body=fn(step.body)))
        plan = object.__new__(Plan)
        for name, value in (("inputs", self.inputs), ("steps", tuple(steps)), ("outputs", self.outputs), ("join_choices", self.join_choices)):
            object.__setattr__(plan, name, value)
        return plan

    def with_join_choices(self, choices) -> "Plan":
        """The same plan, recording how its multiway joins are planned."""
        plan = self.map_bodies(lambda body: body)
        object.__setattr__(plan, "join_choices", tuple(choices))
        return plan
