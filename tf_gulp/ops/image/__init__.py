"""Image ops shared by the formats: `similarity_warp` (CPU and GPU kernels), `similarity_transform_matrices`, `decode_jpeg_warped`."""
