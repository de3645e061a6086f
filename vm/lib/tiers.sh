# SPDX-License-Identifier: GPL-2.0
#
# Guest side of "make check": runs the selftests and e2e tiers and writes
# their TAP, framed by "### " marker lines, to the results port. Sourced
# by /init.

RESULTS=${RESULTS:-/dev/ttyS1}
TESTROOT=/opt/kfd-criu

# Seconds since boot, to the hundredth, from /proc/uptime
uptime_cs() {
	local up

	read -r up _ < /proc/uptime
	echo "${up%.*}${up#*.}"
}

# run_one TIER NAME CMD...: run a test program, frame its output and
# say how long it took (build/vm/results.log; the parser ignores it).
run_one() {
	local tier=$1 name=$2 start rc
	shift 2
	start=$(uptime_cs)
	echo "### run $tier $name"
	"$@" 2>&1
	rc=$?
	echo "### exit $tier $name $rc"
	echo "### time $tier $name $(( $(uptime_cs) - start ))0 ms"
}

run_tier() {
	local tier=$1 t
	echo "### tier $tier"
	for t in $(find "$TESTROOT/$tier" -type f \( -name '*_test' -o -name '*_test.sh' \) | sort); do
		case "$t" in
		*.sh) run_one "$tier" "${t#$TESTROOT/$tier/}" sh "$t" ;;
		*) run_one "$tier" "${t#$TESTROOT/$tier/}" "$t" ;;
		esac
	done
}

# kmemleak wants two scans before it reports an object as leaked.
report_kmemleak() {
	local k=/sys/kernel/debug/kmemleak
	echo "### kmemleak"
	if [ -w "$k" ]; then
		echo scan > "$k"
		sleep 5
		echo scan > "$k"
		cat "$k"
	else
		echo "kmemleak: not available"
	fi
	echo "### end kmemleak"
}

# make mutate: only the mutation campaign; it reads its size and seed
# from the kernel command line itself.
run_mutate_mode() {
	{
		echo "### begin"
		echo "### tier e2e"
		run_one e2e kfd_mutate_test "$TESTROOT/e2e/kfd_mutate_test"
		report_kmemleak
		echo "### done"
	} > "$RESULTS" 2>&1
}

run_check_mode() {
	{
		echo "### begin"
		run_tier selftests
		run_tier e2e
		report_kmemleak
		echo "### done"
	} > "$RESULTS" 2>&1
}
