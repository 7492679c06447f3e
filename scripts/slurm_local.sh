#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for testing profiles/slurm for real (CI runs it before the tests).
#
#   scripts/slurm_local.sh up       install (Debian packages) if needed, configure, start, smoke-test
#   scripts/slurm_local.sh down     end its jobs and what they left running, stop the daemons this script started
#   scripts/slurm_local.sh status   show what is running
#
# What comes up: munged, MariaDB + slurmdbd (so that `sacct` works and the Snakemake SLURM executor uses its
# default status checks), slurmctld and slurmd. One node, `localhost`, with this machine's cores and memory
# and two dummy GPUs (GRES gpu:2, backed by plain files: the scheduler counts and allocates them, nothing
# computes on them). Partitions `cpu` (default) and `gpu` both hold the node, as profiles/slurm expects.
# Accounting enforces associations: root belongs to the accounts `sentaug` (its default) and `ci`, so jobs are
# accepted with `-A ci`, `-A sentaug` or no account (then `sentaug`), and rejected with an unknown one.
#
# Runs as root, without systemd and without cgroups (process tracking by /proc, no task binding), as in a
# container. Every daemon it starts has its pid file under $STATE; `down` stops exactly those. A munged that
# was already running is used and left alone. State, logs and the database live under $STATE
# (default /tmp/sentaug-slurm); slurm.conf goes to /etc/slurm (where the client commands look), and an
# existing slurm.conf that this script did not write is never overwritten.
set -euo pipefail

STATE=${SENTAUG_SLURM_STATE:-/tmp/sentaug-slurm}
NODE=localhost
MARK="# written by sentaug scripts/slurm_local.sh"
CLUSTER=sentaug
CONF_DIR=/etc/slurm
DAEMONS=(slurmd slurmctld slurmdbd mariadbd munged)   # stop order

log() { printf '[slurm_local %(%H:%M:%S)T] %s\n' -1 "$*"; }
die() { log "error: $*" >&2; exit 1; }
alive() { [[ -s "$STATE/$1.pid" ]] && kill -0 "$(cat "$STATE/$1.pid")" 2>/dev/null; }
wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...: poll every 0.2 s
  local limit=$1 what=$2; shift 2
  for _ in $(seq $((limit * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  die "$what did not come up within ${limit} s (logs in $STATE)"
}

# Jobs of this cluster still running when it stops would outlive slurmd: without cgroups slurmd finds a job's
# processes by their parents in /proc, and one whose parent died first escapes it (the Snakemake job step of a
# requeued job's first run stayed asleep for hours). Cancel the jobs, then end every process that still carries
# this cluster's name in its environment, as everything a job starts does.
end_jobs() {
  alive slurmctld || return 0
  local jobs; jobs=$(squeue -h -o %i 2>/dev/null | xargs) || jobs=
  if [[ -n "$jobs" ]]; then
    log "cancelling the jobs still on the cluster: $jobs"
    # shellcheck disable=SC2086  # one argument per job id
    scancel $jobs 2>/dev/null || true
    for _ in $(seq 100); do [[ -z "$(squeue -h -o %i 2>/dev/null)" ]] && break; sleep 0.2; done
  fi
  local strays; strays=$(job_processes)
  [[ -n "$strays" ]] || return 0
  log "ending processes that jobs left behind: $strays"
  # shellcheck disable=SC2086
  kill $strays 2>/dev/null || true
  # shellcheck disable=SC2086
  for _ in $(seq 25); do strays=$(job_processes $strays); [[ -n "$strays" ]] || return 0; sleep 0.2; done
  log "killing what ignored SIGTERM: $strays"
  # shellcheck disable=SC2086
  kill -9 $strays 2>/dev/null || true
}

job_processes() {  # of the pids given (else of all), those whose environment names this cluster; not this script
  local pids=("$@") pid
  if (( ! ${#pids[@]} )); then pids=(/proc/[0-9]*); pids=("${pids[@]#/proc/}"); fi
  for pid in "${pids[@]}"; do
    [[ $pid == "$$" || $pid == "$PPID" || $pid == "$BASHPID" ]] && continue
    grep -qxzF "SLURM_CLUSTER_NAME=$CLUSTER" "/proc/$pid/environ" 2>/dev/null && printf '%s ' "$pid"
  done
  return 0
}

stop_all() {
  end_jobs
  for d in "${DAEMONS[@]}"; do
    alive "$d" || { rm -f "$STATE/$d.pid"; continue; }
    local pid; pid=$(cat "$STATE/$d.pid")
    log "stopping $d (pid $pid)"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    rm -f "$STATE/$d.pid"
  done
}

status() {
  for d in "${DAEMONS[@]}"; do
    if alive "$d"; then echo "$d: running (pid $(cat "$STATE/$d.pid"))"; else echo "$d: not started here"; fi
  done
  sinfo 2>/dev/null || true
}

install_packages() {
  local missing=() p
  for p in munge slurmctld slurmd slurm-client slurmdbd mariadb-server; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  (( ${#missing[@]} )) || return 0
  command -v apt-get >/dev/null || die "apt-get not found: install ${missing[*]} by hand"
  log "installing ${missing[*]}"
  # Packages must not start their own daemons (no init system here; this script starts what it needs).
  local policy=/usr/sbin/policy-rc.d own_policy=0
  if [[ ! -e $policy ]]; then printf '#!/bin/sh\nexit 101\n' > $policy; chmod +x $policy; own_policy=1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  (( own_policy )) && rm -f $policy
  return 0
}

start_munge() {
  alive munged && return
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then log "using the munged already running"; return; fi
  [[ -s /etc/munge/munge.key ]] || mungekey --create --keyfile=/etc/munge/munge.key
  chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge && chmod 755 /run/munge
  runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid
  wait_for 10 munged test -s /run/munge/munged.pid
  cp /run/munge/munged.pid "$STATE/munged.pid"
  wait_for 10 munge sh -c 'munge -n | unmunge'
}

free_port() {  # the first port from $1 on that nothing listens to on 127.0.0.1
  local port=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
  echo "$port"
}

start_database() {
  local db="$STATE/db"   # owned by the mysql user: data, socket, log
  DB_SOCKET="$db/mysqld.sock"
  if alive mariadbd; then DB_PORT=$(cat "$STATE/mariadb.port"); return; fi
  DB_PORT=$(free_port "${SENTAUG_SLURM_DB_PORT:-3306}")
  mkdir -p "$db" && chown mysql:mysql "$db"
  if [[ ! -d $db/data/mysql ]]; then
    mariadb-install-db --user=mysql --datadir="$db/data" --auth-root-authentication-method=socket \
      >"$STATE/mariadb-install.log" 2>&1 || die "mariadb-install-db failed (see $STATE/mariadb-install.log)"
  fi
  /usr/sbin/mariadbd --no-defaults --user=mysql --datadir="$db/data" --socket="$DB_SOCKET" \
    --pid-file="$db/mysqld.pid" --bind-address=127.0.0.1 --port="$DB_PORT" \
    --innodb-buffer-pool-size=64M --log-error="$db/mariadb.log" >>"$STATE/mariadbd.out" 2>&1 &
  echo $! > "$STATE/mariadbd.pid"
  echo "$DB_PORT" > "$STATE/mariadb.port"
  wait_for 60 mariadbd mariadb-admin --socket="$DB_SOCKET" ping
  mariadb --socket="$DB_SOCKET" -e "
    CREATE DATABASE IF NOT EXISTS slurm_acct_db;
    CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'sentaug-local';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'; FLUSH PRIVILEGES;"
}

write_configs() {
  mkdir -p "$CONF_DIR" "$STATE/ctld" "$STATE/slurmd" "$STATE/gpu"
  if [[ -e $CONF_DIR/slurm.conf ]] && ! grep -qF "$MARK" "$CONF_DIR/slurm.conf"; then
    die "$CONF_DIR/slurm.conf exists and was not written by this script; not touching it"
  fi
  local cpus mem_mb
  cpus=$(nproc)
  mem_mb=$(( $(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) - 1024 ))
  # Dummy GPUs: character devices with NVIDIA's major number and no driver behind them. slurmd only checks
  # that they are devices; the scheduler counts and allocates them, and nothing can open them.
  local i
  for i in 0 1; do [[ -c $STATE/gpu/nvidia$i ]] || mknod "$STATE/gpu/nvidia$i" c 195 "$i"; done

  cat > "$CONF_DIR/slurmdbd.conf" <<EOF
$MARK
AuthType=auth/munge
DbdHost=localhost
DbdPort=6819
SlurmUser=root
LogFile=$STATE/slurmdbd.log
PidFile=$STATE/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=sentaug-local
StorageLoc=slurm_acct_db
EOF
  chmod 600 "$CONF_DIR/slurmdbd.conf"

  cat > "$CONF_DIR/gres.conf" <<EOF
$MARK
AutoDetect=off
NodeName=$NODE Name=gpu File=$STATE/gpu/nvidia[0-1]
EOF

  cat > "$CONF_DIR/slurm.conf" <<EOF
$MARK
ClusterName=$CLUSTER
SlurmctldHost=$NODE
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
MpiDefault=none
# No cgroups here: processes are tracked through /proc and tasks are not bound to cores.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=6819
AccountingStorageEnforce=associations
AccountingStorageTRES=gres/gpu
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
SchedulerType=sched/backfill
SelectType=select/cons_tres
# Memory is requested but not a consumable resource (nothing could enforce it without cgroups).
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
# Finished jobs stay visible to squeue/scontrol for an hour (tests read them back).
MinJobAge=3600
InactiveLimit=0
KillWait=10
Waittime=0
SchedulerParameters=sched_interval=2
SlurmctldTimeout=120
SlurmdTimeout=300
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb Gres=gpu:2 State=UNKNOWN
PartitionName=cpu Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$NODE MaxTime=INFINITE State=UP
EOF
}

start_slurm() {
  if ! alive slurmdbd; then
    log "starting slurmdbd"
    slurmdbd
    wait_for 30 slurmdbd bash -c '(exec 3<>/dev/tcp/127.0.0.1/6819)'
  fi
  # The cluster, two accounts and root's associations: `sentaug` (root's default) and `ci` (idempotent:
  # "already exists" is fine).
  sacctmgr -i add cluster "$CLUSTER" >/dev/null 2>&1 || true
  sacctmgr -i add account sentaug,ci Description=sentaug-tests Organization=local >/dev/null 2>&1 || true
  sacctmgr -i add user root Account=sentaug,ci DefaultAccount=sentaug >/dev/null 2>&1 || true
  local a
  for a in sentaug ci; do
    sacctmgr -n -P list associations user=root format=account | grep -qx "$a" || die "root's association with $a missing"
  done
  if alive slurmctld; then scontrol reconfigure; else log "starting slurmctld"; slurmctld -i; fi
  wait_for 30 slurmctld scontrol ping
  if ! alive slurmd; then log "starting slurmd"; slurmd -N "$NODE"; fi
  node_up() { sinfo -h -n "$NODE" -o '%T' | grep -Eq '^(idle|mixed|allocated)'; }
  wait_for 30 "node $NODE" node_up
}

cancel_leftovers() {
  # Jobs of an earlier session of this private cluster (its state survives under $STATE) would hold the one
  # node: cancel them, so that the smoke test and the tests find it free.
  local left
  left=$(squeue -h -o %i | tr '\n' ' ')
  if [[ -n "${left// }" ]]; then log "cancelling jobs left from an earlier session: $left"; scancel $left; fi
  idle() { [[ -z $(squeue -h -o %i) ]]; }
  wait_for 30 "the end of the cancelled jobs" idle
}

smoke_test() {
  local jid state
  jid=$(sbatch --parsable -p gpu --gpus=1 -o "$STATE/smoke-%j.out" \
        --wrap 'echo "job $SLURM_JOB_ID on $(hostname) with GPUs ${CUDA_VISIBLE_DEVICES:-none}"')
  job_done() { [[ $(sacct -n -X -P -j "$jid" -o State) == COMPLETED ]]; }
  wait_for 30 "smoke-test job $jid (in sacct)" job_done
  state=$(sacct -n -X -P -j "$jid" -o JobID,State,AllocTRES)
  log "smoke test: $state; $(cat "$STATE/smoke-$jid.out")"
}

case "${1:-}" in
  up)
    [[ $(id -u) == 0 ]] || die "run as root (it installs packages and starts daemons)"
    T0=$(date +%s.%N)
    mkdir -p "$STATE"
    install_packages
    start_munge
    start_database
    write_configs
    start_slurm
    cancel_leftovers
    smoke_test
    log "cluster up in $(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s"
    ;;
  down) stop_all ;;
  status) status ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
