# SPDX-License-Identifier: GPL-2.0
#
# Real CRIU with the kfd_criu plugin dumps and restores kfd_worker, a
# process that holds /dev/kfd with live state (events, some signaled, the
# mapped event page, a thread blocked in a wait); after every restore the
# process checks that state itself, including that KFD's CRIU state machine
# has it running (not left paused, resumed). Covers a plain dump and restore,
# --leave-running, three cycles, a dump that fails mid-stream, and damaged
# images (a corrupted, a truncated and a missing stream, which RESTORE
# refuses with the kernel's errno in CRIU's log). kfdcrit then reads every
# dump: check accepts each, show names the worker's six events, diff finds
# each dump of a restored process the same as the dump it was restored
# from but for the fields kfdcrit(1) documents, and check refuses the
# damaged streams with the errnos RESTORE gave.

. /opt/kfd-criu/e2e/lib.sh

WORKER=/opt/kfd-criu/e2e/kfd_worker
PLUGIN=/usr/lib/criu/kfd_criu_plugin.so
PLAN=18
# kfd_worker's events: seven created, one destroyed (the gap)
WORKER_EVENTS=6
W=$WORK/w
SMALL=$WORK/small
pid=

tap_plan $PLAN

skip_all() {
	while [ "$E2E_N" -lt $PLAN ]; do
		tap_skip "kfd_criu dump/restore case $((E2E_N + 1))" "$1"
	done
	e2e_exit
}

[ -e /dev/kfd ] || skip_all "no /dev/kfd in this kernel"
[ -f "$PLUGIN" ] || skip_all "no CRIU plugin at $PLUGIN"
[ -x "$WORKER" ] || skip_all "no $WORKER"

# counter: the worker's round count (its file is space-padded).
counter() {
	local n
	n=$(tr -d ' \n' < "$W/counter" 2>/dev/null)
	echo "${n:-0}"
}

# image_ids DIR: the CRIU file ids of the plugin's images in DIR.
image_ids() {
	ls "$1" 2>/dev/null | sed -n 's/^kfdcriu-\([0-9]*\)\.img$/\1/p'
}

# diag_log LOG: the plugin's lines and the errors of a CRIU log.
diag_log() {
	[ -f "$1" ] && grep -E 'kfd_criu|Error' "$1" | tail -n 20 | sed 's/^/# /'
}

start_worker() {
	mkdir -p "$W"
	setsid "$WORKER" "$W" < /dev/null >> "$WORK/worker.log" 2>&1 &
	pid=$!
	wait_for_change "$W/counter"
}

stop_worker() {
	[ -n "$pid" ] || return 0
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	wait_gone "$pid"
}

# self_check: the worker checks its KFD state; true if it reports PASS.
self_check() {
	local i=0
	rm -f "$W/result"
	: > "$W/trigger"
	while [ ! -f "$W/result" ] && [ $i -lt 150 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q '^PASS' "$W/result" 2>/dev/null && return 0
	echo "# self-check: $(cat "$W/result" 2>/dev/null || echo 'no result in 15 s')"
	return 1
}

# dump DIR [CRIU OPTION...]: checkpoint the worker into DIR; DUMPS lists
# the dumps that succeeded, for kfdcrit.
DUMPS=
dump() {
	local dir=$1
	shift
	mkdir -p "$dir"
	criu dump -t "$pid" -D "$dir" -o dump.log -v4 "$@" > /dev/null 2>&1 ||
		return 1
	DUMPS="$DUMPS $dir"
}

# restore DIR [VAR=VALUE...]: restore from DIR, detached, with VARs set.
restore() {
	local dir=$1
	shift
	rm -f "$dir/restore.log"
	env "$@" criu restore -D "$dir" -d -o restore.log -v4 > /dev/null 2>&1
}

# has_images DIR: DIR holds the plugin's metadata and a non-empty stream.
has_images() {
	local id ids
	ids=$(image_ids "$1")
	[ -n "$ids" ] || { echo "# no kfdcriu-*.img in $1"; return 1; }
	for id in $ids; do
		[ -s "$1/kfdcriu-$id.stream" ] || { echo "# no kfdcriu-$id.stream"; return 1; }
	done
}

# check_restore DIR [LAST]: restoring DIR brings the worker back resumed,
# counting on (past LAST, when given) and passing its self-check.
check_restore() {
	local dir=$1 last=$2 rc=0 now
	restore "$dir" || { echo "# criu restore failed"; rc=1; }
	if [ $rc -eq 0 ]; then
		alive "$pid" || { echo "# pid $pid is not running"; rc=1; }
		wait_for_change "$W/counter" || { echo "# the counter stands still"; rc=1; }
		now=$(counter)
		if [ -n "$last" ] && [ "$now" -le "$last" ]; then
			echo "# the counter went from $last to $now"
			rc=1
		fi
		self_check || rc=1
		grep -q "kfd_criu: pid $pid: resumed its KFD state" "$dir/restore.log" ||
			{ echo "# the plugin did not RESUME pid $pid"; rc=1; }
	fi
	grep -q 'Error (.*kfd_criu: ' "$dir/restore.log" && rc=1
	[ $rc -eq 0 ] || diag_log "$dir/restore.log"
	return $rc
}

# refused_restore DIR LINE [VAR=VALUE...]: restoring DIR fails, CRIU's log
# has LINE (a grep pattern), and no process is left behind.
refused_restore() {
	local dir=$1 line=$2 rc=0
	shift 2
	if restore "$dir" "$@"; then
		echo "# the damaged image restored"
		rc=1
	fi
	grep -q "$line" "$dir/restore.log" || { echo "# no \"$line\" in the log"; rc=1; }
	wait_gone "$pid" || { echo "# pid $pid is left running"; stop_worker; rc=1; }
	[ $rc -eq 0 ] || diag_log "$dir/restore.log"
	return $rc
}

# 1: the worker itself works
start_worker
self_check
rc=$?
[ $rc -eq 0 ] || tap_diag_file "$WORK/worker.log"
tap_result $rc "kfd_worker holds live KFD state and passes its own check"

# 2, 3: plain dump, kill, restore
rc=0
dump "$WORK/plain" || { echo "# criu dump failed"; rc=1; }
wait "$pid" 2>/dev/null
wait_gone "$pid" || { echo "# pid $pid still runs after the dump"; rc=1; }
has_images "$WORK/plain" || rc=1
[ $rc -eq 0 ] || diag_log "$WORK/plain/dump.log"
tap_result $rc "criu dump writes the plugin's images and ends the process"

check_restore "$WORK/plain" "$(counter)"
tap_result $? "criu restore: the process carries on with its KFD state intact"

# 4, 5: --leave-running
rc=0
dump "$WORK/lr" --leave-running || { echo "# criu dump --leave-running failed"; rc=1; }
alive "$pid" && wait_for_change "$W/counter" || { echo "# the process stopped"; rc=1; }
self_check || rc=1
grep -q 'kfd_criu: file [0-9]*: unpaused the process' "$WORK/lr/dump.log" ||
	{ echo "# the plugin did not unpause"; rc=1; }
# (kfd_worker's self-check also fails if KFD still has the process paused)
dump "$WORK/lr2" -R || { echo "# a second dump of the running process failed"; rc=1; }
[ $rc -eq 0 ] || { diag_log "$WORK/lr/dump.log"; diag_log "$WORK/lr2/dump.log"; }
tap_result $rc "--leave-running: the process runs on, unpaused, with usable KFD state"

stop_worker
check_restore "$WORK/lr"
tap_result $? "--leave-running: the image restores once the original has exited"

# 6-8: three successive cycles of the same process
for c in 1 2 3; do
	rc=0
	dump "$WORK/cycle$c" || { echo "# criu dump failed"; diag_log "$WORK/cycle$c/dump.log"; rc=1; }
	wait_gone "$pid" || { echo "# pid $pid still runs after the dump"; rc=1; }
	[ $rc -ne 0 ] || check_restore "$WORK/cycle$c" "$(counter)" || rc=1
	tap_result $rc "cycle $c of 3: dump, restore, KFD state intact"
done

# 9, 10: the stream's file system fills up during CHECKPOINT. The plugin
# follows a symlink named like its stream into a tiny tmpfs; the ids of
# the last dump and all small ids cover the id CRIU will give /dev/kfd.
rc=0
mkdir -p "$SMALL" "$WORK/fail"
mount -t tmpfs -o size=8k,mode=0755 tmpfs "$SMALL" || { echo "# cannot mount a tmpfs"; rc=1; }
for id in $(image_ids "$WORK/cycle3") $(seq 1 64); do
	ln -sf "$SMALL/stream-$id" "$WORK/fail/kfdcriu-$id.stream"
done
if dump "$WORK/fail"; then
	echo "# the dump succeeded with its stream on a full file system"
	rc=1
fi
grep -q 'kfd_criu: file [0-9]*: CHECKPOINT into .* failed' "$WORK/fail/dump.log" ||
	{ echo "# no failed CHECKPOINT in the dump log"; rc=1; }
[ "$(cat "$SMALL"/stream-* 2>/dev/null | wc -c)" -gt 0 ] ||
	{ echo "# the kernel wrote nothing before it failed"; rc=1; }
grep -q 'kfd_criu: file [0-9]*: unpaused the process' "$WORK/fail/dump.log" ||
	{ echo "# the plugin did not unpause"; rc=1; }
alive "$pid" && wait_for_change "$W/counter" || { echo "# the process stopped"; rc=1; }
self_check || rc=1
[ $rc -eq 0 ] || diag_log "$WORK/fail/dump.log"
tap_result $rc "a dump that fails mid-stream leaves the process running and unpaused"
umount "$SMALL" 2>/dev/null

rc=0
dump "$WORK/good" -R || { echo "# criu dump failed"; diag_log "$WORK/good/dump.log"; rc=1; }
has_images "$WORK/good" || rc=1
alive "$pid" && self_check || rc=1
tap_result $rc "after the failed dump the same process dumps again"

# 11-14: damaged images of that last dump; the original is gone
stop_worker
id=$(image_ids "$WORK/good" | head -n 1)
stream=kfdcriu-$id.stream
size=$(wc -c < "$WORK/good/$stream" 2>/dev/null || echo 0)

rm -rf "$WORK/bad"
cp -r "$WORK/good" "$WORK/bad"
# Mid-stream lies inside a record (the event page's): its CRC32C breaks.
printf 'CORRUPTED-BYTES!' |
	dd of="$WORK/bad/$stream" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
refused_restore "$WORK/bad" "kfd_criu: file $id: RESTORE from $stream failed: Bad message"
tap_result $? "a corrupted stream: RESTORE fails with the kernel's EBADMSG in CRIU's log"

rm -rf "$WORK/trunc"
cp -r "$WORK/good" "$WORK/trunc"
head -c $((size / 2)) "$WORK/good/$stream" > "$WORK/trunc/$stream"
refused_restore "$WORK/trunc" "kfd_criu: file $id: RESTORE from $stream failed: No data available"
tap_result $? "a truncated stream: RESTORE fails with the kernel's ENODATA"

rm -rf "$WORK/gone"
cp -r "$WORK/good" "$WORK/gone"
rm -f "$WORK/gone/$stream"
refused_restore "$WORK/gone" "kfd_criu: file $id: RESTORE from $stream failed: No such file"
tap_result $? "a missing stream file: the restore fails naming it"

check_restore "$WORK/good"
tap_result $? "after the refused restores the intact image restores"
stop_worker

# 15-18: kfdcrit on every dump that succeeded
rc=0
[ -n "$DUMPS" ] || { echo "# no dump succeeded"; rc=1; }
for d in $DUMPS; do
	kfdcrit_check "$d" || rc=1
done
tap_result $rc "kfdcrit check accepts each of the $(echo $DUMPS | wc -w) dumps"

rc=0
[ -n "$DUMPS" ] || rc=1
for d in $DUMPS; do
	kfdcrit_events "$d" $WORKER_EVENTS || rc=1
done
tap_result $rc "kfdcrit show names the worker's $WORKER_EVENTS events in each dump"

# Each is the dump of the process restored from the one before it.
rc=0
set -- plain lr cycle1 cycle2 cycle3 good
while [ $# -ge 2 ]; do
	kfdcrit_diff "$WORK/$1" "$WORK/$2" || rc=1
	shift
done
tap_result $rc "kfdcrit diff: each dump of a restore equals the dump before it but for kfdcrit(1)'s volatile fields"

rc=0
kfdcrit_run check "$WORK/bad"
[ "$KC_RC" -eq 74 ] || { echo "# corrupted: exit $KC_RC, want EBADMSG (74): $KC_OUT"; rc=1; }
kfdcrit_run check "$WORK/trunc"
[ "$KC_RC" -eq 61 ] || { echo "# truncated: exit $KC_RC, want ENODATA (61): $KC_OUT"; rc=1; }
tap_result $rc "kfdcrit check refuses the corrupted and the truncated stream with RESTORE's EBADMSG and ENODATA"

e2e_exit
