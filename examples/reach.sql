-- Reachability from a set of roots: the SQL twin of reach.dl, over the same data
-- (reach/edge.facts, reach/root.facts). Schema: edge(src int, dst int), root(r int).
-- reach(r, n): node n can be reached from root r. UNION makes it a set, so the
-- recursion ends on cyclic graphs; deltalog keeps it current as edges change.
CREATE VIEW reach AS
WITH RECURSIVE reach(r, n) AS (
    SELECT r, r FROM root
  UNION
    SELECT reach.r, edge.dst FROM reach JOIN edge ON reach.n = edge.src
)
SELECT r, n FROM reach;
