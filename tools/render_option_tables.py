"""Rewrites the option tables of the reference pages from the ops' attr tables.

Each ``<!-- options OP -->`` ... ``<!-- /options -->`` block of docs/*.md becomes the rendering of
OP's options (tf_gulp/_options.py: markdown_table); tests/test_option_tables.py fails while a page
differs. Run from the checkout with the op library built: ``python tools/render_option_tables.py``.
"""

from __future__ import annotations

import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tf_gulp import _options  # noqa: E402  (after the path)


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for page in sorted(glob.glob(os.path.join(root, "docs", "*.md"))):
        with open(page, encoding="utf-8") as f:
            text = f.read()
        rendered = _options.render_option_block(
            text, lambda op: _options.markdown_table(_options.op_options(op)))
        if rendered != text:
            with open(page, "w", encoding="utf-8") as f:
                f.write(rendered)
            print(f"rewrote {os.path.relpath(page, root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
