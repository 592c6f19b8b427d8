#!/usr/bin/env bash
# The load test's ledger checks can fail: after a clean 3-agent run (scripts/load-test.sh), its
# --recheck passes; it fails once a node has a second session (a duplicated order) and once the
# last entries are gone (a lost receipt: the hash chain alone cannot show a missing tail, the counts do).
# Usage: load_ledger_check_test.sh LOAD_TEST_SH PROVER_BIN CHALLENGER_BIN
# threat-model: T-LOAD
set -euo pipefail
load_test=$1
prover=$2
challenger=$3
work=$(mktemp -d /tmp/wp-load-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
run="$work/run"
recheck() { "$load_test" --agents=3 --prover="$prover" --challenger="$challenger" --recheck="$1" 2>"$work/recheck.err"; }

"$load_test" --agents=3 --period-s=1 --timeout-s=120 --keep --dir="$run" --prover="$prover" \
  --challenger="$challenger" >/dev/null 2>"$work/run.err" || { cat "$work/run.err"; exit 1; }
recheck "$run" || { echo "recheck of a clean run failed:"; cat "$work/recheck.err"; exit 1; }

# Lost: the last two entries (the wave verdict and the last session's receipt) removed from a copy.
# `ledger verify` still passes; the counts fail.
cp -r "$run" "$work/lost"
sqlite3 "$work/lost/ledger.db" "DELETE FROM entries WHERE sequence >= (SELECT MAX(sequence) - 1 FROM entries)"
"$challenger" ledger verify --ledger="$work/lost/ledger.db" --challenger_key="$work/lost/inspect-challenger.pub" \
  >/dev/null || { echo "expected the truncated ledger to verify as a chain"; exit 1; }
if recheck "$work/lost"; then echo "recheck passed a ledger with a lost receipt"; exit 1; fi
grep -q "0 receipt entries" "$work/recheck.err" || { echo "no lost receipt named:"; cat "$work/recheck.err"; exit 1; }

# Duplicated: a second session for load-0001 (its agent is gone: a failed session, fully recorded).
"$challenger" wipe --node=load-0001 --inventory="$run/inventory.json" --profile="$run/profile.json" \
  --authority_key="$run/inspect-authority.key" --challenger_key="$run/inspect-challenger.key" \
  --ledger="$run/ledger.db" --connect_timeout_s=2 >/dev/null 2>&1 && { echo "wipe of a stopped agent passed"; exit 1; }
if recheck "$run"; then echo "recheck passed a ledger with two sessions of one node"; exit 1; fi
grep -q "orders per node differ from one each: > load-0001" "$work/recheck.err" ||
  { echo "no duplicated order named:"; cat "$work/recheck.err"; exit 1; }
grep -q "4 sessions in the ledger, expected 3" "$work/recheck.err" || { cat "$work/recheck.err"; exit 1; }
echo "load ledger checks: a clean run passes, a lost receipt and a duplicated session fail"
