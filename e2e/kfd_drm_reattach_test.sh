# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# The drm_reattach plugin's stateless DRM reattach (DRM_REATTACH_ENABLE,
# issues 20 and 38), installed beside kfd_criu,
# with real CRIU and vgem's render node, which stands in for an iGPU that
# encodes video. kfd_vgem_encoder holds a render node fd, a GEM handle on
# it and a mapping of its buffer through it, runs a job on the handle each
# round and re-creates its buffer when a job fails ("reinits").
#
# Without the option criu dump fails, the plugin's line names the option
# and the process runs on untouched. With it the process dumps, and after
# a restore carries on with a fresh vgem file at its fd: the old handle
# fails (ENOENT; GEM_CLOSE says EINVAL), it reinits once and its new handle
# works; its old mapping is zero-filled memory of the same size (the
# restore logs the bytes); its private memory and other fds are as they
# were. A dma-buf or vgem's card node held open is refused, named. A
# process with /dev/kfd as well gets its KFD events back, RESUMEd, and
# vgem reattached; kfdcrit accepts that dump and shows both.

# shellcheck source=lib.sh
. /opt/kfd-criu/e2e/lib.sh

PROG=/opt/kfd-criu/e2e/kfd_vgem_encoder
PLUGIN=/usr/lib/criu/drm_reattach.so
OPTION=DRM_REATTACH_ENABLE
# kfd_vgem_encoder's buffer: 256 x 64 pixels of 32 bits
BUF_SIZE=65536
PLAN=12
pid=

tap_plan $PLAN

skip_all() {
	while [ "$E2E_N" -lt $PLAN ]; do
		tap_skip "stateless DRM reattach, case $((E2E_N + 1))" "$1"
	done
	e2e_exit
}

[ -f "$PLUGIN" ] || skip_all "no CRIU plugin at $PLUGIN"
[ -x "$PROG" ] || skip_all "no $PROG"
ls /dev/dri/renderD* > /dev/null 2>&1 || skip_all "no DRM render node (CONFIG_DRM_VGEM)"

# st DIR KEY: the value of KEY in the program's DIR/status
st() {
	sed -n "s/^$2 //p" "$1/status" 2>/dev/null
}

# show DIR: the program's status on one diagnostic line
show() {
	echo "# status: $(tr '\n' ' ' < "$1/status" 2>/dev/null)"
}

# wait_rounds DIR N: true once the program's round count passes N (~10 s)
wait_rounds() {
	local i=0 n
	while [ $i -lt 100 ]; do
		n=$(st "$1" rounds)
		[ -n "$n" ] && [ "$n" -gt "$2" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# start DIR [OPTION...]: run the program on DIR, pid its pid, until it has
# done two rounds
start() {
	local dir="$1"
	shift
	mkdir -p "$dir"
	rm -f "$dir/status"
	setsid "$PROG" "$dir" "$@" < /dev/null >> "$WORK/prog.log" 2>&1 &
	pid=$!
	wait_rounds "$dir" 1
}

stop() {
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	wait_gone "$pid"
}

# dump IMG [VAR=VALUE...]: criu dump of pid into IMG, the option unset
# unless a VAR sets it
dump() {
	local img="$1"
	shift
	mkdir -p "$img"
	env -u "$OPTION" "$@" criu dump -t "$pid" -D "$img" -o dump.log -v4 > /dev/null 2>&1
}

# restore IMG: criu restore from IMG, detached
restore() {
	rm -f "$1/restore.log"
	criu restore -D "$1" -d -o restore.log -v4 > /dev/null 2>&1
}

# diag_log LOG: the plugin's lines and the errors of a CRIU log
diag_log() {
	[ -f "$1" ] && grep -E 'kfd_criu|drm_reattach|Error' "$1" | tail -n 20 | sed 's/^/# /'
}

# is KEY VALUE DIR: the program's status has KEY VALUE, else says so
is() {
	[ "$(st "$3" "$1")" = "$2" ] && return 0
	echo "# $1 is \"$(st "$3" "$1")\", want \"$2\""
	return 1
}

# runs_on DIR: the process is alive and counts rounds and jobs
runs_on() {
	local rounds jobs
	rounds=$(st "$1" rounds)
	jobs=$(st "$1" jobs)
	alive "$pid" && wait_rounds "$1" "$rounds" && wait_rounds "$1" $((rounds + 1)) &&
		[ "$(st "$1" jobs)" -gt "$jobs" ] && return 0
	echo "# pid $pid does not run on"
	show "$1"
	return 1
}

# refused DIR IMG LINE: a dump with the option fails with LINE (a grep
# pattern) in its log, and the process runs on without a lost device
refused() {
	local rc=0
	if dump "$2" "$OPTION=1"; then
		echo "# the dump succeeded"
		rc=1
	fi
	grep -q "$3" "$2/dump.log" || { echo "# no \"$3\" in the log"; diag_log "$2/dump.log"; rc=1; }
	runs_on "$1" || rc=1
	is lost 0 "$1" || rc=1
	return $rc
}

# 1: the program on its own
E=$WORK/enc
rc=0
start "$E" || { echo "# kfd_vgem_encoder does not run"; tap_diag_file "$WORK/prog.log"; rc=1; }
fd=$(st "$E" render_fd)
link=$(readlink "/proc/$pid/fd/$fd" 2>/dev/null)
case "$link" in /dev/dri/renderD*) ;; *) echo "# fd $fd is \"$link\""; rc=1 ;; esac
grep -q ' /dev/dri/renderD[0-9]*$' "/proc/$pid/maps" || { echo "# no render node mapping"; rc=1; }
is driver vgem "$E" && is reinits 0 "$E" && is buffer_ok 1 "$E" && is fds_ok 1 "$E" || rc=1
[ "$(st "$E" jobs)" -gt 0 ] 2>/dev/null || { show "$E"; rc=1; }
tap_result $rc "kfd_vgem_encoder holds vgem's render node, a GEM handle and a mapping through it, and runs jobs"
[ $rc -eq 0 ] || { stop; skip_all "kfd_vgem_encoder does not run on vgem"; }

# 2, 3: without the option
rc=0
if dump "$WORK/off"; then
	echo "# the dump succeeded without $OPTION"
	rc=1
fi
grep -q "drm_reattach: .*no KFD GPU's render node: not dumped; $OPTION=1" "$WORK/off/dump.log" ||
	{ echo "# no line naming $OPTION=1"; diag_log "$WORK/off/dump.log"; rc=1; }
tap_result $rc "without $OPTION, criu dump fails and the plugin's line names the option"

rc=0
runs_on "$E" || rc=1
is lost 0 "$E" && is reinits 0 "$E" && is buffer_ok 1 "$E" || rc=1
tap_result $rc "... and the process runs on, its device untouched"

# 4-8: with the option: dump, kill, restore
rc=0
map=$(st "$E" map)
rounds=$(st "$E" rounds)
dump "$WORK/on" "$OPTION=1" || { echo "# criu dump failed"; rc=1; }
wait "$pid" 2>/dev/null
wait_gone "$pid" || { echo "# pid $pid still runs after the dump"; rc=1; }
ls "$WORK/on"/kfdcriu-[0-9]*.img > /dev/null 2>&1 || { echo "# no kfdcriu-<id>.img"; rc=1; }
[ -f "$WORK/on/kfdcriu-drm.img" ] || { echo "# no kfdcriu-drm.img"; rc=1; }
grep -q "drm_reattach: file [0-9]*: renderD[0-9]* (vgem): dumped for a reattach" "$WORK/on/dump.log" ||
	{ echo "# the plugin did not dump the render node"; rc=1; }
grep -qE 'Error \(.*(kfd_criu|drm_reattach): ' "$WORK/on/dump.log" && rc=1
[ $rc -eq 0 ] || diag_log "$WORK/on/dump.log"
tap_result $rc "with $OPTION=1, criu dump writes the render node's identity and its mappings' list, and ends the process"

rc=0
restore "$WORK/on" || { echo "# criu restore failed"; rc=1; }
alive "$pid" || { echo "# pid $pid is not running"; rc=1; }
wait_rounds "$E" "$rounds" && runs_on "$E" || rc=1
[ $rc -eq 0 ] || diag_log "$WORK/on/restore.log"
tap_result $rc "criu restore: the process carries on at its pid, running jobs"

rc=0
is render_fd "$fd" "$E" && is driver vgem "$E" && is lost 1 "$E" && is lost_errno ENOENT "$E" &&
	is old_close_errno EINVAL "$E" && is reinits 1 "$E" && is buffer_ok 1 "$E" || rc=1
[ "$(readlink "/proc/$pid/fd/$fd")" = "$link" ] || { echo "# fd $fd is not $link"; rc=1; }
grep -q "drm_reattach: file [0-9]*: renderD[0-9]* (vgem) reattached as a fresh DRM file" \
	"$WORK/on/restore.log" || { echo "# the plugin did not reattach"; rc=1; }
[ $rc -eq 0 ] || { show "$E"; diag_log "$WORK/on/restore.log"; }
tap_result $rc "fd $fd is a fresh file of $link: the old handle fails with ENOENT (GEM_CLOSE: EINVAL), one reinit, the new handle works"

rc=0
is old_map zeros "$E" || rc=1
line=$(grep "^${map#0x}-" "/proc/$pid/maps")
case "$line" in
*/memfd:drm_reattach:renderD*) ;;
*) echo "# the old mapping at $map is \"$line\""; rc=1 ;;
esac
range=${line%% *}
[ $((0x${range#*-} - 0x${range%-*})) -eq $BUF_SIZE ] 2>/dev/null ||
	{ echo "# the old mapping is $range, not $BUF_SIZE bytes"; rc=1; }
grep -q "drm_reattach: pid $pid: renderD[0-9]*: $BUF_SIZE bytes in 1 mapping(s) are zero-filled" \
	"$WORK/on/restore.log" || { echo "# no dropped bytes in the log"; rc=1; }
[ $rc -eq 0 ] || diag_log "$WORK/on/restore.log"
tap_result $rc "the old mapping reads zeros: zero-filled memory of its $BUF_SIZE bytes, logged as dropped"

rc=0
is memory_ok 1 "$E" && is fds_ok 1 "$E" && is version_errors 0 "$E" || rc=1
tap_result $rc "the process's private memory, its pipe's bytes and its file's offset are as they were"
stop

# 9, 10: files that stay refused with the option
rc=0
start "$WORK/dmabuf" --hold-dma-buf || { echo "# the program does not run"; rc=1; }
refused "$WORK/dmabuf" "$WORK/dmabuf-img" "drm_reattach: file [0-9]*: a dma-buf: never dumped" || rc=1
stop
tap_result $rc "a process that holds a dma-buf: criu dump with $OPTION=1 fails, naming it; the process runs on"

rc=0
start "$WORK/card" --hold-card || { echo "# the program does not run"; rc=1; }
refused "$WORK/card" "$WORK/card-img" \
	"drm_reattach: file [0-9]*: /dev/dri/card[0-9]* is a DRM card (display) node: never dumped" || rc=1
stop
tap_result $rc "a process that holds vgem's card node: criu dump with $OPTION=1 fails, naming it; the process runs on"

# 11, 12: KFD state and vgem in one process
if [ ! -e /dev/kfd ]; then
	tap_skip "a process with /dev/kfd and vgem" "no /dev/kfd in this kernel"
	tap_skip "kfdcrit on its dump" "no /dev/kfd in this kernel"
	e2e_exit
fi
K=$WORK/kfd
rc=0
start "$K" --kfd || { echo "# the program does not run with --kfd"; tap_diag_file "$WORK/prog.log"; rc=1; }
beats=$(st "$K" kfd_beats)
is kfd_errors 0 "$K" || rc=1
dump "$WORK/kfd-img" "$OPTION=1" || { echo "# criu dump failed"; diag_log "$WORK/kfd-img/dump.log"; rc=1; }
wait "$pid" 2>/dev/null
wait_gone "$pid" || rc=1
restore "$WORK/kfd-img" || { echo "# criu restore failed"; rc=1; }
runs_on "$K" || rc=1
[ "$(st "$K" kfd_beats)" -gt "${beats:-0}" ] 2>/dev/null || { echo "# no KFD beat since the dump"; rc=1; }
is kfd_errors 0 "$K" && is reinits 1 "$K" && is old_map zeros "$K" && is memory_ok 1 "$K" || rc=1
grep -q "kfd_criu: pid $pid: resumed its KFD state" "$WORK/kfd-img/restore.log" ||
	{ echo "# the plugin did not RESUME pid $pid"; rc=1; }
grep -q "drm_reattach: file [0-9]*: renderD[0-9]* (vgem) reattached" "$WORK/kfd-img/restore.log" ||
	{ echo "# the plugin did not reattach vgem"; rc=1; }
grep -qE 'Error \(.*(kfd_criu|drm_reattach): ' "$WORK/kfd-img/restore.log" && rc=1
[ $rc -eq 0 ] || { show "$K"; diag_log "$WORK/kfd-img/restore.log"; }
stop
tap_result $rc "a process with /dev/kfd and vgem: its KFD events come back and beat, RESUMEd, and vgem is reattached"

rc=0
kfdcrit_check "$WORK/kfd-img" && kfdcrit_events "$WORK/kfd-img" 2 || rc=1
echo "$KC_OUT" | grep -q "render node renderD[0-9]* of DRM driver vgem, reattached without its state" ||
	{ echo "# kfdcrit show does not name the reattached render node"; rc=1; }
tap_result $rc "kfdcrit check accepts that dump's KFD stream; show names its two events and the reattached render node"

e2e_exit
