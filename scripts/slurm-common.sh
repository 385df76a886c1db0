# shellcheck shell=bash
# Shared by scripts/slurm-cluster.sh (one node) and scripts/slurm-multinode.sh
# (several nodes in network namespaces): sourced, not run.

# slurm_common_conf MIN_JOB_AGE prints the slurm.conf settings both test
# clusters share: no cgroups, no accounting, GPUs as gres, the backfill
# scheduler; MIN_JOB_AGE is how long (s) an ended job stays visible.
slurm_common_conf() {
	cat <<CONF
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
GresTypes=gpu
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=$1
KillWait=5
InactiveLimit=0
CONF
}

# start_munge starts munged (shared by both clusters) unless it runs,
# making its key when there is none.
start_munge() {
	if pgrep -x munged >/dev/null; then return; fi
	[ -s /etc/munge/munge.key ] || mungekey --create >/dev/null 2>&1 || dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
	chown munge:munge /etc/munge/munge.key 2>/dev/null || true
	chmod 400 /etc/munge/munge.key
	mkdir -p /run/munge /var/log/munge /var/lib/munge
	chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
	runuser -u munge -- /usr/sbin/munged 2>/dev/null || /usr/sbin/munged --force
}
