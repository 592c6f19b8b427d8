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
