#!/bin/sh
# A nondeterministic test: its first attempt fails, the retry passes. Reported as flaky, not failed.
sleep "${STEP_SECONDS:-0.5}"
if [ "$ORCHESTRATE_ATTEMPT" = "1" ]; then
  echo "badge count was 0, expected 1 (a race with the push handler)" >&2
  exit 1
fi
echo "badge count 1"
