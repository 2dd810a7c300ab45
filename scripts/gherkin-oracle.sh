#!/usr/bin/env bash
# Regenerates Tests/GherkinTests/Oracle/*.ndjson with Cucumber's official parser (PyPI gherkin-official),
# the oracle our own feature files are compared against. Needs python3 and pip (network to PyPI).
# Usage: scripts/gherkin-oracle.sh [version]      (default 42.0.1)
set -euo pipefail
version="${1:-42.0.1}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --dest "$work" "gherkin-official==$version"
(cd "$work" && python3 -m zipfile -e gherkin_official-*.whl lib)
cd "$(dirname "$0")/../Tests/GherkinTests/Oracle"
for feature in *.feature; do
  PYTHONPATH="$work/lib" python3 - "$feature" > "$feature.ndjson" <<'PY'
import json, sys
from gherkin.stream.gherkin_events import GherkinEvents
path = sys.argv[1]
source = {"source": {"uri": path, "data": open(path, encoding="utf-8", newline="").read(), "mediaType": "text/x.cucumber.gherkin+plain"}}
events = GherkinEvents(GherkinEvents.Options(print_source=False, print_ast=False, print_pickles=True))
for event in events.enum(source):
    print(json.dumps(event, sort_keys=True, ensure_ascii=False))
PY
  echo "$feature: $(wc -l < "$feature.ndjson") envelopes"
done
