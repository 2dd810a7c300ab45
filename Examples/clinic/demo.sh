#!/bin/sh
# `make demo`: records the clinic example once, with its backend running, when there are no recordings yet;
# then replays every scenario with 8 workers and no backend at all, and shows where steps and exchanges went.
set -eu
cd "$(dirname "$0")"
BIN=../../.build/debug
ORCHESTRATE=$BIN/orchestrate
mkdir -p .orchestrate

if [ ! -d Recordings ]; then
    echo "== no recordings yet: clinic-backend on 127.0.0.1:8642, orchestrate run --mode record --workers 8"
    $BIN/clinic-backend --port 8642 > .orchestrate/backend.log 2>&1 &
    backend=$!
    trap 'kill $backend 2>/dev/null || true' EXIT INT TERM
    tries=0
    until grep -q listening .orchestrate/backend.log 2>/dev/null; do
        tries=$((tries + 1))
        if [ $tries -gt 100 ] || ! kill -0 $backend 2>/dev/null; then
            echo "clinic-backend did not start (is port 8642 taken?):" >&2
            cat .orchestrate/backend.log >&2
            exit 3
        fi
        sleep 0.1
    done
    if ! $ORCHESTRATE run --mode record --workers 8; then
        rm -rf Recordings
        echo "recording failed; nothing kept (see the output above)" >&2
        exit 1
    fi
    kill $backend
    wait $backend 2>/dev/null || true
    trap - EXIT INT TERM
    echo "   the backend answered $(grep -c ' [0-9][0-9][0-9]$' .orchestrate/backend.log) requests; it is stopped now"
    echo
fi

echo "== orchestrate run --workers 8   (replay from Recordings/: zero requests reach a backend)"
$ORCHESTRATE run --workers 8 --junit .orchestrate/junit.xml
echo
echo "== orchestrate runs --limit 4"
$ORCHESTRATE runs --limit 4
echo
echo "== orchestrate history \"bot offers\"   (attempts over time; the newest one's steps and their exchanges)"
$ORCHESTRATE history "bot offers" --limit 4
