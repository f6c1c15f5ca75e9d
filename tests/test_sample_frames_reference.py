"""GulpDataset's dense clips against mmaction2's ``SampleFrames`` numbers, option by option.

``reference_frames`` below is an independent re-implementation of SampleFrames' published
algorithm (mmaction2 main, commit 4d6c934, ``mmaction/datasets/transforms/loading.py``), written
for this test with numpy's arithmetic (float64, ``np.round``, ``astype(int)``). Deterministic cases
(test mode without jitter) must match it exactly. Random ones cannot share mmaction2's draws
(the kernel draws from (seed, epoch, element)), so there every draw of the re-implementation is
replaced by each value it can take (``AllDraws``): what the kernel gives over many passes must lie
in that support, and cover it where the support is small. With the kernel's view order (clips
in the order SampleFrames lists them) and no crops, an element's views are its clips.
"""

from __future__ import annotations

import io
import itertools
from typing import List, Optional, Tuple

import numpy as np
import pytest
from PIL import Image

import tf_gulp
from tf_gulp.gulp import AbstractDatasetAdapter, GulpIngestor


# --- the reference -------------------------------------------------------------------------------

class Draws:
    """The random draws SampleFrames makes: numpy's legacy global generator (what it calls)."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.RandomState(seed)

    def randint(self, high, size):
        return self.rng.randint(high, size=size)

    def uniform(self, low, high, size):
        return self.rng.uniform(low, high, size)


class FixedDraws(Draws):
    """Draws chosen in advance: call i returns ``values[i]`` (an integer of ``range(high)`` for
    randint, or a tuple of them, one per element; a fraction of [low, high) for uniform; 0 when
    not given), and records each call's ``high`` (None for uniform)."""

    def __init__(self, values=()):
        self.values = list(values)
        self.highs: list = []

    def _next(self, high):
        self.highs.append(high)
        k = len(self.highs) - 1
        return self.values[k] if k < len(self.values) else 0

    def randint(self, high, size):
        return np.broadcast_to(np.asarray(self._next(int(high)), np.int64), (size,)).copy()

    def uniform(self, low, high, size):
        return np.full(size, low + (high - low) * self._next(None))


def reference_offsets(L: int, T: int, s: int, n: int, test_mode: bool, span, *,
                      twice: bool, keep_tail: bool, target_fps, draws: Draws) -> np.ndarray:
    """SampleFrames' clip offsets (floats where it keeps floats)."""
    if test_mode:
        if T == 1:  # 2D models (TSN, TSM): segment centres, then segment starts
            seg = L / float(n)
            starts = np.arange(n) * seg
            centres = starts + seg / 2.0
            return np.concatenate([centres, starts]) if twice else centres
        max_offset = max(L - span, 0)
        count = 2 * n if twice else n
        if count == 1:
            return np.array([max_offset // 2])
        gap = max_offset / float(n - 1)  # n - 1 gaps, even for twice_sample's 2n clips
        if target_fps is not None:
            return np.arange(count) * np.floor(gap)
        return np.round(np.arange(count) * gap)
    if keep_tail:
        avg = (L - span + 1) / float(n)
        if L > span - 1:
            return (np.arange(n) * avg + draws.uniform(0, avg, n)).astype(np.int32)
        return np.zeros(n, np.int32)
    avg = (L - span + 1) // n
    if avg > 0:
        return np.arange(n) * avg + draws.randint(avg, n)
    if L > max(n, span):
        return np.sort(draws.randint(L - span + 1, n))
    if avg == 0:
        return np.around(np.arange(n) * ((L - span + 1.0) / n))
    return np.zeros(n, np.int32)


def reference_frames(L: int, T: int, s: int = 1, n: int = 1, test_mode: bool = True, *,
                     twice: bool = False, out_of_bound: str = "loop", keep_tail: bool = False,
                     jitter: bool = False, target_fps=None, fps: Optional[float] = None,
                     draws: Optional[Draws] = None) -> np.ndarray:
    """SampleFrames' frame indices, [clips, T]."""
    draws = draws or Draws()
    ratio = fps / target_fps if target_fps is not None and fps else 1.0
    if target_fps is not None:
        span = np.maximum(1, T * s * ratio)
    else:
        span = (T - 1) * s + 1 if test_mode else T * s
    offsets = reference_offsets(L, T, s, n, test_mode, span, twice=twice, keep_tail=keep_tail,
                                target_fps=target_fps, draws=draws)
    if target_fps is not None:
        places = np.linspace(0, span - 1, T).astype(np.int32)
    else:
        places = np.arange(T) * s
    inds = (offsets[:, None] + places[None, :]).reshape(-1)
    if jitter:
        inds = inds + draws.randint(s, len(inds))
    inds = inds.reshape(-1, T)
    if out_of_bound == "loop":
        inds = np.mod(inds, L)
    else:
        inside = inds < L
        last = np.max(inside * inds, axis=1)
        inds = np.where(inside, inds, last[:, None])
    return inds.astype(np.int64)


def support(L, T, s, n, test_mode, opts) -> List[set]:
    """For a random case: per clip, the set of frame tuples it can give; with temporal jitter,
    per (clip, frame) position, the set of indices it can hold. Every value of every draw is
    tried; one value for all clips of a call (each clip's offset depends on its draw alone), and
    for jitter with repeat_last, where a frame past the end takes its clip's others', every
    combination of the frames' jitters (the cases keep that small)."""
    probe = FixedDraws()
    reference_frames(L, T, s, n, test_mode, draws=probe, **opts)
    choices = []
    for k, high in enumerate(probe.highs):
        if high is None:
            choices.append(list(np.linspace(0, 1, 1001)[:-1]))
        elif k == len(probe.highs) - 1 and opts.get("jitter") and \
                opts.get("out_of_bound") == "repeat_last":
            choices.append(list(itertools.product(range(high), repeat=n * T)))
        else:
            choices.append(list(range(high)))
    outs = [reference_frames(L, T, s, n, test_mode, draws=FixedDraws(values), **opts)
            for values in itertools.product(*choices)]
    if opts.get("jitter"):
        return [{int(o.reshape(-1)[k]) for o in outs} for k in range(outs[0].size)]
    return [{tuple(int(v) for v in o[c]) for o in outs} for c in range(outs[0].shape[0])]


def test_the_reference_gives_the_issues_worked_cases():
    # The numbers mmaction2 gives (issue 45): its own behaviour, not derived from the kernel.
    assert reference_frames(30, 1, 1, 4).ravel().tolist() == [3, 11, 18, 26]
    assert reference_frames(11, 1, 1, 4).ravel().tolist() == [1, 4, 6, 9]


# --- the data --------------------------------------------------------------------------------------

def vid(L: int, fps) -> str:
    return f"L{L}_fps{fps}"


class IndexedFrames(AbstractDatasetAdapter):
    """Videos of given lengths and meta "fps" (None: no "fps" field), frame j a picture only it
    has (so its JPEG bytes say which frame it is)."""

    def __init__(self, videos: List[Tuple[int, object]]):
        self.videos = videos

    def __len__(self):
        return len(self.videos)

    def iter_data(self, slice_element=None):
        for L, fps in self.videos[slice_element or slice(None)]:
            frames = []
            for j in range(L):
                # Frame j's 9 bits as black or white 8x8 blocks of a 3x3 grid.
                bits = (j >> np.arange(9)) & 1
                pixels = np.kron(bits.reshape(3, 3), np.ones((8, 8))) * 255
                image = Image.fromarray(pixels.astype(np.uint8)).convert("RGB")
                out = io.BytesIO()
                image.save(out, "JPEG", quality=95)
                frames.append(out.getvalue())
            meta = {} if fps is None else {"fps": fps}
            yield {"id": vid(L, fps), "meta": meta, "frames": frames}


# (L, clip_len, frame_interval, num_clips, test_mode, options); options may hold the video's
# meta fps as "fps" (default 30.0; None: no "fps" field).
DETERMINISTIC = [
    # clip_len 1, test mode: TSN/TSM segment centres (300 frames, 25 clips: the usual TSN test).
    (300, 1, 1, 25, True, {}), (30, 1, 1, 4, True, {}), (11, 1, 1, 4, True, {}),
    (7, 1, 1, 8, True, {}), (1, 1, 1, 3, True, {}), (31, 1, 3, 5, True, {}),
    # 3D rule.
    (17, 4, 2, 3, True, {}), (18, 4, 2, 1, True, {}), (7, 2, 1, 3, True, {}),
    (5, 4, 2, 1, True, {}), (300, 8, 8, 10, True, {}),
    # twice_sample, both rules (the 3D one runs past max_offset and loops).
    (300, 1, 1, 8, True, {"twice": True}), (11, 1, 1, 4, True, {"twice": True}),
    (40, 4, 2, 2, True, {"twice": True}), (17, 8, 2, 3, True, {"twice": True}),
    (5, 4, 1, 3, True, {"twice": True}),
    # out_of_bound_opt="repeat_last".
    (5, 4, 2, 1, True, {"out_of_bound": "repeat_last"}),
    (17, 8, 3, 3, True, {"out_of_bound": "repeat_last"}),
    (11, 2, 1, 4, True, {"out_of_bound": "repeat_last", "twice": True}),
    (6, 2, 1, 2, True, {"out_of_bound": "repeat_last", "twice": True}),
    # target_fps: a 30 fps video at 15, a 25 fps one at 30, one with no rate, one rate of 0.
    (100, 4, 2, 1, True, {"target_fps": 15}), (103, 4, 2, 3, True, {"target_fps": 15}),
    (20, 8, 4, 2, True, {"target_fps": 15}), (64, 8, 2, 3, True, {"target_fps": 30, "fps": 25.0}),
    (100, 4, 2, 1, True, {"target_fps": 15, "fps": None}),
    (100, 4, 2, 3, True, {"target_fps": 15, "fps": 0}),
    (300, 1, 1, 8, True, {"target_fps": 10}),
    (300, 16, 2, 4, True, {"target_fps": 29.97, "fps": 59.94}),
    (40, 4, 2, 2, True, {"target_fps": 15, "twice": True, "out_of_bound": "repeat_last"}),
]

RANDOM = [
    # Training: spans, sorted draws, too short (evenly spread), too short for anything.
    (40, 4, 2, 3, False, {}), (12, 4, 2, 2, False, {}), (9, 4, 2, 3, False, {}),
    (8, 4, 2, 2, False, {}), (3, 4, 2, 2, False, {}),
    # keep_tail_frames.
    (12, 4, 2, 2, False, {"keep_tail": True}), (40, 4, 2, 3, False, {"keep_tail": True}),
    (7, 4, 2, 1, False, {"keep_tail": True}), (9, 2, 1, 4, False, {"keep_tail": True}),
    # temporal_jitter, in both modes.
    (40, 4, 3, 2, False, {"jitter": True}), (40, 4, 3, 1, True, {"jitter": True}),
    (300, 1, 4, 8, True, {"jitter": True}), (10, 4, 3, 1, True, {"jitter": True,
                                                               "out_of_bound": "repeat_last"}),
    # target_fps and out_of_bound_opt in training.
    (100, 4, 2, 2, False, {"target_fps": 15}), (20, 4, 2, 1, False, {"target_fps": 15}),
    (30, 4, 2, 2, False, {"target_fps": 30, "fps": 25.0, "keep_tail": True}),
    (5, 4, 2, 1, False, {"out_of_bound": "repeat_last"}),
]


def _fps(opts) -> object:
    return opts.get("fps", 30.0)


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """One directory holding every (L, fps) video of the cases, and each video's frames by their
    JPEG bytes."""
    videos = sorted({(c[0], _fps(c[5])) for c in DETERMINISTIC + RANDOM},
                    key=lambda v: (v[0], str(v[1])))
    path = str(tmp_path_factory.mktemp("sample_frames") / "gulp")
    GulpIngestor(IndexedFrames(videos), path, videos_per_chunk=8, num_workers=1,
                 progress=False)()
    index = {}
    for e in tf_gulp.GulpDataset(path, decode=False, label_field=None):
        jpegs = [bytes(b) for b in e["frames"].numpy()]
        assert len(set(jpegs)) == len(jpegs)  # each frame's bytes name it
        index[e["id"].numpy().decode()] = {b: j for j, b in enumerate(jpegs)}
    return path, index


KWARGS = {"twice": "twice_sample", "out_of_bound": "out_of_bound_opt",
          "keep_tail": "keep_tail_frames", "jitter": "temporal_jitter", "target_fps": "target_fps"}


def kernel_frames(library, case, passes: int = 1) -> List[np.ndarray]:
    """What GulpDataset gives for the case's video, [clips, T] per pass (pass = epoch)."""
    path, index = library
    L, T, s, n, test_mode, opts = case
    name = vid(L, _fps(opts))
    ds = tf_gulp.GulpDataset(path, ids=[name], decode=False, label_field=None, clip_len=T,
                             frame_interval=s,
                             num_clips=n, training=not test_mode, seed=5,
                             **{KWARGS[k]: v for k, v in opts.items() if k in KWARGS})
    out = []
    for e in ds.repeat(passes):
        jpegs = e["frames"].numpy().reshape(-1, T)
        out.append(np.array([[index[name][bytes(b)] for b in clip] for clip in jpegs]))
    return out


def _reference(case, **extra):
    L, T, s, n, test_mode, opts = case
    opts = dict(opts)
    fps = opts.pop("fps", 30.0)
    return reference_frames(L, T, s, n, test_mode, fps=fps, **opts, **extra)


@pytest.mark.parametrize("case", DETERMINISTIC, ids=str)
def test_test_mode_frames_are_mmaction2s(library, case):
    got, = kernel_frames(library, case)
    want = _reference(case)
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("case", RANDOM, ids=str)
def test_random_frames_follow_mmaction2s_rules(library, case):
    L, T, s, n, test_mode, opts = case
    allowed = support(L, T, s, n, test_mode, dict(opts, fps=_fps(opts)))
    jitter = bool(opts.get("jitter"))
    seen = [set() for _ in allowed]
    for got in kernel_frames(library, case, passes=60):
        assert got.shape == (n, T)
        parts = [int(v) for v in got.reshape(-1)] if jitter else [tuple(c) for c in got.tolist()]
        for k, part in enumerate(parts):
            assert part in allowed[k], (case, k, part, sorted(allowed[k])[:10])
            seen[k].add(part)
    for k, values in enumerate(allowed):
        if len(values) <= 5:  # small supports are covered in 60 passes
            assert seen[k] == values, (case, k, sorted(seen[k]), sorted(values))
        else:
            assert len(seen[k]) > 1, (case, k)
