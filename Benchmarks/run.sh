#!/usr/bin/env bash
# orchestrate's benchmarks. Each figure is a ratio against a peer measured in the same run, on the
# same machine, so a noisy machine moves both sides. Usage: Benchmarks/run.sh path/to/orchestrate
set -euo pipefail
BIN=${1:?usage: Benchmarks/run.sh path/to/orchestrate}
WORK=$(mktemp -d /tmp/orch-bench-XXXXXX)
chmod 755 "$WORK"
cleanup() { ( unset ORCHESTRATE_DATABASE_URL; cd "$WORK/dispatch" && "$BIN" db stop >/dev/null 2>&1 ) || true; rm -rf "$WORK"; }
trap cleanup EXIT
now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.3f}')"; }
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }

# One embedded cluster for both benchmarks (its start-up is not what is measured).
mkdir -p "$WORK/dispatch" "$WORK/makespan"
export ORCHESTRATE_DATABASE_URL
ORCHESTRATE_DATABASE_URL=$(cd "$WORK/dispatch" && "$BIN" db url)
( cd "$WORK/dispatch" && unset ORCHESTRATE_DATABASE_URL && "$BIN" db migrate >/dev/null )

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

echo
echo "summary: dispatch ${dispatch_ratio}x xargs (<= 1.5), makespan ${makespan_ratio}x lower bound (<= 1.10)"
