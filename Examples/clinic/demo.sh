#!/bin/sh
# `make demo`: records the clinic example once, with its backend running, when there are no recordings yet;
# then replays every scenario with 8 workers and no backend at all, shows where steps and exchanges went, and
# compares replay with a backend whose content changed (drift, with the field and the step that explain it), then
# runs live with the backend down (one infrastructure incident, exit 3).
set -eu
cd "$(dirname "$0")"
BIN=../../.build/debug
ORCHESTRATE=$BIN/orchestrate
mkdir -p .orchestrate
backend=""
trap '[ -z "$backend" ] || kill $backend 2>/dev/null || true' EXIT INT TERM

# start_backend LOG [VAR=value]: clinic-backend on 127.0.0.1:8642, waited for.
start_backend() {
    log=$1; shift
    env "$@" $BIN/clinic-backend --port 8642 > "$log" 2>&1 &
    backend=$!
    tries=0
    until grep -q listening "$log" 2>/dev/null; do
        tries=$((tries + 1))
        if [ $tries -gt 100 ] || ! kill -0 $backend 2>/dev/null; then
            echo "clinic-backend did not start (is port 8642 taken?):" >&2
            cat "$log" >&2
            exit 3
        fi
        sleep 0.1
    done
}

stop_backend() {
    kill $backend
    wait $backend 2>/dev/null || true
    backend=""
}

if [ ! -d Recordings ]; then
    echo "== no recordings yet: clinic-backend on 127.0.0.1:8642, orchestrate run --mode record --workers 8"
    start_backend .orchestrate/backend.log
    if ! $ORCHESTRATE run --mode record --workers 8; then
        rm -rf Recordings
        echo "recording failed; nothing kept (see the output above)" >&2
        exit 1
    fi
    stop_backend
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
echo
echo "== the backend's content changed (the bot offers \"SURE\" where it offered \"OK\"): orchestrate run --mode compare"
start_backend .orchestrate/backend-changed.log CLINIC_CHAT_ANSWER=SURE
status=0
$ORCHESTRATE run --mode compare --workers 8 --retries 0 || status=$?
stop_backend
echo "   (exit $status: a drift needs a look; the report above names the field and the step)"
echo
echo "== the backend is down: orchestrate run --mode live --workers 8 --retries 0   (an outage is one incident, not N failures)"
status=0
$ORCHESTRATE run --mode live --workers 8 --retries 0 || status=$?
echo "   (exit $status: 3 says infrastructure; the outage's attempts count in no flakiness score below)"
echo
echo "== orchestrate flaky --limit 5"
$ORCHESTRATE flaky --limit 5
echo
echo "== orchestrate failures --limit 5   (failures grouped by cause across the runs above)"
$ORCHESTRATE failures --limit 5
