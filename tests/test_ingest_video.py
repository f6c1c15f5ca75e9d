"""tf_gulp.gulp.video: in-process decoding of ingest inputs (PyAV, libjpeg-turbo)."""

import os
from fractions import Fraction

import numpy as np
import pytest
import simplejpeg

pytest.importorskip("av")

from tf_gulp.gulp.video import (FrameOptions, InputError, decode_video, list_frame_files,  # noqa
                                load_frame_folder, load_image, parse_rate, resized_size)

from ingest_testing import jpeg_bytes, red_level, write_png, write_video  # noqa: E402


def red(jpeg):
    return float(simplejpeg.decode_jpeg(jpeg)[..., 0].mean())


def test_resized_size_exact_integer_rounding():
    assert resized_size(1920, 1080, 256) == (455, 256)      # 455.11
    assert resized_size(640, 480, 256) == (341, 256)        # 341.33
    assert resized_size(480, 640, 256) == (256, 341)
    assert resized_size(340, 256, 128) == (170, 128)        # exactly 170
    assert resized_size(3, 2, 3) == (5, 3)                  # 4.5 -> ties round up
    assert resized_size(2, 3, 3) == (3, 5)
    assert resized_size(100, 100, 7) == (7, 7)
    assert resized_size(10000, 1, 1) == (10000, 1)
    assert resized_size(1, 10000, 2) == (2, 20000)
    assert resized_size(320, 240, None) == (320, 240)
    # Float arithmetic gets this kind wrong: 1001 * 255 / 1000 = 255.255 vs int(255 * 1.001).
    for w in range(1, 400, 7):
        for h in range(1, 400, 11):
            out_w, out_h = resized_size(w, h, 128)
            short, long_ = (w, h) if w <= h else (h, w)
            exact = Fraction(long_ * 128, short)
            got = out_h if w <= h else out_w
            assert min(out_w, out_h) == 128
            assert got - Fraction(1, 2) <= exact < got + Fraction(1, 2) or \
                exact == got + Fraction(1, 2) - 1  # ties go up


def test_parse_rate():
    assert parse_rate("25") == 25
    assert parse_rate("29.97") == Fraction(2997, 100)
    assert parse_rate("30000/1001") == Fraction(30000, 1001)
    for bad in ("0", "-3", "abc", "1/0"):
        with pytest.raises(ValueError):
            parse_rate(bad)


def test_frame_options_validate():
    for kwargs in ({"shorter_side": 0}, {"max_frames": 0}, {"jpeg_quality": 101},
                   {"jpeg_subsampling": "420x"}, {"interpolation": "nearest-ish"}):
        with pytest.raises(ValueError):
            FrameOptions(**kwargs)
    assert FrameOptions(fps="12.5").fps == Fraction(25, 2)
    assert FrameOptions().stores_jpeg_as_is
    assert not FrameOptions(shorter_side=10).stores_jpeg_as_is


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    # 20 frames at 25 fps: 0.8 s, frame j on screen during [j/25, (j+1)/25).
    return write_video(tmp_path_factory.mktemp("v") / "clip.avi", num_frames=20, width=64,
                       height=48, rate=25)


def test_decode_every_frame(video):
    jpegs, info = decode_video(video, FrameOptions())
    assert info == {"num_frames": 20, "fps": 25.0, "height": 48, "width": 64}
    assert len(jpegs) == 20
    for j, jpeg in enumerate(jpegs):
        assert abs(red(jpeg) - red_level(0, j)) < 6
    h, w, colorspace, sub = simplejpeg.decode_jpeg_header(jpegs[0])
    assert (h, w, colorspace, sub) == (48, 64, "YCbCr", "444")


@pytest.mark.parametrize("fps, expected", [
    (10, [0, 2, 5, 7, 10, 12, 15, 17]),          # t = k/10 -> source frame floor(2.5 k)
    (50, [j // 2 for j in range(40)]),            # every frame twice
    ("12.5", [0, 2, 4, 6, 8, 10, 12, 14, 16, 18]),
])
def test_fps_resampling_is_exact(video, fps, expected):
    jpegs, info = decode_video(video, FrameOptions(fps=fps))
    assert info["fps"] == float(Fraction(fps))
    assert len(jpegs) == len(expected)
    for jpeg, j in zip(jpegs, expected):
        assert abs(red(jpeg) - red_level(0, j)) < 6, (j, red(jpeg))


def test_repeated_frames_are_encoded_once(video):
    jpegs, _ = decode_video(video, FrameOptions(fps=50))
    assert jpegs[0] is jpegs[1]


def test_max_frames_and_resize(video):
    jpegs, info = decode_video(video, FrameOptions(fps=10, max_frames=3, shorter_side=24,
                                                   jpeg_quality=70, jpeg_subsampling="420"))
    assert len(jpegs) == 3 and info["num_frames"] == 3
    assert (info["height"], info["width"]) == (24, 32)
    assert simplejpeg.decode_jpeg_header(jpegs[2])[:2] == (24, 32)
    assert simplejpeg.decode_jpeg_header(jpegs[2])[3] == "420"
    assert abs(red(jpegs[2]) - red_level(0, 5)) < 6


def test_time_range(video):
    jpegs, _ = decode_video(video, FrameOptions(), start=0.2, end=0.4)   # frames 5..9
    assert len(jpegs) == 5
    assert abs(red(jpegs[0]) - red_level(0, 5)) < 6
    jpegs, _ = decode_video(video, FrameOptions(fps=10), start=0.3, end=0.8)
    assert [round((red(j) - 20) / 11) for j in jpegs] == [7, 10, 12, 15, 17]
    with pytest.raises(InputError, match="no video frame between 5 s and 6 s"):
        decode_video(video, FrameOptions(), start=5, end=6)


def test_bad_videos(tmp_path):
    with pytest.raises(InputError, match="file not found") as e:
        decode_video(str(tmp_path / "missing.mp4"), FrameOptions())
    assert e.value.path.endswith("missing.mp4")
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"\x00not a video" * 100)
    with pytest.raises(InputError, match="junk.mp4: cannot open"):
        decode_video(str(junk), FrameOptions())
    png = write_png(tmp_path / "still.png", np.zeros((8, 8, 3), np.uint8))
    jpegs, info = decode_video(png, FrameOptions())   # an image is a one-frame video
    assert info["num_frames"] == 1


def test_jpeg_stored_byte_for_byte(tmp_path):
    data = jpeg_bytes(3, 50, 20, subsampling="420")
    path = tmp_path / "a.jpg"
    path.write_bytes(data)
    jpeg, size = load_image(str(path), FrameOptions())
    assert jpeg == data and size == (20, 50)
    # Re-encoded when resized or asked to.
    jpeg, size = load_image(str(path), FrameOptions(shorter_side=10))
    assert size == (10, 25) and simplejpeg.decode_jpeg_header(jpeg)[:2] == (10, 25)
    jpeg, size = load_image(str(path), FrameOptions(reencode_jpeg=True, jpeg_quality=50))
    assert jpeg != data and size == (20, 50)
    assert simplejpeg.decode_jpeg_header(jpeg)[3] == "444"
    gray = tmp_path / "g.jpg"
    gray.write_bytes(jpeg_bytes(4, 16, 16, gray=True))
    jpeg, _ = load_image(str(gray), FrameOptions(shorter_side=8))
    assert simplejpeg.decode_jpeg_header(jpeg)[2] == "Gray"


def test_jpeg_downscale_matches_full_decode_then_resize(tmp_path):
    # A smooth image: the DCT-domain 1/2 decode followed by a resize stays close to the source.
    y, x = np.mgrid[0:120, 0:160]
    img = np.stack([x * 255 // 159, y * 255 // 119, np.full_like(x, 128)], -1).astype(np.uint8)
    path = tmp_path / "smooth.jpg"
    path.write_bytes(simplejpeg.encode_jpeg(img, quality=95))
    jpeg, size = load_image(str(path), FrameOptions(shorter_side=45))
    assert size == (45, 60)
    small = simplejpeg.decode_jpeg(jpeg).astype(int)
    expected = img[1::8, 1::8][:15, :20].astype(int)   # every 8/3 px, coarse reference
    assert np.abs(small[::3, ::3][:15, :20] - expected).mean() < 8


def test_other_image_formats(tmp_path):
    rgba = np.zeros((10, 12, 4), np.uint8)
    rgba[..., 0] = 200
    rgba[..., 3] = 7
    jpeg, size = load_image(write_png(tmp_path / "a.png", rgba), FrameOptions())
    assert size == (10, 12)
    assert abs(simplejpeg.decode_jpeg(jpeg)[..., 0].mean() - 200) < 3
    g = np.full((9, 11), 77, np.uint8)
    jpeg, size = load_image(write_png(tmp_path / "g.png", g), FrameOptions(shorter_side=18))
    assert size == (18, 22)
    assert simplejpeg.decode_jpeg_header(jpeg)[2] == "Gray"
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 20)
    with pytest.raises(InputError, match="bad.png"):
        load_image(str(bad), FrameOptions())
    notjpeg = tmp_path / "x.jpg"
    notjpeg.write_bytes(b"\xff\xd8\xff\xe0" + b"\x00" * 10)
    with pytest.raises(InputError, match="x.jpg: not a readable JPEG"):
        load_image(str(notjpeg), FrameOptions())


def test_frame_folder(tmp_path):
    folder = tmp_path / "123"
    folder.mkdir()
    names = ["00010.jpg", "2.jpg", "00001.jpg", "frame9.JPG", ".hidden.jpg", "notes.txt"]
    for i, name in enumerate(names):
        (folder / name).write_bytes(jpeg_bytes(i, 20, 10))
    assert [os.path.basename(p) for p in list_frame_files(str(folder))] == [
        "00001.jpg", "2.jpg", "00010.jpg", "frame9.JPG"]
    jpegs, info = load_frame_folder(str(folder), FrameOptions(max_frames=3))
    assert jpegs == [jpeg_bytes(2, 20, 10), jpeg_bytes(1, 20, 10), jpeg_bytes(0, 20, 10)]
    assert info == {"num_frames": 3, "height": 10, "width": 20}
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no JPEG frames"):
        load_frame_folder(str(tmp_path / "empty"), FrameOptions())


def test_fork_after_scaling_in_the_parent(tmp_path, video):
    # A process that resized frames, then forks workers (a serial ingest, then a parallel one,
    # in one process): the children must not reuse the parent's scaler (its threads are gone).
    import multiprocessing
    decode_video(video, FrameOptions(shorter_side=24))
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        result = pool.apply_async(decode_video, (video, FrameOptions(shorter_side=24)))
        jpegs, info = result.get(timeout=60)
    assert info["num_frames"] == 20 and (info["height"], info["width"]) == (24, 32)
