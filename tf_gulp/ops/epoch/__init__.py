"""Epoch and cardinality datasets: the epoch counter every source reads, and the ops that keep cardinality known."""
