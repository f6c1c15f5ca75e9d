"""The FFRecord format's ops: `FFRecordDataset` and its Python wrapper."""
