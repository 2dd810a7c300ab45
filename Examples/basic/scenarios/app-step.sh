#!/bin/sh
# Stands in for a UI test: runs "steps" for STEP_SECONDS and leaves a screenshot-like artifact.
set -eu
echo "scenario $1 on worker $ORCHESTRATE_WORKER, attempt $ORCHESTRATE_ATTEMPT, mock server $ORCHESTRATE_MOCK_URL"
sleep "${STEP_SECONDS:-0.5}"
echo "screen of $1 at $(date -u +%H:%M:%S)" > "$ORCHESTRATE_ARTIFACTS_DIR/screen.txt"
echo "scenario $1 passed"
