#!/usr/bin/env bash
# A wave drains a real Slurm node, wipes it and resumes it only on a pass. Starts a one-node Slurm
# cluster on this machine (munged, slurmctld, slurmd from Debian, all state in a temporary folder,
# free ports), then:
#   1. a batch job runs on the node; `wipeproof-challenger serve --once` runs a wave whose lifecycle
#      is Slurm: the node is drained (the reason visible in scontrol), the drain waits for the job,
#      the agent (the real wipeproof-prover on loopback, 64 MiB of host memory) is wiped, the node
#      passes and is resumed; a second job then runs on it;
#   2. a failing wipe (an agent holding half the declared memory: shortCapacity) leaves the node
#      drained with the verdict's reason in `scontrol show node`, and no job is scheduled on it;
#   3. a node its operator drained is only read by the next wave: its reason stays, no order.
# Needs root and the Debian packages slurmctld, slurmd, slurm-client, munge (scripts/setup-deps.sh);
# skips (exit 77) naming what is missing when they are absent.
# Usage: slurm_drain_test.sh PROVER_BIN CHALLENGER_BIN
set -euo pipefail
prover=${1:?usage: slurm_drain_test.sh PROVER_BIN CHALLENGER_BIN}
challenger=${2:?usage: slurm_drain_test.sh PROVER_BIN CHALLENGER_BIN}
for tool in munged mungekey slurmctld slurmd scontrol squeue sbatch srun; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed (scripts/setup-deps.sh installs it)"; exit 77; }
done
[[ $(id -u) -eq 0 ]] || { echo "SKIP: a Slurm cluster of this machine needs root"; exit 77; }

w=$(mktemp -d /tmp/wp-slurm.XXXXXX)
pids=()
cleanup() {
  local rc=$?
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  [[ -f "$w/munge/munged.pid" ]] && kill -TERM "$(cat "$w/munge/munged.pid")" 2>/dev/null
  if [[ $rc -ne 0 ]]; then
    for log in slurmctld.log slurmd.log serve1.log serve2.log agent1.log agent2.log; do
      [[ -f "$w/$log" ]] && { echo "---- $log (end)"; tail -n 25 "$w/$log"; }
    done
  fi
  [[ -n ${WP_SLURM_KEEP:-} ]] && echo "kept $w" || rm -rf "$w"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
t0=$SECONDS
step() { echo "[$((SECONDS - t0)) s] $*"; }

# ---- munge and a one-node cluster
mkdir -p "$w/state" "$w/spool" "$w/munge"
chmod 700 "$w/munge"
mungekey --create --keyfile="$w/munge/munge.key"
munged --socket="$w/munge/munge.sock" --key-file="$w/munge/munge.key" --pid-file="$w/munge/munged.pid" \
  --log-file="$w/munge/munged.log" --seed-file="$w/munge/munge.seed" --force
read -r ctld_port slurmd_port < <(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
source "$(dirname "$0")/slurm_conf.sh"
slurm_one_node_conf "$host" "$ctld_port" "$slurmd_port" root "$w/state" "$w/spool" "$w" "$w" \
  "socket=$w/munge/munge.sock" >"$w/slurm.conf"
export SLURM_CONF=$w/slurm.conf
node_field() { slurm_node_field "$host" "$1"; }
# The reason runs to the end of its line (it has spaces).
node_reason() { scontrol show node "$host" 2>/dev/null | sed -n 's/^ *Reason=\(.*\) \[.*$/\1/p'; }
slurm_start_node "$host" "$w" || fail "the Slurm node did not come up: $(scontrol show node "$host" 2>&1)"
step "one-node Slurm cluster up (node $host)"
[[ "$(timeout 60 srun -N1 -t 1 hostname)" == "$host" ]] || fail "a first job did not run"
step "job 1 (srun hostname) ran on $host"

# ---- keys, two agents (an honest one, one holding half of what the inventory declares)
"$challenger" keygen --out="$w/inspect" >/dev/null
# Starts an agent in this shell (so cleanup stops it) and sets $address to where it listens.
start_agent() {  # NAME BUDGET_BYTES LOG
  "$prover" keygen --out="$w/$1" >/dev/null
  "$prover" serve --listen=127.0.0.1:0 --node_name="$host" --authority_key="$w/inspect-authority.pub" \
    --challenger_key="$w/inspect-challenger.pub" --challenger_cert="$w/inspect-challenger.crt" \
    --node_key="$w/$1.key" --host_budget_bytes="$2" --devices=host --threads=2 >"$w/$1.out" 2>"$w/$3" &
  pids+=($!)
  for _ in $(seq 1 100); do grep -q '^listening on ' "$w/$1.out" 2>/dev/null && break; sleep 0.1; done
  address=$(sed -n 's/^listening on //p' "$w/$1.out")
}
write_inventory() {  # FILE ADDRESS NODE_KEY_NAME
  cat >"$1" <<JSON
{"nodes": [{"name": "$host", "address": "$2", "public_key_file": "$3.pub", "certificate_file": "$3.crt",
            "scheduler_name": "$host",
            "devices": [{"selector": "host", "model": "host-dram", "capacity_bytes": 67108864}]}],
 "waves": [{"name": "slurm-rack", "nodes": ["$host"], "period_s": 3600, "jitter_s": 60, "complete": true,
            "lifecycle": {"kind": "slurm", "grace_s": 60, "poll_s": 0.5, "resume": "on-pass"}}],
 "reserves": {"host-dram": 0}}
JSON
}
cat >"$w/profile.json" <<JSON
{"name": "slurm-test", "chunk_labels": 1024, "rounds": 8, "labels_per_round": 32, "round_deadline_us": 2000000,
 "fill_deadline_ms": 120000, "adversary": {"class": "commodity-cpu", "t_min_ps": 40000, "safety_factor": 2},
 "confidence": 0.99, "calibrated": false}
JSON
serve() {  # INVENTORY LOG
  "$challenger" serve --once --inventory="$1" --profile="$w/profile.json" --authority_key="$w/inspect-authority.key" \
    --challenger_key="$w/inspect-challenger.key" --ledger="$w/ledger.db" --threads=1 >"$w/$2.out" 2>"$w/$2"
}

start_agent node 67108864 agent1.log
[[ -n "$address" ]] || fail "the agent did not start: $(cat "$w/agent1.log")"
write_inventory "$w/inventory.json" "$address" node

# ---- 1: a running job, the wave drains the node (waiting for the job), wipes it, resumes it
job=$(sbatch --parsable -N1 -t 2 -o /dev/null --wrap="sleep 6")
# Up to 60 s: a node that registered late leaves the job pending until slurmctld's next scheduling
# pass (a loaded machine once took over 10 s).
for _ in $(seq 1 240); do [[ "$(squeue -h -j "$job" -o %T)" == RUNNING ]] && break; sleep 0.25; done
[[ "$(squeue -h -j "$job" -o %T)" == RUNNING ]] || fail "job $job is not running: $(squeue -h -j "$job" -o '%T %r')"
step "job 2 ($job, sleep 6) running; serve --once starts the wave"
serve "$w/inventory.json" serve1.log &
serve_pid=$!
drained_while_running=no
for _ in $(seq 1 40); do
  if [[ "$(node_field State)" == *DRAIN* ]]; then
    [[ -n "$(squeue -h -j "$job" -t RUNNING -o %i 2>/dev/null)" ]] && drained_while_running=yes
    reason=$(node_reason)
    break
  fi
  sleep 0.25
done
[[ "$drained_while_running" == yes ]] || fail "the node was not draining while job $job ran (state $(node_field State))"
[[ "$reason" == "wipeproof wave slurm-rack: wipe in progress" ]] || fail "drain reason: '$reason'"
step "node draining ($(node_field State)) while job $job runs; reason: $reason"
# No order reaches the agent while the job runs: the drain waits for it to leave.
while [[ -n "$(squeue -h -j "$job" -t RUNNING,COMPLETING -o %i 2>/dev/null)" ]]; do
  grep -q "order accepted" "$w/agent1.log" && fail "the agent got its order while job $job still ran"
  sleep 0.25
done
step "job $job has left the node"
wait "$serve_pid" || fail "serve --once exited $? (the wipe should pass): $(tail -5 "$w/serve1.log")"
grep -q "draining node $host" "$w/serve1.log" || fail "serve did not log the drain"
grep -q "node $host passed and was resumed" "$w/serve1.log" || fail "serve did not log the resume: $(tail -5 "$w/serve1.log")"
state=$(node_field State)
# IDLE, without DRAIN (a transient NOT_RESPONDING from a missed ping on a busy machine is no matter).
[[ "$state" == IDLE* && "$state" != *DRAIN* ]] || fail "after a pass the node is $state, not IDLE (reason: $(node_reason))"
[[ -z "$(squeue -h -j "$job" -o %i 2>/dev/null)" ]] || fail "job $job still queued"
step "wave passed; node resumed: State=$state"
[[ "$(timeout 60 srun -N1 -t 1 hostname)" == "$host" ]] || fail "a job after the resume did not run"
step "job 3 (srun hostname) ran on the resumed node"

# ---- 2: a failing wipe leaves the node drained, with the verdict's reason
start_agent cheat 33554432 agent2.log
[[ -n "$address" ]] || fail "the second agent did not start: $(cat "$w/agent2.log")"
write_inventory "$w/inventory2.json" "$address" cheat
if serve "$w/inventory2.json" serve2.log; then fail "serve --once passed a node holding half its memory"; fi
state=$(node_field State)
reason=$(node_reason)
[[ "$state" == *DRAIN* ]] || fail "after a failed wipe the node is $state, not drained"
[[ "$reason" == "wipeproof wave slurm-rack: wipe FAILED: "* ]] || fail "reason after the failed wipe: '$reason'"
grep -q "stays drained" "$w/serve2.log" || fail "serve did not log that the node stays drained"
step "failed wipe: State=$state Reason=$reason"
held=$(sbatch --parsable -N1 -t 1 -o /dev/null --wrap=true)
sleep 2
[[ "$(squeue -h -j "$held" -o %T)" == PENDING ]] || fail "job $held was not held back from the drained node"
scancel "$held"
step "a job submitted now stays PENDING"

# ---- 3: a node drained by its operator is only read: not drained over, not wiped, not resumed
scontrol update nodename="$host" state=drain reason="operator: fan check"
orders=$(grep -c "order accepted" "$w/agent2.log" || true)
serve "$w/inventory2.json" serve3.log || true
reason=$(node_reason)
[[ "$reason" == "operator: fan check" ]] || fail "the operator's reason was overwritten: '$reason'"
[[ "$(node_field State)" == *DRAIN* ]] || fail "the operator's drained node is $(node_field State)"
grep -q "not wiped: out of service already (slurm node $host: state IDLE+DRAIN" "$w/serve3.log" ||
  fail "serve did not say the node was out of service already: $(tail -5 "$w/serve3.log")"
[[ "$(grep -c "order accepted" "$w/agent2.log" || true)" == "$orders" ]] || fail "an order reached the operator's node"
step "operator's drain left as it is: Reason=$reason, no order"
echo "PASS ($((SECONDS - t0)) s)"
