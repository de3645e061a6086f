#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Debian 13's ROCm userspace as the client of our KFD checkpoint/restore,
# on trixie's stock kernel with our amdgpu: rocminfo (6.1.2) lists the
# HSA agents before and after; kfd_hsa_client, an application of ROCr
# (libhsa-runtime64 6.1.2) whose signals are KFD events waited on and
# stored from threads, and kfd_hsakmt_client, one of libhsakmt (6.2.4)
# with its own events, are each dumped mid-flight and restored by the
# guest's real criu 4.1 with our plugin, and each checks itself before
# the dump and after the restore (vm/debian13/rocm/*.c say what: the
# same agents and topology, /dev/kfd still open and answering, the event
# mailboxes in the /dev/kfd page, a KFD event still waking a waiter).
#
# This machine has no GPU: the KFD topology has one CPU node, and ROCr
# sees only the CPU agent, which the output says. If hsa_init() cannot
# work at all here, the HSA cases skip with rocminfo's and the client's
# own words as the reason; they never pass without running.

. /opt/kfd-criu/e2e/lib.sh

BIN=/opt/kfd-criu/rocm
PLUGIN=/usr/lib/criu/kfd_criu_plugin.so
PLAN=8
pid=

tap_plan $PLAN

skip_rest() {
	while [ "$E2E_N" -lt "$1" ]; do
		tap_skip "ROCm case $((E2E_N + 1))" "$2"
	done
}

[ -e /dev/kfd ] || { skip_rest $PLAN "no /dev/kfd in this kernel"; e2e_exit; }
[ -f "$PLUGIN" ] || { skip_rest $PLAN "no CRIU plugin at $PLUGIN"; e2e_exit; }

diag_log() {
	[ -f "$1" ] && grep -E 'kfd_criu|Error' "$1" | tail -n 20 | sed 's/^/# /'
}

# plain FILE: rocminfo's output without its colours
plain() {
	tr -d '\033' < "$1" | sed 's/\[[0-9;]*m//g'
}

# agents FILE: rocminfo's agents, one "name|type|node" line each (the
# agent fields are the only ones at an indent of two).
agents() {
	plain "$1" |
		awk '/^  Name:/ { n = $0; sub(/^  Name: */, "", n); sub(/ *$/, "", n) }
		     /^  Node:/ { d = $2 }
		     /^  Device Type:/ { print n "|" $3 "|" d }'
}

# rocminfo_run OUT: rocminfo's output in OUT; true when it listed agents.
rocminfo_run() {
	local rc=0

	rocminfo > "$1" 2>&1 || rc=$?
	[ $rc -eq 0 ] && [ -n "$(agents "$1")" ] && return 0
	echo "# rocminfo exit $rc"
	plain "$1" | tail -n 5 | sed 's/^/# /'
	return 1
}

# beats LOG: the last beat a client printed
beats() {
	sed -n 's/^beat \([0-9]*\).*/\1/p' "$1" | tail -n 1
}

# beating LOG: a new beat within about 10 s, and no FAILED line.
beating() {
	local before=$(beats "$1") i=0

	while [ "$(beats "$1")" = "$before" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(beats "$1")" != "$before" ] || { echo "# no new beat after ${before:-none}"; return 1; }
	! grep -q FAILED "$1" || { grep FAILED "$1" | head -n 3 | sed 's/^/# /'; return 1; }
}

# verdict LOG N: ask the client (pid) for its self-check N, and pass when
# it prints "verdict N: PASS" within about 30 s.
verdict() {
	local i=0

	kill -USR1 "$pid" 2>/dev/null || { echo "# pid $pid is gone"; return 1; }
	while ! grep -q "^verdict $2: " "$1" && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep "^verdict $2: " "$1" | sed 's/^/# /'
	grep -q "^verdict $2: PASS" "$1"
}

# start NAME: start client NAME, its output in $WORK/NAME.log; true once
# it beats and passes its first self-check.
start() {
	local log=$WORK/$1.log

	setsid "$BIN/$1" < /dev/null > "$log" 2>&1 &
	pid=$!
	beating "$log" && verdict "$log" 1 && found "$log" && return 0
	tail -n 5 "$log" | sed 's/^/# /'
	return 1
}

# found LOG: what the client found at start (agents and pools, or KFD
# nodes, its descriptor and events), as diagnostics.
found() {
	grep -E '^(agent |  pool |no GPU|KFD |node |kfd fd |signals: )' "$1" | sed 's/^/# /'
}

# dump NAME DIR: criu dumps the client, which then is gone, with a kfdcriu
# stream in DIR.
dump() {
	local rc=0

	mkdir -p "$2"
	criu dump -t "$pid" -D "$2" -o dump.log -v4 > /dev/null 2>&1 || { echo "# criu dump failed"; rc=1; }
	wait_gone "$pid" || { echo "# pid $pid still runs after the dump"; rc=1; }
	ls "$2"/kfdcriu-*.stream > /dev/null 2>&1 || { echo "# no kfdcriu stream in the dump"; rc=1; }
	[ $rc -eq 0 ] || diag_log "$2/dump.log"
	return $rc
}

# restore NAME DIR: criu restores the client, the plugin resumes its KFD
# state, and the client beats on and passes its self-check 2.
restore() {
	local rc=0 log=$WORK/$1.log

	criu restore -D "$2" -d -o restore.log -v4 > /dev/null 2>&1 || { echo "# criu restore failed"; rc=1; }
	alive "$pid" || { echo "# pid $pid is not running"; rc=1; }
	grep -q "kfd_criu: pid $pid: resumed its KFD state" "$2/restore.log" ||
		{ echo "# the plugin did not resume pid $pid"; rc=1; }
	[ $rc -eq 0 ] || { diag_log "$2/restore.log"; return 1; }
	beating "$log" && verdict "$log" 2
}

# round NAME WHAT: cases start, dump, restore of client NAME.
round() {
	start "$1"
	tap_result $? "$2 runs and passes its self-check"
	dump "$1" "$WORK/$1"
	tap_result $? "criu 4.1 dumps $2 mid-flight with the plugin"
	restore "$1" "$WORK/$1"
	tap_result $? "criu 4.1 restores $2, which passes its self-check again"
	kill -9 "$pid" 2>/dev/null
	tail -n 3 "$WORK/$1.log" | sed 's/^/# /'
}

# 1: rocminfo before, the agents it lists recorded
rc=0
rocminfo_run "$WORK/rocminfo.before" || rc=1
agents "$WORK/rocminfo.before" > "$WORK/agents.before"
sed 's/^/# agent: /' "$WORK/agents.before"
grep -q '|GPU|' "$WORK/agents.before" ||
	echo "# no GPU agent: this machine has no GPU, ROCr sees only the CPU agent"
hsa_broken=
if [ $rc -ne 0 ] && grep -q 'hsa api call failure' "$WORK/rocminfo.before"; then
	hsa_broken="rocminfo: $(plain "$WORK/rocminfo.before" | grep -A1 'hsa api call failure' | tr '\n' ' ')"
	tap_skip "rocminfo lists the HSA agents" "hsa_init fails here: $hsa_broken"
else
	tap_result $rc "rocminfo lists the HSA agents"
fi

# 2-4: the HSA runtime client, unless hsa_init cannot work here: then the
# client must say so too (exit 4) for its cases to skip
if [ -n "$hsa_broken" ]; then
	rc=0
	timeout 20 "$BIN/kfd_hsa_client" > "$WORK/hsa_try.log" 2>&1 || rc=$?
	if [ $rc -eq 4 ]; then
		skip_rest 4 "hsa_init fails here: $hsa_broken; $(head -n 1 "$WORK/hsa_try.log")"
	else
		round kfd_hsa_client "the HSA runtime client"
	fi
else
	round kfd_hsa_client "the HSA runtime client"
fi

# 5-7: the libhsakmt client
round kfd_hsakmt_client "the libhsakmt client"

# 8: rocminfo after the restores lists the same agents
if [ -n "$hsa_broken" ]; then
	tap_skip "rocminfo lists the same agents after the restores" "hsa_init fails here"
else
	rc=0
	rocminfo_run "$WORK/rocminfo.after" || rc=1
	agents "$WORK/rocminfo.after" > "$WORK/agents.after"
	cmp -s "$WORK/agents.before" "$WORK/agents.after" ||
		{ echo "# the agents differ:"; sed 's/^/# after: /' "$WORK/agents.after"; rc=1; }
	tap_result $rc "rocminfo lists the same agents after the restores"
fi

e2e_exit
