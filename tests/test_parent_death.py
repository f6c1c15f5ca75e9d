"""tf_gulp/_parent_death.py under each multiprocessing start method: a pool whose initializer is
end_with_parent runs its tasks, which see their parent alive, whether the workers are the
parent's own children (fork, spawn) or a fork server's (forkserver, Python 3.14's default on
Linux), whose parent is not the pool's owner. The kill itself: tests/test_bzna_create_kill.py."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os

import pytest

from tf_gulp._parent_death import end_with_parent, parent_alive


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_workers_of_every_start_method_run_and_see_their_parent(method):
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"{method} is not a start method of this platform")
    context = multiprocessing.get_context(method)
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context, initializer=end_with_parent,
                                                initargs=(os.getpid(),)) as pool:
        assert list(pool.map(_alive, range(4))) == [True] * 4


def _alive(_: int) -> bool:
    return parent_alive()
