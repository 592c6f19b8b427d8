#!/usr/bin/env bash
# threat-model: T-SLURM-MUNGE-KEY
# The challenger drains and resumes Slurm nodes without the cluster's munge key (root-equivalent on
# every node) and without being SlurmUser: a Slurm JWT for an unprivileged user (`nobody` here) whose
# accounting AdminLevel is Administrator (Slurm 22.05 lets no lower level update nodes) and who may
# submit no job, and a client slurm.conf that names no munge socket of the cluster (docs/deploy.md
# section 5). Starts a one-node cluster with MariaDB, slurmdbd and auth/jwt (all state in a
# temporary folder, free ports), then:
#   1. the client configuration alone (no token) cannot reach slurmctld;
#   2. a wave whose Slurm lifecycle names the token file and the client configuration drains the node
#      (the reason carries the token's user), requeues the job still running past the grace period,
#      wipes the node (the real agent, 64 MiB of host memory on loopback), and resumes it;
#   3. the token's user cannot run a job, as itself or as root, nor mint a token.
# Needs root and the Debian packages of slurm_drain_test.sh plus slurmdbd, slurm-wlm-mysql-plugin,
# slurm-wlm-jwt-plugin, mariadb-server (scripts/setup-deps.sh); skips (exit 77) naming what is missing.
# Usage: slurm_token_test.sh PROVER_BIN CHALLENGER_BIN
set -euo pipefail
prover=${1:?usage: slurm_token_test.sh PROVER_BIN CHALLENGER_BIN}
challenger=${2:?usage: slurm_token_test.sh PROVER_BIN CHALLENGER_BIN}
for tool in munged mungekey slurmctld slurmd slurmdbd scontrol squeue sbatch sacctmgr mariadb-install-db mariadbd \
            mariadb; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed (scripts/setup-deps.sh installs it)"; exit 77; }
done
for plugin in auth_jwt accounting_storage_mysql; do
  compgen -G "/usr/lib/*/slurm-wlm/$plugin.so" >/dev/null ||
    { echo "SKIP: Slurm's $plugin plugin not installed (scripts/setup-deps.sh installs it)"; exit 77; }
done
[[ $(id -u) -eq 0 ]] || { echo "SKIP: a Slurm cluster of this machine needs root"; exit 77; }
id mysql >/dev/null 2>&1 || { echo "SKIP: no mysql user (mariadb-server makes it)"; exit 77; }

w=$(mktemp -d /tmp/wp-slurm-token.XXXXXX)
chmod 755 "$w"  # MariaDB runs as mysql and must reach its data folder
pids=()
cleanup() {
  local rc=$?
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  [[ -f "$w/munge/munged.pid" ]] && kill -TERM "$(cat "$w/munge/munged.pid")" 2>/dev/null
  if [[ $rc -ne 0 ]]; then
    for log in slurmctld.log slurmdbd.log serve.log agent.log; do
      [[ -f "$w/$log" ]] && { echo "---- $log (end)"; tail -n 25 "$w/$log" || true; }
    done
  fi
  [[ -n ${WP_SLURM_KEEP:-} ]] && echo "kept $w" || rm -rf "$w"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
t0=$SECONDS
step() { echo "[$((SECONDS - t0)) s] $*"; }
challenger_user=nobody

# ---- the controller: munge, MariaDB, slurmdbd (munge only: a token cannot reach accounting),
# slurmctld with auth/jwt (tokens made on the controller only), slurmd
mkdir -p "$w/state" "$w/spool" "$w/munge" "$w/db"
chmod 711 "$w/munge"
chown mysql:mysql "$w/db"
read -r ctld_port slurmd_port dbd_port db_port < <(python3 -c 'import socket
s = [socket.socket() for _ in range(4)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
mungekey --create --keyfile="$w/munge/munge.key"
munged --socket="$w/munge/munge.sock" --key-file="$w/munge/munge.key" --pid-file="$w/munge/munged.pid" \
  --log-file="$w/munge/munged.log" --seed-file="$w/munge/munge.seed" --force
mariadb-install-db --user=mysql --datadir="$w/db" --auth-root-authentication-method=socket --skip-test-db \
  >"$w/db-install.log" 2>&1 || fail "mariadb-install-db: $(tail -5 "$w/db-install.log")"
mariadbd --user=mysql --datadir="$w/db" --bind-address=127.0.0.1 --port="$db_port" --socket="$w/db/mysqld.sock" \
  --pid-file="$w/db/mysqld.pid" --log-error="$w/db/mysqld.err" --innodb-buffer-pool-size=64M >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 1 200); do mariadb -S "$w/db/mysqld.sock" -e 'select 1' >/dev/null 2>&1 && break; sleep 0.1; done
mariadb -S "$w/db/mysqld.sock" -e "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'dbpw';
  GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" || fail "MariaDB did not come up: $(tail -5 "$w/db/mysqld.err")"
dd if=/dev/urandom of="$w/jwt_hs256.key" bs=32 count=1 status=none
chmod 600 "$w/jwt_hs256.key"
source "$(dirname "$0")/slurm_conf.sh"
slurmdbd_conf "$dbd_port" "$db_port" root "$w/slurmdbd.log" "$w/slurmdbd.pid" dbpw "socket=$w/munge/munge.sock" \
  >"$w/slurmdbd.conf"
chmod 600 "$w/slurmdbd.conf"
{
  slurm_one_node_conf "$host" "$ctld_port" "$slurmd_port" root "$w/state" "$w/spool" "$w" "$w" \
    "socket=$w/munge/munge.sock" | sed '/^AccountingStorageType=/d'
  slurm_accounting_jwt_conf "$dbd_port" "$w/jwt_hs256.key" "$w/munge/munge.sock"
} >"$w/slurm.conf"
export SLURM_CONF=$w/slurm.conf  # the controller's own tools (slurmdbd reads slurmdbd.conf beside it)
slurmdbd -D >"$w/slurmdbd.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 120); do timeout 5 sacctmgr -n list cluster >/dev/null 2>&1 && break; sleep 0.5; done
slurm_least_privilege_accounts "$challenger_user" || fail "slurmdbd did not take the accounts: $(tail -5 "$w/slurmdbd.log")"
node_field() { slurm_node_field "$host" "$1"; }
node_reason() { scontrol show node "$host" 2>/dev/null | sed -n 's/^ *Reason=\(.*\)$/\1/p'; }
slurm_start_node "$host" "$w" || fail "the Slurm node did not come up: $(scontrol show node "$host" 2>&1)"
step "one-node cluster with slurmdbd and auth/jwt up; $challenger_user is Administrator and may submit no job"

# ---- the challenger's side: a client configuration naming no munge socket of the cluster, a token
mkdir -m 700 "$w/challenger"
cat >"$w/challenger/slurm-client.conf" <<CONF
ClusterName=wipeproof-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
AuthType=auth/munge
AuthInfo=socket=/nonexistent/munge.sock
AuthAltTypes=auth/jwt
CONF
scontrol token username="$challenger_user" lifespan=900 >"$w/challenger/slurm.jwt"  # on the controller, by root
chmod 600 "$w/challenger/slurm.jwt"
token=$(sed 's/^SLURM_JWT=//' "$w/challenger/slurm.jwt")
as_challenger() { env -u SLURM_CONF SLURM_CONF="$w/challenger/slurm-client.conf" "$@"; }
# 1. Without the token the client configuration reaches nothing.
if as_challenger scontrol -o show node "$host" >/dev/null 2>&1; then
  fail "the client configuration reached slurmctld without a token: it must not use the cluster's munge"
fi
step "1. the client configuration alone (no token) is refused"

# ---- the agent and the wave
"$challenger" keygen --out="$w/inspect" >/dev/null
"$prover" keygen --out="$w/node" >/dev/null
"$prover" serve --listen=127.0.0.1:0 --node_name="$host" --authority_key="$w/inspect-authority.pub" \
  --challenger_key="$w/inspect-challenger.pub" --challenger_cert="$w/inspect-challenger.crt" \
  --node_key="$w/node.key" --host_budget_bytes=67108864 --devices=host --threads=2 >"$w/agent.out" 2>"$w/agent.log" &
pids+=($!)
for _ in $(seq 1 100); do grep -q '^listening on ' "$w/agent.out" 2>/dev/null && break; sleep 0.1; done
address=$(sed -n 's/^listening on //p' "$w/agent.out")
[[ -n "$address" ]] || fail "the agent did not start: $(cat "$w/agent.log")"
cat >"$w/inventory.json" <<JSON
{"nodes": [{"name": "$host", "address": "$address", "public_key": "$(sed -n 's/^public-key: //p' "$w/node.pub")",
            "certificate_file": "node.crt", "scheduler_name": "$host",
            "devices": [{"selector": "host", "model": "host-dram", "capacity_bytes": 67108864}]}],
 "waves": [{"name": "slurm-rack", "nodes": ["$host"], "period_s": 3600, "jitter_s": 60, "complete": true,
            "lifecycle": {"kind": "slurm", "grace_s": 3, "poll_s": 0.5, "resume": "on-pass",
                          "slurm_conf": "challenger/slurm-client.conf", "token_file": "challenger/slurm.jwt"}}],
 "reserves": {"host-dram": 0}}
JSON
cat >"$w/profile.json" <<JSON
{"name": "slurm-token-test", "chunk_labels": 1024, "rounds": 8, "labels_per_round": 32, "round_deadline_us": 2000000,
 "fill_deadline_ms": 120000, "adversary": {"class": "commodity-cpu", "t_min_ps": 40000, "safety_factor": 2},
 "confidence": 0.99, "calibrated": false}
JSON
job=$(sbatch --parsable -N1 -t 5 -o /dev/null --chdir=/tmp --wrap="sleep 240")
for _ in $(seq 1 240); do [[ "$(squeue -h -j "$job" -o %T)" == RUNNING ]] && break; sleep 0.25; done
[[ "$(squeue -h -j "$job" -o %T)" == RUNNING ]] || fail "job $job is not running: $(squeue -h -j "$job" -o '%T %r')"
step "job $job (sleep 240) running; serve --once starts the wave (the challenger's Slurm identity: the token)"
# The challenger process gets no SLURM_CONF of the controller: only what its lifecycle names.
env -u SLURM_CONF "$challenger" serve --once --inventory="$w/inventory.json" --profile="$w/profile.json" \
  --authority_key="$w/inspect-authority.key" --challenger_key="$w/inspect-challenger.key" --ledger="$w/ledger.db" \
  --threads=1 >"$w/serve.out" 2>"$w/serve.log" &
serve_pid=$!
reason=""
for _ in $(seq 1 80); do
  if [[ "$(node_field State)" == *DRAIN* ]]; then reason=$(node_reason); break; fi
  sleep 0.25
done
[[ "$reason" == "wipeproof wave slurm-rack: wipe in progress [$challenger_user@"* ]] ||
  fail "the drain's reason should name the token's user $challenger_user: '$reason' (state $(node_field State))"
step "2. drained by $challenger_user through the token: $reason"
wait "$serve_pid" || fail "serve --once exited $? (the wipe should pass): $(tail -5 "$w/serve.log")"
grep -q "node $host passed and was resumed" "$w/serve.log" || fail "serve did not resume the node: $(tail -5 "$w/serve.log")"
restarts=$(scontrol show job "$job" 2>/dev/null | tr ' ' '\n' | sed -n 's/^Restarts=//p')
[[ "${restarts:-0}" -ge 1 ]] || fail "job $job was not requeued past the grace period (Restarts=${restarts:-none})"
state=$(node_field State)
[[ "$state" == IDLE* || "$state" == MIXED* || "$state" == ALLOCATED* ]] && [[ "$state" != *DRAIN* ]] ||
  fail "after a pass the node is $state (reason: $(node_reason))"
step "2. job $job requeued (Restarts=$restarts), node wiped, passed and resumed: State=$state"

# 3. What the token's user cannot do.
export SLURM_JWT=$token
as_challenger sbatch -o /dev/null --chdir=/tmp --wrap=true >/dev/null 2>&1 && fail "the token's user submitted a job"
as_challenger sbatch --uid=0 -o /dev/null --chdir=/tmp --wrap=true >/dev/null 2>&1 &&
  fail "the token's user submitted a job as root"
as_challenger scontrol token username=root lifespan=60 >/dev/null 2>&1 && fail "the token's user minted a root token"
as_challenger scontrol token lifespan=60 >/dev/null 2>&1 && fail "the token's user minted a fresh token"
unset SLURM_JWT
step "3. refused: a job as $challenger_user, a job as root, a token for root or for itself"
echo "PASS ($((SECONDS - t0)) s)"
