#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The Debian 13 lane's own CRIU cases, on trixie's stock kernel with our
# amdgpu from its DKMS: the guest's criu is trixie's 4.1 (it needs glibc
# 2.38+, so it and its libraries come from the Debian 13 userland, not
# from the build machine), the plugin ours. The demo's patient,
# kfd_heartbeat, whose heartbeat is a KFD event, is dumped and restored;
# a GPU map that names no GPU of this machine and a malformed one make
# the restore fail with the plugin's line in CRIU's log and nothing left
# running, and the same images then restore: a refused restore changed
# nothing. The e2e programs (worker, --leave-running, a dump of a
# restored process, damaged images, no plugin) run in this lane as well.
#
# kfd_criu43_test.sh runs the same cases on experimental's CRIU 4.3
# (KFD_CRIU4_BIN names the directory of its criu), and two of 4.3 alone:
# the plugin's options given by --plugin-option, on the command line and
# in a CRIU configuration file (how runc and podman pass options to the
# criu they run), refuse the same GPU map as the environment does.

. /opt/kfd-criu/e2e/lib.sh

CONF=/etc/kfd-criu
HEART=/opt/kfd-criu/e2e/kfd_heartbeat
PLUGIN=/usr/lib/criu/kfd_criu_plugin.so
VERSION_FILE=$CONF/criu-version
PLAN=7
if [ -n "${KFD_CRIU4_BIN:-}" ]; then
	PATH=$KFD_CRIU4_BIN:$PATH
	VERSION_FILE=$CONF/criu43-version
	PLAN=9
fi
H=$WORK/h
pid=

tap_plan $PLAN

skip_all() {
	while [ "$E2E_N" -lt $PLAN ]; do
		tap_skip "CRIU 4 case $((E2E_N + 1))" "$1"
	done
	e2e_exit
}

[ -e /dev/kfd ] || skip_all "no /dev/kfd in this kernel"
[ -f "$PLUGIN" ] || skip_all "no CRIU plugin at $PLUGIN"

# diag_log LOG: the plugin's lines and the errors of a CRIU log.
diag_log() {
	[ -f "$1" ] && grep -E 'kfd_criu|Error' "$1" | tail -n 20 | sed 's/^/# /'
}

# beats: how many beats the heartbeat has printed
beats() {
	local n

	n=$(wc -l < "$WORK/heart.log" 2>/dev/null)
	echo $((${n:-0} + 0))
}

# beating: new beats come within about 5 s and none says FAILED.
beating() {
	local before=$(beats) i=0

	while [ "$(beats)" -le "$before" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ "$(beats)" -le "$before" ]; then
		echo "# no new beat after $before"
		return 1
	fi
	! grep -q FAILED "$WORK/heart.log" ||
		{ tail -n 5 "$WORK/heart.log" | sed 's/^/# /'; return 1; }
}

# restore DIR [VAR=VALUE...] [-- CRIU OPTION...]: criu restore of DIR,
# with VARs in its environment and OPTIONs on its command line.
restore() {
	local dir=$1 vars=

	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		vars="$vars $1"
		shift
	done
	[ $# -eq 0 ] || shift
	rm -f "$dir/restore.log"
	env $vars criu restore -D "$dir" -d -o restore.log -v4 "$@" > /dev/null 2>&1
}

# refused DIR LINE [VAR=VALUE...] [-- CRIU OPTION...]: the restore fails,
# CRIU's log has LINE (fixed text), and no process is left behind.
refused() {
	local dir=$1 line=$2 rc=0
	shift 2
	if restore "$dir" "$@"; then
		echo "# restored with $*"
		rc=1
	fi
	grep -qF "$line" "$dir/restore.log" || { echo "# no \"$line\" in the log"; rc=1; }
	wait_gone "$pid" || { echo "# pid $pid is left running"; kill -9 "$pid"; rc=1; }
	[ $rc -eq 0 ] || diag_log "$dir/restore.log"
	return $rc
}

# 1: the criu that runs is the userland's (4.1, or the unpacked 4.3),
# not this lane's host's
criu --version > "$WORK/version" 2>&1
rc=$?
sed 's/^/# /' "$WORK/version"
want=$(sed 's/-.*//' "$VERSION_FILE")
[ $rc -eq 0 ] && grep -qx "Version: $want" "$WORK/version"
tap_result $? "criu is Debian's $want"

# 2: dump of the heartbeat, a KFD event signaled and waited for
mkdir -p "$H"
setsid "$HEART" < /dev/null > "$WORK/heart.log" 2>&1 &
pid=$!
rc=0
beating || rc=1
criu dump -t "$pid" -D "$H" -o dump.log -v4 > /dev/null 2>&1 || { echo "# criu dump failed"; rc=1; }
wait_gone "$pid" || { echo "# pid $pid still runs after the dump"; rc=1; }
ls "$H"/kfdcriu-*.stream > /dev/null 2>&1 || { echo "# no kfdcriu stream in the dump"; rc=1; }
[ $rc -eq 0 ] || diag_log "$H/dump.log"
tap_result $rc "criu $want dumps kfd_heartbeat with the plugin and ends it"

# 3, 4: GPU maps RESTORE cannot follow are refused, nothing left behind
refused "$H" "no such GPU in this machine's KFD topology" KFD_CRIU_GPU_MAP=0x1234=0x5678
tap_result $? "a GPU map to a GPU not in the topology fails the restore, with the plugin's line"
refused "$H" "expected IMG=LOCAL" KFD_CRIU_GPU_MAP=0x1234
tap_result $? "a malformed GPU map fails the restore, with the plugin's line"

# 4.3 only: the same map as a plugin option, on the command line and in
# a configuration file given by --config (runc's runc.conf, podman's)
if [ $PLAN -eq 9 ]; then
	refused "$H" "no such GPU in this machine's KFD topology" -- \
		--plugin-option kfd_criu.gpu_map=0x1234=0x5678
	tap_result $? "--plugin-option kfd_criu.gpu_map reaches the plugin: the same refusal"
	echo "plugin-option kfd_criu.gpu_map=0x1234=0x5678" > "$WORK/criu.conf"
	refused "$H" "no such GPU in this machine's KFD topology" -- \
		--config "$WORK/criu.conf"
	tap_result $? "plugin-option in a CRIU configuration file reaches the plugin: refused"
fi

# 5, 6: the images refused above restore, and the heart beats on
rc=0
restore "$H" || { echo "# criu restore failed"; rc=1; }
alive "$pid" || { echo "# pid $pid is not running"; rc=1; }
grep -q "kfd_criu: pid $pid: resumed its KFD state" "$H/restore.log" ||
	{ echo "# the plugin did not RESUME pid $pid"; rc=1; }
[ $rc -eq 0 ] || diag_log "$H/restore.log"
tap_result $rc "criu $want restores it after the refusals, the plugin resumes it"
beating
tap_result $? "the restored heartbeat beats on: its KFD event came back"

# 7: a second dump, of the restored process, with --leave-running
rc=0
mkdir -p "$WORK/h2"
criu dump -t "$pid" -D "$WORK/h2" -o dump.log -v4 --leave-running > /dev/null 2>&1 ||
	{ echo "# criu dump --leave-running failed"; diag_log "$WORK/h2/dump.log"; rc=1; }
beating || rc=1
tap_result $rc "a restored process dumps again and, left running, beats on"

kill -9 "$pid" 2>/dev/null
e2e_exit
