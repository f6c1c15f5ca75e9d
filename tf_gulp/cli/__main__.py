"""``python -m tf_gulp.cli``: the same as the ``tf-gulp`` command."""

import sys

from tf_gulp.cli.main import main

sys.exit(main())
