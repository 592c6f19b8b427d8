# A real systemd (PID 1) in a sandbox that cannot touch this machine; sourced by
# deploy_walkthrough_test.sh and sandbox_teardown_test.sh.
#
#   sandbox_supervise DEADLINE_S CMD...
#                           runs CMD (a test's body) in a session and a cgroup of its own
#                           (/sys/fs/cgroup/unified/wipeproof-sandbox.OWNER.body, exported as
#                           SANDBOX_BODY_CGROUP) and waits for it: a SIGTERM or SIGINT here, or DEADLINE_S
#                           passing, sends SIGTERM to every process in that cgroup (frozen while they are
#                           listed, so that no PID is reused in between; CMD's trap tears its sandbox down),
#                           then after 10 s ends the cgroup (cgroup.kill). On every path (CMD's normal exit
#                           too) whatever CMD started is then ended by its cgroup, never by a PID or session
#                           ID, and so is every sandbox CMD booted; the cgroups are removed. CMD dies with
#                           this shell (parent-death signal SIGKILL), the rest of its cgroup with the
#                           guardian it starts (as sandbox_boot's, below). Returns CMD's status (1 on the deadline or a signal, or
#                           if a cgroup stays); 77 with a SKIP line without root, cgroup2 or cgroup.kill.
#   sandbox_boot DIR UNIT   boots /lib/systemd/systemd --unit=UNIT as PID 1 of new PID, mount, UTS,
#                           IPC, network and cgroup namespaces. Its root is a fresh tmpfs (pivot_root)
#                           holding: overlays of /usr, /etc and /var (the real folders read-only
#                           below, every change in a tmpfs above, gone with the namespace); fresh
#                           tmpfs on /tmp, /run, /var/tmp, /dev (null, zero, full, random, urandom,
#                           tty bound in; its own devpts) and /dev/shm; its own /proc (/proc/sys
#                           read-only) and a read-only /sys; cgroup2 rooted at a new, empty cgroup of
#                           its own (/sys/fs/cgroup/unified/wipeproof-sandbox.OWNER.N, OWNER being
#                           the supervising shell's PID-starttime); loopback and 192.0.2.1 on a
#                           veth pair inside its network namespace. Nothing else of this machine
#                           (/tmp, /work, /home, /root) is visible inside. DIR/in is copied to /srv/in.
#                           Units in DIR/units go to the sandbox's /etc/systemd/system (the test's
#                           target, masks). Sets SANDBOX_PID (PID 1 inside, seen from here) and adds
#                           the cgroup to SANDBOX_CGROUPS_MADE.
#                           Whatever kills this shell, the sandbox goes with it: unshare gets the
#                           parent-death signal SIGKILL (and kills PID 1, which ends the namespace),
#                           and a guardian outside this process tree (so that ctest's timeout, which
#                           SIGKILLs the whole tree, spares it) waits for the owner to die, then ends
#                           whatever is left in the owner's cgroups (cgroup.kill) and removes them;
#                           it checks the owner's start time every 0.5 s (a PID alone may be reused).
#                           Empty cgroups of dead runs are removed first; one with processes of a
#                           dead run still in it is named with the command that ends it.
#   sb CMD...               runs CMD inside (nsenter: its mount, PID, UTS, IPC, net and cgroup
#                           namespaces), as root, with a clean environment, killed after
#                           SB_TIMEOUT_S seconds (default 60); refuses (125) once the sandbox is gone.
#   sandbox_teardown        kills PID 1 (the kernel ends every process of the namespace), waits,
#                           removes the cgroup; nothing is left mounted or running. Returns 1 (with a
#                           message) if the cgroup cannot be removed.
# Needs root, unshare/nsenter/setpriv/setsid (util-linux), overlayfs and a cgroup2 mount at
# /sys/fs/cgroup/unified or /sys/fs/cgroup with cgroup.kill (Linux 5.14 or later: processes are ended
# by their cgroup, never by PIDs read from it, which may be reused in between).
# Errors: returns non-zero with a message on stderr.

SANDBOX_PID=
SANDBOX_UNSHARE_PID=
SANDBOX_MNT_NS=
SANDBOX_CGROUP=
SANDBOX_CGROUPS_MADE=()
SANDBOX_BOOTS=0
SANDBOX_GUARDED=${SANDBOX_GUARDED:-}  # exported by sandbox_guard_start
SANDBOX_DIR=

# Start time of process PID (clock ticks since boot, /proc/PID/stat field 22): with the PID, it names
# one process for good (a PID alone may be reused). Fails once PID has ended (a zombie included).
sandbox_start_time() {  # PID
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  s=${s##*) }
  set -- $s
  [[ "$1" != [ZX] ]] || return 1
  echo "${20}"
}

# Whether OWNER (PID-STARTTIME, or a bare PID in older names) is still running.
sandbox_owner_alive() {  # OWNER
  local pid=${1%%-*} start=
  [[ "$1" == *-* ]] && start=${1#*-}
  [[ -d "/proc/$pid" ]] || return 1
  [[ -z "$start" || "$(sandbox_start_time "$pid")" == "$start" ]]
}

# Ends every process in cgroup CG and below (cgroup.kill: they are the sandbox's own; no PID read from
# cgroup.procs is signalled, it may be reused in between), then removes it, deepest first. Returns 1
# with a message if it is still there after 5 s, or if the kernel has no cgroup.kill (before 5.14).
sandbox_cgroup_remove() {  # CG
  local cg=$1 i
  [[ -d "$cg" ]] || return 0
  if [[ -e "$cg/cgroup.kill" ]]; then
    echo 1 >"$cg/cgroup.kill" 2>/dev/null || true
  else
    echo "cannot end the processes in $cg: no cgroup.kill (Linux 5.14 or later needed)" >&2
  fi
  for i in $(seq 1 50); do
    find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
    [[ -d "$cg" ]] || return 0
    sleep 0.1
  done
  echo "the sandbox's cgroup $cg is still there (processes: $(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs))" >&2
  return 1
}

# Sends SIG to every process in cgroup CG and below, none of them a stranger: the cgroup is frozen
# while its processes are listed and signalled (a frozen process cannot exit, so its PID cannot be
# reused), then thawed. Returns 1 (nothing sent) if it does not freeze within 2 s.
sandbox_cgroup_signal() {  # CG SIG
  local cg=$1 i rc=1
  [[ -e "$cg/cgroup.freeze" ]] || return 1
  echo 1 >"$cg/cgroup.freeze" || return 1
  for i in $(seq 1 40); do
    if grep -qx 'frozen 1' "$cg/cgroup.events" 2>/dev/null; then
      find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill "-$2" 2>/dev/null || true
      rc=0
      break
    fi
    sleep 0.05
  done
  echo 0 >"$cg/cgroup.freeze" 2>/dev/null || true
  return $rc
}

# Ends and removes every sandbox cgroup of OWNER (what its runs left, whatever killed them).
sandbox_reap() {  # OWNER
  local root cg rc=0
  root=$(sandbox_cgroup2_root) || return 0
  for cg in "$root"/wipeproof-sandbox."$1".*; do
    [[ -d "$cg" ]] || continue
    sandbox_cgroup_remove "$cg" || rc=1
  done
  return $rc
}

# Cgroups of runs that died before their teardown (SIGKILL, a machine reset): an empty one is removed;
# one that still holds processes is named with the command that ends it (left alone here).
sandbox_sweep_stale() {
  local root cg tag procs
  root=$(sandbox_cgroup2_root) || return 0
  for cg in "$root"/wipeproof-sandbox.*; do
    [[ -d "$cg" ]] || continue
    tag=${cg##*/wipeproof-sandbox.}
    sandbox_owner_alive "${tag%.*}" && continue
    procs=$(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs)
    if [[ -z "$procs" ]]; then
      find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
      [[ -d "$cg" ]] || { echo "removed the empty cgroup $cg of a dead run" >&2; continue; }
    fi
    echo "warning: $cg of a dead run still holds processes ($procs); end them and remove it with:" \
      "echo 1 >$cg/cgroup.kill; find $cg -depth -type d -exec rmdir {} +" >&2
  done
}

# The guardian of OWNER's cgroups: a process outside this process tree (double fork, a session of its
# own) that waits for OWNER to die, then ends and removes OWNER's cgroups (sandbox_reap). OWNER is
# checked by PID and start time every 0.5 s: its PID reused by another process counts as its death.
# Exported, so that the body of sandbox_supervise does not start a second one.
sandbox_guard_start() {  # OWNER
  [[ "${SANDBOX_GUARDED:-}" == "$1" ]] && return 0
  ( setsid /bin/bash "$SANDBOX_LIB" --guard "$1" </dev/null >/dev/null 2>&1 & )
  export SANDBOX_GUARDED=$1
}
sandbox_guard() {  # OWNER
  while sandbox_owner_alive "$1"; do sleep 0.5; done
  sandbox_reap "$1"
}

sandbox_supervise() {  # DEADLINE_S CMD...  (works under set -e)
  local deadline=$1 me=$BASHPID root body timer done_pid rc sig= i
  shift
  [[ $(id -u) -eq 0 ]] || { echo "SKIP: systemd in a sandbox needs root"; return 77; }
  root=$(sandbox_cgroup2_root) || { echo "SKIP: no cgroup2 hierarchy mounted for the sandbox's systemd"; return 77; }
  export SANDBOX_OWNER SANDBOX_BODY_CGROUP
  SANDBOX_OWNER=$me-$(sandbox_start_time "$me")
  sandbox_sweep_stale
  SANDBOX_BODY_CGROUP=$root/wipeproof-sandbox.$SANDBOX_OWNER.body
  mkdir "$SANDBOX_BODY_CGROUP" || return 1
  [[ -e "$SANDBOX_BODY_CGROUP/cgroup.kill" ]] || {
    rmdir "$SANDBOX_BODY_CGROUP"
    echo "SKIP: this kernel's cgroup2 has no cgroup.kill (Linux 5.14 or later needed)"
    return 77
  }
  # Whatever kills this shell, the guardian ends the body's cgroup (and the sandboxes' cgroups).
  sandbox_guard_start "$SANDBOX_OWNER"
  # CMD in a session and a cgroup of its own (it moves itself there before it execs, so that all it
  # starts is in it), killed if this shell dies (checked after the signal is set: a parent gone before
  # that would never send it). The deadline's timer is in that cgroup too (ended with it).
  (
    trap - EXIT TERM INT  # (a signal before the exec must not run the caller's traps in this copy)
    echo "$BASHPID" >"$SANDBOX_BODY_CGROUP/cgroup.procs" || exit 1
    exec setpriv --pdeathsig KILL -- setsid /bin/bash -c '[[ $PPID == "$0" ]] || exit 1; exec "$@"' "$me" "$@"
  ) &
  body=$!
  (
    trap - EXIT TERM INT
    echo "$BASHPID" >"$SANDBOX_BODY_CGROUP/cgroup.procs" || exit 1
    exec setpriv --pdeathsig KILL -- sleep "$deadline"
  ) </dev/null >/dev/null 2>&1 &
  timer=$!
  trap 'sig=TERM' TERM
  trap 'sig=INT' INT
  while :; do
    done_pid=
    rc=0
    wait -n -p done_pid "$body" "$timer" || rc=$?
    [[ -n "$sig" || -n "${done_pid:-}" ]] && break
  done
  trap - TERM INT
  # No PID or session ID of CMD's is signalled from here on (bash reaps its children as they exit:
  # such an ID may already belong to someone else); only its cgroup is.
  if [[ "${done_pid:-}" != "$body" ]]; then
    if [[ -n "$sig" ]]; then echo "SIG$sig: stopping the test" >&2; else echo "FAIL: over $deadline s" >&2; fi
    # Everything CMD started (sb's timeout runs in a process group of its own); its trap tears down.
    sandbox_cgroup_signal "$SANDBOX_BODY_CGROUP" TERM || true
    # (kill -0 only waits: a reused PID makes it wait longer, never signals anyone.)
    for i in $(seq 1 100); do kill -0 "$body" 2>/dev/null || break; sleep 0.1; done
    rc=1
  elif (( rc > 128 )); then
    echo "FAIL: the test's body was killed (signal $((rc - 128)))" >&2
    rc=1
  fi
  # Whatever is left of CMD (the timer, what it left running, in its session or not), then reaped.
  echo 1 >"$SANDBOX_BODY_CGROUP/cgroup.kill" 2>/dev/null || true
  wait "$body" 2>/dev/null || true
  wait "$timer" 2>/dev/null || true
  # The cgroups of the sandboxes it booted (and whatever still runs in them), and the body's.
  sandbox_reap "$SANDBOX_OWNER" || rc=1
  return "$rc"
}

# The host's cgroup2 hierarchy (a hybrid layout's unified/ or a pure cgroup2 /sys/fs/cgroup).
sandbox_cgroup2_root() {
  local d
  for d in /sys/fs/cgroup/unified /sys/fs/cgroup; do
    [[ "$(stat -f -c %T "$d" 2>/dev/null)" == cgroup2fs ]] && { echo "$d"; return 0; }
  done
  return 1
}

sandbox_boot() {  # DIR UNIT
  local dir=$1 unit=$2 root cg owner me=$BASHPID
  root=$(sandbox_cgroup2_root) || { echo "no cgroup2 hierarchy mounted" >&2; return 1; }
  SANDBOX_DIR=$dir
  owner=${SANDBOX_OWNER:-$$-$(sandbox_start_time $$)}
  sandbox_sweep_stale
  sandbox_guard_start "$owner"
  SANDBOX_BOOTS=$((SANDBOX_BOOTS + 1))
  cg="$root/wipeproof-sandbox.$owner.$BASHPID-$SANDBOX_BOOTS"
  mkdir "$cg" || return 1
  SANDBOX_CGROUP=$cg
  SANDBOX_CGROUPS_MADE+=("$cg")
  mkdir -p "$dir/mnt"
  # The child moves itself into the new cgroup, then unshares: that cgroup becomes the root of the
  # sandbox's cgroup namespace, so systemd creates its slices below it and nowhere else. unshare
  # gets SIGKILL when this shell dies (checked after it is set, as above), and --kill-child passes
  # it on to PID 1.
  (
    trap - EXIT TERM INT  # (a signal before the exec must not run the body's traps in this copy)
    echo "$BASHPID" >"$cg/cgroup.procs"
    exec setpriv --pdeathsig KILL -- /bin/bash -c '[[ $PPID == "$0" ]] || exit 1; exec "$@"' "$me" \
      unshare --pid --fork --kill-child=SIGKILL --mount --propagation private --uts --ipc --net --cgroup -- \
      /bin/bash "$SANDBOX_LIB" --inside "$dir" "$unit"
  ) >"$dir/boot.log" 2>&1 &
  SANDBOX_UNSHARE_PID=$!
  local unshare_pid=$SANDBOX_UNSHARE_PID i
  # PID 1 of the namespace: unshare's only child.
  for i in $(seq 1 100); do
    SANDBOX_PID=$(cat "/proc/$unshare_pid/task/$unshare_pid/children" 2>/dev/null | awk '{print $1}')
    [[ -n "$SANDBOX_PID" && "$(readlink "/proc/$SANDBOX_PID/exe" 2>/dev/null)" == */systemd ]] && break
    kill -0 "$unshare_pid" 2>/dev/null || { echo "the sandbox's setup failed: $(tail -20 "$dir/boot.log")" >&2; return 1; }
    sleep 0.1
  done
  [[ "$(readlink "/proc/$SANDBOX_PID/exe" 2>/dev/null)" == */systemd ]] ||
    { echo "systemd did not start: $(tail -20 "$dir/boot.log")" >&2; return 1; }
  SANDBOX_MNT_NS=$(readlink "/proc/$SANDBOX_PID/ns/mnt")
  [[ -n "$SANDBOX_MNT_NS" && "$SANDBOX_MNT_NS" != "$(readlink /proc/self/ns/mnt)" &&
     "$(readlink "/proc/$SANDBOX_PID/ns/pid")" != "$(readlink /proc/self/ns/pid)" ]] ||
    { echo "systemd (PID $SANDBOX_PID) is not in namespaces of its own" >&2; return 1; }
  # Booted: the test's target reached (or failed).
  for i in $(seq 1 150); do
    local state
    state=$(sb systemctl is-system-running 2>/dev/null) || true
    [[ "$state" == running || "$state" == degraded ]] && return 0
    sleep 0.1
  done
  echo "systemd did not finish booting (state '$state'): $(tail -20 "$dir/boot.log")" >&2
  return 1
}

sb() {
  # Never this machine: PID 1 must still be the sandbox's systemd, in the namespaces it booted in (a
  # dead sandbox's PID reused by a process of this machine would otherwise run CMD here).
  [[ -n "$SANDBOX_PID" && "$(readlink "/proc/$SANDBOX_PID/ns/mnt" 2>/dev/null)" == "$SANDBOX_MNT_NS" &&
     "$SANDBOX_MNT_NS" != "$(readlink /proc/self/ns/mnt)" ]] ||
    { echo "sb: the sandbox is gone (PID '$SANDBOX_PID')" >&2; return 125; }
  timeout -k 5 "${SB_TIMEOUT_S:-60}" nsenter --target "$SANDBOX_PID" --mount --pid --uts --ipc --net --cgroup --root -- \
    /usr/bin/env -i -C / PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 SYSTEMD_PAGER= \
    SYSTEMD_COLORS=0 "$@"
}

sandbox_teardown() {
  # Only the sandbox's PID 1 (a PID reused after it exited belongs to someone else).
  if [[ -n "$SANDBOX_PID" && "$(readlink "/proc/$SANDBOX_PID/ns/mnt" 2>/dev/null)" == "$SANDBOX_MNT_NS" ]]; then
    kill -KILL "$SANDBOX_PID" 2>/dev/null || true
    local i
    for i in $(seq 1 100); do kill -0 "$SANDBOX_PID" 2>/dev/null || break; sleep 0.05; done
  fi
  # unshare (a child of this shell, so its PID is ours until waited for) takes PID 1 with it.
  if [[ -n "$SANDBOX_UNSHARE_PID" ]]; then
    kill -KILL "$SANDBOX_UNSHARE_PID" 2>/dev/null || true
    wait "$SANDBOX_UNSHARE_PID" 2>/dev/null || true
  fi
  SANDBOX_UNSHARE_PID=
  SANDBOX_PID=
  SANDBOX_MNT_NS=
  # Deepest first; the kernel empties them as the namespace's processes are reaped.
  [[ -z "$SANDBOX_CGROUP" ]] || sandbox_cgroup_remove "$SANDBOX_CGROUP"
}

# ---- inside the new namespaces (PID 1 until it execs systemd)
sandbox_inside() {  # DIR UNIT
  set -euo pipefail
  local dir=$1 unit=$2 t r d
  t=$dir/mnt
  mount -t tmpfs -o mode=0755,size=2g wipeproof-sandbox "$t"
  r=$t/root
  mkdir -p "$r" "$t/upper" "$t/work"
  mount --bind "$r" "$r"  # pivot_root needs a mount point
  for d in usr etc var; do
    mkdir -p "$r/$d" "$t/upper/$d" "$t/work/$d"
    mount -t overlay overlay -o "lowerdir=/$d,upperdir=$t/upper/$d,workdir=$t/work/$d" "$r/$d"
  done
  for d in bin sbin lib lib32 lib64 libx32; do
    if [[ -L /$d ]]; then cp -P "/$d" "$r/$d"; elif [[ -d /$d ]]; then
      mkdir "$r/$d"; mount --rbind -o ro "/$d" "$r/$d"; fi
  done
  mkdir -p "$r"/{proc,sys,dev,run,tmp,root,home,srv,mnt,opt}
  chmod 1777 "$r/tmp"
  mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"
  mount -t tmpfs -o mode=1777 tmpfs "$r/var/tmp"
  mount -t tmpfs -o mode=0755 tmpfs "$r/run"
  mount -t proc proc "$r/proc"
  mount --bind "$r/proc/sys" "$r/proc/sys"
  mount -o remount,bind,ro "$r/proc/sys"
  if [[ -e "$r/proc/sysrq-trigger" ]]; then
    mount --bind "$r/proc/sysrq-trigger" "$r/proc/sysrq-trigger"
    mount -o remount,bind,ro "$r/proc/sysrq-trigger"
  fi
  mount -t sysfs -o ro sysfs "$r/sys"
  mount -t cgroup2 -o nsdelegate cgroup2 "$r/sys/fs/cgroup"
  mount -t tmpfs -o mode=0755 tmpfs "$r/dev"
  for d in null zero full random urandom tty; do
    touch "$r/dev/$d"
    mount --bind "/dev/$d" "$r/dev/$d"
  done
  mkdir -p "$r/dev/pts" "$r/dev/shm"
  mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$r/dev/pts"
  ln -s pts/ptmx "$r/dev/ptmx"
  mount -t tmpfs -o mode=1777 tmpfs "$r/dev/shm"
  ln -s /proc/self/fd "$r/dev/fd"
  ln -s /proc/self/fd/0 "$r/dev/stdin"
  ln -s /proc/self/fd/1 "$r/dev/stdout"
  ln -s /proc/self/fd/2 "$r/dev/stderr"
  # One IPv4 address besides loopback (a veth pair inside the namespace, linked to nothing outside):
  # getaddrinfo with AI_ADDRCONFIG (Slurm's) finds no IPv4 at all in a namespace with loopback alone.
  ip link add wpsb0 type veth peer name wpsb1
  ip addr add 192.0.2.1/32 dev wpsb0
  ip link set wpsb0 up
  ip link set wpsb1 up
  [[ -d /var/log/journal ]] && mount -t tmpfs -o mode=2755 tmpfs "$r/var/log/journal"
  [[ -d "$dir/in" ]] && cp -a "$dir/in" "$r/srv/in"
  [[ -d "$dir/units" ]] && cp -a "$dir/units/." "$r/etc/systemd/system/"
  cd "$r"
  mkdir .oldroot
  pivot_root . .oldroot
  umount -l /.oldroot
  rmdir /.oldroot
  cd /
  exec /usr/bin/env -i container=wipeproof-sandbox PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    /lib/systemd/systemd --system --unit="$unit" --log-target=console --show-status=no
}

SANDBOX_LIB=$(realpath "${BASH_SOURCE[0]}")
if [[ "${1:-}" == --inside ]]; then
  shift
  sandbox_inside "$@"
elif [[ "${1:-}" == --guard ]]; then
  sandbox_guard "$2"
  exit
fi
