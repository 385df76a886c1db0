#!/usr/bin/env bash
# Container runtimes for sweep's launch tests: NVIDIA enroot and Pyxis (built
# from the sources in ../shared/third_party, see its README) and Debian's
# docker.io, squashfs-tools, squashfuse, busybox-static.
#   container-tools.sh install         Debian packages + enroot/Pyxis into /usr/local when missing
#   container-tools.sh dockerd-up DIR  start dockerd with its state under DIR (socket DIR/docker.sock)
#   container-tools.sh dockerd-down DIR
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# The sources sit beside the repository (../shared/third_party from the main
# checkout, ../../shared/third_party from a worktree under wt/).
THIRD_PARTY=${SWEEP_THIRD_PARTY:-}
if [ -z "$THIRD_PARTY" ]; then
	for d in "$here/../shared/third_party" "$here/../../shared/third_party"; do
		if [ -d "$d" ]; then THIRD_PARTY=$d; break; fi
	done
fi
PYXIS_SO=/usr/local/lib/slurm/spank_pyxis.so

install() {
	local missing=""
	command -v mksquashfs >/dev/null || missing="$missing squashfs-tools"
	command -v squashfuse >/dev/null || missing="$missing squashfuse"
	command -v dockerd >/dev/null || missing="$missing docker.io"
	[ -x /bin/busybox ] || missing="$missing busybox-static"
	[ -e /usr/include/slurm/spank.h ] || missing="$missing libslurm-dev"
	[ -e /usr/include/bsd/string.h ] || missing="$missing libbsd-dev"
	command -v jq >/dev/null || missing="$missing jq"
	command -v parallel >/dev/null || missing="$missing parallel"
	command -v curl >/dev/null || missing="$missing curl"
	if [ -n "$missing" ]; then
		if [ "$(id -u)" != 0 ]; then
			echo "container-tools: missing Debian packages:$missing (run as root, or install them)" >&2
			exit 1
		fi
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing gawk >/dev/null
	fi
	if command -v enroot >/dev/null && [ -e "$PYXIS_SO" ]; then
		return
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "container-tools: enroot/Pyxis are missing and this is not root" >&2
		exit 1
	fi
	if [ -z "$THIRD_PARTY" ] || [ ! -d "$THIRD_PARTY" ]; then
		echo "container-tools: enroot/Pyxis sources not found in $THIRD_PARTY (set SWEEP_THIRD_PARTY)" >&2
		exit 1
	fi
	local build
	build=$(mktemp -d /tmp/sweep-enroot-build.XXXXXX)
	trap 'rm -rf "$build"' RETURN
	(
		cd "$build"
		tar xzf "$THIRD_PARTY"/enroot-*.tar.gz
		tar xzf "$THIRD_PARTY"/makeself-*.tar.gz
		tar xzf "$THIRD_PARTY"/pyxis-*.tar.gz
		rmdir enroot/deps/makeself 2>/dev/null || true
		mv makeself enroot/deps/makeself
		mkdir -p enroot/deps/linux-headers && touch enroot/deps/linux-headers/.stamp
		if ! command -v enroot >/dev/null; then
			make -s -C enroot FORCE_GLIBC=1 LDLIBS='-l:libbsd.a -l:libbsd.so.0' install >/dev/null
		fi
		if [ ! -e "$PYXIS_SO" ]; then
			make -s -C pyxis >/dev/null && make -s -C pyxis install prefix=/usr/local >/dev/null
		fi
	)
}

dockerd_up() {
	local dir=$1
	mkdir -p "$dir/data" "$dir/exec"
	if [ -S "$dir/docker.sock" ] && docker -H "unix://$dir/docker.sock" info >/dev/null 2>&1; then
		return
	fi
	dockerd --iptables=false --ip-masq=false --bridge=none --storage-driver overlay2 \
		--data-root "$dir/data" --exec-root "$dir/exec" --pidfile "$dir/dockerd.pid" \
		-H "unix://$dir/docker.sock" >"$dir/dockerd.log" 2>&1 &
	for _ in $(seq 1 100); do
		docker -H "unix://$dir/docker.sock" info >/dev/null 2>&1 && return
		sleep 0.1
	done
	echo "container-tools: dockerd did not start; see $dir/dockerd.log" >&2
	exit 1
}

dockerd_down() {
	local dir=$1
	if [ -s "$dir/dockerd.pid" ]; then
		local pid
		pid=$(cat "$dir/dockerd.pid")
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	fi
	umount "$dir/exec/netns/default" 2>/dev/null || true
}

case "${1:-}" in
install) install ;;
dockerd-up) dockerd_up "${2:?dir}" ;;
dockerd-down) dockerd_down "${2:?dir}" ;;
*)
	echo "usage: $0 install | dockerd-up DIR | dockerd-down DIR" >&2
	exit 2
	;;
esac
