#!/usr/bin/env bash
# One-node Slurm cluster for sweep's tests: slurmctld + slurmd on this host
# with 8 fake GPUs (character devices made with mknod), munge for auth.
#   slurm-cluster.sh up     install (Debian packages) when missing, configure, start
#   slurm-cluster.sh down   stop the daemons, leave the packages
#   slurm-cluster.sh env    print the SLURM_CONF line for a shell
set -euo pipefail
# shellcheck source=scripts/slurm-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/slurm-common.sh"
DIR=${SWEEP_SLURM_DIR:-/var/tmp/sweep-slurm}
CONF=$DIR/slurm.conf
NGPU=8
PYXIS_SO=/usr/local/lib/slurm/spank_pyxis.so
host=$(hostname -s)

install() {
	if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null; then
		return
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "slurm-cluster: slurm-wlm and munge are missing and this is not root" >&2
		exit 1
	fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
}

configure() {
	mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log" "$DIR/dev"
	for i in $(seq 0 $((NGPU - 1))); do
		[ -e "$DIR/dev/gpu$i" ] || mknod "$DIR/dev/gpu$i" c 1 3
	done
	cat >"$CONF" <<CONF
ClusterName=sweeptest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
$(slurm_common_conf 3600)
NodeName=$host CPUs=8 RealMemory=8000 Gres=gpu:$NGPU State=UNKNOWN
PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
	# Pyxis (srun --container-image), when built (scripts/container-tools.sh).
	if [ -e "$PYXIS_SO" ]; then
		mkdir -p "$DIR/pyxis-run"
		echo "required $PYXIS_SO runtime_path=$DIR/pyxis-run" >"$DIR/plugstack.conf"
		echo "PlugStackConfig=$DIR/plugstack.conf" >>"$CONF"
	fi
	cat >"$DIR/gres.conf" <<CONF
NodeName=$host Name=gpu File=$DIR/dev/gpu[0-$((NGPU - 1))]
CONF
}

up() {
	install
	configure
	start_munge
	export SLURM_CONF=$CONF
	pgrep -f "slurmctld -f $CONF" >/dev/null || slurmctld -f "$CONF"
	pgrep -f "slurmd -f $CONF" >/dev/null || slurmd -f "$CONF"
	for _ in $(seq 1 60); do
		if sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
			echo "slurm-cluster: up ($host, $NGPU fake GPUs, SLURM_CONF=$CONF)"
			return
		fi
		scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true
		sleep 0.5
	done
	echo "slurm-cluster: the node did not become idle; logs in $DIR/log" >&2
	tail -20 "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" >&2 || true
	exit 1
}

down() {
	for p in slurmd slurmctld; do
		pkill -f "$p -f $CONF" 2>/dev/null || true
	done
	for _ in $(seq 1 40); do
		pgrep -f "slurm(ctld|d) -f $CONF" >/dev/null || { echo "slurm-cluster: down"; return; }
		sleep 0.25
	done
	pkill -9 -f "slurm(ctld|d) -f $CONF" 2>/dev/null || true
	echo "slurm-cluster: down (killed)"
}

case "${1:-}" in
up) up ;;
down) down ;;
env) echo "SLURM_CONF=$CONF" ;;
*) echo "usage: $0 up|down|env" >&2; exit 2 ;;
esac
