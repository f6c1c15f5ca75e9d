"""The gulp format's op: `GulpDataset` (registration and kernel in C++; its Python class, tf_gulp.GulpDataset, reads its options from the registration)."""
