"""deltalog's differential dataflow runtime.

Build a dataflow from inputs and collection operators, step it, read captures:

    df = Dataflow()
    edges_in, edges = df.new_input("edges", types=2)
    roots_in, roots = df.new_input("roots", types=1)
    dists = roots.map(lambda r: (r[0], 0), arity=2).iterate(
        lambda d: d.join(edges).map(lambda r: (r[2], r[1] + 1)).concat(d).min())
    out = dists.capture()
    edges_in.insert([(1, 2), (2, 3)]); roots_in.insert([(1,)])
    for h in (edges_in, roots_in): h.advance_to(1)
    df.step()
    out.contents()   # Counter({(1, 0): 1, (2, 1): 1, (3, 2): 1})
"""

from runtime.collection import Collection, Scope, Variable, iterate
from runtime.delta_query import delta_query
from runtime.memory import keep_freed_memory, use_small_pages
from runtime.operators.arrange import Arranged
from runtime.operators.capture import Capture
from runtime.operators.input import InputHandle
from runtime.times import ALTNEU, EPOCH, ITERATION, Antichain, Lattice
from runtime.worker import Dataflow, DataflowError, RoundLimitError

use_small_pages()
keep_freed_memory()

__all__ = [
    "ALTNEU", "EPOCH", "ITERATION", "Antichain", "Arranged", "Capture", "Collection", "Dataflow",
    "DataflowError", "InputHandle", "delta_query", "Lattice", "RoundLimitError", "Scope", "Variable", "iterate",
]
