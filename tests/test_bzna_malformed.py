"""One suite of malformed Benzina containers that every entry point must judge the same way.

The container is parsed and judged once, in C++ (``cc/mp4/mp4_reader``,
``cc/mp4/bzna_container``): by the dataset kernel (``TfGulp>BznaDataset``, through
``cc/mp4/bzna_reader``) inside ``BenzinaDataset`` / ``DataLoader`` graphs, and through ``tf_gulp._core`` by the Python container reader
(``tf_gulp.bzna.container.read_container``), by ``BenzinaDataset`` / ``DataLoader`` when they are
built, and by ``tf-gulp bzna info``. Each case below is a small container (samples are stand-in
bytes: nothing here decodes) with the verdict every entry point must reach: accepted, or refused
with the same kind of error and the same message, naming the file (and the byte offset or sample
where there is one). Local files and ``ram://`` copies (read by the C++ reader through
``tf.io.gfile``) are judged alike.
"""

from __future__ import annotations

import json
import re
import struct
import uuid
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

import pytest
import tensorflow as tf

from ingest_testing import run_cli
from tf_gulp import _core
from tf_gulp.bzna import container as C
from tf_gulp.bzna.dataset import BenzinaDataset, DataLoader
from tf_gulp.bzna.dataset import _RECORD_SPEC
from tf_gulp.ops.library import load_ops

N = 3  # entries of the well-formed container


class Case(NamedTuple):
    name: str
    data: bytes
    # None: accepted; else (kind, message needle): kind is "not_found", "invalid" or "data_loss".
    verdict: Optional[Tuple[str, str]]
    labels: Optional[List[int]] = None  # of an accepted file, in entry order


def _layout(inputs: List[bytes], targets: List[int]) -> Tuple[bytes, List[int], List[int]]:
    """ftyp + mdat (input samples, then 8-byte targets): (bytes, input offsets, target offsets)."""
    head = C.ftyp()
    payload = b"".join(inputs) + b"".join(struct.pack("<q", t) for t in targets)
    base = len(head) + 8
    offsets, at = [], base
    for s in inputs:
        offsets.append(at)
        at += len(s)
    t_offsets = [at + 8 * i for i in range(len(targets))]
    return head + C.box(b"mdat", payload), offsets, t_offsets


def build_cases() -> List[Case]:
    """The malformed (and two well-formed) containers of the suite."""
    inputs = [b"image %d" % i * (i + 2) for i in range(N)]
    targets = [7, 8, 9]
    body, offs, t_offs = _layout(inputs, targets)
    sizes = [len(s) for s in inputs]

    moov = C.moov

    def inp(o=offs, s=sizes):
        return C.TrackSpec("bzna_input", o, s)

    def tgt(o=t_offs, s=(8,) * N):
        return C.TrackSpec("bzna_target", o, list(s))

    good = body + moov([inp(), tgt()], {"splits": {"train": [0, 2], "val": [2, 3]}})
    moov_at = len(body)
    cases = [
        Case("good", good, None, labels=targets),
        # Benzina's toolchain stops writing targets at the first entry without one: label -1.
        Case("short_target_track", body + moov([inp(), tgt(t_offs[:2], (8, 8))]), None,
             labels=[7, 8, -1]),
        Case("no_moov", body, ("data_loss", "no moov box")),
        Case("truncated_moov", good[:moov_at + 200], ("data_loss", "past the end of its parent")),
        Case("second_moov", good + moov([inp(), tgt()]), ("data_loss", "a second moov box")),
        Case("box_smaller_than_header", good[:moov_at] + struct.pack(">I", 4) + b"moov",
             ("data_loss", "smaller than its header")),
        Case("no_target_track", body + moov([inp()]),
             ("not_found", "no track named 'bzna_target'")),
        Case("no_input_track", body + moov([tgt()]),
             ("not_found", "no track named 'bzna_input'")),
        Case("longer_target_track",
             body + moov([C.TrackSpec("bzna_input", offs[:2], sizes[:2]), tgt()]),
             ("invalid", "the bzna_target track has 3 samples, more than the 2 of the bzna_input")),
        Case("target_not_8_bytes", body + moov([inp(), tgt(s=(8, 4, 8))]),
             ("data_loss", "bzna_target sample 1 at byte offset %d has 4 bytes" % t_offs[1])),
        Case("sample_past_end", body + moov([inp(offs[:2] + [10 ** 9], sizes), tgt()]),
             ("data_loss", "sample 2 at byte offset 1000000000")),
        Case("split_table_not_json", _with_split_box(body, [inp(), tgt()], b'{"splits": '),
             ("data_loss", "the split table (bzsp box at byte offset")),
        Case("split_table_not_object", _with_split_box(body, [inp(), tgt()], b"[0, 3]"),
             ("data_loss", "is not a JSON object")),
        Case("boxes_nested_too_deep", _nested_trak(body, 40),
             ("data_loss", "nested more than 16 container boxes deep")),
        Case("stsz_count_lies", _patch_stsz_count(good, moov_at, 1000),
             ("data_loss", "needs more entries than the box holds")),
        Case("chunk_tables_disagree", _short_stco(body, inp(), tgt()),
             ("data_loss", "the sample tables disagree")),
        # A split table naming entries the file does not have: refused by every entry point, not
        # only when that split is asked for (tf-gulp bzna info listed the others and said nothing).
        Case("split_past_last_entry",
             body + moov([inp(), tgt()], {"splits": {"train": [0, 2], "val": [2, 5]}}),
             ("data_loss", "split 'val' = [2, 5) in the split table (bzsp box at byte offset ")),
        Case("split_not_a_range",
             body + moov([inp(), tgt()], {"splits": {"train": [0, 2], "val": "2:3"}}),
             ("data_loss", "split 'val' in the split table (bzsp box at byte offset ")),
        # Class names that are not a list of strings (a TypeError from BenzinaDataset before).
        Case("split_table_classes_not_a_list", body + moov([inp(), tgt()], {"classes": 5}),
             ("data_loss", '"classes" in the split table (bzsp box at byte offset ')),
        Case("split_table_class_not_a_string", body + moov([inp(), tgt()], {"classes": ["a", 1]}),
             ("data_loss", '"classes"[1] in the split table (bzsp box at byte offset ')),
        # In ISO-BMFF a 32-bit size of 0 runs to the end of the file, but a 64-bit size of 0 is
        # no size at all.
        Case("mdat_64_bit_size_0", C.ftyp() + struct.pack(">I", 1) + b"mdat" + bytes(8) + body,
             ("data_loss", "box 'mdat' at byte offset 24 has size 0, smaller than its header")),
        # Box types quoted escaped: no raw NUL bytes in a log, no UnicodeDecodeError for bytes
        # that are not UTF-8 (an .ffr file opened as a .bzna starts like this).
        Case("box_type_with_nul_bytes", struct.pack(">I", 10 ** 6) + b"B\0\0\0" + bytes(40),
             ("data_loss", "box 'B\\x00\\x00\\x00' at byte offset 0 has size 1000000")),
        Case("box_type_not_utf8", body + struct.pack(">I", 10 ** 6) + b"\xc3(\xff\x01",
             ("data_loss", "box '\\xc3(\\xff\\x01' at byte offset %d has size 1000000"
              % len(body))),
    ]
    return cases


def _with_split_box(body: bytes, tracks, payload: bytes) -> bytes:
    children = C.moov(tracks)[8:]
    return body + C.box(b"moov", children, C.box(b"udta", C.box(C.SPLIT_BOX, payload)))


def _nested_trak(body: bytes, depth: int) -> bytes:
    """A trak whose mdia boxes nest `depth` deep (the layout needs 3 container levels)."""
    hdlr = C.full_box(b"hdlr", 0, 0, bytes(4), b"vide", bytes(12), b"bzna_input\0")
    nested = hdlr
    for _ in range(depth):
        nested = C.box(b"mdia", nested)
    return body + C.box(b"moov", C.box(b"trak", nested))


def _patch_stsz_count(data: bytes, moov_at: int, count: int) -> bytes:
    """The first stsz of the moov with its sample_count replaced (its table stays as long)."""
    at = data.index(b"stsz", moov_at)
    # type, version/flags, sample_size, sample_count
    return data[:at + 12] + struct.pack(">I", count) + data[at + 16:]


def _short_stco(body: bytes, inp: C.TrackSpec, tgt: C.TrackSpec) -> bytes:
    """The input track's stco holds one chunk fewer than stsz has samples (one sample each)."""
    moov = C.moov([inp, tgt])
    at = moov.index(b"stco")
    n = struct.unpack(">I", moov[at + 8:at + 12])[0]
    table = moov[at + 12:at + 12 + 4 * n]
    shorter = C.full_box(b"stco", 0, 0, struct.pack(">I", n - 1), table[:-4])
    old = moov[at - 4:at + 12 + 4 * n]
    return body + _fix_sizes(moov.replace(old, shorter, 1), 4)


def _fix_sizes(moov: bytes, removed: int) -> bytes:
    """`moov` after `removed` bytes were cut from inside its first trak's stbl: the sizes of moov,
    trak, mdia, minf and stbl (the boxes enclosing the cut) shrink by `removed`."""
    out = bytearray(moov)
    for kind in (b"moov", b"trak", b"mdia", b"minf", b"stbl"):
        at = out.index(kind) - 4
        size = struct.unpack(">I", out[at:at + 4])[0]
        out[at:at + 4] = struct.pack(">I", size - removed)
    return bytes(out)


CASES = build_cases()
KINDS: Dict[str, Tuple[type, type]] = {
    # verdict kind: (tf.errors class, Python exception class of the _core readers)
    "not_found": (tf.errors.NotFoundError, FileNotFoundError),
    "invalid": (tf.errors.InvalidArgumentError, ValueError),
    "data_loss": (tf.errors.DataLossError, _core.DataLossError),
}


def _place(case: Case, tmp_path, where: str) -> str:
    if where == "local":
        path = str(tmp_path / f"{case.name}.bzna")
        with open(path, "wb") as f:
            f.write(case.data)
        return path
    path = f"ram://tf_gulp_malformed_{uuid.uuid4().hex}/{case.name}.bzna"
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(case.data)
    return path


def _outcome(fn: Callable[[], object]):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - the verdict is what is compared
        return None, e


def _kernel_entries(path: str) -> List[Tuple[int, int]]:
    """(index, label) of every entry, read by the dataset kernel alone (no Python judgement of
    the file first, as BenzinaDataset has)."""
    variant = load_ops().tf_gulp_bzna_dataset(path=path, start=0, stop=N)
    ds = tf.data.experimental.from_variant(variant, _RECORD_SPEC)
    return [(int(x["index"]), int(x["label"])) for x in ds.as_numpy_iterator()]


def _message(e: BaseException) -> str:
    """The error's own message (an eager op error without TensorFlow's function/op wrapping)."""
    if not isinstance(e, tf.errors.OpError):
        return str(e)
    message = re.sub(r"^\{\{function_node [^}]*\}\} ", "", e.message)
    return re.sub(r" \[Op:[\w>]+\].*$", "", message, flags=re.S)


def test_the_cases_are_what_they_say():
    """The suite's files are built as described (the malformed ones differ from the good one)."""
    names = [c.name for c in CASES]
    assert len(set(names)) == len(names)
    assert len({c.data for c in CASES}) == len(CASES)
    assert sum(c.verdict is None for c in CASES) == 2


@pytest.mark.parametrize("where", ["local", "ram"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_entry_point_judges_alike(case: Case, where: str, tmp_path):
    path = _place(case, tmp_path, where)

    op, op_error = _outcome(lambda: _kernel_entries(path))
    reader, reader_error = _outcome(lambda: C.read_container(path))
    dataset, dataset_error = _outcome(
        lambda: [(int(x["index"]), int(x["label"]))
                 for x in BenzinaDataset(path, decode=False).as_numpy_iterator()])
    loader, loader_error = _outcome(lambda: DataLoader(path, (8, 8), 2))

    if case.verdict is None:
        for name, error in [("op", op_error), ("reader", reader_error),
                            ("dataset", dataset_error), ("loader", loader_error)]:
            assert error is None, (name, error)
        assert op == dataset == list(enumerate(case.labels))
        assert reader.entries == N and reader.targets == sum(t >= 0 for t in case.labels)
        # The command runs in this process, so it sees the same ram:// files.
        code, out, err = run_cli("bzna", "info", path)
        assert code == 0 and not err, (out, err)
        info = json.loads(run_cli("bzna", "info", "--json", path)[1])
        assert info["targets"] == {"count": reader.targets, "missing": [reader.targets, N]}
        return

    kind, needle = case.verdict
    tf_error, py_error = KINDS[kind]
    # The op (inside the dataset graph) and the readers built on _core.
    assert isinstance(op_error, tf_error), (op_error, kind)
    assert isinstance(reader_error, py_error), (reader_error, kind)
    if kind == "invalid":  # a plain ValueError, not a DataLossError
        assert not isinstance(reader_error, _core.DataLossError), reader_error
    # BenzinaDataset and DataLoader raise when built (they read the index for the split and the
    # count) the same tf.errors exception the op raises when iterated.
    assert isinstance(dataset_error, tf_error), (dataset_error, kind)
    assert isinstance(loader_error, tf_error), (loader_error, kind)
    messages = {name: _message(e) for name, e in [("op", op_error), ("reader", reader_error),
                                                  ("dataset", dataset_error),
                                                  ("loader", loader_error)]}
    for name, message in messages.items():
        assert message.startswith(path + ":"), (name, message)
        assert needle in message, (name, message, needle)
    # One judgement, one message.
    assert len(set(messages.values())) == 1, messages
    code, out, err = run_cli("bzna", "info", path)
    assert code == 1 and "Traceback" not in err, (code, out, err)
    assert len(err.strip().splitlines()) == 1 and messages["reader"] in err, err
