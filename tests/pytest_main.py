"""Runs pytest files as Bazel py_tests (see the root BUILD): `pytest_main.py tests/test_x.py ...`.

The test files stay plain pytest files. Under `bazel test` this wrapper writes the JUnit XML report
where Bazel expects it, keeps pytest's cache and temporary folders out of the read-only runfiles tree,
and turns pytest's exit status into the test's.
"""

import os
import sys

import pytest


def main(argv: list) -> int:
    args = ["-p", "no:cacheprovider", "-rfEs"]
    xml_output = os.environ.get("XML_OUTPUT_FILE")
    if xml_output:
        args.append(f"--junitxml={xml_output}")
    test_tmpdir = os.environ.get("TEST_TMPDIR")
    if test_tmpdir:
        args.append(f"--basetemp={os.path.join(test_tmpdir, 'pytest')}")
    # Bazel's --test_filter selects tests by pytest -k expression.
    test_filter = os.environ.get("TESTBRIDGE_TEST_ONLY")
    if test_filter:
        args += ["-k", test_filter]
    return int(pytest.main(args + list(argv)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
