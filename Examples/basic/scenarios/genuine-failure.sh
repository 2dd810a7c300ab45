#!/bin/sh
# A genuine failure: fails on every attempt, so the run fails (exit 1) and JUnit shows why.
sleep 0.4
echo "expected message 'Card declined', found 'Something went wrong'" >&2
exit 1
