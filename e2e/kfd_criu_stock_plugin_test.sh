# SPDX-License-Identifier: GPL-2.0
#
# kfd_criu beside CRIU's amdgpu plugin. Debian ships no amdgpu_plugin.so,
# so a stand-in of that name that claims /dev/kfd as the real one does
# (plugin/tests/amdgpu_plugin_standin.c) shares a plugin directory with
# kfd_criu. Either readdir() order must fail the dump with kfd_criu's one
# line, before the process is touched, instead of letting the stand-in
# take /dev/kfd for a silent, empty dump. Without the stand-in, the same
# directory dumps, and kfdcrit checks that dump and finds kfd_holder's one
# event in it.

. /opt/kfd-criu/e2e/lib.sh

HOLDER=/opt/kfd-criu/e2e/kfd_holder
PLUGIN=/usr/lib/criu/kfd_criu_plugin.so
STANDIN=/opt/kfd-criu/e2e/stock/amdgpu_plugin.so
PLAN=5
LINE="kfd_criu: CRIU's amdgpu plugin .*amdgpu_plugin.so is installed too"
pid=

tap_plan $PLAN

skip_all() {
	while [ "$E2E_N" -lt $PLAN ]; do
		tap_skip "kfd_criu beside the amdgpu plugin, case $((E2E_N + 1))" "$1"
	done
	e2e_exit
}

[ -e /dev/kfd ] || skip_all "no /dev/kfd in this kernel"
[ -f "$PLUGIN" ] || skip_all "no CRIU plugin at $PLUGIN"
[ -f "$STANDIN" ] || skip_all "no stand-in at $STANDIN"

setsid "$HOLDER" "$WORK/counter" < /dev/null > "$WORK/holder.log" 2>&1 &
pid=$!
wait_for_change "$WORK/counter"

# plugins DIR FILE...: a plugin directory holding FILEs, created in order
# (tmpfs lists the newest first, so the two orders load differently).
plugins() {
	local dir=$1 f
	shift
	mkdir -p "$dir"
	for f in "$@"; do
		cp "$f" "$dir/"
	done
}

# refused ORDER: the dump with both plugins fails with kfd_criu's line and
# the process runs on.
refused() {
	local dir=$WORK/$1 rc=0
	mkdir -p "$dir/img"
	if criu dump -t "$pid" -D "$dir/img" -L "$dir/lib" -o dump.log -v4 > /dev/null 2>&1; then
		echo "# the dump succeeded"
		rc=1
	fi
	grep -q "$LINE" "$dir/img/dump.log" || { echo "# no \"$LINE\" in the log"; rc=1; }
	ls "$dir/img" | grep -q '^kfdcriu-' && { echo "# the plugin wrote images"; rc=1; }
	alive "$pid" && wait_for_change "$WORK/counter" || { echo "# the process stopped"; rc=1; }
	[ $rc -eq 0 ] || tap_diag_file "$dir/img/dump.log"
	return $rc
}

plugins "$WORK/ab/lib" "$PLUGIN" "$STANDIN"
refused ab
tap_result $? "kfd_criu, then the stand-in: the dump fails with kfd_criu's line"

plugins "$WORK/ba/lib" "$STANDIN" "$PLUGIN"
refused ba
tap_result $? "the stand-in, then kfd_criu: the dump fails with kfd_criu's line"

rc=0
plugins "$WORK/alone/lib" "$PLUGIN"
mkdir -p "$WORK/alone/img"
criu dump -t "$pid" -D "$WORK/alone/img" -L "$WORK/alone/lib" -R -o dump.log -v4 \
	> /dev/null 2>&1 || { echo "# criu dump failed"; rc=1; }
ls "$WORK/alone/img" | grep -q '^kfdcriu-.*\.stream$' || { echo "# no stream"; rc=1; }
alive "$pid" && wait_for_change "$WORK/counter" || { echo "# the process stopped"; rc=1; }
[ $rc -eq 0 ] || tap_diag_file "$WORK/alone/img/dump.log"
tap_result $rc "kfd_criu alone in that directory dumps the process"

kfdcrit_check "$WORK/alone/img"
tap_result $? "kfdcrit check accepts that dump"

kfdcrit_events "$WORK/alone/img" 1
tap_result $? "kfdcrit show names kfd_holder's one event"

kill -9 "$pid" 2>/dev/null
e2e_exit
