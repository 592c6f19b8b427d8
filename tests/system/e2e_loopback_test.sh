#!/usr/bin/env bash
# Smoke test: one wipe session over TCP loopback and TLS 1.3 with the real binaries (wipeproof-prover
# serve and wipeproof-challenger wipe), 64 MiB of host memory, then the ledger verified. Each side
# pins the other's certificate, as keygen wrote it.
# Usage: e2e_loopback_test.sh PROVER_BIN CHALLENGER_BIN
#   WP_E2E_DIR=FOLDER: work in FOLDER and keep it (keys, inventory, ledger; tests/system/audit_test.sh)
#   WP_E2E_CHUNK_LABELS=M: m of the session (default 1024)
# threat-model: T-HONEST
set -euo pipefail
prover=$1
challenger=$2
dir=${WP_E2E_DIR:-$(mktemp -d /tmp/wp-e2e.XXXXXX)}
mkdir -p "$dir"
agent_pid=
cleanup() {
  [[ -n "$agent_pid" ]] && kill -TERM "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
  [[ -n ${WP_E2E_DIR:-} ]] || rm -rf "$dir"
}
trap cleanup EXIT

"$challenger" keygen --out="$dir/inspect" >/dev/null
"$prover" keygen --out="$dir/node" >/dev/null
"$prover" serve --listen=127.0.0.1:0 --node_name=e2e-node --authority_key="$dir/inspect-authority.pub" \
  --challenger_key="$dir/inspect-challenger.pub" --challenger_cert="$dir/inspect-challenger.crt" \
  --node_key="$dir/node.key" --host_budget_bytes=67108864 \
  --devices=host --threads=2 >"$dir/agent.out" 2>"$dir/agent.log" &
agent_pid=$!
for _ in $(seq 1 100); do grep -q '^listening on ' "$dir/agent.out" && break; sleep 0.1; done
address=$(sed -n 's/^listening on //p' "$dir/agent.out")
[[ -n "$address" ]] || { echo "agent did not start"; cat "$dir/agent.log"; exit 1; }

cat >"$dir/inventory.json" <<JSON
{"nodes": [{"name": "e2e-node", "address": "$address", "public_key_file": "node.pub", "certificate_file": "node.crt",
            "devices": [{"selector": "host", "model": "host-dram", "capacity_bytes": 67108864}]}],
 "waves": [{"name": "e2e", "nodes": ["e2e-node"], "period_s": 3600, "jitter_s": 60, "complete": true}],
 "reserves": {"host-dram": 0}}
JSON
cat >"$dir/profile.json" <<JSON
{"name": "e2e", "chunk_labels": ${WP_E2E_CHUNK_LABELS:-1024}, "rounds": 8, "labels_per_round": 32, "round_deadline_us": 2000000,
 "fill_deadline_ms": 300000, "adversary": {"class": "commodity-cpu", "t_min_ps": 40000, "safety_factor": 2},
 "confidence": 0.99, "calibrated": false}
JSON
"$challenger" wipe --node=e2e-node --inventory="$dir/inventory.json" --profile="$dir/profile.json" \
  --authority_key="$dir/inspect-authority.key" --challenger_key="$dir/inspect-challenger.key" \
  --ledger="$dir/ledger.db" --json >"$dir/verdict.json" 2>"$dir/wipe.log" || {
  echo "wipe failed:"; cat "$dir/wipe.log" "$dir/verdict.json"; tail -20 "$dir/agent.log"; exit 1; }
grep -q '"pass": *true' "$dir/verdict.json" || { echo "verdict is not a pass:"; cat "$dir/verdict.json"; exit 1; }
"$challenger" ledger verify --ledger="$dir/ledger.db" --challenger_key="$dir/inspect-challenger.pub"
# The agent is idle again and holds no memory after the session.
grep -q "released\|freed" "$dir/agent.log" || { echo "agent log shows no release:"; cat "$dir/agent.log"; exit 1; }
grep -q "listening on .* (TLS 1.3 as wipeproof-" "$dir/agent.log" || { echo "agent log shows no TLS:"; cat "$dir/agent.log"; exit 1; }
echo "e2e loopback session passed"
