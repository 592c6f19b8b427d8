#!/usr/bin/env bash
# Regenerates docs/results/security-results.md (and its JSON, docs/results/security-results.json) from
# the adversary selftest: `wipeproof-challenger selftest --adversaries` with the full run count.
#
#   scripts/security-results.sh [BUILD_DIR] [RUNS]     defaults: build, 1000
#
# Takes 10-25 minutes on two cores (34 scenarios x RUNS sessions of a few ms each). Exit status: the
# selftest's (0 when every outcome matches its expectation). Adversary 8 (scaffold storage) runs at
# m = 256, 1024, 4096; docs/scaffold-depth.md has the 2^14 table. To re-render the Markdown only:
#   wipeproof-challenger selftest --render=docs/results/security-results.json \
#       --markdown=docs/results/security-results.md
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-build}"
runs="${2:-1000}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
bin="$build/challenger/wipeproof-challenger"
if [[ ! -x "$bin" ]]; then
  echo "security-results.sh: $bin not built (cmake --build $build --target wipeproof-challenger)" >&2
  exit 2
fi
"$bin" selftest --adversaries --runs="$runs" --seed=1 \
  --json="$root/docs/results/security-results.json" --markdown="$root/docs/results/security-results.md"
echo "security-results.sh: wrote docs/results/security-results.md and docs/results/security-results.json ($runs runs per scenario)" >&2
