# The slurm.conf of a one-node Slurm cluster on this machine (the node is also the controller), for
# the tests that run one: slurm_drain_test.sh (daemons started by hand, state in a temporary folder)
# and deploy_walkthrough_test.sh (Debian's systemd units, Debian's folders). Sourced.
#
#   slurm_one_node_conf HOST CTLD_PORT SLURMD_PORT SLURM_USER STATE_DIR SPOOL_DIR PID_DIR LOG_DIR [AUTH_INFO]
# prints the configuration: node HOST at 127.0.0.1 with this machine's CPUs in partition `main`,
# controller state in STATE_DIR, slurmd's spool in SPOOL_DIR, pid files and logs in PID_DIR and
# LOG_DIR, munge authentication (AUTH_INFO, e.g. socket=PATH, when munged is not at its default
# socket), no accounting, no cgroups (proctrack/linuxproc, task/none).
slurm_one_node_conf() {
  local host=$1 ctld_port=$2 slurmd_port=$3 slurm_user=$4 state=$5 spool=$6 pids=$7 logs=$8 auth_info=${9:-}
  cat <<CONF
ClusterName=wipeproof-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
${auth_info:+AuthInfo=$auth_info}
CredType=cred/munge
SlurmUser=$slurm_user
SlurmdUser=root
StateSaveLocation=$state
SlurmdSpoolDir=$spool
SlurmctldPidFile=$pids/slurmctld.pid
SlurmdPidFile=$pids/slurmd.pid
SlurmctldLogFile=$logs/slurmctld.log
SlurmdLogFile=$logs/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
# Patient pings: a busy two-core machine (the wipe itself fills with both cores) may answer late.
MessageTimeout=30
SlurmdTimeout=60
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
}

# The lines that turn slurm_one_node_conf's cluster into one with accounting (slurmdbd) and Slurm JWTs
# (auth/jwt), for the least-privilege path of the challenger (docs/deploy.md section 5): appended after
# slurm_one_node_conf's output with its AccountingStorageType line removed.
#   slurm_accounting_jwt_conf DBD_PORT JWT_KEY [DBD_AUTH]
# DBD_AUTH: AccountingStoragePass, e.g. the munge socket when munged is not at its default one. The
# token plugin makes no token on a client's request (disable_token_creation): tokens come from the
# controller's root (`scontrol token username=U`) only.
slurm_accounting_jwt_conf() {
  local dbd_port=$1 jwt_key=$2 dbd_auth=${3:-}
  cat <<CONF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$dbd_port
${dbd_auth:+AccountingStoragePass=$dbd_auth}
AccountingStorageEnforce=associations,limits
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$jwt_key,disable_token_creation
CONF
}

# slurmdbd.conf for that cluster: munge only (a token cannot reach accounting), MySQL on 127.0.0.1.
#   slurmdbd_conf DBD_PORT DB_PORT SLURM_USER LOG_FILE PID_FILE DB_PASSWORD [AUTH_INFO]
slurmdbd_conf() {
  local dbd_port=$1 db_port=$2 slurm_user=$3 log=$4 pid=$5 password=$6 auth_info=${7:-}
  cat <<CONF
AuthType=auth/munge
${auth_info:+AuthInfo=$auth_info}
DbdAddr=127.0.0.1
DbdHost=localhost
DbdPort=$dbd_port
SlurmUser=$slurm_user
LogFile=$log
PidFile=$pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=slurm
StoragePass=$password
CONF
}

# The accounts of the least-privilege path, once slurmdbd answers: cluster wipeproof-test, account
# wipeproof, root (the tests' own jobs) and CHALLENGER_USER at AdminLevel Administrator (Slurm 22.05
# lets no lower level update a node) with MaxSubmitJobs=0 (it runs no job).
#   slurm_least_privilege_accounts CHALLENGER_USER [RUN...]   RUN: a prefix for sacctmgr (the sandbox's sb)
slurm_least_privilege_accounts() {
  local user=$1; shift
  "$@" sacctmgr -i add cluster wipeproof-test >/dev/null &&
    "$@" sacctmgr -i add account wipeproof cluster=wipeproof-test >/dev/null &&
    "$@" sacctmgr -i add user root account=wipeproof >/dev/null &&
    "$@" sacctmgr -i add user "$user" account=wipeproof adminlevel=Administrator MaxSubmitJobs=0 >/dev/null
}

# Field FIELD of node HOST as `scontrol show node` prints it ("" when absent).
slurm_node_field() {  # HOST FIELD
  scontrol show node "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# Starts slurmctld and slurmd for node HOST in the background (their output in DIR, their PIDs added
# to the caller's `pids` array, SLURM_CONF as exported) and waits up to 60 s for the node to be IDLE.
# Returns 1 when it is not.
slurm_start_node() {  # HOST DIR
  slurmctld -D -i >"$2/slurmctld.out" 2>&1 &
  pids+=($!)
  slurmd -D -N "$1" >"$2/slurmd.out" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 240); do [[ "$(slurm_node_field "$1" State)" == IDLE ]] && return 0; sleep 0.25; done
  return 1
}
