"""The transforms of :mod:`tf_gulp.transforms`, under their Benzina-era name (kept working).

This name is the same module object as ``tf_gulp.transforms`` (private names included), so code
written against either sees one set of classes.
"""

import sys

from tf_gulp import transforms as _transforms

sys.modules[__name__] = _transforms
