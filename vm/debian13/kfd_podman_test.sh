#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A ROCm-style container under Debian 13's podman (5.4) with runc and
# criu 4.1, our amdgpu and our plugin: the demo's heartbeat, whose beat is
# a KFD event, runs in a container made from a local image (podman import
# of a root file system tarball: no registry), with /dev/kfd passed in.
# "podman container checkpoint --export" saves it with its KFD state;
# after the container is removed, "podman container restore --import"
# brings it back, and it beats on. Then --leave-running, a restore under
# a new name beside the original, and the plugin's options as podman
# hands them on: the environment of "podman container restore" reaches
# criu, that of "podman container checkpoint" does not, and the plugin's
# configuration file /etc/criu/kfd_criu.conf reaches both. Last, with
# runc's criu given no plugin, the export does not restore.

. /opt/kfd-criu/e2e/lib.sh

PLAN=9
IMAGE=localhost/kfd-heartbeat:1
ROOTFS=/opt/kfd-criu/container/rootfs.tar
CONFFILE=/etc/criu/kfd_criu.conf
EXPORT=$WORK/k.tar.gz

tap_plan $PLAN

skip_all() {
	while [ "$E2E_N" -lt $PLAN ]; do
		tap_skip "podman case $((E2E_N + 1))" "$1"
	done
	e2e_exit
}

[ -e /dev/kfd ] || skip_all "no /dev/kfd in this kernel"
command -v podman > /dev/null || skip_all "no podman in this guest"

# runc puts the container in a cgroup of the unified hierarchy
grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts ||
	mount -t cgroup2 cgroup2 /sys/fs/cgroup || skip_all "no cgroup2 file system"
mkdir -p /var/tmp /var/lib/containers /etc/criu
# podman keeps its locks in shared memory, /dev/shm
grep -q ' /dev/shm ' /proc/mounts || { mkdir -p /dev/shm && mount -t tmpfs -o mode=1777 shm /dev/shm; } ||
	echo "# cannot mount /dev/shm"

# pm ARGS...: podman, its output in $WORK/podman.out, shown on failure
pm() {
	podman "$@" > "$WORK/podman.out" 2>&1 && return 0
	echo "# podman $*: failed"
	tail -n 15 "$WORK/podman.out" | sed 's/^/#   /'
	return 1
}

# logfile NAME: the file conmon writes container NAME's output to (the
# k8s-file driver; read directly: a podman command takes seconds here)
logfile() {
	local f

	f=$(podman inspect --format '{{.HostConfig.LogConfig.Path}}' "$1" 2>/dev/null)
	[ -n "$f" ] || f="$(podman inspect --format '{{.StaticDir}}' "$1" 2>/dev/null)/ctr.log"
	[ -f "$f" ] && echo "$f"
}

# beats FILE: the beats in a container's log FILE
beats() {
	local n

	n=$(grep -c beat "$1" 2>/dev/null)
	echo "${n:-0}"
}

# beating NAME: new beats come within about 10 s and none says FAILED
beating() {
	local log before i=0

	log=$(logfile "$1")
	[ -n "$log" ] || { echo "# container $1: no log file"; return 1; }
	before=$(beats "$log")
	while [ "$(beats "$log")" -le "$before" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ "$(beats "$log")" -le "$before" ]; then
		echo "# container $1: no new beat after $before"
		return 1
	fi
	! grep -q FAILED "$log" || { tail -n 5 "$log" | sed 's/^/# /'; return 1; }
}

# state NAME: the container's state (running, exited, ...)
state() {
	podman inspect --format '{{.State.Status}}' "$1" 2>/dev/null
}

# criu_log NAME FILE: CRIU's FILE (dump.log, restore.log) of container
# NAME, which podman keeps with --keep in the container's directory
criu_log() {
	cat "$(podman inspect --format '{{.StaticDir}}' "$1" 2>/dev/null)/$2" 2>/dev/null
}

# 1: the image is imported, the container runs and beats through KFD.
# Host networking, as multi-node training containers have it: criu locks
# a private network namespace with iptables-restore, which this guest
# lacks, and "network-lock nftables" in /etc/criu/runc.conf makes criu
# 4.1.1 itself crash (its option parser then reads the command word of
# a configuration file, which has none: a segfault, seen in this lane).
rc=0
pm import "$ROOTFS" "$IMAGE" || rc=1
pm run -d --name k --network host --device /dev/kfd "$IMAGE" \
	/kfd_heartbeat || rc=1
[ $rc -ne 0 ] || beating k || rc=1
tap_result $rc "podman runs the heartbeat from an imported image, /dev/kfd passed in"

# 2: checkpoint --export: the container stops, the export has our stream
rc=0
pm container checkpoint --keep --compress gzip --export "$EXPORT" k ||
	{ criu_log k dump.log | grep -E 'Error|kfd_criu' | tail -n 25 | sed 's/^/# /'; rc=1; }
[ "$(state k)" = exited ] || { echo "# container k is $(state k) after the checkpoint"; rc=1; }
tar -tzf "$EXPORT" 2>/dev/null | grep -q 'kfdcriu-.*\.stream' ||
	{ echo "# no kfdcriu stream in the export"; rc=1; }
criu_log k dump.log | grep -q 'kfd_criu' ||
	{ echo "# the plugin did not run in the dump"; rc=1; }
tap_result $rc "checkpoint --export saves the container with its KFD stream"

# 3: removed, then restored from the export, the heart beats on
rc=0
pm rm -f k || rc=1
pm container restore --keep --import "$EXPORT" || rc=1
[ "$(state k)" = running ] || { echo "# container k is $(state k) after the restore"; rc=1; }
criu_log k restore.log | grep -q 'kfd_criu: pid [0-9]*: resumed its KFD state' ||
	{ echo "# the plugin did not resume the container's process"; rc=1; }
[ $rc -ne 0 ] || beating k || rc=1
tap_result $rc "restore --import after the container was removed: it beats on"

# 4: --leave-running: the container keeps beating through the checkpoint
rc=0
rm -f "$EXPORT"
pm container checkpoint --leave-running --compress gzip --export "$EXPORT" k || rc=1
[ "$(state k)" = running ] || { echo "# container k is $(state k)"; rc=1; }
beating k || rc=1
tap_result $rc "checkpoint --leave-running: the container beats on"

# 5: the same export restored under a new name, beside the original
rc=0
pm container restore --import "$EXPORT" --name k2 || rc=1
[ "$(state k2)" = running ] || { echo "# container k2 is $(state k2)"; rc=1; }
[ $rc -ne 0 ] || beating k2 || rc=1
beating k || rc=1
tap_result $rc "restore --name k2: a second container from the export beats beside k"

# refused_restore NAME [VAR=VALUE]: restore --import of the export as
# NAME, with VAR in podman's environment, fails with the plugin's line
# for a GPU map to a GPU this machine lacks, and NAME does not run
refused_restore() {
	local name=$1 rc=0

	shift
	if env "$@" podman container restore --import "$EXPORT" --name "$name" \
		> "$WORK/podman.out" 2>&1; then
		echo "# container $name restored"
		rc=1
	fi
	criu_log "$name" restore.log | grep -q 'no such GPU' ||
		{ echo "# no refusal of the plugin in $name's restore.log"; rc=1; }
	[ "$(state "$name")" != running ] || { echo "# container $name runs"; rc=1; }
	[ $rc -eq 0 ] || tail -n 10 "$WORK/podman.out" | sed 's/^/# /'
	return $rc
}

# 6: a GPU map in the environment of "podman container restore" reaches
# criu: podman 5.4 runs the runtime's restore (through conmon) with its
# own environment (measured here: CRIU-PLUGIN-FACTS.md §Q6 read podman
# 4's conmon, which passed only its own variables)
refused_restore k3 KFD_CRIU_GPU_MAP=0x1234=0x5678
tap_result $? "KFD_CRIU_GPU_MAP in podman restore's environment reaches criu: refused"

# 7: the same map in the plugin's configuration file: refused the same way
mkdir -p "${CONFFILE%/*}"
echo "gpu_map = 0x1234=0x5678" > "$CONFFILE"
refused_restore k4
rc=$?
rm -f "$CONFFILE"
tap_result $rc "gpu_map in /etc/criu/kfd_criu.conf reaches criu under podman: refused"

# 8: "podman container checkpoint" gives the runtime an environment of
# its own (PATH and XDG_RUNTIME_DIR): leave_running=0, which the plugin
# under runc's criu swrk answers with a warning in dump.log, does not
# reach it as a variable, and does from the configuration file. After
# the refusals and both checkpoints, k and k2 beat on.
rc=0
KFD_CRIU_LEAVE_RUNNING=0 pm container checkpoint --leave-running --keep \
	--compress gzip --export "$WORK/env.tar.gz" k || rc=1
criu_log k dump.log > "$WORK/env-dump.log"
grep -q 'kfd_criu: file [0-9]*: unpaused' "$WORK/env-dump.log" ||
	{ echo "# no dump.log of the plugin's dump"; rc=1; }
! grep -q 'leave_running=0 not followed' "$WORK/env-dump.log" ||
	{ echo "# KFD_CRIU_LEAVE_RUNNING reached the criu of podman container checkpoint"; rc=1; }
echo "leave_running = 0" > "$CONFFILE"
pm container checkpoint --leave-running --keep --compress gzip \
	--export "$WORK/conf.tar.gz" k || rc=1
rm -f "$CONFFILE"
criu_log k dump.log > "$WORK/conf-dump.log"
grep -q 'leave_running=0 not followed' "$WORK/conf-dump.log" ||
	{ echo "# $CONFFILE did not reach the criu of podman container checkpoint"; rc=1
	  grep -E 'kfd_criu|leave_running|Version' "$WORK/conf-dump.log" | tail -n 12 | sed 's/^/# /'
	  ls -l "$(podman inspect --format '{{.StaticDir}}' k)" | sed 's/^/# /'; }
for c in k k2; do
	beating "$c" || rc=1
done
tap_result $rc "checkpoint: the environment does not reach criu, kfd_criu.conf does; k and k2 beat on"

# 9: without the plugin (runc's criu pointed by /etc/criu/runc.conf at a
# plugin directory with nothing in it) the export does not restore, and
# no container of it runs: its KFD state is the plugin's to bring back
rc=0
mkdir -p "$WORK/no-plugins"
echo "libdir $WORK/no-plugins" > /etc/criu/runc.conf
if podman container restore --import "$EXPORT" --name k5 > "$WORK/podman.out" 2>&1; then
	echo "# restored without the plugin"
	rc=1
fi
rm -f /etc/criu/runc.conf
[ "$(state k5)" != running ] || { echo "# container k5 runs"; rc=1; }
criu_log k5 restore.log | grep -m 3 'Error' | sed 's/^/# /'
tap_result $rc "without the plugin, restore --import fails and no container of it runs"

podman rm -f k k2 k3 k4 k5 > /dev/null 2>&1
e2e_exit
