#!/usr/bin/env bash
# Process-level faults (issue #6) with the real binaries over TCP loopback, host memory only:
#   1. agent killed (kill -9) mid-fill: the challenger's verdict says disconnected, the ledger
#      verifies; a restarted agent holds nothing, accepts a new order and the session passes;
#   2. challenger killed (kill -9) mid-fill: the agent ends the session ("the challenger
#      disconnected") and frees the memory (its locked memory, VmLck, drops to 0); the ledger verifies after the restart
#      and the next session on the same agent passes;
#   3. challenger frozen (SIGSTOP) mid-session, its connection left open: the agent's session timeout
#      (--session_timeout_us) ends the session and frees the memory; thawed, the challenger records
#      a failed verdict saying the session timed out;
#   4. slow-loris (a silent and a trickling connection), an oversized frame (a segment of 1 GiB) and
#      TLS clients without the pinned certificate (none, or another key's) against the agent: none of
#      them completes a handshake, so no frame of theirs is read; each connection is closed
#      (handshake timeout, not TLS, certificate refused), the closes are logged, and an honest
#      session run meanwhile passes;
#   5. the challenger pinning another node's certificate than the agent's: the session fails as
#      disconnected naming the TLS handshake, and the agent never sees an order.
# Usage: fault_process_test.sh PROVER_BIN CHALLENGER_BIN
set -euo pipefail
prover=$1
challenger=$2
dir=$(mktemp -d /tmp/wp-fault.XXXXXX)
budget=$((32 << 20))  # bytes of host memory each agent fills: about 1.3 s on one core
agent_pid=
wipe_pid=
cleanup() {
  [[ -n "$wipe_pid" ]] && kill -KILL "$wipe_pid" 2>/dev/null
  [[ -n "$agent_pid" ]] && kill -KILL "$agent_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  for f in "$dir"/*.log "$dir"/*.json; do [[ -f "$f" ]] && { echo "--- $f"; tail -25 "$f"; }; done
  exit 1
}
# wait_for SECONDS COMMAND...: polls every 50 ms until COMMAND succeeds; false after SECONDS.
wait_for() {
  local limit=$(($1 * 20)) i
  shift
  for ((i = 0; i < limit; i++)); do
    "$@" && return 0
    sleep 0.05
  done
  return 1
}
# Locked memory (KiB): the agent mlocks exactly what it acquires for a session.
locked_kib() { awk '/^VmLck:/ {print $2}' "/proc/$1/status"; }
log_has() { grep -q -- "$2" "$dir/$1"; }

"$challenger" keygen --out="$dir/inspect" >/dev/null
"$prover" keygen --out="$dir/node" >/dev/null

# start_agent NAME [FLAGS...]: starts an agent logging to NAME.log; sets agent_pid and address.
start_agent() {
  local name=$1
  shift
  "$prover" serve --listen=127.0.0.1:0 --node_name=fault-node --authority_key="$dir/inspect-authority.pub" \
    --challenger_key="$dir/inspect-challenger.pub" --challenger_cert="$dir/inspect-challenger.crt" \
    --node_key="$dir/node.key" --host_budget_bytes=$budget \
    --devices=host --threads=1 "$@" >"$dir/$name.out" 2>"$dir/$name.log" &
  agent_pid=$!
  wait_for 10 grep -q '^listening on ' "$dir/$name.out" || fail "agent $name did not start"
  address=$(sed -n 's/^listening on //p' "$dir/$name.out")
  # The inventory names the node at its (new) address.
  cat >"$dir/inventory.json" <<JSON
{"nodes": [{"name": "fault-node", "address": "$address", "public_key_file": "node.pub", "certificate_file": "node.crt",
            "devices": [{"selector": "host", "model": "host-dram", "capacity_bytes": $budget}]}],
 "waves": [{"name": "fault", "nodes": ["fault-node"], "period_s": 3600, "jitter_s": 60, "complete": true}],
 "reserves": {"host-dram": 0}}
JSON
}
stop_agent() {
  kill -TERM "$agent_pid"
  wait "$agent_pid" || true
  agent_pid=
}

cat >"$dir/profile.json" <<JSON
{"name": "fault", "chunk_labels": 1024, "rounds": 8, "labels_per_round": 32, "round_deadline_us": 2000000,
 "fill_deadline_ms": 300000, "adversary": {"class": "commodity-cpu", "t_min_ps": 40000, "safety_factor": 2},
 "confidence": 0.99, "calibrated": false}
JSON
wipe_args=(wipe --node=fault-node --inventory="$dir/inventory.json" --profile="$dir/profile.json"
  --authority_key="$dir/inspect-authority.key" --challenger_key="$dir/inspect-challenger.key"
  --ledger="$dir/ledger.db" --threads=1 --json)
# wipe NAME: one session in the foreground; its exit status is returned.
wipe() { "$challenger" "${wipe_args[@]}" >"$dir/$1.json" 2>"$dir/$1.log"; }
# wipe_in_background NAME: the same, with wipe_pid the challenger's own pid (no subshell).
wipe_in_background() {
  "$challenger" "${wipe_args[@]}" >"$dir/$1.json" 2>"$dir/$1.log" &
  wipe_pid=$!
}
verify_ledger() {
  "$challenger" ledger verify --ledger="$dir/ledger.db" --challenger_key="$dir/inspect-challenger.pub" \
    >"$dir/verify.out" 2>&1 || fail "ledger verify failed after $1: $(cat "$dir/verify.out")"
}
expect_pass() {
  grep -q '"pass": *true' "$dir/$1.json" || fail "$1: verdict is not a pass"
}

# threat-model: T-AGENT-KILLED
echo "== 1. agent killed mid-fill"
start_agent agent1
wipe_in_background killed-agent
wait_for 20 log_has agent1.log "order accepted" || fail "the agent never accepted the order"
log_has agent1.log "filled and reported" && fail "the fill ended before the kill: raise the budget"
kill -KILL "$agent_pid"
wait "$agent_pid" 2>/dev/null || true
agent_pid=
rc=0
wait "$wipe_pid" || rc=$?
wipe_pid=
[[ $rc -eq 1 ]] || fail "wipe after the agent was killed exited $rc, expected 1 (a failed verdict)"
grep -q '"pass": *false' "$dir/killed-agent.json" || fail "no failed verdict"
grep -q '"reason": *"disconnected"' "$dir/killed-agent.json" || fail "the verdict's reason is not disconnected"
verify_ledger "the agent was killed"
start_agent agent2
[[ $(locked_kib "$agent_pid") -eq 0 ]] || fail "the restarted agent holds $(locked_kib "$agent_pid") KiB already"
wipe restarted-agent || fail "the session with the restarted agent failed"
expect_pass restarted-agent
verify_ledger "the session with the restarted agent"
grep -q "released" "$dir/agent2.log" || fail "the restarted agent did not release its session"

# threat-model: T-CHALLENGER-KILLED
echo "== 2. challenger killed mid-fill"
wipe_in_background killed-challenger
orders_accepted() { [[ $(grep -c "order accepted (node fault-node" "$dir/$1") -ge $2 ]]; }
wait_for 20 orders_accepted agent2.log 2 || fail "the agent never accepted the second order"
wait_for 10 test "$(locked_kib "$agent_pid")" -ge $((budget / 1024)) ||
  fail "the agent did not lock the session's memory: $(locked_kib "$agent_pid") KiB"
kill -KILL "$wipe_pid"
wait "$wipe_pid" 2>/dev/null || true
wipe_pid=
wait_for 20 log_has agent2.log "ended: UNAVAILABLE: the challenger disconnected; memory freed" ||
  fail "the agent did not end the session of the killed challenger"
wait_for 10 test "$(locked_kib "$agent_pid")" -eq 0 ||
  fail "the agent still holds $(locked_kib "$agent_pid") KiB after the challenger was killed"
verify_ledger "the challenger was killed"
wipe after-killed-challenger || fail "the session after the challenger was killed failed"
expect_pass after-killed-challenger
verify_ledger "the challenger was restarted"
stop_agent

# threat-model: T-CHALLENGER-KILLED
echo "== 3. challenger frozen mid-session: the session timeout frees the memory"
budget=$((4 << 20))  # a short fill, so that the next session fits well within the timeout
start_agent agent3 --session_timeout_us=6000000
wipe_in_background frozen-challenger
wait_for 20 log_has agent3.log "order accepted" || fail "the agent never accepted the order"
kill -STOP "$wipe_pid"
# The connection stays open; the agent fills (the report waits in the socket), then its timeout,
# counted from the order's arrival, ends the session. The locked memory is sampled meanwhile.
peak=0
for ((i = 0; i < 300; i++)); do
  locked=$(locked_kib "$agent_pid")
  ((locked > peak)) && peak=$locked
  log_has agent3.log "memory freed" && break
  sleep 0.05
done
log_has agent3.log "ended: DEADLINE_EXCEEDED: timed out: .*(timeout 6000000 us); memory freed" ||
  fail "the session did not time out"
[[ $peak -ge $((budget / 1024)) ]] || fail "the agent locked only $peak KiB at most during the session"
[[ $(locked_kib "$agent_pid") -eq 0 ]] || fail "the agent still holds $(locked_kib "$agent_pid") KiB after the timeout"
echo "agent locked memory: $peak KiB during the session, 0 after the timeout"
# Thawed, the challenger learns that the session is over and records a failed verdict saying why.
kill -CONT "$wipe_pid"
rc=0
wait "$wipe_pid" || rc=$?
wipe_pid=
[[ $rc -eq 1 ]] || fail "the thawed challenger exited $rc, expected 1 (a failed verdict)"
grep -q '"pass": *false' "$dir/frozen-challenger.json" || fail "no failed verdict from the thawed challenger"
grep -q '"text": *".*timed out: not finished' "$dir/frozen-challenger.json" ||
  fail "the thawed challenger's verdict does not say that the agent timed the session out"
verify_ledger "the frozen challenger was thawed"
wipe after-timeout || fail "the session after the timeout failed"
expect_pass after-timeout
stop_agent

# threat-model: T-SLOW-LORIS
# threat-model: T-UNPINNED-CLIENT
echo "== 4. slow-loris, an oversized frame and unpinned TLS clients beside an honest session"
start_agent agent4 --handshake_timeout_s=5
host=${address%:*}
port=${address##*:}
exec 3<>"/dev/tcp/$host/$port"  # silent: never starts a handshake
exec 4<>"/dev/tcp/$host/$port"  # trickling: a TLS record header announcing 16 KiB, then a byte per 100 ms
exec 5<>"/dev/tcp/$host/$port"  # a Cap'n Proto frame header announcing one segment of 2^27 words (1 GiB)
printf '\x16\x03\x01\x40\x00' >&4
(while printf '\x00' >&4 2>/dev/null; do sleep 0.1; done) &
trickle_pid=$!
printf '\x00\x00\x00\x00\x00\x00\x00\x08' >&5
started=$SECONDS
wipe_in_background beside-abusers
# Refusals are logged at most once a second: one kind at a time, a second apart.
wait_for 10 log_has agent4.log "closing an unauthenticated connection from .*: TLS handshake failed" ||
  fail "the oversized frame's connection is not logged"
sleep 1.1
# A TLS 1.3 client without a certificate, then one with a certificate of a key the agent does not pin.
timeout 10 openssl s_client -connect "$address" -tls1_3 -quiet </dev/null >"$dir/certless.out" 2>&1 || true
wait_for 10 log_has agent4.log "TLS handshake failed .*peer did not return a certificate" ||
  fail "the client without a certificate was not refused"
sleep 1.1
openssl genpkey -algorithm ed25519 -out "$dir/stranger.pem" 2>/dev/null
openssl req -x509 -new -key "$dir/stranger.pem" -subj /CN=stranger -days 1 -out "$dir/stranger-cert.pem" 2>/dev/null
timeout 10 openssl s_client -connect "$address" -tls1_3 -cert "$dir/stranger-cert.pem" -key "$dir/stranger.pem" -quiet \
  </dev/null >"$dir/stranger.out" 2>&1 || true
wait_for 10 log_has agent4.log "TLS handshake failed .*certificate verify failed" ||
  fail "the client with an unpinned certificate was not refused"
rc=0
wait "$wipe_pid" || rc=$?
wipe_pid=
[[ $rc -eq 0 ]] || fail "the honest session beside the abusers failed (exit $rc)"
expect_pass beside-abusers
# Every abusive connection was closed by the agent: reads see EOF (cat returns), the trickler's
# writes fail.
for fd in 3 5; do
  timeout 10 cat <&$fd >/dev/null || fail "connection on fd $fd was not closed by the agent"
done
wait_for 10 bash -c "! kill -0 $trickle_pid 2>/dev/null" || fail "the trickling connection was not closed"
exec 3>&- 4>&- 5>&-
wait_for 10 log_has agent4.log "TLS handshake failed .*no TLS handshake within the handshake timeout" ||
  fail "handshake timeouts not logged"
# Not one of them got a frame read: nothing was refused on receipt.
log_has agent4.log "message refused on receipt" && fail "an unauthenticated peer's bytes were read as a frame"
echo "honest session and abusers done in $((SECONDS - started)) s"

# threat-model: T-IMPOSTOR-AGENT
echo "== 5. the challenger pins another node's certificate than the agent's"
"$prover" keygen --out="$dir/other-node" >/dev/null
sed -e 's/"node.pub"/"other-node.pub"/' -e 's/"node.crt"/"other-node.crt"/' "$dir/inventory.json" >"$dir/inventory-other.json"
accepted_before=$(grep -c "order accepted" "$dir/agent4.log" || true)
rc=0
"$challenger" wipe --node=fault-node --inventory="$dir/inventory-other.json" --profile="$dir/profile.json" \
  --authority_key="$dir/inspect-authority.key" --challenger_key="$dir/inspect-challenger.key" \
  --ledger="$dir/ledger.db" --threads=1 --json >"$dir/wrong-pin.json" 2>"$dir/wrong-pin.log" || rc=$?
[[ $rc -eq 1 ]] || fail "wipe against an agent that is not the pinned node exited $rc, expected 1"
grep -q '"reason": *"disconnected"' "$dir/wrong-pin.json" || fail "the verdict's reason is not disconnected"
grep -q 'TLS handshake failed (the peer must hold the key of the pinned certificate wipeproof-' "$dir/wrong-pin.json" ||
  fail "the verdict does not name the TLS handshake"
[[ $(grep -c "order accepted" "$dir/agent4.log" || true) -eq $accepted_before ]] ||
  fail "the agent accepted an order from a challenger that refused it"
stop_agent
verify_ledger "all faults"
cat "$dir/verify.out"
# Sessions on record: killed agent 4 entries (order, round log, verdict, receipt), killed challenger
# 1 (the order: nothing else was written), frozen challenger 4 to 6 (with the device's fill notice
# and the fill report when they arrived before the freeze or in the socket), four passes 7 each
# (order, fill notice, report, round log, verdict, transcript, receipt), the wrongly pinned node 4.
grep -q ": OK: 4[1-3] entries;" "$dir/verify.out" || fail "the ledger does not hold the 41 to 43 entries expected"
echo "fault process tests passed"
