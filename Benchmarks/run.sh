#!/usr/bin/env bash
# orchestrate's benchmarks. Each figure is a ratio against a peer measured in the same run, on the
# same machine, so a noisy machine moves both sides. Usage: Benchmarks/run.sh path/to/orchestrate
# (orchestrate-bench, the drivers of (d) and (e), sits beside it in the build folder).
# BENCH=cd Benchmarks/run.sh … runs only the sections named (a b c d e; default all).
set -euo pipefail
BIN=${1:?usage: Benchmarks/run.sh path/to/orchestrate}
DRIVER="$(dirname "$BIN")/orchestrate-bench"
WORK=$(mktemp -d /tmp/orch-bench-XXXXXX)
chmod 755 "$WORK"
SERVERS=""  # background servers, ended however the script ends
cleanup() {
  for pid in $SERVERS; do kill "$pid" 2>/dev/null || true; done
  for project in dispatch history; do [ -d "$WORK/$project" ] && ( unset ORCHESTRATE_DATABASE_URL; cd "$WORK/$project" && "$BIN" db stop >/dev/null 2>&1 ) || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.3f}')"; }
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }

# One embedded cluster for both benchmarks (its start-up is not what is measured).
mkdir -p "$WORK/dispatch" "$WORK/makespan"
export ORCHESTRATE_DATABASE_URL
ORCHESTRATE_DATABASE_URL=$(cd "$WORK/dispatch" && "$BIN" db url)
( cd "$WORK/dispatch" && unset ORCHESTRATE_DATABASE_URL && "$BIN" db migrate >/dev/null )

BENCH=${BENCH:-abcde}
want() { case "$BENCH" in *$1*) return 0;; *) return 1;; esac; }
dispatch_ratio=-; makespan_ratio=-; mock_ratio=-; on_p99=-; cpu_ratio=-; ingest_ratio=-; slowest_query=-

if want a; then
echo "== (a) dispatch overhead: 2,000 scenarios of 'true', 8 workers, vs xargs -P 8 running the same commands"
python3 - "$WORK/dispatch/orchestrate.yml" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("workers: 8\nsuite:\n  command: \"true\"\n  scenarios:\n")
    for i in range(2000):
        f.write(f"    - {{ id: s{i:04d} }}\n")
PY
best_orchestrate=""; best_xargs=""
for round in 1 2 3; do
  start=$(now); ( cd "$WORK/dispatch" && "$BIN" run --progress none >/dev/null ); end=$(now)
  o=$(elapsed "$start" "$end")
  start=$(now); seq 2000 | xargs -P 8 -I{} /bin/sh -c true; end=$(now)
  x=$(elapsed "$start" "$end")
  echo "   round $round: orchestrate ${o}s   xargs ${x}s   ratio $(ratio "$o" "$x")"
  if [ -z "$best_orchestrate" ] || python3 -c "import sys; sys.exit(0 if $o < $best_orchestrate else 1)"; then best_orchestrate=$o; fi
  if [ -z "$best_xargs" ] || python3 -c "import sys; sys.exit(0 if $x < $best_xargs else 1)"; then best_xargs=$x; fi
done
dispatch_ratio=$(ratio "$best_orchestrate" "$best_xargs")
echo "   best: orchestrate ${best_orchestrate}s  xargs ${best_xargs}s  ratio ${dispatch_ratio} (target <= 1.5)"

fi

if want b; then
echo "== (b) makespan of a skewed sleep suite on 8 workers, second run (history known) vs the lower bound"
python3 - "$WORK/makespan/orchestrate.yml" <<'PY'
import sys
durations = [6] + [4] * 3 + [3] * 6 + [2] * 10 + [1] * 20
with open(sys.argv[1], "w") as f:
    f.write("workers: 8\nsuite:\n  scenarios:\n")
    # Listed shortest first: without history the planner cannot know better.
    for i, d in enumerate(sorted(durations)):
        f.write(f"    - {{ id: sleep-{i:02d}-{d}s, command: \"sleep {d}\" }}\n")
PY
total=76; longest=6
bound=$(python3 -c "print(f'{max($total / 8, $longest):.3f}')")
start=$(now); ( cd "$WORK/makespan" && "$BIN" run --progress none >/dev/null ); end=$(now)
first=$(elapsed "$start" "$end")
start=$(now); ( cd "$WORK/makespan" && "$BIN" run --progress none >/dev/null ); end=$(now)
second=$(elapsed "$start" "$end")
makespan_ratio=$(ratio "$second" "$bound")
echo "   first run (no history): ${first}s  ratio $(ratio "$first" "$bound")"
echo "   second run (longest expected first): ${second}s   lower bound ${bound}s   ratio ${makespan_ratio} (target <= 1.10)"

fi

if want c; then
echo "== (c) the mock server replaying a 1 KB JSON response vs nginx serving the same body (wrk -t2 -c50 -d10s)"
M="$WORK/mock"
mkdir -p "$M/www/api.bench.test/v1"
free_port() { python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
python3 - "$M" <<'PY'
import json, sys
root = sys.argv[1]
body = json.dumps({"items": [{"id": i, "name": f"item {i}", "price": i * 3} for i in range(25)]}, separators=(",", ":"))
body = body[:-2] + " " * (1024 - len(body)) + body[-2:] if len(body) < 1024 else body
open(f"{root}/www/api.bench.test/v1/item", "w").write(body)
entry = {
    "startedDateTime": "2026-01-01T00:00:00.000Z", "time": 1, "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0},
    "request": {"method": "GET", "url": "https://api.bench.test/v1/item", "httpVersion": "HTTP/1.1", "cookies": [], "headers": [],
                "queryString": [], "headersSize": -1, "bodySize": 0},
    "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [],
                 "headers": [{"name": "content-type", "value": "application/json"}], "redirectURL": "", "headersSize": -1,
                 "bodySize": len(body), "content": {"size": len(body), "mimeType": "application/json", "text": body}},
}
har = {"log": {"version": "1.2", "creator": {"name": "bench", "version": "1"}, "entries": [entry], "_orchestrate": {"formatVersion": 1, "randoms": {}}}}
json.dump(har, open(f"{root}/item.har", "w"))
open(f"{root}/orchestrate.yml", "w").write('mock:\n  hosts: { api.bench.test: "http://127.0.0.1:9" }\n')
PY
wait_http() { for _ in $(seq 100); do python3 -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1]).read()" "$1" 2>/dev/null && return 0; sleep 0.1; done; echo "no answer from $1" >&2; return 1; }
# CPU time (user + system, clock ticks) the processes $* have used so far, threads included.
cpu_ticks() { local total=0 pid; for pid in "$@"; do [ -r "/proc/$pid/stat" ] && total=$((total + $(sed 's/.*) //' "/proc/$pid/stat" | awk '{ print $12 + $13 }'))); done; echo "$total"; }
# wrk's requests/s, p50 and p99 in ms, and the CPU microseconds the server's processes ($2…) spent per request:
# a figure the machine's other tenants move far less than throughput.
measure() {
  local url=$1; shift
  wrk -t2 -c50 -d2s "$url" >/dev/null 2>&1  # warm-up
  local before; before=$(cpu_ticks "$@")
  wrk -t2 -c50 -d10s --latency "$url" >"$M/wrk.txt"
  local after; after=$(cpu_ticks "$@")
  python3 - "$M/wrk.txt" "$((after - before))" "$(getconf CLK_TCK)" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def ms(value, unit): return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
requests = int(re.search(r"(\d+) requests in", text).group(1))
p = {k: ms(v, u) for k, v, u in re.findall(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)", text, re.M)}
errors = re.search(r"Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)", text)
cpu = int(sys.argv[2]) / int(sys.argv[3]) * 1e6 / requests
print(f"{rps:.0f} {p['50']:.3f} {p['99']:.3f} {cpu:.1f}" + (" errors" if errors else ""))
PY
}
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
nginx_port=$(free_port)
cat > "$M/nginx.conf" <<CONF
worker_processes 2;
pid $M/nginx.pid;
error_log $M/nginx-error.log;
daemon off;
events { worker_connections 1024; }
http {
  access_log off;
  default_type application/json;
  server { listen 127.0.0.1:$nginx_port; root $M/www; }
}
CONF
"$NGINX" -p "$M" -c "$M/nginx.conf" -e "$M/nginx-error.log" >/dev/null 2>&1 & nginx_pid=$!; SERVERS="$SERVERS $nginx_pid"
wait_http "http://127.0.0.1:$nginx_port/api.bench.test/v1/item"
measure "http://127.0.0.1:$nginx_port/api.bench.test/v1/item" "$nginx_pid" $(pgrep -P "$nginx_pid") >"$M/nginx"
read -r nginx_rps nginx_p50 nginx_p99 nginx_cpu _ <"$M/nginx"
kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true
echo "   nginx:                      ${nginx_rps} req/s  p50 ${nginx_p50} ms  p99 ${nginx_p99} ms   CPU ${nginx_cpu} us/request"
mock_run() {  # $1: extra flag; prints req/s p50 p99, and the serve command's report on stderr
  local port; port=$(free_port)
  ( cd "$M" && exec "$BIN" mock serve --port "$port" --mode replay --cassette item.har $1 >"$M/serve.out" 2>"$M/serve.err" ) & local pid=$!; SERVERS="$SERVERS $pid"
  wait_http "http://127.0.0.1:$port/api.bench.test/v1/item"
  measure "http://127.0.0.1:$port/api.bench.test/v1/item" "$pid"
  kill -INT "$pid"; wait "$pid" || true
}
mock_run --no-log >"$M/off"; read -r off_rps off_p50 off_p99 off_cpu _ <"$M/off"
echo "   orchestrate, no logging:    ${off_rps} req/s  p50 ${off_p50} ms  p99 ${off_p99} ms   $(ratio "$off_rps" "$nginx_rps")x nginx;" \
  "CPU ${off_cpu} us/request, $(ratio "$nginx_cpu" "$off_cpu")x nginx's efficiency"
mock_run "" >"$M/on"; read -r on_rps on_p50 on_p99 on_cpu _ <"$M/on"
written=$(grep -o '([0-9]* row' "$M/serve.out" | tr -dc 0-9)
mock_ratio=$(ratio "$on_rps" "$nginx_rps")
cpu_ratio=$(ratio "$nginx_cpu" "$on_cpu")
echo "   orchestrate, logging to PG: ${on_rps} req/s  p50 ${on_p50} ms  p99 ${on_p99} ms   ${mock_ratio}x nginx (target >= 0.5, p99 <= 5 ms);" \
  "CPU ${on_cpu} us/request, ${cpu_ratio}x nginx's efficiency (aim 0.8; PostgreSQL's share not counted); ${written} exchanges written"

fi

if want d; then
echo "== (d) exchanges into PostgreSQL: orchestrate's writer (bodies and header lists stored once) vs a plain COPY of the same exchanges, all inline"
count=100000
"$DRIVER" ingest --count "$count" >"$WORK/ingest"; read -r attempt seconds <"$WORK/ingest"
ingest_rate=$(python3 -c "print(f'{$count / $seconds:.0f}')")
columns="attempt_id, sequence, mode, matched, host, method, url, request_headers, request_body, status, response_headers, response_body, started_at, duration_us, note, step_position"
# The peer: the same exchanges, bodies inline, as a plain COPY into a table of that shape.
psql -q "$ORCHESTRATE_DATABASE_URL" -c "CREATE TABLE plain_exchanges AS SELECT $columns FROM exchange_log WITH NO DATA; CREATE INDEX ON plain_exchanges (attempt_id, sequence)"
psql -q "$ORCHESTRATE_DATABASE_URL" -c "\\copy (SELECT $columns FROM exchange_log WHERE attempt_id = $attempt) TO '$WORK/rows.copy'"
start=$(now); psql -q "$ORCHESTRATE_DATABASE_URL" -c "\\copy plain_exchanges ($columns) FROM '$WORK/rows.copy'"; end=$(now)
copy_rate=$(python3 -c "print(f'{$count / ($end - $start):.0f}')")
ingest_ratio=$(ratio "$ingest_rate" "$copy_rate")
echo "   orchestrate: ${count} exchanges in ${seconds}s = ${ingest_rate}/s   psql \\copy: ${copy_rate} rows/s   ratio ${ingest_ratio} (target >= 0.5)"
fi

if want e; then
echo "== (e) history queries on a database of 1,000,000 attempts (2,000 scenarios x 500 runs over 180 days, 3M steps, 2M exchanges)"
H="$WORK/history"
mkdir -p "$H"
HISTORY_URL=$(cd "$H" && unset ORCHESTRATE_DATABASE_URL && "$BIN" db url)
( cd "$H" && unset ORCHESTRATE_DATABASE_URL && "$BIN" db migrate >/dev/null )
generated=$("$DRIVER" history --scenarios 2000 --runs 500 --days 180 --database "$HISTORY_URL")
echo "   generated in ${generated}s: $(psql -Atq "$HISTORY_URL" -c "SELECT count(*) FROM attempts") attempts"
run=$("$BIN" runs --limit 1 --format json --database "$HISTORY_URL" | python3 -c "import json, sys; print(json.load(sys.stdin)[0]['id'][:8])")
scenario="Features/area10.feature: scenario 50"
# Best of 3 wall times of the whole command (process start, connection, query, output), in ms.
best_ms() {
  local best=""
  for _ in 1 2 3; do
    local start end ms
    start=$(now); "$BIN" "$@" --database "$HISTORY_URL" >/dev/null; end=$(now)
    ms=$(python3 -c "print(round(($end - $start) * 1000))")
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  echo "$best"
}
floor=$(best_ms runs --limit 1)
echo "   floor: orchestrate runs --limit 1 ${floor} ms (process start, connection, one small query)"
slowest_query=0
for command in "flaky" "flaky|--since|90d" "history|$scenario" "logs|$run|$scenario" "logs|$run|$scenario|--har"; do
  IFS='|' read -r -a args <<<"$command"
  ms=$(best_ms "${args[@]}")
  if [ "${args[1]:-}" != "--since" ] && [ "$ms" -gt "$slowest_query" ]; then slowest_query=$ms; fi
  printf '   %-60s %5s ms  (%sx the floor)\n' "orchestrate ${args[*]}" "$ms" "$(ratio "$ms" "$floor")"
done
echo "   slowest of flaky (14d), history, logs: ${slowest_query} ms (target < 300 ms)"
( cd "$H" && unset ORCHESTRATE_DATABASE_URL && "$BIN" db stop >/dev/null 2>&1 ) || true
fi

echo
echo "summary: dispatch ${dispatch_ratio}x xargs (<= 1.5), makespan ${makespan_ratio}x lower bound (<= 1.10),"
echo "         mock server ${mock_ratio}x nginx with logging, p99 ${on_p99} ms (>= 0.5, <= 5 ms), CPU efficiency ${cpu_ratio}x nginx's (aim 0.8),"
echo "         ingest ${ingest_ratio}x COPY (>= 0.5),"
echo "         history queries on 1M attempts: slowest ${slowest_query} ms (< 300 ms)"
