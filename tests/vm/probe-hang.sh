#!/bin/sh
# Harness self-test (exit-codes.sh): never finish, so the host times out.
echo "probe-hang: sleeping until the host gives up"
while :; do sleep 3600; done
