"""``ffrecord.utils`` of the reference: :func:`dump` imported from here, as its users write
``from ffrecord.utils import dump``. The implementation lives in :mod:`tf_gulp.ffrecord.writer`."""

from tf_gulp.ffrecord.writer import dump

__all__ = ["dump"]
