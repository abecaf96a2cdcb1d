"""Plan nodes as Spark DataFrames: the non-recursive part of the translation.

A `Relations` object lowers plan nodes to DataFrames whose columns are named
c0, c1, ... in plan column order, so every node's DataFrame has exactly its
plan columns and positional plan semantics carry over: Filter is WHERE,
Project a SELECT list, Join an inner equi-join (left's columns, then
right's; no keys a cross join), Antijoin a LEFT ANTI JOIN, Union UNION ALL
(multiplicities add, as in the plan's multiset semantics), Distinct SELECT
DISTINCT, Aggregate a GROUP BY (count/sum/min/max/mean; a group with no
rows has no output row, so an aggregate without group columns over nothing
is empty, not Spark's one row), Values a VALUES list, and a DeltaJoin
(multiway join, not as-of) a chain of equi-joins. The SQL front end's own
nodes: TopK (ORDER BY ... LIMIT/OFFSET) is a row_number() window in the
in-process order, ties included (see `_top`); TextExtreme (MIN/MAX of text)
Spark's string min/max, which compares UTF-8 bytes: for valid strings that
is code point order, the order compiler.plan.ops.string_ranks gives. An
AsOfJoin (its answer depends on update times) raises SparkEngineUnsupported.

A node is lowered as Spark SQL text (expressions by
compiler.spark_engine.expressions.to_sql), and `df(node)` is one
`spark.sql` of it: one parse and analysis per DataFrame, where building
Columns cost a Py4J round trip per column and operator (thousands for a
small SQL query's plan). The DataFrames a text reads -- inputs, bindings,
loop relations, and nodes read twice -- are temporary views with generated
names, registered once per DataFrame and dropped by `drop_views` when the
run is over (a DataFrame is analysed when made, so it no longer needs them).

Names resolve through `refs` (binding name -> DataFrame) and `scans` (input
name -> DataFrame). Each node is lowered once per Relations (memoized by node
value: the optimizer has already made equal subplans one node). A Relations
may have a `parent`: inside a fixpoint iteration, nodes that do not read the
loop's bindings are taken from the parent, where they are built once and
cached, instead of being rebuilt each iteration.
"""

from __future__ import annotations

import uuid

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from compiler.plan import Aggregate, Antijoin, Distinct, Filter, Join, Node, Project, Ref, Scan, Union, Values
from compiler.plan.delta import DeltaJoin

from compiler.spark_engine.errors import SparkEngineError, SparkEngineUnsupported
from compiler.spark_engine.expressions import register_udfs, spark_type, sql_literal, sql_type, to_sql
from compiler.plan.ops import FLOAT


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
        self._texts: dict[Node, str] = {}
        self._udfs: set = set()  # UDFs named by texts not yet run (see expressions.to_sql)
        # id(DataFrame) -> (DataFrame, view name), shared with the parent: views live for the whole run
        self.views: dict = parent.views if parent is not None else {}

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
            done = self.memo[node] = self._no_columns(node) if not node.arity else self._sql(self._query(node))
        return done

    def invariant(self, node: Node) -> DataFrame:
        """A node read inside a loop that does not depend on it: built once and cached."""
        done = self.memo.get(("cached", node))
        if done is None:
            done = self.memo[("cached", node)] = self.df(node).cache()
        return done

    def drop_views(self) -> None:
        """Drop the run's temporary views (the DataFrames made from them stay valid)."""
        for _, name in self.views.values():
            self.spark.catalog.dropTempView(name)
        self.views.clear()

    # ---- SQL text ----

    def _sql(self, text: str) -> DataFrame:
        register_udfs(self.spark, self._udfs)
        self._udfs.clear()
        return self.spark.sql(text)

    def view(self, df: DataFrame) -> str:
        """The name of a temporary view of `df` (registered on first use)."""
        found = self.views.get(id(df))
        if found is None:
            name = f"deltalog_{uuid.uuid4().hex[:12]}"
            df.createOrReplaceTempView(name)
            found = self.views[id(df)] = (df, name)
        return found[1]

    def _query(self, node: Node) -> str:
        """A SELECT computing `node` as columns c0, c1, ..."""
        return self._text(node)

    def _from(self, node: Node) -> str:
        """`node` as a FROM item (without alias): a view's name or a parenthesized query."""
        if self.parent is not None and not self.reads_loop(node):
            return self.view(self.parent.invariant(node))
        done = self.memo.get(node)
        if done is not None:
            return self.view(done)
        if isinstance(node, Scan):
            return self.view(self.scans[node.name])
        if not node.arity:
            return self.view(self.df(node))
        if isinstance(node, Ref):
            if node.name not in self.refs:
                raise SparkEngineError(f"binding {node.name!r} is not computed yet")
            return self.view(self.refs[node.name])
        if node in self._texts:  # read a second time: analysed once, as a view
            done = self.memo[node] = self._sql(self._texts[node])
            return self.view(done)
        return f"({self._text(node)})"

    def _text(self, node: Node) -> str:
        for t in node.types:
            spark_type(t, f"column of {describe(node)}")
        done = self._texts.get(node)
        if done is None:
            done = self._texts[node] = self._lower(node)
        return done

    def _lower(self, node: Node) -> str:
        n = node.arity
        if isinstance(node, (Scan, Ref)):
            return f"SELECT * FROM {self._from(node)}"
        if isinstance(node, Values):
            if not node.rows:
                zeros = ", ".join(f"{sql_literal(_ZERO[t], t)} AS c{i}" for i, t in enumerate(node.types))
                return f"SELECT {zeros} WHERE FALSE"
            rows = ", ".join("(" + ", ".join(sql_literal(v, t) for v, t in zip(r, node.types)) + ")" for r in node.rows)
            return f"SELECT * FROM VALUES {rows} AS v({', '.join(names(n))})"
        if isinstance(node, Filter):
            predicate = to_sql(node.predicate, names(n), self._udfs)
            return f"SELECT * FROM {self._from(node.input)} AS q WHERE {predicate}"
        if isinstance(node, Project):
            columns = names(node.input.arity)
            exprs = ", ".join(f"{to_sql(e, columns, self._udfs)} AS c{i}" for i, e in enumerate(node.exprs))
            return f"SELECT {exprs} FROM {self._from(node.input)} AS q"
        if isinstance(node, Join):
            left = [f"l.c{i}" for i in range(node.left.arity)]
            right = [f"r.c{j}" for j in range(node.right.arity)]
            pick = ", ".join(f"{c} AS c{i}" for i, c in enumerate(left + right))
            on = self._on(node.keys)
            join = "CROSS JOIN" if on is None else "JOIN"
            return f"SELECT {pick} FROM {self._from(node.left)} AS l {join} {self._from(node.right)} AS r" + ("" if on is None else f" ON {on}")
        if isinstance(node, Antijoin):
            on = self._on(node.keys) or "TRUE"
            return f"SELECT l.* FROM {self._from(node.left)} AS l LEFT ANTI JOIN {self._from(node.right)} AS r ON {on}"
        if isinstance(node, Union):
            return " UNION ALL ".join(f"SELECT * FROM {self._from(c)} AS q{k}" for k, c in enumerate(node.inputs))
        if isinstance(node, Distinct):
            return f"SELECT DISTINCT * FROM {self._from(node.input)} AS q"
        if isinstance(node, Aggregate):
            if node.func == "count":
                value = "count(1)"
            else:
                value = f"{dict(sum='sum', min='min', max='max', mean='avg')[node.func]}(c{node.arg})"
            return self._grouped(node, f"CAST({value} AS {sql_type(node.types[-1])})")
        if type(node).__name__ == "TopK":
            return self._top(node)
        if type(node).__name__ == "TextExtreme":
            # Spark orders strings by their UTF-8 bytes, which is code point order (string_ranks').
            return self._grouped(node, f"{'max' if node.largest else 'min'}(c{node.arg})")
        if isinstance(node, DeltaJoin):
            if node.as_of:
                raise SparkEngineUnsupported(
                    "AsOfJoin", "an as-of join depends on the times of updates, which a batch Spark run does not have"
                )
            return self._multiway(node)
        if type(node).__name__ == "AsOfJoin":
            raise SparkEngineUnsupported("AsOfJoin", "an as-of join depends on the times of updates, which a batch Spark run does not have")
        raise SparkEngineUnsupported(describe(node), "no Spark translation for this plan node")

    def _no_columns(self, node: Node) -> DataFrame:
        """A node without columns (a row is a bare "yes", as in EXISTS) by the DataFrame API:
        SQL text cannot select no columns."""
        if isinstance(node, Scan):
            return self.scans[node.name]
        if isinstance(node, Ref):
            if node.name not in self.refs:
                raise SparkEngineError(f"binding {node.name!r} is not computed yet")
            return self.refs[node.name]
        if isinstance(node, Values):
            return self.spark.range(len(node.rows)).select()
        if isinstance(node, Project):
            return self.df(node.input).select()
        if isinstance(node, Filter):
            predicate = to_sql(node.predicate, [], self._udfs)
            register_udfs(self.spark, self._udfs)
            return self.df(node.input).where(predicate)
        if isinstance(node, Distinct):  # at most the one row there is
            return self.df(node.input).limit(1)
        if isinstance(node, Union):
            first, *others = [self.df(c) for c in node.inputs]
            for other in others:
                first = first.unionAll(other)
            return first
        if isinstance(node, Join) and not node.keys:
            return self.df(node.left).crossJoin(self.df(node.right))
        if isinstance(node, Antijoin) and not node.keys:
            return self.df(node.left).join(self.df(node.right), how="left_anti")
        raise SparkEngineUnsupported(f"{describe(node)} without columns", "no Spark translation for this plan node without columns")

    @staticmethod
    def _on(keys) -> str | None:
        if not keys:
            return None
        return " AND ".join(f"l.c{a} = r.c{b}" for a, b in keys)

    def _grouped(self, node, value: str) -> str:
        """The group columns and `value` per group of node.group (no group columns: one row if any)."""
        group = [f"c{g}" for g in node.group]
        picked = ", ".join([f"{c} AS c{i}" for i, c in enumerate(group)] + [f"{value} AS c{len(group)}"])
        source = f"SELECT {picked} FROM {self._from(node.input)} AS q"
        return source + (f" GROUP BY {', '.join(group)}" if group else " HAVING count(1) > 0")

    def _multiway(self, node: DeltaJoin) -> str:
        """The rows of the inputs' cross product satisfying every equality: join the inputs
        in order, each join on the equalities whose columns are then all present."""
        offsets = node.offsets()
        owner = node.owners_of(node.inputs)
        column = {offsets[k] + i: f"i{k}.c{i}" for k, child in enumerate(node.inputs) for i in range(child.arity)}
        pending = list(node.equalities)
        text = ""
        for k, child in enumerate(node.inputs):
            item = f"{self._from(child)} AS i{k}"
            if not k:
                text = item
                continue
            ready = [(a, b) for a, b in pending if owner[a] <= k and owner[b] <= k]
            pending = [e for e in pending if e not in ready]
            if ready:
                text += f" JOIN {item} ON " + " AND ".join(f"{column[a]} = {column[b]}" for a, b in ready)
            else:
                text += f" CROSS JOIN {item}"
        pick = ", ".join(f"{column[i]} AS c{i}" for i in range(node.arity))
        return f"SELECT {pick} FROM {text}"

    def _top(self, node) -> str:
        """ORDER BY ... LIMIT/OFFSET (compiler.sql.topk.TopK): the rows at places offset ..
        offset + limit in the in-process order (compiler.sql.topk.SortKeys), so the answer is
        the same multiset even among ties: the order columns (-0.0 as 0.0; strings in code
        point order, which is Spark's UTF-8 byte order), then every column ascending (-0.0
        before 0.0, which Spark's order does not tell apart)."""
        keys = []
        for c, desc in node.order:
            key = f"c{c}"
            if node.input.types[c] == FLOAT:
                key = f"CASE WHEN {key} = 0 THEN {sql_literal(0.0, FLOAT)} ELSE {key} END"
            keys.append(f"{key} {'DESC' if desc else 'ASC'}")
        for c, t in enumerate(node.input.types):
            keys.append(f"c{c} ASC")
            if t == FLOAT:
                keys.append(f"CASE WHEN c{c} = 0 AND CAST(c{c} AS STRING) LIKE '-%' THEN 0 ELSE 1 END ASC")
        keep = f"__place > {node.offset}"
        if node.limit is not None:
            keep += f" AND __place <= {node.offset + node.limit}"
        ranked = f"SELECT *, row_number() OVER (ORDER BY {', '.join(keys)}) AS __place FROM {self._from(node.input)} AS q"
        return f"SELECT {', '.join(names(node.arity))} FROM ({ranked}) AS ranked WHERE {keep}"


_ZERO = {"number": 0, "float": 0.0, "symbol": "", "bool": False}


__all__ = ["Relations", "names", "schema", "describe"]
