"""The logical plan: what a program computes, independent of its source language.

Front ends (Datalog now, SQL later) translate a checked program into a Plan
(compiler.plan.program): inputs, then bindings of named relations to trees of
typed, immutable relational nodes (compiler.plan.nodes) over column
expressions (compiler.plan.expr, compiler.plan.ops), with Fixpoints for
recursion. The optimizer (compiler.plan.rewrites) rewrites plans into
cheaper equal plans, and compiler.lowering turns a plan into a runtime
dataflow. `explain` renders a plan as text.
"""

from compiler.plan.errors import PlanError
from compiler.plan.explain import explain, explain_node
from compiler.plan.expr import TRUE, Call, Col, Const, Expr, conjoin, conjuncts
from compiler.plan.nodes import (
    Aggregate,
    Antijoin,
    Distinct,
    Filter,
    Join,
    Node,
    Project,
    Ref,
    Scan,
    Union,
    Values,
    is_set,
    walk,
)
from compiler.plan.program import Binding, Fixpoint, Plan

__all__ = [
    "PlanError", "explain", "explain_node",
    "Expr", "Col", "Const", "Call", "TRUE", "conjoin", "conjuncts",
    "Node", "Scan", "Ref", "Values", "Filter", "Project", "Join", "Antijoin", "Union", "Distinct", "Aggregate",
    "is_set", "walk", "Binding", "Fixpoint", "Plan",
]  # fmt: skip
