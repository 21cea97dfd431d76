#!/bin/sh
# Harness self-test (exit-codes.sh): crash the guest kernel on purpose.
echo "probe-panic: triggering a kernel crash through sysrq"
echo c >/proc/sysrq-trigger
# Only reached if the crash did not happen: a plain failure, not 125.
echo "probe-panic: still alive after sysrq-c"
exit 1
