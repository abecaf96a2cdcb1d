"""BFS distances (the differential dataflow intro post), on the runtime's Python API.

Builds `dists` as the least fixed point of
    dists = roots x {0}  ∪  min over edges (d + 1)
then changes the graph one edge at a time and prints exactly what changed.
Run: python examples/bfs_runtime.py
"""

from runtime import Dataflow


def main() -> None:
    df = Dataflow()
    edges_in, edges = df.new_input("edges", ("int", "int"))
    roots_in, roots = df.new_input("roots", ("int",))
    dists = roots.map(lambda r: (r[0], 0), arity=2).iterate(
        lambda d: d.join(edges).map(lambda r: (r[2], r[1] + 1), arity=2).concat(d).min()
    )
    out = dists.capture()

    def commit(epoch: int, what: str) -> None:
        edges_in.advance_to(epoch)
        roots_in.advance_to(epoch)
        df.step()
        print(f"-- {what}")
        for (node, dist), _, diff in out.changes(since=epoch - 1, until=epoch):
            print(f"   {'+' if diff > 0 else '-'} node {node} at distance {dist}")

    edges_in.insert([(1, 2), (2, 3), (3, 4), (4, 5), (2, 6), (6, 5)])
    roots_in.insert([(1,)])
    commit(1, "initial graph, root 1")
    edges_in.insert([(1, 5)])
    commit(2, "add edge 1 -> 5")
    edges_in.remove([(2, 3)])
    commit(3, "remove edge 2 -> 3")
    edges_in.remove([(1, 5)])
    commit(4, "remove edge 1 -> 5")
    print("final:", sorted(out.contents()))


if __name__ == "__main__":
    main()
