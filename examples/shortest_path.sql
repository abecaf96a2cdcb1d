-- Breadth-first search distances, the SQL twin of bfs.dl over the same data
-- (bfs/edge.facts, bfs/source.facts). Schema: edge(src int, dst int), source(n int).
-- The recursive CTE aggregates itself with MIN, as bfs.dl's `min(d)` relation does:
-- each round proposes d + 1 for every neighbour and keeps the least per node, so the
-- fixpoint is the shortest distance, also on cyclic graphs (no standard SQL engine
-- runs this form; UNION ALL over paths would not terminate on a cycle).
CREATE VIEW dist AS
WITH RECURSIVE dist(n, d) AS (
  SELECT n, MIN(d) FROM (
      SELECT n, 0 AS d FROM source
    UNION ALL
      SELECT edge.dst, dist.d + 1 FROM dist JOIN edge ON dist.n = edge.src
  ) AS step
  GROUP BY n
)
SELECT n, d FROM dist;
