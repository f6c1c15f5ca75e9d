"""The Benzina (H.265 in MP4) ops: the container index, `decode_hevc` (CPU and GPU kernels), `decode_hevc_warped`."""
