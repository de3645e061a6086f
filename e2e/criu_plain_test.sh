# SPDX-License-Identifier: GPL-2.0
#
# The VM's CRIU works at all: "criu check" passes, and a plain process
# (no /dev/kfd) survives dump, kill and restore with its state. Every
# other e2e test builds on this.

. /opt/kfd-criu/e2e/lib.sh

tap_plan 3

criu check > "$WORK/check.log" 2>&1
rc=$?
[ $rc -eq 0 ] || tap_diag_file "$WORK/check.log"
tap_result $rc "criu check"

# A counter loop with no controlling terminal, as CRIU wants it. Each
# count is renamed into place, so that the counter never reads empty: a
# dump may freeze the loop between its write and the next.
setsid sh -c 'i=0; while :; do i=$((i + 1)); echo $i > '"$WORK"'/counter.new; mv '"$WORK"'/counter.new '"$WORK"'/counter; sleep 0.1; done' \
	< /dev/null > /dev/null 2>&1 &
pid=$!
wait_for_change "$WORK/counter"

mkdir -p "$WORK/img"
criu dump -t $pid -D "$WORK/img" -o dump.log -v4 > /dev/null 2>&1
rc=$?
wait $pid 2>/dev/null
if [ $rc -eq 0 ] && alive $pid; then
	rc=1
	echo "# the dumped process is still running"
fi
[ $rc -eq 0 ] || tap_diag_file "$WORK/img/dump.log"
tap_result $rc "criu dump of a plain process"

last=$(cat "$WORK/counter")
criu restore -D "$WORK/img" -d -o restore.log -v4 > /dev/null 2>&1
rc=$?
if [ $rc -eq 0 ]; then
	wait_for_change "$WORK/counter" || rc=1
	now=$(cat "$WORK/counter")
	# The restored loop continues from its own count, not from zero.
	[ -n "$last" ] && [ "$now" -gt "$last" ] 2>/dev/null || rc=1
	alive $pid || rc=1
	echo "# counter $last before restore, $now after; pid $pid"
fi
[ $rc -eq 0 ] || tap_diag_file "$WORK/img/restore.log"
tap_result $rc "criu restore continues the process with its state"
kill -9 $pid 2>/dev/null

e2e_exit
