"""The views axis of `GulpDataset`'s frames, from its kernel (GulpElementViews, gulp_ops.h): the
options are parsed once, in C++, by the code that makes the dataset, so Python's element spec
restates none of the rules of clips and crops."""

from __future__ import annotations

from typing import Any, Dict, List

import tensorflow as tf
from tensorflow.python.framework import op_def_registry

from tf_gulp.ops.library import load_ops

_OP = "TfGulp>GulpElementViews"


def element_views(attrs: Dict[str, Any]) -> List[int]:
    """``[]`` when an element of a GulpDataset made with the op attrs ``attrs`` is one view (frames
    ``[T, ...]``), else ``[V]`` (frames ``[V, T, ...]``). ``attrs`` are the dataset op's; those the
    views op lacks (the source attrs) are left out. Runs eagerly even while a function is traced
    (a GulpDataset made inside ``interleave``): the element spec is static.

    Raises:
      tf.errors.InvalidArgumentError: options the kernel refuses together.
    """
    ops = load_ops()
    names = {a.name for a in op_def_registry.get(_OP).attr}
    with tf.init_scope():
        views = ops.tf_gulp_gulp_element_views(**{k: v for k, v in attrs.items() if k in names})
        return [int(v) for v in views.numpy()]
