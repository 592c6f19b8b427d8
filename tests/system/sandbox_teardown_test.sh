#!/usr/bin/env bash
# The deploy walkthrough's sandbox goes, whatever kills the test. deploy_walkthrough_test.sh is started
# with WP_DEPLOY_STOP_AT=canary-booted:wait (the canary's systemd up in its sandbox, the test waiting in
# it) and then:
#   kill-shell   SIGKILL of the test's shell (what ctest runs);
#   kill-tree    SIGKILL of the shell and every process below it at once (what ctest's timeout does);
#   kill-body    SIGKILL of the test's body alone (its supervising shell lives on);
#   interrupt    SIGINT to the test's process group (Ctrl-C), expected to end it with status 1;
#   deadline     its own deadline passing (WP_DEPLOY_DEADLINE_S=10: the canary boots first even on a
#                loaded 2-core machine, where 3 s was too short), status 1;
#   fail         a failure at that point (WP_DEPLOY_STOP_AT=canary-booted:fail), status 1;
# after each, within 5 s: no process in the sandbox's PID or mount namespace (a zombie waiting for this
# machine's init to reap it runs nothing and holds nothing: not counted), none of its unshare, PID 1,
# the test's body or anything in the body's session, no guardian, the run's cgroups removed, this
# machine's mounts as before. Then the next run passes (WP_DEPLOY_STOP_AT=canary-done:pass: the canary's
# checks, this run's cgroup included) and no canary file of the killed runs is left in /tmp; a dead run's
# empty cgroup is removed, one with processes in it named with the command that ends it.
# kill-shell runs with SANDBOX_OWNER naming the test's shell (the walkthrough's parent) with a wrong start
# time: the walkthrough must not take it for its supervisor's tag. Then, without a sandbox:
#   exit-normally, exit-killed   sandbox_supervise's body exits 0, or is killed by SIGKILL, leaving a
#                background process in its session and one in a session of its own: both are gone when
#                sandbox_supervise returns (0, resp. 1), and so is the body's cgroup;
#   guardian     a guardian whose owner dies and whose PID is at once taken by another process
#                (/proc/sys/kernel/ns_last_pid) removes the owner's cgroup within 3 s (not checked,
#                with a line saying so, where that PID cannot be handed over).
# Each walkthrough case boots the canary's systemd once (about 1 s). Needs what deploy_walkthrough_test.sh needs;
# skips (77) the same way.
# Usage: sandbox_teardown_test.sh SOURCE_DIR WORK_PARENT_DIR
set -euo pipefail
src=${1:?usage: sandbox_teardown_test.sh SOURCE_DIR WORK_PARENT_DIR}
parent=${2:?usage: sandbox_teardown_test.sh SOURCE_DIR WORK_PARENT_DIR}
walkthrough=$src/tests/system/deploy_walkthrough_test.sh
for tool in ps pgrep; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed (scripts/setup-deps.sh installs it)"; exit 77; }
done
source "$src/tests/system/systemd_sandbox.sh"
mkdir -p "$parent"
work=$(mktemp -d "$parent/sandbox_teardown.XXXXXX")
trap 'rm -rf --one-file-system "$work"' EXIT
t0=$SECONDS
fail() { echo "FAIL: $*" >&2; exit 1; }
mounts() { sort /proc/self/mountinfo | sha256sum; }
mounts_before=$(mounts)

# Every process as "PID SID PPID".
procs() { ps -e -o pid=,sid=,ppid= ; }
descendants() {  # PID: it and every process below it
  local all
  all=$(procs)
  awk -v root="$1" '{ parent[$1] = $3; pids[NR] = $1 }
    END { for (i = 1; i <= NR; i++) { p = pids[i]
            for (q = p; q != "" && q != 0 && q != 1; q = parent[q]) if (q == root) { print p; break } } }' <<<"$all"
}
# Whatever of the run is still there, one line each; nothing when all is gone.
leftovers() {  # STATE_FILE SUPERVISOR_PID SUPERVISOR_START
  local -A st
  local k v p
  while IFS== read -r k v; do st[$k]=$v; done <"$1"
  # (A namespace's number is reused once it is gone: a process in a cgroup of another run's, which
  # took that number, is not this run's.)
  find /proc/[0-9]*/ns -maxdepth 1 \( -name pid -o -name mnt \) -printf '%p %l\n' 2>/dev/null |
    awk -v pidns="${st[pidns]}" -v mntns="${st[mntns]}" -v ours="/wipeproof-sandbox.$2-$3." '
      $2 == pidns || $2 == mntns {
        split($1, f, "/"); c = ""; st = ""; cg = ""
        p = "/proc/" f[3]; getline c <(p "/comm"); getline st <(p "/stat")
        while ((getline l <(p "/cgroup")) > 0) if (l ~ /^0::/) cg = l
        close(p "/comm"); close(p "/stat"); close(p "/cgroup")
        if (index(cg, "/wipeproof-sandbox.") && !index(cg, ours)) next
        if (st == "") next  # (gone meanwhile)
        sub(/.*\) /, "", st)
        if (st !~ /^[ZX]/) print "process " f[3] " (" c ", " substr(st, 1, 1) ") in the sandbox'"'"'s " f[5] " namespace" }'
  pgrep -f -- "systemd_sandbox.sh --guard $2-$3\$" | sed 's/^/the guardian /'
  for k in unshare pid1 body; do
    [[ -n "${st[$k]}" && "$(sandbox_start_time "${st[$k]}" 2>/dev/null)" == "${st[${k}_start]}" ]] &&
      echo "$k (PID ${st[$k]})"
  done
  procs | awk -v sid="${st[body]}" '$2 == sid { print "process " $1 " of the body'"'"'s session" }'
  [[ -e "${st[cgroup]}" ]] && echo "the cgroup ${st[cgroup]}"
  [[ -e "${st[bodycg]}" ]] && echo "the body's cgroup ${st[bodycg]}"
  [[ "$(mounts)" == "$mounts_before" ]] || echo "this machine's mounts changed"
  return 0
}

# Starts the walkthrough, stopped at the canary's boot (STOP: wait or fail); sets run_pid, run_start,
# state (its file) once the sandbox is up (wait).
start_run() {  # CASE STOP [DEADLINE_S]
  state=$work/$1.state
  set -m  # its own process group, SIGINT not ignored (as a job started from a terminal)
  SANDBOX_OWNER=${owner_env:-} WP_DEPLOY_STOP_AT=canary-booted:$2 WP_DEPLOY_STATE_FILE=$state \
    WP_DEPLOY_DEADLINE_S=${3:-100} "$walkthrough" /nonexistent-debs "$src" "$work/runs" >"$work/$1.log" 2>&1 &
  run_pid=$!
  set +m
  run_start=$(sandbox_start_time "$run_pid")
  [[ "$2" == wait ]] || return 0
  local i
  for i in $(seq 1 150); do
    [[ -f "$state" ]] && break
    kill -0 "$run_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [[ ! -f "$state" ]]; then
    wait "$run_pid" && rc=0 || rc=$?
    [[ $rc -eq 77 ]] && { cat "$work/$1.log"; exit 77; }
    fail "$1: the walkthrough did not reach the canary's boot (status $rc): $(cat "$work/$1.log")"
  fi
  local k
  for k in unshare pid1 body; do
    echo "${k}_start=$(sandbox_start_time "$(sed -n "s/^$k=//p" "$state")")" >>"$state"
  done
}
# Within 5 s nothing of the run is left.
check_gone() {  # CASE
  local start=${EPOCHREALTIME/./} left first=
  while :; do
    left=$(leftovers "$state" "$run_pid" "$run_start")
    [[ -z "$left" ]] && break
    first=${first:-$(awk 'NR <= 3' <<<"$left" | xargs -d '\n' printf '%s; ')}  # (no SIGPIPE: awk reads all)
    (( ${EPOCHREALTIME/./} - start < 5000000 )) || break
    sleep 0.1
  done
  [[ -z "$left" ]] || fail "$1: left after 5 s: $(sort -u <<<"$left" | awk 'NR <= 20' | xargs -d '\n' printf '%s; ')
$(cat "$work/$1.log")"
  echo "[$((SECONDS - t0)) s] $1: nothing of the sandbox left $(((${EPOCHREALTIME/./} - start) / 1000)) ms after the status${first:+ (first seen: $first)}"
}
expect_status() {  # CASE WANT
  local rc=0
  wait "$run_pid" || rc=$?
  [[ $rc -eq $2 ]] || fail "$1: the walkthrough exited $rc, not $2: $(cat "$work/$1.log")"
}

# (Started with SANDBOX_OWNER naming this shell, its parent, with a wrong start time: not taken for
# its supervisor's tag, it supervises itself.)
owner_env="$$-1" start_run kill-shell wait
[[ "$(sed -n 's/^body=//p' "$state")" != "$run_pid" ]] ||
  { kill -KILL "$run_pid"; fail "kill-shell: SANDBOX_OWNER=$$-1 (this shell's PID, another start time) was taken for its supervisor's"; }
kill -KILL "$run_pid"
expect_status kill-shell 137
check_gone kill-shell

start_run kill-tree wait
kill -STOP "$run_pid"  # no new children while the tree is listed (ctest lists it the same way, racing)
tree=$(descendants "$run_pid")
kill -KILL $tree
kill -CONT "$run_pid" 2>/dev/null || true
expect_status kill-tree 137
check_gone kill-tree

start_run kill-body wait
kill -KILL "$(sed -n 's/^body=//p' "$state")"
expect_status kill-body 1
grep -q "the test's body was killed (signal 9)" "$work/kill-body.log" || fail "kill-body: $(cat "$work/kill-body.log")"
check_gone kill-body

start_run interrupt wait
kill -INT -- "-$run_pid"
expect_status interrupt 1
grep -q "SIGINT: stopping the test" "$work/interrupt.log" || fail "interrupt: $(cat "$work/interrupt.log")"
check_gone interrupt

start_run deadline wait 10
expect_status deadline 1
grep -q "FAIL: over 10 s" "$work/deadline.log" || fail "deadline: $(cat "$work/deadline.log")"
check_gone deadline

start_run fail fail
expect_status fail 1
grep -q "stopped at canary-booted" "$work/fail.log" || fail "fail: $(cat "$work/fail.log")"
echo "[$((SECONDS - t0)) s] fail: the run failed at the canary's boot and tore its sandbox down"

# A body that ends, normally or killed by a signal, leaves nothing running: what it started, in its
# session or in a session of its own, is ended by its cgroup (sandbox_supervise called directly, in a
# shell of its own; its sleeps carry a token of this run's).
root=$(sandbox_cgroup2_root)
tok=$RANDOM$RANDOM
supervised() {  # CASE WANT_STATUS BODY_SCRIPT
  local rc=0 out left
  # (Output to a file: a pipe would stay open while anything it left runs.)
  /bin/bash -c 'source "$1"; sandbox_supervise 10 /bin/bash -c "$2"' _ "$src/tests/system/systemd_sandbox.sh" \
    "echo \$SANDBOX_BODY_CGROUP >$work/$1.bodycg; $3" >"$work/$1.out" 2>&1 || rc=$?
  out=$(cat "$work/$1.out")
  left=$(pgrep -f -- "^sleep [0-9]+$tok\$" | xargs) || true
  [[ -n "$left" ]] && kill $left
  [[ $rc -eq $2 && -z "$left" ]] || fail "$1: status $rc (not $2), left running: '$left': $out"
  [[ -s "$work/$1.bodycg" && ! -e "$(cat "$work/$1.bodycg")" ]] || fail "$1: the body's cgroup '$(cat "$work/$1.bodycg")' is left"
  echo "$out"
}
supervised exit-normally 0 "sleep 1$tok & setsid sleep 2$tok & exit 0" >/dev/null
echo "[$((SECONDS - t0)) s] exit-normally: the body's background process and its setsid one were ended with its cgroup"
out=$(supervised exit-killed 1 "sleep 3$tok & setsid sleep 4$tok & kill -KILL \$\$")
[[ "$out" == *"the test's body was killed (signal 9)"* ]] || fail "exit-killed: $out"
echo "[$((SECONDS - t0)) s] exit-killed: the same after the body was killed by a signal"

# The guardian checks its owner's start time, not only its PID: the owner's PID taken by another
# process while it waits counts as the owner's death (ns_last_pid makes the next fork take that PID).
sleep 60 &
owner=$!
otag=$owner-$(sandbox_start_time "$owner")
gcg=$root/wipeproof-sandbox.$otag.1-1
mkdir "$gcg"
sleep 5$tok &
held=$!
echo "$held" >"$gcg/cgroup.procs"
( setsid /bin/bash "$SANDBOX_LIB" --guard "$otag" </dev/null >/dev/null 2>&1 & )
for _ in $(seq 1 50); do pgrep -f -- "systemd_sandbox.sh --guard $otag\$" >/dev/null && break; sleep 0.1; done
sleep 0.3  # past its first check of the owner
kill -KILL "$owner"
wait "$owner" || true
reuser=
if echo $((owner - 1)) 2>/dev/null >/proc/sys/kernel/ns_last_pid; then
  for _ in $(seq 1 200); do
    echo $((owner - 1)) >/proc/sys/kernel/ns_last_pid
    sleep 6$tok &
    [[ $! == "$owner" ]] && { reuser=$!; break; }
    kill -KILL $!  # (not TERM: before its exec, this shell's copy would run the EXIT trap)
    wait $! || true
  done
fi
if [[ -n "$reuser" ]]; then
  start=$SECONDS
  while (( SECONDS - start < 3 )); do [[ -e "$gcg" ]] || break; sleep 0.1; done
  kill -KILL "$reuser"
  wait "$reuser" || true
  if [[ -e "$gcg" ]]; then
    echo 1 >"$gcg/cgroup.kill"
    wait "$held" || true
    rmdir "$gcg"
    fail "the guardian of $otag waited for the process that took its owner's PID: $gcg not removed within 3 s"
  fi
  wait "$held" || true
  for _ in $(seq 1 20); do pgrep -f -- "systemd_sandbox.sh --guard $otag\$" >/dev/null || break; sleep 0.1; done
  ! pgrep -f -- "systemd_sandbox.sh --guard $otag\$" >/dev/null || fail "the guardian of $otag is still running"
  echo "[$((SECONDS - t0)) s] guardian: its owner's PID taken by another process, it removed the owner's cgroup"
else
  echo "[$((SECONDS - t0)) s] guardian: not checked (its owner's PID could not be handed to another process)"
  echo 1 >"$gcg/cgroup.kill"
  wait "$held" || true
  for _ in $(seq 1 50); do [[ -e "$gcg" ]] && rmdir "$gcg" 2>/dev/null; [[ -e "$gcg" ]] || break; sleep 0.1; done
fi

# A dead run's cgroup that still holds processes is left alone and named with the command that ends
# it (here one made up, holding a sleep of this test's).
held="$(sandbox_cgroup2_root)/wipeproof-sandbox.$(( $(cat /proc/sys/kernel/pid_max) + 1 ))-1.2-1"
mkdir "$held"
sleep 30 &
sleeper=$!
echo "$sleeper" >"$held/cgroup.procs"
swept=$(sandbox_sweep_stale 2>&1)
kill -0 "$sleeper" && [[ -d "$held" && "$swept" == *"warning: $held of a dead run still holds processes ($sleeper)"* &&
  "$swept" == *"echo 1 >$held/cgroup.kill; find $held -depth -type d -exec rmdir {} +"* ]] ||
  { kill "$sleeper"; wait "$sleeper"; rmdir "$held"; fail "a dead run's cgroup with processes: '$swept'"; }
echo 1 >"$held/cgroup.kill"  # the command it names
wait "$sleeper" || true
find "$held" -depth -type d -exec rmdir {} +
[[ ! -e "$held" ]] || fail "the command named by the sweep did not remove $held"
echo "[$((SECONDS - t0)) s] a dead run's cgroup holding a process: named with the command that ends it, which does"

# The next run passes (it checks its own cgroup, the mounts, /etc and its canary), and leaves no
# canary file of the killed runs in /tmp; it removes an empty cgroup that a dead run left (here one
# made up, of a PID above pid_max, for the case where its guardian was killed too).
stale="$(sandbox_cgroup2_root)/wipeproof-sandbox.$(( $(cat /proc/sys/kernel/pid_max) + 1 ))-1.1-1"
mkdir -p "$stale/init.scope"
WP_DEPLOY_STOP_AT=canary-done:pass "$walkthrough" /nonexistent-debs "$src" "$work/runs" >"$work/next.log" 2>&1 ||
  fail "the next run: $(cat "$work/next.log")"
grep -q "PASS (stopped at canary-done" "$work/next.log" || fail "the next run: $(cat "$work/next.log")"
[[ ! -e "$stale" ]] && grep -q "removed the empty cgroup $stale of a dead run" "$work/next.log" ||
  { rmdir "$stale/init.scope" "$stale"; fail "the next run did not remove the stale cgroup $stale: $(cat "$work/next.log")"; }
for f in /tmp/wipeproof-deploy-canary.*.*; do
  [[ -e "$f" ]] || continue
  o=${f#/tmp/wipeproof-deploy-canary.}
  sandbox_owner_alive "${o%.*}" || fail "the canary $f of a killed run is still in /tmp"
done
[[ -z "$(ls "$work/runs")" ]] || fail "work folders of killed runs left: $(ls "$work/runs")"
[[ "$(mounts)" == "$mounts_before" ]] || fail "this machine's mounts changed"
echo "[$((SECONDS - t0)) s] the next run passed the canary's checks and removed a dead run's empty cgroup; no canary or work folder of the killed runs left"
echo "PASS ($((SECONDS - t0)) s)"
