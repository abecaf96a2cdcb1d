"""What the Spark engine refuses to do, said by name.

The Spark engine (compiler.spark_engine) translates a logical plan node by
node; a node, expression op or column type it has no exact translation for
raises `SparkEngineUnsupported` naming it, before any Spark job runs for the
step that holds it. It never substitutes an approximation: a program either
runs with the in-process runtime's answer or fails with this error.
"""

from __future__ import annotations


class SparkEngineUnsupported(Exception):
    """The Spark engine cannot run this part of the plan; `what` names it (a node, op or type)."""

    def __init__(self, what: str, reason: str):
        super().__init__(f"the Spark engine cannot run {what}: {reason}")
        self.what = what
        self.reason = reason


class SparkEngineError(Exception):
    """Misuse of the Spark engine: an unknown input, a table of the wrong shape, a loop past its limit."""


__all__ = ["SparkEngineUnsupported", "SparkEngineError"]
