#!/usr/bin/env python3
"""A picture of what GulpDataset's fused augmentation does: a few clips, each read with
``augment=[RandomResizedCrop(112), RandomHorizontalFlip()]`` (one crop and flip per clip, shared
by its frames), next to the frames as stored. Writes ``docs/images/augmented_clips.png``.

Run it from the repository root after ``make demo`` (which writes the gulp directories it reads)::

    PYTHONPATH=. python3 examples/augmented_clips.py [--gulp examples/output/train] [--output PNG]
"""

from __future__ import annotations

import argparse
import os
import sys

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gulp", default=os.path.join(_REPO_ROOT, "examples", "output", "train"))
    parser.add_argument("--output", default=os.path.join(_REPO_ROOT, "docs", "images",
                                                         "augmented_clips.png"))
    parser.add_argument("--clips", type=int, default=3)
    parser.add_argument("--frames", type=int, default=6)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import tf_gulp
    from tf_gulp.transforms import RandomHorizontalFlip, RandomResizedCrop

    common = dict(num_frames=args.frames, shuffle=True, seed=args.seed)
    plain = tf_gulp.GulpDataset(args.gulp, **common)
    augmented = tf_gulp.GulpDataset(args.gulp, **common, augment=[
        RandomResizedCrop(112), RandomHorizontalFlip()])
    rows = []
    # Clips far apart in the shuffled order (neighbours overlap in the demo's data).
    for k, (p, a) in enumerate(zip(plain, augmented)):
        if k % 40 == 0:
            rows.append((p["frames"].numpy(), a["frames"].numpy(), p["id"].numpy().decode()))
        if len(rows) == args.clips:
            break
    fig, axes = plt.subplots(2 * len(rows), args.frames,
                             figsize=(1.6 * args.frames, 1.45 * 2 * len(rows)))
    for r, (frames, warped, clip_id) in enumerate(rows):
        for t in range(args.frames):
            for k, (picture, what) in enumerate(((frames[t], "stored"), (warped[t], "fused"))):
                ax = axes[2 * r + k, t]
                ax.imshow(picture)
                ax.set_xticks([])
                ax.set_yticks([])
                if t == 0:
                    ax.set_ylabel(f"{clip_id}\n{what}" if k == 0 else what, fontsize=7)
    fig.suptitle("GulpDataset(..., augment=[RandomResizedCrop(112), RandomHorizontalFlip()]): "
                 "one crop and flip per clip", fontsize=9)
    fig.tight_layout()
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    fig.savefig(args.output, dpi=80)
    try:  # a palette PNG: a quarter of the size, indistinguishable at this scale
        from PIL import Image
        Image.open(args.output).convert("RGB").quantize(colors=255).save(args.output,
                                                                         optimize=True)
    except ImportError:
        pass
    print(f"Wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
