#!/usr/bin/env bash
# Multi-node Slurm cluster for sweep's tests: slurmctld on this host and
# one slurmd per node, each in its own network and UTS namespace (a bridge
# with one veth per node), 8 fake GPUs per node (mknod), munge shared with
# the host. Separate from scripts/slurm-cluster.sh's one-node cluster: its
# own state directory, ports and cluster name, so both run side by side.
#   slurm-multinode.sh up     configure and start (needs root; Debian's slurm-wlm, munge)
#   slurm-multinode.sh down   cancel its jobs, stop its daemons, remove the namespaces and the bridge
#   slurm-multinode.sh env    print the SLURM_CONF line for a shell
# SWEEP_SLURM_MN_DIR overrides the state directory (/var/tmp/sweep-slurm-mn),
# SWEEP_SLURM_MN_NODES the node count (3).
set -euo pipefail
# shellcheck source=scripts/slurm-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/slurm-common.sh"
DIR=${SWEEP_SLURM_MN_DIR:-/var/tmp/sweep-slurm-mn}
NODES=${SWEEP_SLURM_MN_NODES:-3}
CONF=$DIR/slurm.conf
NGPU=8
BRIDGE=sweepmn0
NET=10.78.0
CTLD_PORT=16827
SLURMD_PORT=16828
host=$(hostname -s)

node() { echo "mn$1"; }
netns() { echo "sweepmn$1"; }
addr() { echo "$NET.$((10 + $1))"; }

need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "slurm-multinode: needs root (namespaces, a bridge, slurmd)" >&2
		exit 1
	fi
	for c in slurmctld slurmd munged ip nsenter unshare; do
		command -v "$c" >/dev/null || { echo "slurm-multinode: $c is missing (Debian: slurm-wlm munge iproute2 util-linux)" >&2; exit 1; }
	done
}

configure() {
	mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log" "$DIR/etc"
	local nodes="" gres="" hosts="127.0.0.1 localhost
$NET.1 $host"
	for i in $(seq 1 "$NODES"); do
		local n
		n=$(node "$i")
		mkdir -p "$DIR/dev/$n" "$DIR/spool/$n"
		for g in $(seq 0 $((NGPU - 1))); do
			[ -e "$DIR/dev/$n/gpu$g" ] || mknod "$DIR/dev/$n/gpu$g" c 1 3
		done
		nodes+="NodeName=$n NodeHostname=$n NodeAddr=$(addr "$i") CPUs=8 RealMemory=8000 Gres=gpu:$NGPU State=UNKNOWN
"
		gres+="NodeName=$n Name=gpu File=$DIR/dev/$n/gpu[0-$((NGPU - 1))]
"
		hosts+="
$(addr "$i") $n"
	done
	echo "$hosts" >"$DIR/etc/hosts"
	# Name lookups stall 10 s per try unless they fail fast.
	printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"$DIR/etc/resolv.conf"
	printf '%s' "$gres" >"$DIR/gres.conf"
	cat >"$CONF" <<CONF
ClusterName=sweepmn
SlurmctldHost=$host($NET.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.%n.log
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
$(slurm_common_conf 300)
${nodes}PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
}

network() {
	ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
	ip addr show dev "$BRIDGE" | grep -q "$NET.1/24" || ip addr add "$NET.1/24" dev "$BRIDGE"
	ip link set "$BRIDGE" up
	for i in $(seq 1 "$NODES"); do
		local ns veth
		ns=$(netns "$i") veth=vsmn$i
		[ -e "/run/netns/$ns" ] || ip netns add "$ns"
		if ! ip link show "$veth" >/dev/null 2>&1; then
			ip link add "$veth" type veth peer name eth0 netns "$ns"
			ip link set "$veth" master "$BRIDGE" up
		fi
		# No default route: lookups and connections off the bridge fail at once.
		ip -n "$ns" addr show dev eth0 | grep -q "$(addr "$i")/24" || ip -n "$ns" addr add "$(addr "$i")/24" dev eth0
		ip -n "$ns" link set eth0 up
		ip -n "$ns" link set lo up
	done
}

# alive FILE: the process whose id FILE holds is running.
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

up() {
	need_root
	local t0
	t0=$(date +%s.%N)
	configure
	network
	start_munge
	export SLURM_CONF=$CONF
	alive "$DIR/slurmctld.pid" || slurmctld -f "$CONF"
	for _ in $(seq 1 40); do
		scontrol ping 2>/dev/null | grep -q 'is UP' && break
		sleep 0.25
	done
	for i in $(seq 1 "$NODES"); do
		local n
		n=$(node "$i")
		alive "$DIR/slurmd.$n.pid" && continue
		# shellcheck disable=SC2016 # the node's sh expands them
		# ip netns exec would remount /sys, and slurmd would not find its
		# cgroup filesystem: enter the network namespace, unshare the rest.
		nsenter --net="/run/netns/$(netns "$i")" -- unshare --mount --uts -- \
			sh -c 'hostname "$1" && mount --bind "$2" /etc/hosts && mount --bind "$3" /etc/resolv.conf && exec slurmd -f "$4" -N "$1"' \
			sh "$n" "$DIR/etc/hosts" "$DIR/etc/resolv.conf" "$CONF"
	done
	for _ in $(seq 1 80); do
		if [ "$(sinfo -h -N -o '%N %T' 2>/dev/null | grep -cE ' (idle|mixed|allocated)$')" = "$NODES" ]; then
			echo "slurm-multinode: up in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}') s ($NODES nodes $(node 1)..$(node "$NODES") on $NET.0/24, $NGPU fake GPUs each, SLURM_CONF=$CONF)"
			return
		fi
		scontrol update nodename="$(node 1)-$(node "$NODES")" state=resume >/dev/null 2>&1 || true
		sleep 0.25
	done
	echo "slurm-multinode: not every node became idle; logs in $DIR/log" >&2
	sinfo -N >&2 || true
	tail -20 "$DIR"/log/*.log >&2 || true
	exit 1
}

# stop FILE NAME: stop the daemon whose id FILE holds, TERM then KILL.
stop() {
	alive "$1" || { rm -f "$1"; return 0; }
	local pid
	pid=$(cat "$1")
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 1 40); do
		kill -0 "$pid" 2>/dev/null || { rm -f "$1"; return 0; }
		sleep 0.25
	done
	echo "slurm-multinode: $2 ($pid) did not stop; killed" >&2
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$1"
}

down() {
	[ "$(id -u)" = 0 ] || { echo "slurm-multinode: needs root" >&2; exit 1; }
	export SLURM_CONF=$CONF
	if [ -f "$CONF" ] && alive "$DIR/slurmctld.pid"; then
		# The jobs of this cluster only (SLURM_CONF names it), then wait
		# for their steps to end.
		local jobs
		jobs=$(squeue -h -o %i 2>/dev/null || true)
		if [ -n "$jobs" ]; then
			# shellcheck disable=SC2086 # one job id per word
			scancel $jobs 2>/dev/null || true
			for _ in $(seq 1 40); do
				[ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
				sleep 0.25
			done
		fi
	fi
	for i in $(seq 1 "$NODES"); do
		stop "$DIR/slurmd.$(node "$i").pid" "slurmd $(node "$i")"
	done
	stop "$DIR/slurmctld.pid" slurmctld
	for i in $(seq 1 "$NODES"); do
		local ns
		ns=$(netns "$i")
		# Anything still in the namespace (a step's stray process) ends with it.
		if [ -e "/run/netns/$ns" ]; then
			for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
			ip netns del "$ns" 2>/dev/null || true
		fi
		ip link del "vsmn$i" 2>/dev/null || true
	done
	ip link del "$BRIDGE" 2>/dev/null || true
	echo "slurm-multinode: down"
}

case "${1:-}" in
up) up ;;
down) down ;;
env) echo "SLURM_CONF=$CONF" ;;
*) echo "usage: $0 up|down|env" >&2; exit 2 ;;
esac
