# SPDX-License-Identifier: GPL-2.0
#
# TAP helpers for the e2e tier. Sourced by the *_test.sh scripts.

E2E_N=0
E2E_FAILED=0
WORK=${WORK:-/tmp/e2e.$$}
mkdir -p "$WORK"

tap_plan() { echo "1..$1"; }

# tap_result STATUS NAME: STATUS 0 is ok.
tap_result() {
	E2E_N=$((E2E_N + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $E2E_N - $2"
	else
		echo "not ok $E2E_N - $2"
		E2E_FAILED=1
	fi
}

tap_skip() {
	E2E_N=$((E2E_N + 1))
	echo "ok $E2E_N - $1 # SKIP $2"
}

# Print a log file as TAP diagnostics.
tap_diag_file() {
	[ -f "$1" ] && sed 's/^/# /' "$1" | tail -n "${2:-30}"
}

# wait_for_change FILE: true once FILE's content changes within ~5 s.
wait_for_change() {
	local before after i=0
	before=$(cat "$1" 2>/dev/null)
	while [ $i -lt 50 ]; do
		sleep 0.1
		after=$(cat "$1" 2>/dev/null)
		[ "$after" != "$before" ] && return 0
		i=$((i + 1))
	done
	return 1
}

alive() { kill -0 "$1" 2>/dev/null; }

# wait_gone PID: true once PID no longer exists, within about 10 s
wait_gone() {
	local i=0
	while [ -e "/proc/$1" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ ! -e "/proc/$1" ]
}

# kfdcrit, the image tool, in the initramfs's /usr/bin
# (scripts/build-initramfs.sh); KFDCRIT names another one.
KFDCRIT=${KFDCRIT:-kfdcrit}

# kfdcrit_run CMD ARG...: run kfdcrit; its output in KC_OUT, status in KC_RC
kfdcrit_run() {
	KC_RC=0
	KC_OUT=$("$KFDCRIT" "$@" 2>&1) || KC_RC=$?
}

# kfdcrit_check DIR: "kfdcrit check" accepts every stream of a dump,
# as RESTORE would check it.
kfdcrit_check() {
	kfdcrit_run check "$1"
	[ "$KC_RC" -eq 0 ] && return 0
	echo "# kfdcrit check $1: exit $KC_RC"
	echo "$KC_OUT" | tail -n 10 | sed 's/^/# /'
	return 1
}

# kfdcrit_events DIR N: "kfdcrit show" of a dump names N events.
kfdcrit_events() {
	kfdcrit_run show "$1"
	[ "$KC_RC" -eq 0 ] && echo "$KC_OUT" | grep -q "^events: $2, " && return 0
	echo "# kfdcrit show $1 (exit $KC_RC) does not name $2 events:"
	echo "$KC_OUT" | grep -E '^events|^check|kfdcrit' | sed 's/^/# /'
	return 1
}

# kfdcrit_stream DIR: the (first) kfdcriu-*.stream of a dump
kfdcrit_stream() {
	ls "$1"/kfdcriu-*.stream 2>/dev/null | head -n 1
}

# kfdcrit_diff A B: the streams of dump A and of B, a dump of the process
# restored from A, differ in nothing but what kfdcrit(1) lists under "DIFF
# OF A DUMP AND OF ITS RESTORE" (--ignore-volatile).
kfdcrit_diff() {
	local a b all
	a=$(kfdcrit_stream "$1")
	b=$(kfdcrit_stream "$2")
	[ -n "$a" ] && [ -n "$b" ] || { echo "# no stream in $1 or $2"; return 1; }
	all=$("$KFDCRIT" diff "$a" "$b" 2>&1 | wc -l)
	kfdcrit_run diff --ignore-volatile "$a" "$b"
	if [ "$KC_RC" -eq 0 ] && [ -z "$KC_OUT" ]; then
		echo "# ${1##*/} -> ${2##*/}: $all differences, all volatile"
		return 0
	fi
	echo "# kfdcrit diff --ignore-volatile $a $b: exit $KC_RC"
	echo "$KC_OUT" | head -n 20 | sed 's/^/# /'
	return 1
}

e2e_exit() {
	rm -rf "$WORK"
	exit $E2E_FAILED
}
