#!/bin/sh
# Installs what orchestrate needs on a fresh Debian/Ubuntu machine with the Swift toolchain:
# PostgreSQL's server programs (for the embedded database and the tests) and python3 (used by tests);
# with `test`, also headless Chromium and the PyPI packages haralyzer, junitparser and gherkin-official, which the
# tests open the HTML report, HAR files and JUnit XML with and compare the Gherkin parser with, and pgbouncer; with
# `bench`, also wrk, nginx, psql, pgbench and pgbouncer, and pytest-xdist and hypothesis, for the benchmarks; with
# `install`, debootstrap, buildah and runc, for make test-install.
set -eu
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
missing=""
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing="$missing postgresql"
command -v python3 >/dev/null 2>&1 || missing="$missing python3"
# openssl makes the embedded cluster's TLS certificates (orchestrate db expose).
command -v openssl >/dev/null 2>&1 || missing="$missing openssl"
if [ "${1:-}" = test ]; then
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing="$missing chromium"
  python3 -m pip --version >/dev/null 2>&1 || missing="$missing python3-pip"
  # promtool checks the metrics exposition; ip and unshare make the hosts of the many-hosts tests; curl scrapes.
  command -v promtool >/dev/null 2>&1 || missing="$missing prometheus"
  command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || missing="$missing iproute2"
  command -v unshare >/dev/null 2>&1 || missing="$missing util-linux"
  command -v curl >/dev/null 2>&1 || missing="$missing curl"
  # PoolerTests run orchestrate through pgbouncer in transaction mode.
  [ -x /usr/sbin/pgbouncer ] || command -v pgbouncer >/dev/null 2>&1 || missing="$missing pgbouncer"
fi
# `install-deps.sh bench`: also the peers the benchmarks measure against.
if [ "${1:-}" = bench ]; then
  command -v wrk >/dev/null 2>&1 || missing="$missing wrk"
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing="$missing nginx"
  command -v psql >/dev/null 2>&1 || missing="$missing postgresql-client"
  command -v pgbench >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/pgbench >/dev/null 2>&1 || missing="$missing postgresql-contrib"
  # (i) puts pgbouncer in transaction mode between a thousand slots and PostgreSQL.
  [ -x /usr/sbin/pgbouncer ] || command -v pgbouncer >/dev/null 2>&1 || missing="$missing pgbouncer"
fi
# `install-deps.sh install`: make test-install's Debian root and image.
if [ "${1:-}" = install ]; then
  command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing="$missing debootstrap"
  command -v buildah >/dev/null 2>&1 || missing="$missing buildah"
  command -v runc >/dev/null 2>&1 || [ -x /usr/sbin/runc ] || missing="$missing runc"
fi
if [ -n "$missing" ]; then
  echo "installing:$missing"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq $missing >/dev/null
fi
# The tests' outside oracles from PyPI: the official Cucumber parser (pinned: the Gherkin tests compare with exactly
# this version), haralyzer, junitparser, kubernetes-validate (Kubernetes' schemas, for Deploy/),
# grafana-foundation-sdk (Grafana's dashboard model, for Dashboards/); pytest and behave (real runners' reports);
# markdown-it-py (a CommonMark parser, for the run's Markdown summary); coverage (coverage.py's per-test contexts, for
# footprints).
gherkin_official=42.0.1
if [ "${1:-}" = test ] && ! python3 -c "
import haralyzer, junitparser, kubernetes_validate, grafana_foundation_sdk, pytest, behave, markdown_it, coverage
from importlib.metadata import version
assert version('gherkin-official') == '$gherkin_official'" >/dev/null 2>&1; then
  echo "installing: haralyzer junitparser kubernetes-validate grafana-foundation-sdk pytest behave markdown-it-py coverage gherkin-official==$gherkin_official (PyPI)"
  packages="haralyzer junitparser kubernetes-validate grafana-foundation-sdk pytest behave markdown-it-py coverage gherkin-official==$gherkin_official"
  python3 -m pip install -q $packages 2>/dev/null || python3 -m pip install -q --break-system-packages $packages
fi
# The benchmarks' real suites: pytest with pytest-xdist (the peer's own parallel mode), hypothesis (attrs' tests) and
# coverage (the selection's footprints, (s)).
if [ "${1:-}" = bench ] && ! python3 -c "import pytest, xdist, hypothesis, coverage" >/dev/null 2>&1; then
  echo "installing: pytest pytest-xdist hypothesis coverage (PyPI)"
  python3 -m pip install -q pytest pytest-xdist hypothesis coverage 2>/dev/null \
    || python3 -m pip install -q --break-system-packages pytest pytest-xdist hypothesis coverage
fi
# initdb and postgres refuse to run as root: as root, orchestrate runs them as the 'postgres' user.
if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
  useradd --system --user-group --no-create-home --shell /usr/sbin/nologin postgres
fi
command -v swift >/dev/null 2>&1 || { echo "Swift 6.1 or newer is needed: https://swift.org/install" >&2; exit 1; }
