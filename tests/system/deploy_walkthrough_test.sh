#!/usr/bin/env bash
# docs/deploy.md, run as written, under a real systemd: the blocks the doc marks
# `<!-- deploy-step: NAME -->` are extracted and run in order, inside a sandbox (systemd_sandbox.sh:
# systemd as PID 1 of its own PID, mount, network and cgroup namespaces, /usr /etc /var as overlays
# over this machine's, fresh /tmp /run /dev; nothing it does reaches this machine). The doc's
# variables block runs first, then the values below replace some of its defaults (each must still be
# declared there): the packages built by cpack from this build, a 32 MiB host wipe, a wave every 4 s,
# the one-node Slurm cluster's files, a 1 s scrape. One machine is node, challenger, Slurm cluster
# (controller and compute node, Debian's slurmctld/slurmd/munge units) and Prometheus (Debian's unit).
#
# First a canary: the sandbox boots and powers off while a file in this machine's /tmp must survive
# (and stay invisible inside), /etc must stay as it was, and no cgroup or mount may be left; a harmed
# canary FAILS the test. Then the walkthrough, with these checks between the doc's steps:
#   - both services active under systemd: the agent as user wipeproof with only CAP_IPC_LOCK, its
#     mlock limit unlimited (where this machine lets systemd raise it: CAP_SYS_RESOURCE) and its
#     budget echo in the journal (locking by CAP_IPC_LOCK); the challenger as user wipeproof,
#     reaching Slurm with a token of that user only (no munge key: the cluster runs slurmdbd and
#     auth/jwt, wipeproof at AdminLevel Administrator with no job allowed);
#   - a job runs on the node; the challenger service's wave drains it while the job runs (reason
#     "wipeproof wave rack-1: wipe in progress", by user wipeproof), wipes it once the job left, resumes it after the
#     pass (IDLE again), and a job runs on it again;
#   - the doc's `ledger verify` passes on the service's ledger;
#   - Prometheus (Debian's unit, configured by the doc) has `up` = 1 for both jobs and a pass
#     counted by both wipeproof_challenger_sessions_total and wipeproof_agent_sessions_total.
# Needs root, util-linux's unshare/nsenter/setpriv/setsid, procps, systemd, iproute2, curl, and the
# Debian packages slurmctld, slurmd, slurm-client, munge and prometheus (scripts/setup-deps.sh); skips
# (77) naming what is missing.
#
# Teardown: the body below runs in a session of its own under sandbox_supervise (systemd_sandbox.sh),
# with a deadline of 170 s (below ctest's 200; WP_DEPLOY_DEADLINE_S sets another); whatever ends this shell (SIGTERM, SIGINT, SIGKILL,
# ctest's timeout, a failure) ends the sandbox and removes its cgroup (sandbox_teardown_test.sh).
# WP_DEPLOY_STOP_AT=POINT:ACTION stops at POINT (canary-booted: the canary's sandbox is up; canary-done:
# the canary's checks passed; or a deploy-step's name, before it runs) and then ACTION: `pass` (exit 0),
# `fail` (exit 1), or `wait` (write the sandbox's PIDs, namespaces and cgroups to
# $WP_DEPLOY_STATE_FILE and sleep inside the sandbox for up to 120 s, to be killed).
# Usage: deploy_walkthrough_test.sh DEBS_DIR SOURCE_DIR WORK_PARENT_DIR
set -euo pipefail
debs=${1:?usage: deploy_walkthrough_test.sh DEBS_DIR SOURCE_DIR WORK_PARENT_DIR}
src=${2:?usage: deploy_walkthrough_test.sh DEBS_DIR SOURCE_DIR WORK_PARENT_DIR}
parent=${3:?usage: deploy_walkthrough_test.sh DEBS_DIR SOURCE_DIR WORK_PARENT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/systemd_sandbox.sh"
# The supervising shell exports SANDBOX_OWNER (its PID-starttime) to the body it starts: this is the
# body only if that names its parent, start time included (an inherited tag whose PID was reused is not).
if [[ "${SANDBOX_OWNER:-}" != "$PPID-$(sandbox_start_time "$PPID")" ]]; then
  for tool in setpriv setsid; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed (scripts/setup-deps.sh installs it)"; exit 77; }
  done
  sandbox_supervise "${WP_DEPLOY_DEADLINE_S:-170}" /bin/bash "$here/${0##*/}" "$@"
  exit
fi
[[ $(id -u) -eq 0 ]] || { echo "SKIP: systemd in a sandbox needs root"; exit 77; }
for tool in unshare nsenter ip curl mungekey slurmctld slurmd scontrol sbatch srun prometheus promtool; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed (scripts/setup-deps.sh installs it)"; exit 77; }
done
[[ -x /lib/systemd/systemd ]] || { echo "SKIP: /lib/systemd/systemd not installed"; exit 77; }
source "$here/slurm_conf.sh"
sandbox_cgroup2_root >/dev/null || { echo "SKIP: no cgroup2 hierarchy mounted for the sandbox's systemd"; exit 77; }

# The canary file and work folder carry the supervising shell's name (PID-starttime): those of runs that
# were killed before their finish are removed here (kept work folders too, unless WP_DEPLOY_KEEP is set).
for f in /tmp/wipeproof-deploy-canary.*.* "$parent"/deploy_walkthrough.*.*; do
  o=${f##*/}
  o=${o#*.}
  [[ -e "$f" ]] && ! sandbox_owner_alive "${o%.*}" && [[ -z ${WP_DEPLOY_KEEP:-} || "$f" == /tmp/* ]] &&
    rm -rf --one-file-system -- "$f"
done
mkdir -p "$parent"
work=$(mktemp -d "$parent/deploy_walkthrough.$SANDBOX_OWNER.XXXXXX")
t0=$SECONDS
step() { echo "[$((SECONDS - t0)) s] $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# ---- the canary: this machine's /tmp, /etc, cgroups and mounts
canary=$(mktemp "/tmp/wipeproof-deploy-canary.$SANDBOX_OWNER.XXXXXX")
canary_text="canary $$ $RANDOM$RANDOM"
echo "$canary_text" >"$canary"
etc_listing() { ls -la --time-style=full-iso /etc | sha256sum; }
etc_before=$(etc_listing)
mounts_before=$(sort /proc/self/mountinfo | sha256sum)
check_host() {  # WHEN
  [[ -f "$canary" && "$(cat "$canary")" == "$canary_text" ]] || fail "$1: the canary $canary in this machine's /tmp was harmed"
  [[ "$(etc_listing)" == "$etc_before" ]] || fail "$1: this machine's /etc changed"
  [[ "$(sort /proc/self/mountinfo | sha256sum)" == "$mounts_before" ]] || fail "$1: mounts left behind"
  local cg
  for cg in "${SANDBOX_CGROUPS_MADE[@]}"; do
    [[ ! -e "$cg" ]] || fail "$1: this run's cgroup $cg left behind"
  done
}
# WP_DEPLOY_STOP_AT (above).
stop_point() {  # POINT
  [[ "${WP_DEPLOY_STOP_AT:-}" == "$1":* ]] || return 0
  case "${WP_DEPLOY_STOP_AT#*:}" in
    pass) echo "PASS (stopped at $1, $((SECONDS - t0)) s)"; exit 0 ;;
    fail) fail "stopped at $1 (WP_DEPLOY_STOP_AT)" ;;
    wait)
      [[ -n "$SANDBOX_PID" ]] || fail "stopped at $1 to wait, but no sandbox is up"
      printf '%s\n' "body=$$" "unshare=$SANDBOX_UNSHARE_PID" "pid1=$SANDBOX_PID" "cgroup=$SANDBOX_CGROUP" \
        "bodycg=$SANDBOX_BODY_CGROUP" \
        "pidns=$(readlink "/proc/$SANDBOX_PID/ns/pid")" "mntns=$SANDBOX_MNT_NS" >"${WP_DEPLOY_STATE_FILE:?}.new"
      mv "$WP_DEPLOY_STATE_FILE.new" "$WP_DEPLOY_STATE_FILE"
      SB_TIMEOUT_S=120 sb sleep 120 || true
      fail "stopped at $1 and waited 120 s: nothing killed it" ;;
    *) fail "WP_DEPLOY_STOP_AT=$WP_DEPLOY_STOP_AT: the action is pass, fail or wait" ;;
  esac
}
finish() {
  local rc=$?
  set +e
  if [[ $rc -ne 0 && -n "$SANDBOX_PID" ]]; then
    echo "---- journal (end)"
    sb journalctl --no-pager -n 60 -o short-monotonic 2>/dev/null || true
    sb scontrol show node 2>/dev/null | head -20 || true
  fi
  sandbox_teardown || rc=1
  if [[ -f "$canary" && "$(cat "$canary")" == "$canary_text" ]]; then rm -f "$canary"; else
    echo "FAIL: the canary $canary in this machine's /tmp was harmed" >&2; rc=1; fi
  [[ -n ${WP_DEPLOY_KEEP:-} ]] && echo "kept $work" || rm -rf "$work"
  exit $rc
}
trap finish EXIT
# sandbox_supervise's SIGTERM (its deadline, or a signal it got) ends in finish: the sandbox torn down.
trap 'exit 1' TERM INT

# Units of the sandbox (its /etc/systemd/system): the target it boots into, which starts nothing but
# the journal, and masks for units that are of no use in it or would slow it down.
units="$work/units"
mkdir -p "$units"
printf '%s\n' '[Unit]' 'Description=wipeproof deploy walkthrough (test sandbox)' \
  'Wants=systemd-journald.service' 'AllowIsolate=yes' >"$units/wipeproof-sandbox.target"
for u in systemd-tmpfiles-clean.timer systemd-tmpfiles-clean.service getty@tty1.service console-getty.service \
  getty.target systemd-logind.service systemd-timesyncd.service systemd-networkd.service \
  systemd-networkd-wait-online.service systemd-resolved.service networking.service ifupdown-wait-online.service \
  NetworkManager-wait-online.service systemd-udevd.service systemd-udev-trigger.service \
  systemd-udev-settle.service apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
  e2scrub_reap.service fstrim.timer man-db.timer postgresql.service cron.service systemd-pstore.service \
  systemd-binfmt.service proc-sys-fs-binfmt_misc.automount sys-kernel-debug.mount sys-kernel-tracing.mount \
  sys-kernel-config.mount sys-fs-fuse-connections.mount dev-hugepages.mount dev-mqueue.mount \
  systemd-sysctl.service systemd-modules-load.service systemd-random-seed.service systemd-journal-flush.service \
  systemd-remount-fs.service systemd-firstboot.service systemd-hwdb-update.service \
  systemd-machine-id-commit.service kmod-static-nodes.service systemd-tmpfiles-setup-dev.service ldconfig.service; do
  ln -s /dev/null "$units/$u"
done

# slurmd refuses a cgroup2 /sys/fs/cgroup while /proc/self/cgroup lists this kernel's cgroup v1
# controllers ("Hybrid mode is not supported"), and its v1 plugin needs a v1 hierarchy at
# /sys/fs/cgroup/systemd: in the sandbox it gets a tmpfs there with the named v1 hierarchy, read-only.
mkdir -p "$units/slurmd.service.d"
printf '%s\n' '[Service]' 'TemporaryFileSystem=/sys/fs/cgroup' \
  'BindReadOnlyPaths=/run/wipeproof-sandbox/cgroup-v1-systemd:/sys/fs/cgroup/systemd' >"$units/slurmd.service.d/sandbox.conf"

# ---- boot 1: the canary; the sandbox boots, cannot see it, and powers off
sandbox_boot "$work" wipeproof-sandbox.target || fail "systemd did not boot in the sandbox"
[[ "$(sb readlink /proc/1/exe)" == */systemd ]] || fail "PID 1 of the sandbox is not systemd"
stop_point canary-booted
sb test -e "$canary" && fail "the sandbox sees this machine's /tmp"
[[ "$(sb stat -f -c %T /tmp)" == tmpfs ]] || fail "the sandbox's /tmp is not its own tmpfs"
sb systemctl start systemd-tmpfiles-setup.service || fail "systemd-tmpfiles-setup in the sandbox failed"
sb systemctl poweroff 2>/dev/null || true
for _ in $(seq 1 100); do kill -0 "$SANDBOX_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$SANDBOX_PID" 2>/dev/null && fail "the sandbox's systemd did not power off"
sandbox_teardown
check_host "after the canary boot"
step "canary: systemd booted, ran systemd-tmpfiles-setup and powered off in the sandbox; /tmp, /etc, mounts, cgroups untouched"
stop_point canary-done

# ---- the doc's steps
doc="$src/docs/deploy.md"
steps="$work/in/steps"
mkdir -p "$steps" "$work/in/debs"
awk -v out="$steps" '
  match($0, /^<!-- deploy-step: [a-z0-9-]+ -->$/) { name = $3; want_fence = 1; next }
  want_fence { if ($0 != "```sh") { print "deploy-step " name ": not followed by a ```sh block" > "/dev/stderr"; exit 1 }
               n++; file = sprintf("%s/%02d-%s.sh", out, n, name); printf "" > file; want_fence = 0; in_block = 1; next }
  in_block && $0 == "```" { in_block = 0; close(file); next }
  in_block { print >> file }
' "$doc" || fail "$doc: a deploy-step marker without its block"
expected="variables install authority-keys challenger-keys node-keys node-keys-to-challenger delegation configure-agent configure-challenger slurm-client slurm-token start ledger-verify prometheus"
found=$(ls "$steps" | sed 's/^[0-9]*-//; s/\.sh$//' | xargs)
[[ "$found" == "$expected" ]] || fail "$doc's deploy-steps are '$found', this test runs '$expected'"
# The test's values for the doc's variables; each must be one the doc declares.
declare -A values=([DEBS]=/srv/in/debs [NODE_HOST]=127.0.0.1 [DEVICES]=host [HOST_BUDGET_GIB]=0.03125
                   [WAVE_PERIOD_S]=4 [WAVE_JITTER_S]=0 [SLURM_CONF]=/srv/in/slurm.conf [SLURM_TOKEN]=/srv/in/slurm.jwt [SCRAPE_INTERVAL]=1s)
for v in "${!values[@]}"; do
  grep -q "^$v=" "$steps/01-variables.sh" || fail "$doc no longer declares $v in its variables block"
  printf '%s=%q\n' "$v" "${values[$v]}" >>"$work/in/test-values.sh"
done
cp "$debs"/wipeproof-agent_*.deb "$debs"/wipeproof-challenger_*.deb "$work/in/debs/" ||
  fail "no packages in $debs (the package_debs fixture builds them)"
# The Slurm cluster's files (its administrator's; the challenger gets slurm.conf, which holds no secret,
# and a token, never the munge key): accounting in MariaDB through slurmdbd, and Slurm JWTs.
host=$(hostname -s)
{
  slurm_one_node_conf "$host" 6817 6818 slurm /var/lib/slurm/slurmctld /var/lib/slurm/slurmd /run /var/log/slurm |
    sed '/^AccountingStorageType=/d'
  slurm_accounting_jwt_conf 6819 /var/lib/slurm/jwt_hs256.key
} >"$work/in/slurm.conf"
slurmdbd_conf 6819 3306 slurm /var/log/slurm/slurmdbd.log /run/slurmdbd.pid dbpw >"$work/in/slurmdbd.conf"
mungekey --create --keyfile="$work/in/munge.key"
chmod -R a+rX "$work/in"
# Runs the doc's step NAME in the sandbox, as the doc says: one shell with the variables set.
doc_step() {  # NAME
  local f
  f=$(cd "$steps" && ls -- *-"$1".sh)
  stop_point "$1"
  step "deploy-step $1"
  sb bash -c "set -eo pipefail; cd /root; source /srv/in/steps/01-variables.sh; source /srv/in/test-values.sh
              set -x; source /srv/in/steps/$f" >"$work/step-$1.log" 2>&1 ||
    { tail -n 30 "$work/step-$1.log" >&2; fail "deploy-step $1 failed"; }
}

# ---- boot 2: the walkthrough
sandbox_boot "$work" wipeproof-sandbox.target || fail "systemd did not boot in the sandbox"
step "systemd booted in the sandbox (PID $SANDBOX_PID here)"
# No package index in the sandbox (it has no network anyway): apt-get then installs the .deb files
# and finds the packages the doc names installed already, without reading this machine's lists.
sb mount -t tmpfs tmpfs /var/lib/apt/lists
for name in install authority-keys challenger-keys node-keys node-keys-to-challenger delegation configure-agent configure-challenger; do
  doc_step "$name"
done
grep -q "wipeproof-prover 0\." "$work/step-install.log" || fail "the installed wipeproof-prover --version: $(cat "$work/step-install.log")"

# The Slurm cluster the doc assumes (here the same machine), as its administrator runs it: munge,
# MariaDB (a unit of its own here, with its own data folder), slurmdbd, slurmctld and slurmd from
# Debian's units; the challenger's account (user wipeproof: AdminLevel Administrator, no job) and its
# token, which the administrator hands over like slurm.conf.
sb install -m 0644 /srv/in/slurm.conf /etc/slurm/slurm.conf
sb install -o slurm -g slurm -m 0600 /srv/in/slurmdbd.conf /etc/slurm/slurmdbd.conf
sb install -o munge -g munge -m 0400 /srv/in/munge.key /etc/munge/munge.key
sb sh -c 'umask 077 && head -c 32 /dev/urandom >/var/lib/slurm/jwt_hs256.key && chown slurm:slurm /var/lib/slurm/jwt_hs256.key'
sb install -d -o mysql -g mysql /var/lib/wp-mariadb /run/wp-mariadb
sb mariadb-install-db --user=mysql --datadir=/var/lib/wp-mariadb --auth-root-authentication-method=socket \
  --skip-test-db >"$work/mariadb-install.log" 2>&1 || fail "mariadb-install-db: $(tail -5 "$work/mariadb-install.log")"
sb systemd-run --unit=wp-mariadb /usr/sbin/mariadbd --user=mysql --datadir=/var/lib/wp-mariadb \
  --socket=/run/wp-mariadb/mysqld.sock --bind-address=127.0.0.1 --port=3306 --innodb-buffer-pool-size=64M >/dev/null ||
  fail "MariaDB did not start"
for _ in $(seq 1 100); do sb mariadb -S /run/wp-mariadb/mysqld.sock -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
sb mariadb -S /run/wp-mariadb/mysqld.sock -e "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'dbpw';
  GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" || fail "MariaDB did not come up"
sb mkdir -p /run/wipeproof-sandbox/cgroup-v1-systemd
sb mount -t cgroup -o ro,none,name=systemd cgroup /run/wipeproof-sandbox/cgroup-v1-systemd ||
  fail "no read-only name=systemd cgroup v1 hierarchy for slurmd"
sb systemctl start munge.service slurmdbd.service || fail "munge and slurmdbd did not start"
for _ in $(seq 1 120); do sb timeout 5 sacctmgr -n list cluster >/dev/null 2>&1 && break; sleep 0.5; done
slurm_least_privilege_accounts wipeproof sb || fail "slurmdbd did not take the accounts"
sb systemctl start slurmctld.service slurmd.service || fail "the Slurm cluster's units did not start"
node_field() { sb scontrol show node "$host" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1; }
node_reason() { sb scontrol show node "$host" 2>/dev/null | sed -n 's/^ *Reason=\(.*\) \[.*$/\1/p'; }
for _ in $(seq 1 80); do [[ "$(node_field State)" == IDLE ]] && break; sleep 0.25; done
[[ "$(node_field State)" == IDLE ]] || fail "the Slurm node did not come up: $(sb scontrol show node "$host" 2>&1)"
sb sh -c "umask 022 && scontrol token username=wipeproof lifespan=7200 >/srv/in/slurm.jwt" ||
  fail "the administrator could not make the challenger's token"
step "Slurm cluster up (munge, MariaDB, slurmdbd, slurmctld, slurmd): node $host IDLE; token for wipeproof made"
doc_step slurm-client
doc_step slurm-token
state=$(node_field State)
[[ "$state" == IDLE* && "$state" != *DRAIN* ]] || fail "after the doc's drain/resume check the node is $state"

# A job holds the node when the wave comes, so the drain waits for it.
job=$(sb sbatch --parsable -N1 -t 5 -o /dev/null --wrap="sleep 240")
# Up to 60 s: a node that registered late leaves the job pending until slurmctld's next scheduling
# pass (a loaded machine once took over 10 s).
for _ in $(seq 1 240); do [[ "$(sb squeue -h -j "$job" -o %T)" == RUNNING ]] && break; sleep 0.25; done
[[ "$(sb squeue -h -j "$job" -o %T)" == RUNNING ]] || fail "job $job is not running: $(sb squeue -h -j "$job" -o '%T %r')"
step "job $job (sleep 240) running on $host"
doc_step start

for unit in wipeproof-agent wipeproof-challenger; do
  [[ "$(sb systemctl is-active "$unit")" == active ]] || fail "$unit is $(sb systemctl is-active "$unit")"
done
agent_pid=$(sb systemctl show -p MainPID --value wipeproof-agent)
[[ "$(sb ps -o user= -p "$agent_pid")" == wipeproof ]] || fail "the agent runs as $(sb ps -o user= -p "$agent_pid")"
cap_eff=$(sb sed -n 's/^CapEff:\t//p' "/proc/$agent_pid/status")
[[ "$cap_eff" == 0000000000004000 ]] || fail "the agent's capabilities are $cap_eff, not CAP_IPC_LOCK alone"
memlock=$(sb sed -n 's/^Max locked memory *//p' "/proc/$agent_pid/limits" | awk '{print $1 "/" $2}')
# LimitMEMLOCK=infinity raises the hard limit: systemd needs CAP_SYS_RESOURCE for that, and where this
# machine's bounding set lacks it (some VMs and containers) systemd sets the closest limit it can.
if (( (0x$(sed -n 's/^CapBnd:\t//p' /proc/self/status) >> 24) & 1 )); then
  [[ "$memlock" == unlimited/unlimited ]] || fail "the agent's mlock limit is $memlock, not unlimited"
else
  memlock="$memlock (no CAP_SYS_RESOURCE here to raise it)"
fi
budget=$(sb journalctl -u wipeproof-agent --no-pager -o cat | grep -m1 "host budget" || true)
[[ "$budget" == *"host budget 32.00 MiB (33554432 bytes)"* && "$budget" == *"RLIMIT_MEMLOCK not applied (CAP_IPC_LOCK)" ]] ||
  fail "no budget echo (32 MiB, locked by CAP_IPC_LOCK) in the agent's journal: $budget"
challenger_user=$(sb ps -o user= -p "$(sb systemctl show -p MainPID --value wipeproof-challenger)")
[[ "$challenger_user" == wipeproof ]] || fail "the challenger runs as $challenger_user, not wipeproof"
step "services active: agent as wipeproof (CapEff $cap_eff, memlock $memlock; '${budget#*serve: }'), challenger as $challenger_user"

# The wave: drained while the job runs, wiped after it left, resumed on the pass.
reason=
for _ in $(seq 1 120); do
  if [[ "$(node_field State)" == *DRAIN* ]]; then reason=$(node_reason); break; fi
  sleep 0.25
done
[[ -n "$reason" ]] || fail "the wave did not drain the node (State $(node_field State))"
[[ -n "$(sb squeue -h -j "$job" -t RUNNING -o %i)" ]] || fail "the node was drained only after job $job ended"
sb journalctl -u slurmctld --no-pager -o cat | grep -q "node $host state set to DRAINING" ||
  fail "slurmctld did not log the node DRAINING (a job still on it)"
[[ "$reason" == "wipeproof wave rack-1: wipe in progress" ]] || fail "drain reason: '$reason'"
# Slurm names who drained it: the token's user, not root or SlurmUser (the challenger has no munge key).
sb scontrol show node "$host" | grep -q "Reason=wipeproof wave rack-1: wipe in progress \[wipeproof@" ||
  fail "the drain is not the token's user's: $(sb scontrol show node "$host" | grep Reason)"
step "node drained while job $job runs: State=$(node_field State) Reason=$reason"
# The drain waits for the job: no order reaches the agent while it runs; then the job ends.
sleep 2
sb journalctl -u wipeproof-agent --no-pager -o cat | grep -q "order accepted" && fail "the agent got its order while job $job ran"
[[ -n "$(sb squeue -h -j "$job" -t RUNNING -o %i)" ]] || fail "job $job left the node during the drain"
sb scancel "$job"
step "no order while job $job ran (2 s); job cancelled"
resumed=no
for _ in $(seq 1 160); do
  if sb journalctl -u wipeproof-challenger --no-pager -o cat | grep -q "node $host passed and was resumed"; then
    resumed=yes
    break
  fi
  sb journalctl -u wipeproof-challenger --no-pager -o cat | grep -q "node $host stays drained" &&
    fail "the wipe failed: $(sb journalctl -u wipeproof-challenger --no-pager -o cat | tail -n 5)"
  sleep 0.25
done
[[ "$resumed" == yes ]] || fail "no pass and resume within 40 s: $(sb journalctl -u wipeproof-challenger --no-pager -o cat | tail -n 5)"
[[ -z "$(sb squeue -h -j "$job" -o %i)" ]] || fail "job $job is still there after the wipe"
step "wave passed, node resumed"

doc_step ledger-verify
grep -qi "ok" "$work/step-ledger-verify.log" || fail "ledger verify: $(cat "$work/step-ledger-verify.log")"
doc_step prometheus
[[ "$(sb systemctl is-active prometheus)" == active ]] || fail "prometheus is $(sb systemctl is-active prometheus)"

# Prometheus scraped both services: up, and the pass in both.
query() {  # PROMQL -> the first result's value, or nothing
  sb curl -sf --get --data-urlencode "query=$1" http://127.0.0.1:9090/api/v1/query |
    python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' 2>/dev/null
}
for _ in $(seq 1 60); do
  up_agent=$(query 'up{job="wipeproof-agent"}' || true)
  up_challenger=$(query 'up{job="wipeproof-challenger"}' || true)
  passes=$(query "sum(wipeproof_challenger_sessions_total{node=\"$host\",outcome=\"pass\"})" || true)
  agent_passes=$(query 'sum(wipeproof_agent_sessions_total{outcome="pass"})' || true)
  [[ "$up_agent" == 1 && "$up_challenger" == 1 && "${passes:-0}" != 0 && "${agent_passes:-0}" != 0 ]] && break
  sleep 0.5
done
[[ "$up_agent" == 1 && "$up_challenger" == 1 ]] ||
  fail "Prometheus: up{job=wipeproof-agent}='$up_agent', up{job=wipeproof-challenger}='$up_challenger'"
[[ "${passes:-0}" != 0 && "${agent_passes:-0}" != 0 ]] ||
  fail "Prometheus: passes challenger '$passes', agent '$agent_passes'"
step "Prometheus: up 1 for both jobs; passes: challenger $passes, agent $agent_passes"

# Stopping the challenger lets a running wave end; the node is left resumed, and takes a job.
sb systemctl stop wipeproof-challenger || fail "systemctl stop wipeproof-challenger"
state=$(node_field State)
[[ "$state" == IDLE* && "$state" != *DRAIN* ]] || fail "after the passes and the challenger's stop the node is $state"
[[ "$(SB_TIMEOUT_S=60 sb srun -N1 -t 1 hostname)" == "$host" ]] || fail "a job after the resume did not run"
step "challenger stopped, node $state; a job (srun hostname) ran on it"

sandbox_teardown
check_host "after the walkthrough"
step "sandbox gone; /tmp canary, /etc, mounts and cgroups as before"
echo "PASS ($((SECONDS - t0)) s)"
