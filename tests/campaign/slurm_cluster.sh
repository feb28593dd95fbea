#!/usr/bin/env bash
# A private one-node Slurm cluster for tests: munged (as the munge user, private socket and key),
# slurmctld and slurmd (as root) with a private slurm.conf, on free ports, all state under DIR.
# Nothing system-wide is touched; `stop` ends exactly the daemons `start` recorded.
#
#   slurm_cluster.sh start DIR    prints "export SLURM_CONF=DIR/slurm.conf" once the node is idle
#   slurm_cluster.sh stop DIR
# Exit 77 when the slurm-wlm / munge packages are not installed.
set -euo pipefail

cmd=${1:-}; dir=${2:-}
[[ -n $cmd && -n $dir ]] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

stop() {
  for name in slurmd slurmctld munged; do
    local pidfile=$dir/$name.pid
    [[ -f $pidfile ]] || continue
    local pid; pid=$(cat "$pidfile")
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
  done
}

if [[ $cmd == stop ]]; then stop; exit 0; fi
[[ $cmd == start ]] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

for tool in munged slurmctld slurmd sbatch sinfo; do
  command -v "$tool" >/dev/null || PATH=$PATH:/usr/sbin
  command -v "$tool" >/dev/null || { echo "slurm_cluster: '$tool' not found (apt-get install slurm-wlm munge)" >&2; exit 77; }
done
id munge >/dev/null 2>&1 || { echo "slurm_cluster: no 'munge' user (apt-get install munge)" >&2; exit 77; }

mkdir -p "$dir"/{munge,state,spool,log}
dir=$(cd "$dir" && pwd)
chmod 0755 "$dir"   # munged runs as the munge user and must reach its folder inside
trap 'stop' ERR

# --- munge: its own key and socket; munged insists on strict ownership and modes.
chown munge: "$dir/munge"; chmod 0700 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chown munge: "$dir/munge/munge.key"; chmod 0400 "$dir/munge/munge.key"
socket=$dir/munge/munge.socket
runuser -u munge -- munged --force --socket="$socket" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/seed"
for _ in $(seq 50); do [[ -s $dir/munge/munged.pid ]] && break; sleep 0.1; done
cp "$dir/munge/munged.pid" "$dir/munged.pid"

# --- free ports (ask the kernel), host name, CPUs.
read -r ctld_port slurmd_port < <(/usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
cpus=$(nproc)

cat >"$dir/slurm.conf" <<CONF
ClusterName=llamptest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdTimeout=30
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF

export SLURM_CONF=$dir/slurm.conf
slurmctld -f "$SLURM_CONF"
for _ in $(seq 100); do [[ -s $dir/slurmctld.pid ]] && break; sleep 0.1; done
slurmd -f "$SLURM_CONF" -N "$host"
for _ in $(seq 100); do [[ -s $dir/slurmd.pid ]] && break; sleep 0.1; done

# Wait until the node takes jobs.
for _ in $(seq 150); do
  state=$(sinfo -h -N -o %t 2>/dev/null | head -1 || true)
  [[ $state == idle* || $state == mix* ]] && { echo "export SLURM_CONF=$SLURM_CONF"; exit 0; }
  sleep 0.2
done
echo "slurm_cluster: node did not become idle (state '${state:-?}'); see $dir/log" >&2
stop
exit 1
