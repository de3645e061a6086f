# SPDX-License-Identifier: GPL-2.0
#
# With no plugin for /dev/kfd, CRIU must refuse to dump a process that
# holds it, name the file it cannot dump, and leave the process running:
# a failed dump loses nothing.

. /opt/kfd-criu/e2e/lib.sh

tap_plan 2

if [ ! -e /dev/kfd ]; then
	tap_skip "dump refuses /dev/kfd" "no /dev/kfd in this kernel"
	tap_skip "process keeps running" "no /dev/kfd in this kernel"
	e2e_exit
fi

setsid /opt/kfd-criu/e2e/kfd_holder "$WORK/counter" < /dev/null > "$WORK/holder.log" 2>&1 &
pid=$!
wait_for_change "$WORK/counter"

mkdir -p "$WORK/img"
mkdir -p "$WORK/no-plugins"
criu dump -t $pid -D "$WORK/img" -o dump.log -v4 -L "$WORK/no-plugins" > /dev/null 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "Can't dump file" "$WORK/img/dump.log"; then
	tap_result 0 "dump refuses /dev/kfd without a plugin"
else
	tap_diag_file "$WORK/img/dump.log"
	tap_result 1 "dump refuses /dev/kfd without a plugin (criu exit $rc)"
fi

rc=0
alive $pid && wait_for_change "$WORK/counter" || rc=1
[ $rc -eq 0 ] || tap_diag_file "$WORK/holder.log"
tap_result $rc "the process keeps running after the failed dump"
kill -9 $pid 2>/dev/null

e2e_exit
