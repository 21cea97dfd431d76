#!/bin/sh
# Harness self-test (exit-codes.sh): a guest test that fails with status 3.
echo "probe-exit3: failing on purpose with status 3"
exit 3
