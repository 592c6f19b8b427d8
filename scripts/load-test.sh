#!/usr/bin/env bash
# Load test: one challenger (`wipeproof-challenger serve`, the real wave scheduler) against N prover
# agents (`wipeproof-prover serve`) on loopback over TLS 1.3 (each side pinning the other's
# certificate), all N nodes in one scheduled wave, each agent wiping a tiny host-memory budget.
# Then checks the ledger: exactly one session per node, each with exactly
# one order, fill report, round log, verdict, transcript and receipt (nothing lost, nothing
# duplicated), every verdict a pass, `ledger verify` clean, every agent still running. Reports wall
# time, the challenger's CPU time and peak RSS, and agents passed/failed, as JSON and as a summary,
# and the challenger's own share of each round while the whole wave proves at once (serve
# --round_costs, challenger/session/round_costs.h): its added time per round (building the round
# before send, checking the answer after receipt) p50/p99/p99.9, the same in thread CPU time, and
# its CPU per round (the process's CPU over the run / rounds, and the session threads' own).
# Builds nothing: run it after building wipeproof-prover and wipeproof-challenger.
#
# Usage: scripts/load-test.sh [--agents=N] [--dir=D] [--json=FILE] [--bin-dir=B] [flags]
#   --agents=N        agents (nodes in the wave); default 200
#   --dir=D           keys, inventory, profile, ledger, logs; default a new folder under /tmp,
#                     removed on success (kept, and named, on failure); an existing D is emptied
#   --json=FILE       also write the result JSON to FILE (it always goes to stdout's last line)
#   --bin-dir=B       build folder holding prover/ and challenger/; default build
#   --prover=P --challenger=C   the binaries themselves (instead of --bin-dir)
#   --agent-kib=K     each agent's host budget and declared capacity, KiB; default 1024
#   --chunk-labels=M  m; default 256        --rounds=R  default 4     --labels-per-round=Q  default 8
#   --round-deadline-ms=T  default 30000 (loopback, N sessions on few cores: not a calibrated value)
#   --period-s=S      the wave's period: its first run starts U[0, S] s after serve starts; default 2
#   --timeout-s=T     give up (and fail) after T s of the challenger's run; default 1800
#   --agent-handshake-timeout-s=H  each agent's `serve --handshake_timeout_s`, in [1, 3600]; default 10.
#                     Every member's TLS handshake starts together: with ~500 agents on 2 cores some
#                     take longer than 10 s, and the agent closes them as it would a slow stranger
#   --challenger-threads=T  serve --threads (expected-label threads per session); default 1
#   --session-loops=L serve --session_loops: the wave's sessions as fibers on L event loops; default 0
#                     (a thread per member)
#   --challenger-nofile=F   run the challenger under `ulimit -n F`, soft and hard (serve refuses a wave
#                     that cannot fit: challenger/fleet/open_files.h)
#   --progress=MODE   while the challenger runs, a line on stderr with verdicts so far, rate and ETA:
#                     auto (default: only when stderr is a terminal, rewritten in place), always (a
#                     line every 10 s off a terminal), never
#   --keep            keep the folder also on success
#   --recheck=D       only run the ledger checks again on D, an earlier run's folder (with --agents)
# Exit: 0 all checks passed; 1 a check failed; 2 bad arguments or missing binaries.
# Every process it started is stopped on exit, also on failure and Ctrl-C.
set -euo pipefail

agents=200
dir=
json_out=
bin_dir=build
prover=
challenger=
agent_kib=1024
chunk_labels=256
rounds=4
labels_per_round=8
round_deadline_ms=30000
challenger_threads=1
session_loops=0
challenger_nofile=
period_s=2
timeout_s=1800
agent_handshake_timeout_s=10
keep=0
recheck=
progress=auto
usage() { sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d' | sed "s/^# \{0,1\}//"; }  # the header above
die_usage() { echo "load-test: $*" >&2; exit 2; }
for arg in "$@"; do
  case "$arg" in
    --agents=*) agents=${arg#*=} ;;
    --dir=*) dir=${arg#*=} ;;
    --json=*) json_out=${arg#*=} ;;
    --bin-dir=*) bin_dir=${arg#*=} ;;
    --prover=*) prover=${arg#*=} ;;
    --challenger=*) challenger=${arg#*=} ;;
    --agent-kib=*) agent_kib=${arg#*=} ;;
    --chunk-labels=*) chunk_labels=${arg#*=} ;;
    --rounds=*) rounds=${arg#*=} ;;
    --labels-per-round=*) labels_per_round=${arg#*=} ;;
    --round-deadline-ms=*) round_deadline_ms=${arg#*=} ;;
    --period-s=*) period_s=${arg#*=} ;;
    --timeout-s=*) timeout_s=${arg#*=} ;;
    --agent-handshake-timeout-s=*) agent_handshake_timeout_s=${arg#*=} ;;
    --challenger-threads=*) challenger_threads=${arg#*=} ;;
    --session-loops=*) session_loops=${arg#*=} ;;
    --challenger-nofile=*) challenger_nofile=${arg#*=} ;;
    --keep) keep=1 ;;
    --progress=*) progress=${arg#*=} ;;
    --recheck=*) recheck=${arg#*=} ;;
    -h|--help) usage; exit 0 ;;
    *) die_usage "unknown argument '$arg' (try --help)" ;;
  esac
done
# At most 9 digits and no leading zero: bash arithmetic neither overflows nor reads it as octal.
for v in agents agent_kib chunk_labels rounds labels_per_round round_deadline_ms period_s timeout_s \
  agent_handshake_timeout_s; do
  [[ "${!v}" =~ ^[1-9][0-9]{0,8}$ ]] || die_usage "--${v//_/-} must be a whole number in [1, 999999999] (got '${!v}')"
done
[[ "$challenger_threads" =~ ^(0|[1-9][0-9]{0,3})$ ]] ||
  die_usage "--challenger-threads must be a whole number in [0, 9999] (0 = all cores; got '$challenger_threads')"
[[ "$session_loops" =~ ^(0|[1-9][0-9]{0,3})$ && "$session_loops" -le 4096 ]] ||
  die_usage "--session-loops must be a whole number in [0, 4096] (0 = a thread per member; got '$session_loops')"
[[ -z "$challenger_nofile" || "$challenger_nofile" =~ ^[1-9][0-9]{0,8}$ ]] ||
  die_usage "--challenger-nofile must be a whole number in [1, 999999999] (got '$challenger_nofile')"
[[ "$agents" -le 5000 ]] || die_usage "--agents at most 5000"
[[ "$agent_handshake_timeout_s" -le 3600 ]] ||
  die_usage "--agent-handshake-timeout-s must be in [1, 3600] (serve's limit; got '$agent_handshake_timeout_s')"
case "$progress" in
  auto) if [[ -t 2 ]]; then progress=always; else progress=never; fi ;;
  always | never) ;;
  *) die_usage "--progress: want auto (only on a terminal), always or never; got '$progress'" ;;
esac
prover=${prover:-$bin_dir/prover/wipeproof-prover}
challenger=${challenger:-$bin_dir/challenger/wipeproof-challenger}
[[ -x "$prover" ]] || die_usage "no prover binary at $prover (build wipeproof-prover, or pass --bin-dir/--prover)"
[[ -x "$challenger" ]] || die_usage "no challenger binary at $challenger (build wipeproof-challenger, or pass --bin-dir/--challenger)"
agent_bytes=$((agent_kib * 1024))

now_s() { date +%s.%N; }
# Arithmetic on decimals (awk: bc is not always installed); 3 decimals.
calc() { awk "BEGIN { x = $1; printf (x == int(x) ? \"%.0f\" : \"%.3f\"), x }"; }
log() { printf 'load-test: %s\n' "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
problems=()
problem() { problems+=("$*"); log "check failed: $*"; }

# The ledger of a run in $dir, through `ledger verify` and `ledger export`: $agents sessions, one per
# node load-0001.., each with exactly one entry of each kind, every verdict and receipt a pass and
# naming its order's node. Sets entries and sessions; leaves entries.tsv in $dir.
check_ledger() {
  if ! "$challenger" ledger verify --ledger="$dir/ledger.db" --challenger_key="$dir/inspect-challenger.pub" \
      >"$dir/verify.txt" 2>&1; then
    problem "ledger verify failed: $(tail -n 3 "$dir/verify.txt" | tr '\n' ' ')"
  fi
  "$challenger" ledger export --ledger="$dir/ledger.db" --challenger_key="$dir/inspect-challenger.pub" \
    --out="$dir/export.json" 2>"$dir/export.log" || problem "ledger export failed: $(tail -n 3 "$dir/export.log" | tr '\n' ' ')"

  # The export is nlohmann's dump(2): one key per line, string values never span lines. One TSV line
  # per entry: sequence, kind, session id, node, pass, fill_micros, max_elapsed_us, recorded_at_unix_us
  # ("-" when absent).
  awk '
    function flush() { if (seq != "") print seq "\t" kind "\t" sid "\t" node "\t" pass "\t" fill "\t" maxel "\t" at; seq = "" }
    function val(line) { sub(/^[^:]*: */, "", line); sub(/,$/, "", line); gsub(/"/, "", line); return line }
    /^  "entries": \[/ { in_entries = 1; next }
    in_entries && /^  \]/ { flush(); in_entries = 0; next }
    !in_entries { next }
    /^      "sequence": / { flush(); seq = val($0); kind = sid = node = pass = fill = maxel = at = "-"; next }
    /^      "recorded_at_unix_us": / { at = val($0); next }
    /^      "kind": / { kind = val($0); next }
    /^      "session_id": / { sid = val($0); next }
    /^        "node": / { node = val($0); next }
    /^        "pass": / { pass = val($0); next }
    /^        "fill_micros": / { fill = val($0); next }
    /^        "max_elapsed_us": / { maxel = val($0); next }
  ' "$dir/export.json" >"$dir/entries.tsv" 2>/dev/null || true
  touch "$dir/entries.tsv"
  entries=$(wc -l <"$dir/entries.tsv")
  head_count=$(sed -n 's/^    "entry_count": \([0-9]*\),\{0,1\}$/\1/p' "$dir/export.json" 2>/dev/null | head -n 1 || true)
  kinds=(order deviceFillNotice fillReport roundLog verdict transcript receipt)  # one device (host) per agent
  # and the wave run's signed wave verdict, filed under no session
  wave_verdicts=$(awk -F'\t' '$2 == "waveVerdict"' "$dir/entries.tsv" | wc -l)
  [[ $wave_verdicts -eq 1 ]] || problem "$wave_verdicts wave verdicts in the ledger, expected 1 (one wave run)"
  expected_entries=$((agents * ${#kinds[@]} + 1))
  [[ $entries -eq $expected_entries ]] || problem "ledger export lists $entries entries, expected $expected_entries (${#kinds[@]} per session and the wave verdict)"
  awk -F'\t' '$2 != "waveVerdict"' "$dir/entries.tsv" >"$dir/entries.tsv.sessions" && mv "$dir/entries.tsv.sessions" "$dir/entries.tsv"
  [[ "${head_count:-}" == "$entries" ]] || problem "export head says ${head_count:-?} entries, the export lists $entries"

  # Per session: exactly one entry of each kind. Per node: exactly one session (named by its order).
  awk -F'\t' -v kinds="${kinds[*]}" '
    BEGIN { n = split(kinds, k, " ") }
    { count[$3 SUBSEP $2]++; sessions[$3] = 1 }
    END {
      for (s in sessions) for (i = 1; i <= n; i++) {
        c = count[s SUBSEP k[i]] + 0
        if (c != 1) print "session " s ": " c " " k[i] " entries"
      }
    }' "$dir/entries.tsv" >"$dir/session-problems.txt"
  while IFS= read -r line; do problem "$line"; done < <(head -n 20 "$dir/session-problems.txt")
  sessions=$(cut -f3 "$dir/entries.tsv" | sort -u | wc -l)
  [[ $sessions -eq $agents ]] || problem "$sessions sessions in the ledger, expected $agents"
  awk -F'\t' '$2 == "order" { print $4 }' "$dir/entries.tsv" | sort >"$dir/order-nodes.txt"
  for i in $(seq 1 "$agents"); do printf 'load-%04d\n' "$i"; done >"$dir/nodes.txt"
  if ! cmp -s "$dir/order-nodes.txt" "$dir/nodes.txt"; then
    problem "orders per node differ from one each: $(diff "$dir/nodes.txt" "$dir/order-nodes.txt" | grep '^[<>]' | head -n 5 | tr '\n' ' ')"
  fi
  verdicts_pass=$(awk -F'\t' '$2 == "verdict" && $5 == "true"' "$dir/entries.tsv" | wc -l)
  verdicts_fail=$(awk -F'\t' '$2 == "verdict" && $5 != "true"' "$dir/entries.tsv" | wc -l)
  receipts_pass=$(awk -F'\t' '$2 == "receipt" && $5 == "true"' "$dir/entries.tsv" | wc -l)
  [[ $verdicts_pass -eq $agents && $verdicts_fail -eq 0 ]] || problem "verdicts: $verdicts_pass pass, $verdicts_fail fail; expected $agents pass"
  [[ $receipts_pass -eq $agents ]] || problem "receipts saying pass: $receipts_pass, expected $agents"
  # Verdict and receipt name the node of their session's order.
  awk -F'\t' '$2 == "order" { o[$3] = $4 } ($2 == "verdict" || $2 == "receipt") && o[$3] != $4 { print $2 " of session " $3 " names " $4 }' \
    "$dir/entries.tsv" | head -n 5 | while IFS= read -r line; do echo "$line"; done >"$dir/name-problems.txt"
  while IFS= read -r line; do problem "$line"; done <"$dir/name-problems.txt"
}

if [[ -n "$recheck" ]]; then
  # The ledger checks alone, on the folder of an earlier run (kept with --keep or after a failure).
  dir=$recheck
  [[ -f "$dir/ledger.db" && -f "$dir/inspect-challenger.pub" ]] || die_usage "--recheck=$dir holds no load-test ledger"
  check_ledger
  if [[ ${#problems[@]} -ne 0 ]]; then
    log "recheck: ${#problems[@]} check(s) failed"
    exit 1
  fi
  log "recheck: $entries entries, $sessions sessions: no entry lost or duplicated, ledger verifies"
  exit 0
fi

# Open files: the challenger needs about 64 + 5 N and raises its own soft limit as far as the hard
# limit allows (challenger/fleet/open_files.h); say so before anything starts when the hard limit is short.
needed_fds=$((64 + 5 * agents))
hard_fds=$(ulimit -Hn)
if [[ -z "$challenger_nofile" && $hard_fds != unlimited && $hard_fds -lt $needed_fds ]]; then
  die_usage "the hard open-file limit $hard_fds is below the ~$needed_fds the challenger needs for $agents agents (ulimit -Hn)"
fi

if [[ -z "$dir" ]]; then
  dir=$(mktemp -d /tmp/wp-load.XXXXXX)
else
  # Emptied only when it is empty already or an earlier run of this script made it.
  if [[ -e "$dir" && -n "$(ls -A "$dir" 2>/dev/null)" && ! -e "$dir/.wp-load-test" ]]; then
    die_usage "--dir=$dir exists and was not made by load-test.sh; pick a new or empty folder"
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
fi
dir=$(cd "$dir" && pwd)
touch "$dir/.wp-load-test"
mkdir -p "$dir/agents"

agent_pids=()
challenger_pid=
wrapper_pid=
ok=0
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ -n "$wrapper_pid" && -z "$challenger_pid" ]]; then
    challenger_pid=$(cat "$dir/challenger.pid" 2>/dev/null || true)
  fi
  if [[ -n "$challenger_pid" ]] && kill -0 "$challenger_pid" 2>/dev/null; then
    kill -TERM "$challenger_pid" 2>/dev/null || true
  fi
  local pid
  for pid in "${agent_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  # Up to 10 s for a clean exit, then SIGKILL whatever is left.
  for _ in $(seq 1 100); do
    local alive=0
    for pid in "${agent_pids[@]}" $challenger_pid; do kill -0 "$pid" 2>/dev/null && { alive=1; break; }; done
    [[ $alive -eq 0 ]] && break
    sleep 0.1
  done
  for pid in "${agent_pids[@]}" $challenger_pid; do kill -KILL "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ $ok -eq 1 && $keep -eq 0 ]]; then
    rm -rf "$dir"
  else
    echo "load-test: files kept in $dir" >&2
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "load-test: interrupted" >&2; exit 130' INT TERM


# --- keys and agents -----------------------------------------------------------------------------
log "$agents agents, ${agent_kib} KiB each, m=$chunk_labels, R=$rounds, q=$labels_per_round; folder $dir"
"$challenger" keygen --out="$dir/inspect" >/dev/null
t_start_agents=$(now_s)
# Node keys, four at a time (each keygen is a process start).
for i in $(seq 1 "$agents"); do printf '%s/agents/load-%04d\n' "$dir" "$i"; done |
  xargs -P 4 -I{} "$prover" keygen --out={} >/dev/null || fail "node keygen failed"
for i in $(seq 1 "$agents"); do
  printf -v name 'load-%04d' "$i"
  "$prover" serve --listen=127.0.0.1:0 --node_name="$name" --authority_key="$dir/inspect-authority.pub" \
    --challenger_key="$dir/inspect-challenger.pub" --challenger_cert="$dir/inspect-challenger.crt" \
    --node_key="$dir/agents/$name.key" \
    --host_budget_bytes="$agent_bytes" --devices=host --threads=1 --max_connections=4 \
    --handshake_timeout_s="$agent_handshake_timeout_s" \
    >"$dir/agents/$name.out" 2>"$dir/agents/$name.log" &
  agent_pids+=("$!")
done
addresses=()
for i in $(seq 1 "$agents"); do
  printf -v name 'load-%04d' "$i"
  address=
  for _ in $(seq 1 600); do
    # Builtins only: on a loaded machine every fork counts, N times over.
    line=
    [[ -s "$dir/agents/$name.out" ]] && read -r line <"$dir/agents/$name.out" || true
    [[ "$line" == "listening on "* ]] && { address=${line#listening on }; break; }
    kill -0 "${agent_pids[$((i - 1))]}" 2>/dev/null || { tail -n 20 "$dir/agents/$name.log" >&2; fail "agent $name exited at start"; }
    sleep 0.1
  done
  [[ -n "$address" ]] || fail "agent $name did not report its address within 60 s"
  addresses+=("$address")
done
agents_start_s=$(calc "$(now_s) - $t_start_agents")
log "agents listening after ${agents_start_s} s"

# --- inventory and profile -----------------------------------------------------------------------
{
  echo '{"nodes": ['
  for i in $(seq 1 "$agents"); do
    printf -v name 'load-%04d' "$i"
    sep=,
    [[ $i -lt $agents ]] || sep=
    printf '  {"name": "%s", "address": "%s", "public_key_file": "agents/%s.pub", "certificate_file": "agents/%s.crt", "devices": [{"selector": "host", "model": "host-dram", "capacity_bytes": %d}]}%s\n' \
      "$name" "${addresses[$((i - 1))]}" "$name" "$name" "$agent_bytes" "$sep"
  done
  echo '],'
  printf ' "waves": [{"name": "load", "nodes": ['
  for i in $(seq 1 "$agents"); do
    sep=,
    [[ $i -lt $agents ]] || sep=
    printf '"load-%04d"%s' "$i" "$sep"
  done
  printf '], "period_s": %d, "jitter_s": %d, "complete": true}],\n' "$period_s" "$period_s"
  echo ' "reserves": {"host-dram": 0}}'
} >"$dir/inventory.json"
# Uncalibrated and loose: a loopback load test measures the challenger, not a deployment's timing.
cat >"$dir/profile.json" <<JSON
{"name": "load-test-loopback", "chunk_labels": $chunk_labels, "format": "posedb-blake3-c1",
 "rounds": $rounds, "labels_per_round": $labels_per_round, "round_deadline_us": $((round_deadline_ms * 1000)),
 "fill_deadline_ms": 600000, "adversary": {"class": "commodity-cpu", "t_min_ps": 40000, "safety_factor": 2},
 "confidence": 0.99, "calibrated": false, "order_ttl_s": 3600}
JSON

# --- the challenger: serve, one scheduled run of the wave ----------------------------------------
# A wrapper shell runs it so that `times` there reports exactly its CPU (user, sys); its peak RSS
# (VmHWM, a high-water mark) and open files are read here every 0.2 s while it runs.
log "challenger serve: wave 'load' of $agents nodes, first run within ${period_s} s"
export W="$dir"  # read by the wrapper below through its environment
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)
t0_unix_us=$(date +%s%6N)
t0=$(now_s)
export NOFILE="$challenger_nofile"
bash -c '[[ -z "$NOFILE" ]] || ulimit -n "$NOFILE" || exit 2; "$@" & echo $! >"$W/challenger.pid"; wait $!; rc=$?; times >"$W/challenger.times"; exit $rc' wrapper \
  "$challenger" serve --inventory="$dir/inventory.json" --profile="$dir/profile.json" \
  --authority_key="$dir/inspect-authority.key" --challenger_key="$dir/inspect-challenger.key" \
  --ledger="$dir/ledger.db" --threads="$challenger_threads" --session_loops="$session_loops" --max_sessions="$agents" --json \
  --round_costs="$dir/round-costs.json" \
  >"$dir/serve.jsonl" 2>"$dir/serve.log" &
wrapper_pid=$!
for _ in $(seq 1 50); do [[ -s "$dir/challenger.pid" ]] && break; sleep 0.02; done
challenger_pid=$(cat "$dir/challenger.pid" 2>/dev/null || true)
peak_rss_kib=0
peak_fds=0
deadline=$(calc "$t0 + $timeout_s")
# Progress: verdicts so far (one JSON line each in serve.jsonl), their rate and the ETA; a line a
# second rewritten in place on a terminal, one every 10 s otherwise.
progress_every=10
[[ -t 2 ]] && progress_every=1
last_progress=$t0
show_progress() {
  local done elapsed rate eta
  done=$(wc -l <"$dir/serve.jsonl" 2>/dev/null || echo 0)
  elapsed=$(calc "$(now_s) - $t0")
  rate=$(calc "$done / ($elapsed > 0 ? $elapsed : 1)")
  eta=$(awk -v d="$done" -v n="$agents" -v r="$rate" 'BEGIN { if (r > 0) printf "%.0f s", (n - d) / r; else print "unknown" }')
  if [[ -t 2 ]]; then
    printf '\rload-test: %d/%d verdicts, %s s, %s verdicts/s, eta %s\033[K' "$done" "$agents" "$elapsed" "$rate" "$eta" >&2
  else
    log "$done/$agents verdicts, $elapsed s, $rate verdicts/s, eta $eta"
  fi
}
while kill -0 "$wrapper_pid" 2>/dev/null; do
  if [[ $progress == always && $(calc "$(now_s) - $last_progress >= $progress_every") -eq 1 ]]; then
    show_progress
    last_progress=$(now_s)
  fi
  if [[ -n "$challenger_pid" && -r /proc/$challenger_pid/status ]]; then
    hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$challenger_pid/status" 2>/dev/null || true)
    [[ -n "$hwm" && "$hwm" -gt "$peak_rss_kib" ]] && peak_rss_kib=$hwm
    fds=$(ls "/proc/$challenger_pid/fd" 2>/dev/null | wc -l || true)
    [[ -n "$fds" && "$fds" -gt "$peak_fds" ]] && peak_fds=$fds
  fi
  if [[ $(calc "$(now_s) > $deadline") -eq 1 ]]; then
    tail -n 20 "$dir/serve.log" >&2
    fail "the challenger did not finish within ${timeout_s} s"
  fi
  sleep 0.2
done
if [[ $progress == always ]]; then
  show_progress
  [[ -t 2 ]] && echo >&2
fi
set +e
wait "$wrapper_pid"
serve_rc=$?
set -e
t1=$(now_s)
challenger_pid=
wrapper_pid=
wall_s=$(calc "$t1 - $t0")
# `times`: line 2 is the children's user and system time, as "XmY.YYYs".
to_s() { awk -v t="$1" 'BEGIN { split(t, a, "m"); sub("s", "", a[2]); printf "%.3f", a[1] * 60 + a[2] }'; }
read -r cu cs < <(sed -n 2p "$dir/challenger.times" 2>/dev/null || echo "0m0s 0m0s")
cpu_user_s=$(to_s "$cu")
cpu_sys_s=$(to_s "$cs")
log "challenger exited $serve_rc after ${wall_s} s; cpu user ${cpu_user_s} s sys ${cpu_sys_s} s; peak RSS ${peak_rss_kib} KiB"

# --- checks --------------------------------------------------------------------------------------

if [[ $serve_rc -ne 0 ]]; then
  problem "challenger serve exited $serve_rc (0 = every session passed); its last words:"
  grep -v '^ ' "$dir/serve.log" | tail -n 3 | cut -c1-400 >&2 || true
fi
summary_line=$(grep 'wipeproof-challenger serve: [0-9]* session(s)' "$dir/serve.log" | tail -n 1 || true)
[[ "$summary_line" == *" $agents session(s), 0 failed"* ]] || problem "serve's own count: '${summary_line:-none}'"
verdict_lines=$(grep -c '^{' "$dir/serve.jsonl" || true)
pass_lines=$(grep -c '"pass":true' "$dir/serve.jsonl" || true)
[[ $verdict_lines -eq $agents ]] || problem "serve printed $verdict_lines verdicts, expected $agents"

check_ledger

max_fill_us=$(awk -F'\t' '$2 == "fillReport" && $6 != "-" && $6 > m { m = $6 } END { printf "%.0f", m + 0 }' "$dir/entries.tsv")
# The scheduled delay (serve's start to the first order in the ledger) and the wave run (first order
# to last receipt), from the ledger's own timestamps.
first_us=$(awk -F'\t' '$8 != "-" && (m == "" || $8 + 0 < m + 0) { m = $8 } END { printf "%.0f", m + 0 }' "$dir/entries.tsv")
last_us=$(awk -F'\t' '$8 != "-" && $8 + 0 > m + 0 { m = $8 } END { printf "%.0f", m + 0 }' "$dir/entries.tsv")
delay_s=$(calc "($first_us > 0 ? $first_us - $t0_unix_us : 0) / 1e6")
wave_run_s=$(calc "($last_us - $first_us) / 1e6")
max_round_us=$(awk -F'\t' '$2 == "roundLog" && $7 != "-" && $7 > m { m = $7 } END { printf "%.0f", m + 0 }' "$dir/entries.tsv")

# The agents' own CPU (user + sys, all agents): the fills are most of the work of a run.
agents_alive=0
agents_cpu_ticks=0
for pid in "${agent_pids[@]}"; do
  kill -0 "$pid" 2>/dev/null || continue
  agents_alive=$((agents_alive + 1))
  ticks=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat" 2>/dev/null || echo 0)
  agents_cpu_ticks=$((agents_cpu_ticks + ${ticks:-0}))
done
agents_cpu_s=$(calc "$agents_cpu_ticks / $(getconf CLK_TCK)")
[[ $agents_alive -eq $agents ]] || problem "$((agents - agents_alive)) agent(s) exited during the test"

# The challenger's own share of each round (serve --round_costs: one JSON object on one line).
round_costs=null
[[ -s "$dir/round-costs.json" ]] && round_costs=$(head -n 1 "$dir/round-costs.json")
[[ "$round_costs" == "{"* ]] || { round_costs=null; problem "the challenger wrote no round costs ($dir/round-costs.json)"; }
# cost FIGURE KEY: a number of the round costs ("added" "p99_us"; "" "rounds" for a top-level one); null if absent.
cost() {
  local v
  if [[ -z "$1" ]]; then
    v=$(sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" <<<"$round_costs")
  else
    v=$(sed -n "s/.*\"$1\": {[^}]*\"$2\": \([0-9.]*\).*/\1/p" <<<"$round_costs")
  fi
  echo "${v:-null}"
}
rounds_total=$(cost "" rounds)
added_p50=$(cost added p50_us)
added_p99=$(cost added p99_us)
added_p999=$(cost added p999_us)
added_cpu_p50=$(cost added_cpu p50_us)
added_cpu_p99=$(cost added_cpu p99_us)
build_p99=$(cost build p99_us)
check_p99=$(cost check p99_us)
send_p99=$(cost send p99_us)
transcript_p99=$(cost transcript p99_us)
wave_report_max=$(cost wave_report max_us)
round_p50=$(cost round p50_us)
round_p99=$(cost round p99_us)
round_p999=$(cost round p999_us)
session_cpu_per_round=$(cost "" session_thread_cpu_us_per_round)
cpu_per_round=null
[[ "$rounds_total" =~ ^[1-9][0-9]*$ ]] && cpu_per_round=$(calc "($cpu_user_s + $cpu_sys_s) * 1e6 / $rounds_total")

passed=$pass_lines
failed=$((agents - pass_lines))
result=$(cat <<JSON
{"test": "load", "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)", "agents": $agents, "agent_bytes": $agent_bytes,
 "chunk_labels": $chunk_labels, "rounds": $rounds, "labels_per_round": $labels_per_round,
 "agents_passed": $passed, "agents_failed": $failed, "ledger_entries": $entries, "ledger_sessions": $sessions,
 "wall_s": $wall_s, "scheduled_delay_s": $delay_s, "wave_run_s": $wave_run_s, "agents_start_s": $agents_start_s,
 "challenger_cpu_user_s": $cpu_user_s, "challenger_cpu_sys_s": $cpu_sys_s, "challenger_peak_rss_kib": $peak_rss_kib, "challenger_peak_fds": $peak_fds,
 "challenger_threads": $challenger_threads, "session_loops": $session_loops, "agents_cpu_s": $agents_cpu_s,
 "max_fill_us": $max_fill_us, "max_round_us": $max_round_us, "cores": $(nproc),
 "challenger_rounds": $rounds_total, "challenger_round_added_p50_us": $added_p50, "challenger_round_added_p99_us": $added_p99,
 "challenger_round_added_p999_us": $added_p999, "challenger_round_added_cpu_p50_us": $added_cpu_p50,
 "challenger_round_added_cpu_p99_us": $added_cpu_p99, "challenger_round_build_p99_us": $build_p99,
 "challenger_round_check_p99_us": $check_p99, "challenger_round_send_p99_us": $send_p99,
 "challenger_round_transcript_p99_us": $transcript_p99,
 "round_p50_us": $round_p50, "round_p99_us": $round_p99, "round_p999_us": $round_p999, "challenger_wave_report_max_us": $wave_report_max,
 "challenger_cpu_us_per_round": $cpu_per_round, "challenger_session_cpu_us_per_round": $session_cpu_per_round,
 "challenger_round_costs": $round_costs,
 "load_at_start": "$load_at_start", "ok": $([[ ${#problems[@]} -eq 0 ]] && echo true || echo false)}
JSON
)
result=$(echo "$result" | tr -s '\n' ' ')
[[ -n "$json_out" ]] && echo "$result" >"$json_out"

cat >&2 <<TEXT

load test: $agents agents (${agent_kib} KiB host memory each) in one scheduled wave, one challenger
  sessions: $passed passed, $failed failed; ledger: $entries entries, $sessions sessions; $([[ ${#problems[@]} -eq 0 ]] && echo "no entry lost or duplicated, ledger verifies" || echo "${#problems[@]} check(s) FAILED")
  wall: ${wall_s} s: scheduled delay ${delay_s} s, wave run (first order to last receipt) ${wave_run_s} s
  agents started in ${agents_start_s} s; load average at start $load_at_start on $(nproc) cores
  challenger CPU: user ${cpu_user_s} s, sys ${cpu_sys_s} s; peak RSS $((peak_rss_kib / 1024)) MiB, $peak_fds open files; agents' CPU ${agents_cpu_s} s
  slowest fill: $((max_fill_us / 1000)) ms; slowest round: $((max_round_us / 1000)) ms; rounds (send to answer read) p50 $round_p50 us, p99 $round_p99 us, p99.9 $round_p999 us
  sessions: $([[ "$session_loops" -eq 0 ]] && echo "a thread per member" || echo "fibers on $session_loops event loop(s)")
  challenger's share of a round ($rounds_total rounds): added (build + check) p50 $added_p50 us, p99 $added_p99 us, p99.9 $added_p999 us;
    its thread CPU p50 $added_cpu_p50 us, p99 $added_cpu_p99 us (build p99 $build_p99 us, check p99 $check_p99 us; RPC send call p99 $send_p99 us)
    off the critical path: transcript hash p99 $transcript_p99 us; wave report (once per session) max $wave_report_max us
  challenger CPU per round: $cpu_per_round us (the process's whole CPU / rounds), session threads $session_cpu_per_round us
TEXT
echo "$result"
if [[ ${#problems[@]} -ne 0 ]]; then
  log "${#problems[@]} check(s) failed"
  exit 1
fi
ok=1
log "all checks passed"
