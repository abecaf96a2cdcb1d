-- Transitive closure, the SQL twin of tc.dl over the same data (tc/edge.facts).
-- Schema: edge(x int, y int). path(x, y): y can be reached from x in one or more steps.
CREATE VIEW path AS
WITH RECURSIVE path(x, y) AS (
    SELECT x, y FROM edge
  UNION
    SELECT path.x, edge.y FROM path JOIN edge ON path.y = edge.x
)
SELECT x, y FROM path;
