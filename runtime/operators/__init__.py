"""Operators: the nodes of a dataflow graph.

Each operator reacts to input batches only and keeps `output[t] = f(input[t])`
for every time `t`. Stateless ones (`basic`) transform each batch; `arrange`
indexes a collection into a shared trace; `join` pairs each new batch with the
other side's trace; `reduce` recomputes a function of each key's accumulated
input at the interesting times its changes create; `consolidate` and `capture`
wait for times to become complete. `input` is where updates enter.
"""
