#!/usr/bin/env bash
# `wipeproof-challenger status` on a real ledger: a real agent on loopback, one passing wipe and one
# failing wipe (a 1 us round deadline: lateRound) of node-a, and node-b of the inventory never wiped.
# The table and the JSON must say so; a ledger with one byte changed is refused (exit 1).
# Usage: status_test.sh PROVER_BIN CHALLENGER_BIN
set -euo pipefail
prover=$1
challenger=$2
dir=$(mktemp -d /tmp/wp-status.XXXXXX)
agent_pid=
cleanup() {
  [[ -n "$agent_pid" ]] && kill -TERM "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$challenger" keygen --out="$dir/inspect" >/dev/null
"$prover" keygen --out="$dir/node" >/dev/null
"$prover" serve --listen=127.0.0.1:0 --node_name=node-a --authority_key="$dir/inspect-authority.pub" \
  --challenger_key="$dir/inspect-challenger.pub" --challenger_cert="$dir/inspect-challenger.crt" \
  --node_key="$dir/node.key" --host_budget_bytes=67108864 --devices=host --threads=2 \
  >"$dir/agent.out" 2>"$dir/agent.log" &
agent_pid=$!
for _ in $(seq 1 100); do grep -q '^listening on ' "$dir/agent.out" && break; sleep 0.1; done
address=$(sed -n 's/^listening on //p' "$dir/agent.out")
[[ -n "$address" ]] || { cat "$dir/agent.log"; fail "agent did not start"; }

cat >"$dir/inventory.json" <<JSON
{"nodes": [{"name": "node-a", "address": "$address", "public_key_file": "node.pub", "certificate_file": "node.crt",
            "devices": [{"selector": "host", "model": "host-dram", "capacity_bytes": 67108864}]},
           {"name": "node-b", "address": "127.0.0.1:9", "public_key_file": "node.pub", "certificate_file": "node.crt",
            "devices": [{"selector": "host", "model": "host-dram", "capacity_bytes": 67108864}]}],
 "waves": [{"name": "wa", "nodes": ["node-a"], "period_s": 3600, "jitter_s": 600, "complete": true}],
 "reserves": {"host-dram": 0}}
JSON
profile() {  # $1: round deadline (us)
  cat <<JSON
{"name": "status", "chunk_labels": 1024, "rounds": 4, "labels_per_round": 16, "round_deadline_us": $1,
 "fill_deadline_ms": 300000, "adversary": {"class": "commodity-cpu", "t_min_ps": 40000, "safety_factor": 2},
 "confidence": 0.99, "calibrated": false}
JSON
}
profile 2000000 >"$dir/pass.json"
profile 1 >"$dir/late.json"
wipe() {  # $1: profile file; prints the wipe's exit status
  local rc=0
  "$challenger" wipe --node=node-a --inventory="$dir/inventory.json" --profile="$1" \
    --authority_key="$dir/inspect-authority.key" --challenger_key="$dir/inspect-challenger.key" \
    --ledger="$dir/ledger.db" >>"$dir/wipe.out" 2>>"$dir/wipe.log" || rc=$?
  echo $rc
}
[[ $(wipe "$dir/pass.json") == 0 ]] || { cat "$dir/wipe.log"; fail "the passing wipe failed"; }
[[ $(wipe "$dir/late.json") == 1 ]] || { cat "$dir/wipe.log"; fail "the 1 us deadline wipe did not fail"; }

status=(--inventory="$dir/inventory.json" --ledger="$dir/ledger.db" --challenger_key="$dir/inspect-challenger.pub")
"$challenger" status "${status[@]}" >"$dir/table.txt" || { cat "$dir/table.txt"; fail "status exited $?"; }
cat "$dir/table.txt"
grep -Eq '^node-a +wa +FAIL +[0-9]+ s +no bound stated +1 of 2 +20[0-9-]+T[0-9:.]+Z +20[0-9-]+T[0-9:.]+Z *$' \
  "$dir/table.txt" || fail "node-a's line is not: FAIL, no bound, 1 of 2 failed, a last pass, a due time"
grep -Eq '^node-b +\(none\) +none +- +- +0 of 0 +- +- *$' "$dir/table.txt" || fail "node-b's line is not empty"
grep -q '^node-a: last verdict failed: lateRound' "$dir/table.txt" || fail "no failure reason for node-a"
grep -Eq '^ledger .*ledger.db: [0-9]+ entries, the whole chain verified$' "$dir/table.txt" || fail "no ledger line"

# JSON: the same facts, checked against the ledger's own verdict times (ledger show).
"$challenger" status "${status[@]}" --json >"$dir/status.json"
python3 - "$dir/status.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
a, b = s["nodes"]
assert [a["node"], b["node"]] == ["node-a", "node-b"], s
assert a["wave"] == "wa" and b["wave"] is None, s
assert (a["sessions"], a["failures"], a["busy"]) == (2, 1, 0), a
last = a["last_verdict"]
assert last["pass"] is False and last["failure"].startswith("lateRound"), last
assert last["bound_stated"] is False and last["bound_bytes"] is None, last
assert 0 <= last["age_s"] < 600, last
assert 0 < a["last_pass_unix_us"] <= last["at_unix_us"], a
assert a["next_due_unix_us"] == a["last_pass_unix_us"] + 4800 * 10**6, a   # period 3600 + jitter 600 + 600 for the run
assert a["overdue"] is False, a
assert b["last_verdict"] is None and b["sessions"] == 0 and b["last_pass_unix_us"] is None, b
assert s["ledger"]["verified"] is True and s["ledger"]["entries"] > 6, s["ledger"]
print("status JSON ok")
PY

# A ledger with one byte of an entry changed is refused, naming the problem.
cp "$dir/ledger.db" "$dir/tampered.db"
python3 - "$dir/tampered.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
seq, env = db.execute("SELECT sequence, envelope FROM entries ORDER BY sequence DESC LIMIT 1").fetchone()
env = bytearray(env); env[len(env) // 2] ^= 1
db.execute("UPDATE entries SET envelope = ? WHERE sequence = ?", (bytes(env), seq)); db.commit()
PY
rc=0
"$challenger" status --inventory="$dir/inventory.json" --ledger="$dir/tampered.db" \
  --challenger_key="$dir/inspect-challenger.pub" >"$dir/t.out" 2>"$dir/t.err" || rc=$?
[[ $rc == 1 ]] || fail "status on a tampered ledger exited $rc"
grep -q "ledger entry [0-9]*: " "$dir/t.err" || { cat "$dir/t.err"; fail "the tampered entry is not named"; }
! grep -q "DATA_LOSS" "$dir/t.err" || { cat "$dir/t.err"; fail "a status code name reached the user"; }
[[ ! -s "$dir/t.out" ]] || fail "status printed a table for a tampered ledger"
echo "ok: status table and JSON agree with a real ledger; a tampered ledger is refused"
