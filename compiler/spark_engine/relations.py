"""Plan nodes as Spark DataFrames: the non-recursive part of the translation.

A `Relations` object lowers plan nodes bottom-up to DataFrames whose columns
are named c0, c1, ... in plan column order, so every node's DataFrame has
exactly its plan columns and positional plan semantics carry over: Filter is
`where`, Project `select`, Join an inner equi-join (left's columns, then
right's; no keys a cross join), Antijoin a left anti join, Union `unionAll`
(multiplicities add, as in the plan's multiset semantics), Distinct
`distinct`, Aggregate a `groupBy` (count/sum/min/max/mean; a group with no
rows has no output row, so an aggregate without group columns over nothing
is empty, not Spark's one row), Values a small DataFrame, and a DeltaJoin
(multiway join, not as-of) a chain of equi-joins.

Names resolve through `refs` (binding name -> DataFrame) and `scans` (input
name -> DataFrame). Each node is lowered once per Relations (memoized by node
value: the optimizer has already made equal subplans one node). A Relations
may have a `parent`: inside a fixpoint iteration, nodes that do not read the
loop's bindings are taken from the parent, where they are built once and
cached, instead of being rebuilt each iteration.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from compiler.plan import Aggregate, Antijoin, Distinct, Filter, Join, Node, Project, Ref, Scan, Union, Values
from compiler.plan.delta import DeltaJoin

from compiler.spark_engine.errors import SparkEngineError, SparkEngineUnsupported
from compiler.spark_engine.expressions import spark_type, to_column


def names(n: int, prefix: str = "c") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def schema(types) -> T.StructType:
    return T.StructType([T.StructField(f"c{i}", spark_type(t), False) for i, t in enumerate(types)])


def describe(node: Node) -> str:
    """A node's name for messages: its type and, for DeltaJoin, what kind."""
    if isinstance(node, DeltaJoin):
        return "AsOfJoin" if node.as_of else "DeltaJoin"
    return type(node).__name__


class Relations:
    def __init__(self, spark, scans: dict, refs: dict, parent: "Relations | None" = None, loop_names=frozenset()):
        self.spark = spark
        self.scans = scans  # input name -> DataFrame with columns c0..
        self.refs = refs  # binding name -> DataFrame with columns c0..
        self.parent = parent
        self.loop_names = frozenset(loop_names)
        self.memo: dict[Node, DataFrame] = {}
        self._reads: dict[Node, bool] = {}

    def reads_loop(self, node: Node) -> bool:
        """Whether `node` reads a binding of this Relations' loop (then it is rebuilt each iteration)."""
        done = self._reads.get(node)
        if done is None:
            own = isinstance(node, Ref) and node.name in self.loop_names
            done = self._reads[node] = own or any(self.reads_loop(c) for c in node.children())
        return done

    def df(self, node: Node) -> DataFrame:
        if self.parent is not None and not self.reads_loop(node):
            return self.parent.invariant(node)
        done = self.memo.get(node)
        if done is None:
            for t in node.types:
                spark_type(t, f"column of {describe(node)}")
            done = self.memo[node] = self._lower(node)
        return done

    def invariant(self, node: Node) -> DataFrame:
        """A node read inside a loop that does not depend on it: built once and cached."""
        done = self.memo.get(("cached", node))
        if done is None:
            done = self.memo[("cached", node)] = self.df(node).cache()
        return done

    def _lower(self, node: Node) -> DataFrame:
        if isinstance(node, Scan):
            return self.scans[node.name]
        if isinstance(node, Ref):
            if node.name not in self.refs:
                raise SparkEngineError(f"binding {node.name!r} is not computed yet")
            return self.refs[node.name]
        if isinstance(node, Values):
            return self.spark.createDataFrame([tuple(r) for r in node.rows], schema(node.types))
        if isinstance(node, Filter):
            df = self.df(node.input)
            return df.where(to_column(node.predicate, [F.col(c) for c in df.columns]))
        if isinstance(node, Project):
            df = self.df(node.input)
            cols = [F.col(c) for c in df.columns]
            return df.select(*[to_column(e, cols).alias(f"c{i}") for i, e in enumerate(node.exprs)])
        if isinstance(node, Join):
            return self._join(node)
        if isinstance(node, Antijoin):
            left, right = self._pair(node.left, node.right)
            condition = self._condition(left, right, node.keys)
            out = left.join(right, on=condition, how="left_anti")
            return out.select(*[F.col(f"l{i}").alias(f"c{i}") for i in range(node.left.arity)])
        if isinstance(node, Union):
            first, *others = [self.df(c) for c in node.inputs]
            for other in others:
                first = first.unionAll(other)
            return first
        if isinstance(node, Distinct):
            return self.df(node.input).distinct()
        if isinstance(node, Aggregate):
            return self._aggregate(node)
        if type(node).__name__ == "TopK":
            return self._top(node)
        if type(node).__name__ == "TextExtreme":
            df = self.df(node.input)
            pick = F.max if node.largest else F.min  # Spark orders strings by UTF-8 bytes: code point order
            group = [F.col(f"c{g}") for g in node.group]
            value = pick(F.col(f"c{node.arg}")).alias("value")
            out = df.groupBy(*group).agg(value) if group else df.agg(value, F.count(F.lit(1)).alias("rows")).where(F.col("rows") > 0)
            return out.select(*[F.col(f"c{g}").alias(f"c{i}") for i, g in enumerate(node.group)], F.col("value").alias(f"c{len(node.group)}"))
        if isinstance(node, DeltaJoin):
            if node.as_of:
                raise SparkEngineUnsupported(
                    "AsOfJoin", "an as-of join depends on the times of updates, which a batch Spark run does not have"
                )
            return self._multiway(node)
        raise SparkEngineUnsupported(describe(node), "no Spark translation for this plan node")

    def _pair(self, left: Node, right: Node):
        l = self.df(left)
        r = self.df(right)
        l = l.select(*[F.col(f"c{i}").alias(f"l{i}") for i in range(left.arity)])
        r = r.select(*[F.col(f"c{i}").alias(f"r{i}") for i in range(right.arity)])
        return l, r

    @staticmethod
    def _condition(left, right, keys):
        if not keys:
            return None
        parts = [left[f"l{a}"] == right[f"r{b}"] for a, b in keys]
        out = parts[0]
        for p in parts[1:]:
            out = out & p
        return out

    def _join(self, node: Join) -> DataFrame:
        left, right = self._pair(node.left, node.right)
        condition = self._condition(left, right, node.keys)
        joined = left.crossJoin(right) if condition is None else left.join(right, on=condition, how="inner")
        cols = [F.col(f"l{i}") for i in range(node.left.arity)] + [F.col(f"r{j}") for j in range(node.right.arity)]
        return joined.select(*[c.alias(f"c{i}") for i, c in enumerate(cols)])

    def _multiway(self, node: DeltaJoin) -> DataFrame:
        """The rows of the inputs' cross product satisfying every equality: join the inputs
        in order, each join on the equalities whose columns are then all present."""
        offsets = node.offsets()
        owner = node.owners_of(node.inputs)
        pending = list(node.equalities)
        out = None
        for k, child in enumerate(node.inputs):
            df = self.df(child).select(*[F.col(f"c{i}").alias(f"d{offsets[k] + i}") for i in range(child.arity)])
            if out is None:
                out = df
                continue
            ready = [(a, b) for a, b in pending if owner[a] <= k and owner[b] <= k]
            pending = [e for e in pending if e not in ready]
            if ready:
                condition = None
                for a, b in ready:
                    part = F.col(f"d{a}") == F.col(f"d{b}")
                    condition = part if condition is None else condition & part
                out = out.join(df, on=condition, how="inner")
            else:
                out = out.crossJoin(df)
        return out.select(*[F.col(f"d{i}").alias(f"c{i}") for i in range(node.arity)])

    def _top(self, node) -> DataFrame:
        """ORDER BY ... LIMIT/OFFSET (compiler.sql.topk.TopK): the rows at places offset ..
        offset + limit when ordered by the order columns (-0.0 as 0.0), ties by every
        column ascending -- one definite multiset, as in-process."""
        from pyspark.sql import Window

        df = self.df(node.input)
        keys = []
        for c, desc in node.order:
            key = F.col(f"c{c}")
            if node.input.types[c] == "float":
                key = F.when(key == 0.0, F.lit(0.0)).otherwise(key)
            keys.append(key.desc() if desc else key.asc())
        keys += [F.col(c).asc() for c in df.columns]
        place = F.row_number().over(Window.orderBy(*keys))
        ranked = df.withColumn("__place", place)
        keep = F.col("__place") > node.offset
        if node.limit is not None:
            keep = keep & (F.col("__place") <= node.offset + node.limit)
        return ranked.where(keep).drop("__place")

    def _aggregate(self, node: Aggregate) -> DataFrame:
        df = self.df(node.input)
        group = [F.col(f"c{g}") for g in node.group]
        value_type = spark_type(node.types[-1])
        if node.func == "count":
            value = F.count(F.lit(1))
        else:
            arg = F.col(f"c{node.arg}")
            value = {"sum": F.sum, "min": F.min, "max": F.max, "mean": F.avg}[node.func](arg)
        k = len(node.group)
        rows = F.count(F.lit(1)).alias("rows")
        out = df.groupBy(*group).agg(value.cast(value_type).alias("value"), rows) if group else df.agg(value.cast(value_type).alias("value"), rows)
        if not group:
            out = out.where(F.col("rows") > 0)
        return out.select(*[F.col(f"c{g}").alias(f"c{i}") for i, g in enumerate(node.group)], F.col("value").alias(f"c{k}"))


__all__ = ["Relations", "names", "schema", "describe"]
