#!/bin/sh
echo "tf_gulp: Bazel coverage collection is not set up in this offline workspace" >&2
exit 1
