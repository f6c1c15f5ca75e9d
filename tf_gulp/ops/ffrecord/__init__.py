"""The FFRecord format's op: `FFRecordDataset` (registration and kernel in C++; its Python class, tf_gulp.FFRecordDataset, reads its options from the registration)."""
