# SPDX-License-Identifier: GPL-2.0
#
# A ROCm process keeps the thunk's files in /dev/shm (kfd_thunk_shm opens
# and maps them as libhsakmt does). CRIU records them by path, so a restore
# on a fresh host, whose /dev/shm has neither, needs the plugin to bring
# them back (with the dumped size, mode and first bytes) before CRIU opens
# them. Dumped with CRIU's options for ROCm (plugin/criu-rocm.conf).
# The first ROCm process of a boot maps the semaphore under the deleted
# name sem_open() created it as: CRIU dumps that mapping through a link
# it makes in /dev/shm, link_remap.<id>, which a fresh host lacks too.
# kfdcrit checks the dump and finds the program's one event in it.

. /opt/kfd-criu/e2e/lib.sh

PROG=/opt/kfd-criu/e2e/kfd_thunk_shm
PLUGIN=/usr/lib/criu/kfd_criu_plugin.so
MEM=/dev/shm/hsakmt_shared_mem
SEM=/dev/shm/sem.hsakmt_semaphore
PLAN=6
pid=

tap_plan $PLAN

skip_all() {
	while [ "$E2E_N" -lt $PLAN ]; do
		tap_skip "the thunk's /dev/shm files, case $((E2E_N + 1))" "$1"
	done
	e2e_exit
}

[ -e /dev/kfd ] || skip_all "no /dev/kfd in this kernel"
[ -f "$PLUGIN" ] || skip_all "no CRIU plugin at $PLUGIN"
[ -x "$PROG" ] || skip_all "no $PROG"

# The test VM's /dev is a devtmpfs without /dev/shm; ROCm hosts have one.
if ! grep -q ' /dev/shm ' /proc/mounts; then
	mkdir -p /dev/shm && mount -t tmpfs -o mode=1777 tmpfs /dev/shm ||
		skip_all "cannot mount a tmpfs on /dev/shm"
fi

# shm_state: size and mode of the two files, one line
shm_state() {
	stat -c '%s %a' "$MEM" "$SEM" 2>/dev/null | tr '\n' ' '
}

rm -f "$MEM" "$SEM"
setsid "$PROG" "$WORK/counter" < /dev/null > "$WORK/prog.log" 2>&1 &
pid=$!
rc=0
wait_for_change "$WORK/counter" || { tap_diag_file "$WORK/prog.log"; rc=1; }
before=$(shm_state)
[ -n "$before" ] || { echo "# no $MEM or $SEM"; rc=1; }
mkdir -p "$WORK/img"
criu dump -t "$pid" -D "$WORK/img" --link-remap -o dump.log -v4 > /dev/null 2>&1 ||
	{ echo "# criu dump failed"; tap_diag_file "$WORK/img/dump.log"; rc=1; }
wait "$pid" 2>/dev/null
tap_result $rc "a process with the thunk's /dev/shm files dumps"

# A fresh host: no ROCm process has run since boot.
rm -f "$MEM" "$SEM"
rc=0
criu restore -D "$WORK/img" -d -o restore.log -v4 > /dev/null 2>&1 ||
	{ echo "# criu restore failed"; rc=1; }
alive "$pid" && wait_for_change "$WORK/counter" || { echo "# the process does not count"; rc=1; }
grep -q "kfd_criu: file [0-9]*: $MEM was missing: re-created" "$WORK/img/restore.log" ||
	{ echo "# the plugin did not re-create $MEM"; rc=1; }
[ $rc -eq 0 ] || { grep -E 'kfd_criu|Error' "$WORK/img/restore.log" | tail -n 20 | sed 's/^/# /'; }
tap_result $rc "restored into an empty /dev/shm, it counts on under the semaphore"

after=$(shm_state)
rc=0
[ "$after" = "$before" ] || { echo "# before: $before, after: $after"; rc=1; }
tap_result $rc "the re-created files have the dumped sizes and modes"

kfdcrit_check "$WORK/img"
tap_result $? "kfdcrit check accepts the dump"

kfdcrit_events "$WORK/img" 1
tap_result $? "kfdcrit show names the program's one event"

kill -9 "$pid" 2>/dev/null
rm -f "$MEM" "$SEM" /dev/shm/link_remap.*

rc=0
setsid "$PROG" --first "$WORK/counter1" < /dev/null > "$WORK/prog1.log" 2>&1 &
pid=$!
wait_for_change "$WORK/counter1" || { tap_diag_file "$WORK/prog1.log"; rc=1; }
grep -q '/dev/shm/sem\..* (deleted)$' "/proc/$pid/maps" ||
	{ echo "# the semaphore is not mapped under a deleted name"; rc=1; }
mkdir -p "$WORK/img1"
criu dump -t "$pid" -D "$WORK/img1" --link-remap -o dump.log -v4 > /dev/null 2>&1 ||
	{ echo "# criu dump failed"; tap_diag_file "$WORK/img1/dump.log"; rc=1; }
wait "$pid" 2>/dev/null
ls /dev/shm/link_remap.* > /dev/null 2>&1 || { echo "# CRIU made no link_remap"; rc=1; }
rm -f "$MEM" "$SEM" /dev/shm/link_remap.*	# a fresh host
[ $rc -ne 0 ] || criu restore -D "$WORK/img1" -d -o restore.log -v4 > /dev/null 2>&1 ||
	{ echo "# criu restore failed"; rc=1; }
[ $rc -ne 0 ] || { alive "$pid" && wait_for_change "$WORK/counter1"; } ||
	{ echo "# the process does not count"; rc=1; }
grep -q "kfd_criu: file [0-9]*: /dev/shm/link_remap\.[0-9]* was missing: linked to $SEM" \
	"$WORK/img1/restore.log" || { echo "# the plugin did not make the link again"; rc=1; }
[ $rc -eq 0 ] || { grep -E 'kfd_criu|Error|link_remap' "$WORK/img1/restore.log" | tail -n 20 | sed 's/^/# /'; }
tap_result $rc "the first ROCm process of a boot (semaphore mapped under a deleted name) restores on a fresh host"

kill -9 "$pid" 2>/dev/null
rm -f "$MEM" "$SEM" /dev/shm/link_remap.*
e2e_exit
