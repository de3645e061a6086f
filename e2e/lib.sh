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

e2e_exit() {
	rm -rf "$WORK"
	exit $E2E_FAILED
}
