#!/usr/bin/env bash
# The shipped Prometheus files with Debian's promtool: the alert rules parse (`check rules`), the
# example scrape configuration parses with them (`check config`), and each alert fires on the series
# that should fire it and stays quiet otherwise (`test rules` on prometheus_rules_test.yml).
# Usage: prometheus_rules_test.sh SOURCE_ROOT     Exit 0 pass, 1 fail, 77 skipped (no promtool).
set -euo pipefail
root=$1
if ! command -v promtool >/dev/null; then
  echo "SKIP: promtool not installed (scripts/setup-deps.sh installs Debian's prometheus package)"
  exit 77
fi
promtool check rules "$root/deploy/prometheus/wipeproof-alerts.yml"
promtool check config "$root/deploy/prometheus/scrape-example.yml"
cd "$root/tests/system"
promtool test rules prometheus_rules_test.yml
