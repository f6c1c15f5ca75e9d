"""What a shuffled GulpDataset's batches mix, on a directory written class by class (as ingest
tools write it: chunks hold one class each). The default shuffle is uniform over all items, so a
batch holds about as many distinct classes as a uniform draw; the chunk-window shuffle
(``shuffle_chunk_window=n``, opt-in) mixes only the classes of n chunks.

The figures the docs quote (docs/gulp_dataset.md) are measured by bench/bench_shuffle.py on a
larger directory; this test pins the behaviour on a small one."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tf_gulp
from gulp_testing import make_gulp_dir

CLASSES = 20
CHUNKS_PER_CLASS = 3
PER_CHUNK = 4
BATCH = 16


def expected_distinct(classes: int, per_class: int, batch: int) -> float:
    """Mean distinct classes among `batch` items drawn without replacement from `classes`
    classes of `per_class` items each (hypergeometric: a class is missed with probability
    C(N - m, b) / C(N, b))."""
    n = classes * per_class
    missed = 1.0
    for k in range(batch):
        missed *= (n - per_class - k) / (n - k)
    return classes * (1 - missed)


@pytest.fixture(scope="module")
def by_class(tmp_path_factory):
    path = tmp_path_factory.mktemp("mixing") / "gulp"
    per_class = CHUNKS_PER_CLASS * PER_CHUNK
    n = CLASSES * per_class
    # Video i is of class i // per_class: the chunks are written class by class.
    make_gulp_dir(path, n, 1, 8, 8, videos_per_chunk=PER_CHUNK,
                  labels=[f"class{i // per_class:02d}" for i in range(n)])
    return str(path)


def distinct_per_batch(ds, epochs: int = 4) -> float:
    counts = []
    for _ in range(epochs):
        labels = [int(e["label"]) for e in ds]
        counts += [len(set(labels[i:i + BATCH])) for i in range(0, len(labels) - BATCH + 1, BATCH)]
    return float(np.mean(counts))


def test_the_default_shuffle_mixes_classes_as_a_uniform_draw(by_class):
    uniform = expected_distinct(CLASSES, CHUNKS_PER_CLASS * PER_CHUNK, BATCH)  # about 11.4
    measured = distinct_per_batch(tf_gulp.GulpDataset(by_class, decode=False, shuffle=True,
                                                      seed=3))
    # The old default (a window of 4 chunks of one class each) gives about 3.5 here.
    assert measured > 0.9 * uniform, (measured, uniform)


def test_the_chunk_window_mixes_only_its_chunks_classes(by_class):
    window = distinct_per_batch(tf_gulp.GulpDataset(by_class, decode=False, shuffle=True, seed=3,
                                                    shuffle_chunk_window=4))
    # A batch of 16 is (mostly) 4 chunks' items: at most about 4 classes.
    assert window <= 4.5, window


def test_the_uniform_shuffle_is_a_permutation_each_epoch(by_class):
    ds = tf_gulp.GulpDataset(by_class, decode=False, shuffle=True, seed=3)
    ids = [[e["id"].numpy() for e in ds] for _ in range(2)]
    assert sorted(ids[0]) == sorted(ids[1]) and len(set(ids[0])) == len(ids[0])
    assert ids[0] != ids[1]


def test_records_k_positions_apart_are_as_far_apart_as_in_a_uniform_shuffle(by_class):
    # For a uniform permutation of n records, the records at positions p and p + k are two
    # distinct uniform draws: their storage indices differ by (n + 1) / 3 on average, with a
    # standard deviation of about n / sqrt(18) per pair. Over EPOCHS passes, each lag's mean is
    # within 6 of its standard errors (about 1e-9 for one lag, 1e-7 for all of them; the pairs of a
    # permutation are nearly independent). A weak keyed permutation fails at some lag: a 2-round
    # Feistel network keeps the high half of the position's bits, XORed with a key, in the
    # record's, so the records 16 positions apart (positions whose high halves differ by one) lie
    # within 32 of each other here (z about 66).
    epochs = 40
    n = CLASSES * CHUNKS_PER_CLASS * PER_CHUNK
    ds = tf_gulp.GulpDataset(by_class, decode=False, shuffle=True, seed=3)
    orders = np.array([[int(e["id"].numpy().decode()[3:]) for e in ds] for _ in range(epochs)])
    assert orders.shape == (epochs, n)
    worst = (0.0, 0)
    for k in range(1, n // 2 + 1):
        mean = np.abs(orders[:, k:] - orders[:, :-k]).mean()
        z = abs(mean - (n + 1) / 3) / (n / math.sqrt(18 * (n - k) * epochs))
        worst = max(worst, (z, k))
    assert worst[0] < 6, f"lag {worst[1]}: {worst[0]:.1f} standard errors from a uniform shuffle"
