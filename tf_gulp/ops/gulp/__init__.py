"""The gulp format's ops: `GulpDataset` (registration and kernel in C++) and its Python wrapper."""
