"""Checks `auditwheel show --json WHEEL` (read from stdin) for the finished wheel:

    auditwheel show --json WHEEL | python3 tools/wheel/check_audit.py WHEEL

The only library the wheel may need from outside is TensorFlow's libtensorflow_framework.so.2
(excluded from the repair on purpose: it belongs to the TensorFlow the user installs, which is also
why show's overall tag is linux_x86_64), and the platform tag in the file name must be the one the
symbol versions allow (sym_tag), so the name tells the truth about the oldest glibc it needs.
"""

import json
import os
import sys

ALLOWED_EXTERNAL = ["libtensorflow_framework.so.2"]


def main(wheel: str) -> int:
    report = json.load(sys.stdin)
    name = os.path.basename(wheel)
    external = sorted(report["external_libs"])
    if external != ALLOWED_EXTERNAL:
        print(f"check_audit: {name} needs libraries it does not carry: {external}", file=sys.stderr)
        return 1
    tag = report["sym_tag"]
    if not name.endswith(f"-{tag}.whl"):
        print(f"check_audit: {name}: its symbol versions allow {tag} only", file=sys.stderr)
        return 1
    print(f"{name}: platform tag {tag} (from its symbol versions); needs from outside only "
          f"{external[0]} (TensorFlow's)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
