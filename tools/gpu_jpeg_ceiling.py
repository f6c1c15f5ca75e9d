#!/usr/bin/env python3
"""The device check's jpeg phase: what the GPU's hardware JPEG engines would give gulp frames, before
anything is built for it. Times torchvision's `decode_jpeg(..., device="cuda")` (nvJPEG's hardware
backend on A100/H100/H200) on gulp-like frames (320x240 4:2:0) and ImageNet-like JPEGs from
cc/gpu/testing/data/jpeg, batches of 64 and 256, and prints one JSON object.

    python3 tools/gpu_jpeg_ceiling.py [--data DIR] [--batches 64,256] [--seconds 2] [--small]

Without torchvision with CUDA (the dry run, a machine without a GPU) the GPU rates are skipped, with
the reason, and the same batches run through a CPU decoder (torchvision's, else Pillow's, else a
JPEG header reader) so the script's own logic still runs. Exit status: 0 = measured or skipped,
1 = a decode failed or gave the wrong shape, 2 = bad arguments or data.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "cc", "gpu", "testing", "data", "jpeg")

Picture = Tuple[str, bytes, int, int]  # file, bytes, width, height
Decoder = Callable[[List[bytes]], List[Tuple[int, int]]]  # (height, width) per picture


def load(folder: str) -> Dict[str, List[Picture]]:
    sets: Dict[str, List[Picture]] = {}
    with open(os.path.join(folder, "index.txt"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                name, file, w, h = line.split()
                with open(os.path.join(folder, file), "rb") as p:
                    sets.setdefault(name, []).append((file, p.read(), int(w), int(h)))
            except (OSError, ValueError) as e:
                raise SystemExit(f"{folder}/index.txt line {n}: {e}")
    return sets


def jpeg_size(data: bytes) -> Tuple[int, int]:
    """(height, width) from a JPEG's SOF marker; ValueError when there is none."""
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            raise ValueError(f"no marker at byte {i}")
        marker, length = data[i + 1], int.from_bytes(data[i + 2:i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return int.from_bytes(data[i + 5:i + 7], "big"), int.from_bytes(data[i + 7:i + 9], "big")
        i += 2 + length
    raise ValueError("no SOF marker")


def gpu_decoder() -> Tuple[Optional[Decoder], str]:
    """torchvision's decode_jpeg on the GPU, or None and why not."""
    try:
        import torch
        import torchvision
        from torchvision.io import decode_jpeg
    except ImportError as e:
        return None, f"skipped: needs torchvision with CUDA ({e})"
    if not torch.cuda.is_available():
        return None, "skipped: needs torchvision with CUDA (torch sees no CUDA device)"

    # The input tensors, made once per batch (outside the clock); the batch is kept with them so
    # that its id is not reused by another list.
    made: Dict[int, tuple] = {}

    def decode(batch: List[bytes]) -> List[Tuple[int, int]]:
        if id(batch) not in made:
            made[id(batch)] = (batch, [torch.frombuffer(bytearray(b), dtype=torch.uint8)
                                       for b in batch])
        out = decode_jpeg(made[id(batch)][1], device="cuda")
        torch.cuda.synchronize()
        return [tuple(t.shape[1:]) for t in out]
    return decode, (f"torchvision {torchvision.__version__} decode_jpeg(device='cuda'), torch "
                    f"{torch.__version__}, {torch.cuda.get_device_name(0)}")


def cpu_decoder() -> Tuple[Decoder, str]:
    """A CPU decoder to run the same batches through: torchvision's, Pillow's or headers only."""
    try:
        import torch
        from torchvision.io import decode_jpeg

        def tv(batch: List[bytes]) -> List[Tuple[int, int]]:
            return [tuple(decode_jpeg(torch.frombuffer(bytearray(b), dtype=torch.uint8)).shape[1:])
                    for b in batch]
        return tv, "torchvision decode_jpeg on the CPU"
    except ImportError:
        pass
    try:
        import io
        from PIL import Image

        def pil(batch: List[bytes]) -> List[Tuple[int, int]]:
            out = []
            for b in batch:
                im = Image.open(io.BytesIO(b))
                im.load()
                out.append((im.height, im.width))
            return out
        return pil, "Pillow on the CPU"
    except ImportError:
        return (lambda batch: [jpeg_size(b) for b in batch]), "JPEG headers only (no decoder here)"


def time_batches(decode: Decoder, pictures: List[Picture], batch: int, seconds: float,
                 max_rounds: int) -> Dict[str, object]:
    """Decodes batches of `batch` pictures (cycling over the set) until `seconds` have passed or
    `max_rounds` batches ran, after one batch of warm-up; checks every decoded shape."""
    chosen = [pictures[i % len(pictures)] for i in range(batch)]
    data = [p[1] for p in chosen]
    want = [(p[3], p[2]) for p in chosen]
    got = decode(data)  # warm-up: handles, the engines' first use
    wrong = [chosen[i][0] for i, shape in enumerate(got) if tuple(shape) != want[i]]
    rounds, start = 0, time.perf_counter()
    while rounds < max_rounds and (rounds == 0 or time.perf_counter() - start < seconds):
        decode(data)
        rounds += 1
    elapsed = time.perf_counter() - start
    pixels = sum(w * h for _, _, w, h in chosen)
    return {"batch": batch, "rounds": rounds, "images_per_s": batch * rounds / elapsed,
            "megapixels_per_s": pixels * rounds / elapsed / 1e6,
            "mean_bytes": sum(len(d) for d in data) / batch, "wrong_shapes": wrong[:5]}


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=DATA)
    p.add_argument("--batches", default="64,256")
    p.add_argument("--seconds", type=float, default=2.0, help="timed seconds per cell (at least)")
    p.add_argument("--small", action="store_true", help="one timed batch per cell (the dry run)")
    args = p.parse_args(argv)
    try:
        batches = [int(b) for b in args.batches.split(",")]
    except ValueError:
        p.error("--batches takes numbers: 64,256")
    sets = load(args.data)
    for needed in ("gulp_320x240", "imagenet_like"):
        if not sets.get(needed):
            print(f"{args.data}/index.txt lists no {needed} pictures", file=sys.stderr)
            return 2
    report: Dict[str, object] = {"phase": "jpeg"}
    gpu, gpu_says = gpu_decoder()
    report["gpu_decode"] = gpu_says
    cpu, cpu_says = cpu_decoder()
    report["cpu_decode"] = cpu_says
    failed = False
    for key, decode in (("gpu_runs", gpu), ("cpu_runs", cpu)):
        if decode is None:
            continue
        runs = []
        for name in ("gulp_320x240", "imagenet_like"):
            for batch in batches:
                try:
                    run = time_batches(decode, sets[name], batch, args.seconds,
                                       1 if args.small else 1000)
                except Exception as e:  # a decoder's failure is a result to report
                    run = {"batch": batch, "error": f"{type(e).__name__}: {e}"}
                failed = failed or "error" in run or bool(run.get("wrong_shapes"))
                runs.append({"samples": name, **run})
        report[key] = runs
        if key == "gpu_runs":
            break  # the CPU stand-in only runs where the GPU could not
    print(json.dumps(report))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
