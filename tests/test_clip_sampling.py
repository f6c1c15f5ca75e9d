"""Dense clips and test views with mmaction2's SampleFrames / ThreeCrop semantics
(GulpDataset(clip_len=, frame_interval=, num_clips=, training=, crops=)), compared with an
independent re-implementation of mmaction2's formulas written here (numpy, as mmaction2 computes
them), at lengths that do not divide evenly, short videos and single clips."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import tf_gulp
from gulp_testing import frame_value, make_gulp_dir, video_id
from tf_gulp.gulp import AbstractDatasetAdapter, GulpIngestor
from tf_gulp.transforms import CenterCrop, RandomHorizontalFlip, RandomResizedCrop, Resize

# Frames per video: lengths that divide nothing evenly, short ones, one of a single frame.
LENGTHS = [1, 3, 7, 16, 17, 29, 40]


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    path = tmp_path_factory.mktemp("clips") / "gulp"
    make_gulp_dir(path, len(LENGTHS), LENGTHS, 8, 8, videos_per_chunk=3)
    return str(path)


def which_frames(frames: np.ndarray) -> list:
    """The synthetic frame index of each decoded frame (its green level)."""
    levels = {frame_value(j): j for j in range(max(LENGTHS))}
    return [levels[min(levels, key=lambda v: abs(v - float(f[..., 1].mean())))]
            for f in frames.reshape((-1,) + frames.shape[-3:])]


# --- mmaction2's SampleFrames, re-derived from its documentation and formulas -------------------

def mm_test_offsets(L: int, T: int, s: int, n: int) -> np.ndarray:
    """mmaction2 test mode: for T = 1 (TSN/TSM) the centres of n equal segments, truncated;
    else ``max_offset = max(L - ((T - 1) * s + 1), 0)``, n > 1 clips evenly spread over
    [0, max_offset] and rounded as numpy rounds, one clip at max_offset // 2."""
    if T == 1:
        segment = L / float(n)
        return (np.arange(n) * segment + segment / 2.0).astype(np.int64)
    max_offset = max(L - ((T - 1) * s + 1), 0)
    if n == 1:
        return np.array([max_offset // 2])
    return np.round(np.arange(n) * (max_offset / float(n - 1))).astype(np.int64)


def mm_train_offsets_allowed(L: int, T: int, s: int, n: int):
    """What train mode may give: (kind, data). 'spans': clip i's offset in
    [i * avg, (i + 1) * avg); 'sorted': sorted, each in [0, L - T*s]; 'fixed': exactly these."""
    span = T * s
    avg = (L - span + 1) // n
    if avg > 0:
        return "spans", avg
    if L > max(n, span):
        return "sorted", L - span
    if avg == 0:
        ratio = (L - span + 1.0) / n
        return "fixed", np.around(np.arange(n) * ratio).astype(np.int64)
    return "fixed", np.zeros(n, np.int64)


def frames_of(offsets, L: int, T: int, s: int) -> list:
    """SampleFrames' frame indices: each clip's T frames every s, looped past the end."""
    return [int((o + j * s) % L) for o in offsets for j in range(T)]


CASES = [(T, s, n) for T in (1, 4, 8) for s in (1, 2, 3) for n in (1, 2, 3, 10)]


def clips(videos, T, s, n, training, seed=1, **kw):
    return {e["id"].numpy().decode(): e["frames"].numpy() for e in tf_gulp.GulpDataset(
        videos, clip_len=T, frame_interval=s, num_clips=n, training=training, seed=seed, **kw)}


@pytest.mark.parametrize("T,s,n", CASES)
def test_test_mode_offsets_are_mmaction2s_exactly(videos, T, s, n):
    got = clips(videos, T, s, n, training=False)
    for i, L in enumerate(LENGTHS):
        frames = got[video_id(i)]
        assert frames.shape == ((n, T) if n > 1 else (T,)) + (8, 8, 3)
        assert which_frames(frames) == frames_of(mm_test_offsets(L, T, s, n), L, T, s), (L, T, s, n)


@pytest.mark.parametrize("T,s,n", CASES)
def test_train_mode_offsets_follow_mmaction2s_rules(videos, T, s, n):
    seen = {i: set() for i in range(len(LENGTHS))}
    for seed in range(6):
        got = clips(videos, T, s, n, training=True, seed=seed)
        for i, L in enumerate(LENGTHS):
            idx = which_frames(got[video_id(i)])
            offsets = [idx[c * T] for c in range(n)]  # each clip's first frame is its offset mod L
            kind, data = mm_train_offsets_allowed(L, T, s, n)
            if kind == "fixed":
                assert idx == frames_of(data, L, T, s), (L, T, s, n)
                continue
            # Recover each offset (< L here, as offsets never exceed L - 1) and check the rule.
            assert idx == frames_of(offsets, L, T, s)
            if kind == "spans":
                assert all(c * data <= o < (c + 1) * data for c, o in enumerate(offsets)), \
                    (L, T, s, n, offsets)
            else:
                assert offsets == sorted(offsets) and all(0 <= o <= data for o in offsets)
            seen[i].add(tuple(offsets))
    for i, L in enumerate(LENGTHS):
        kind, data = mm_train_offsets_allowed(L, T, s, n)
        if kind == "spans" and data > 2 or kind == "sorted" and data > 2:
            assert len(seen[i]) > 1, (L, T, s, n)  # random: not always the same offsets


def test_train_offsets_change_each_epoch_and_repeat_from_the_seed(videos):
    ds = tf_gulp.GulpDataset(videos, clip_len=4, frame_interval=2, num_clips=1, training=True,
                             seed=3)
    passes = [[which_frames(e["frames"].numpy()) for e in ds] for _ in range(3)]
    # Every pair differs (a chained != would never compare pass 0 with pass 2).
    assert passes[0] != passes[1] and passes[1] != passes[2] and passes[0] != passes[2]
    again = tf_gulp.GulpDataset(videos, clip_len=4, frame_interval=2, num_clips=1, training=True,
                                seed=3)
    assert [which_frames(e["frames"].numpy()) for e in again] == passes[0]


# --- spatial views: mmaction2's ThreeCrop ---------------------------------------------------------

def mm_three_crop_boxes(h: int, w: int):
    """ThreeCrop of squares of the short side: (x, y, side) in its order (first end, far end,
    middle), the far end at 2 * ((long - short) // 2)."""
    side = min(h, w)
    step = (max(h, w) - side) // 2
    if w >= h:
        return [(0, 0, side), (2 * step, 0, side), (step, 0, side)]
    return [(0, 0, side), (0, 2 * step, side), (0, step, side)]


class RampAdapter(AbstractDatasetAdapter):
    """One video of 5 frames whose pixels say where they are: red ramps down the rows, blue
    across the columns, green is the frame's level (frame_value)."""

    def __init__(self, h: int, w: int):
        self.h, self.w = h, w

    def __len__(self):
        return 1

    def iter_data(self, slice_element=None):
        y = np.linspace(0, 255, self.h)[:, None] * np.ones((1, self.w))
        x = np.ones((self.h, 1)) * np.linspace(0, 255, self.w)[None, :]
        frames = [np.stack([y, np.full_like(y, frame_value(j)), x], -1).round().astype(np.uint8)
                  for j in range(5)]
        yield {"id": "ramp", "meta": {"label": 0}, "frames": frames}


@pytest.fixture(scope="module")
def ramps(tmp_path_factory):
    """Landscape 48x80 and portrait 80x48 ramp videos."""
    out = {}
    for name, (h, w) in {"landscape": (48, 80), "portrait": (80, 48)}.items():
        path = tmp_path_factory.mktemp(name) / "gulp"
        GulpIngestor(RampAdapter(h, w), str(path), videos_per_chunk=1, num_workers=1,
                     progress=False)()
        out[name] = (str(path), h, w)
    return out


@pytest.mark.parametrize("orientation", ["landscape", "portrait"])
def test_three_crops_are_mmaction2s_boxes(ramps, orientation):
    path, h, w = ramps[orientation]
    e = next(iter(tf_gulp.GulpDataset(path, label_field=None, clip_len=2, num_clips=2, training=False,
                                      crops="three", augment=[Resize((16, 16))])))
    views = e["frames"].numpy()
    assert views.shape == (6, 2, 16, 16, 3)  # 2 clips x 3 crops, clip-major
    full = next(iter(tf_gulp.GulpDataset(path, label_field=None, frames=[0])))["frames"].numpy()[0]
    for c in range(2):
        for k, (x, y, side) in enumerate(mm_three_crop_boxes(h, w)):
            view = views[c * 3 + k, 0].astype(np.float32)
            # The box resized to 16x16 (bilinear, as the warp samples) from the decoded frame:
            # the ramps make a box off by a few pixels differ by more than the tolerance.
            want = tf.image.resize(full[y:y + side, x:x + side][None].astype(np.float32),
                                   (16, 16), method="bilinear", antialias=False)[0].numpy()
            # Red and blue say where a pixel is; green which frame (another for clip 1).
            assert np.abs(view - want)[..., [0, 2]].mean() < 3.0, (orientation, c, k)
    # The clips' frames: test-mode offsets of a 5-frame video, 2 clips of 2.
    assert which_frames(views[0::3]) == frames_of(mm_test_offsets(5, 2, 1, 2), 5, 2, 1)


def test_crop_major_view_order_is_mmaction2s(ramps):
    """view_order="crop_major": crop 0's clips, crop 1's, ... (mmaction2's ThreeCrop + FormatShape
    order): the same views as clip-major, reordered."""
    path, h, w = ramps["landscape"]
    args = dict(label_field=None, clip_len=2, num_clips=2, crops="three", augment=[Resize((16, 16))])
    clip_major = next(iter(tf_gulp.GulpDataset(path, **args)))["frames"].numpy()
    crop_major = next(iter(tf_gulp.GulpDataset(path, view_order="crop_major",
                                               **args)))["frames"].numpy()
    assert crop_major.shape == clip_major.shape == (6, 2, 16, 16, 3)
    for c in range(2):
        for k in range(3):
            np.testing.assert_array_equal(crop_major[k * 2 + c], clip_major[c * 3 + k])
    # With twice_sample, each crop's 4 clips (2 + 2 twice-sampled) come together.
    twice = next(iter(tf_gulp.GulpDataset(path, view_order="crop_major", twice_sample=True,
                                          **args)))["frames"].numpy()
    assert twice.shape == (12, 2, 16, 16, 3)
    np.testing.assert_array_equal(twice[0:2], crop_major[0:2])
    np.testing.assert_array_equal(twice[4:6], crop_major[2:4])


def test_center_crop_is_the_middle_square_and_one_view(ramps):
    path, h, w = ramps["landscape"]
    three = next(iter(tf_gulp.GulpDataset(path, label_field=None, clip_len=2, crops="three",
                                          augment=[Resize((16, 16))])))["frames"].numpy()
    center = next(iter(tf_gulp.GulpDataset(path, label_field=None, clip_len=2, crops="center",
                                           augment=[Resize((16, 16))])))["frames"].numpy()
    assert center.shape == (1, 2, 16, 16, 3)
    np.testing.assert_array_equal(center[0], three[2])


def test_views_shape_is_static_and_one_clip_stays_4d(videos):
    ds = tf_gulp.GulpDataset(videos, clip_len=4, num_clips=10, crops="three", augment=[Resize((8, 8))])
    assert ds.element_spec["frames"].shape.as_list() == [30, 4, 8, 8, 3]
    one = tf_gulp.GulpDataset(videos, clip_len=4, augment=[Resize((8, 8))])
    assert one.element_spec["frames"].shape.as_list() == [4, 8, 8, 3]
    raw = tf_gulp.GulpDataset(videos, clip_len=4, num_clips=2, decode=False)
    assert raw.element_spec["frames"].shape.as_list() == [2, 4]
    assert next(iter(raw))["frames"].shape == (2, 4)


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(clip_len=4, num_frames=8), ValueError, "not num_frames and clip_len"),
    (dict(num_clips=3), ValueError, "need clip_len"),
    (dict(clip_len=4, crops="three"), ValueError,
     r"GulpDataset: crops='three' \(the test views\) needs the output size: "
     r"augment=\[Resize\(\(height, width\)\)\]"),
    (dict(clip_len=4, crops="three", augment=[RandomResizedCrop(8)]), ValueError,
     r"crops='three' \(the test views\) takes augment=\[Resize\(\(height, width\)\), ...\] "
     r"without crops or flips of its own"),
    (dict(clip_len=4, crops="center", augment=[Resize((8, 8)), RandomHorizontalFlip()]),
     ValueError, "without crops or flips of its own"),
    (dict(clip_len=4, crops="center", augment=[Resize(8), CenterCrop(8)]),
     ValueError, "without crops or flips of its own"),
    (dict(clip_len=4, crops="five", augment=[Resize((8, 8))]), ValueError, "crops must be"),
    (dict(clip_len=0), ValueError, "clip_len must be"),
    (dict(clip_len=4, frame_interval=0), ValueError, "frame_interval must be"),
    (dict(twice_sample=True), ValueError, "twice_sample=: options of clip sampling, they need "
                                          "clip_len"),
    (dict(target_fps=30, temporal_jitter=True), ValueError,
     "temporal_jitter=, target_fps=: options of clip sampling"),
    (dict(clip_len=4, out_of_bound_opt="clamp"), ValueError, "out_of_bound_opt must be"),
    (dict(clip_len=4, view_order="mmaction2"), ValueError, "view_order must be"),
    (dict(clip_len=4, target_fps=0), ValueError, "target_fps must be a number > 0 or None"),
    (dict(clip_len=4, target_fps="30"), TypeError, "target_fps must be a number"),
    (dict(clip_len=4, twice_sample=1), TypeError, "twice_sample must be True or False"),
    # The kernel's refusals (cc/gulp/frame_selection.cc), a ValueError naming the option.
    (dict(clip_len=4, num_clips=2, twice_sample=True, training=True),
     ValueError, "GulpDataset: twice_sample is a test-mode option"),
    (dict(clip_len=4, keep_tail_frames=True), ValueError,
     "GulpDataset: keep_tail_frames is a training option"),
    (dict(clip_len=4, twice_sample=True), ValueError, "needs num_clips >= 2"),
])
def test_bad_clip_arguments_are_refused_by_name(videos, kwargs, error, match):
    with pytest.raises(error, match=match):
        tf_gulp.GulpDataset(videos, **kwargs)
