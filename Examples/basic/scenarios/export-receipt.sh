#!/bin/sh
# Writes a file into its private artifacts folder and checks it reads back.
set -eu
receipt="$ORCHESTRATE_ARTIFACTS_DIR/receipt.csv"
printf 'item,price\nconsultation,40\n' > "$receipt"
sleep "${STEP_SECONDS:-0.5}"
grep -q consultation "$receipt" && echo "receipt written to $receipt"
