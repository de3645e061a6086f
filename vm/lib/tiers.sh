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

# progress WORD...: one live line on the results port for the host's
# progress display (scripts/progress.py). The framed TAP of check mode
# comes only when every program has run; the parser ignores these lines.
progress() {
	echo "### progress $*" > "$RESULTS"
}

# run_one TIER NAME CMD...: run a test program, frame its output and
# say how long it took (build/vm/results.log; the parser ignores it).
run_one() {
	local tier=$1 name=$2 start rc
	shift 2
	start=$(uptime_cs)
	progress start "$tier" "$name"
	echo "### run $tier $name"
	"$@" 2>&1
	rc=$?
	echo "### exit $tier $name $rc"
	echo "### time $tier $name $(( $(uptime_cs) - start ))0 ms"
	progress end "$tier" "$name" "$rc"
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

# The debug kernel profiles our objects (CONFIG_GCOV_KERNEL): once every
# tier has run, their counters go out on the third port as a gzipped tar
# in base64, for scripts/coverage.py. debugfs gives each .gcda a size of
# 0, so each is read into tmpfs first; tar would store it empty.
report_gcov() {
	local src=/sys/kernel/debug/gcov dst=/tmp/gcov f

	[ -d "$src" ] || return 0
	rm -rf "$dst"
	(cd "$src" && find . -name '*.gcda') | while read -r f; do
		mkdir -p "$dst/${f%/*}"
		cat "$src/$f" > "$dst/$f"
	done
	# Which kernel build counted them, for the host to compare
	cat /proc/version > "$dst/proc-version"
	tar -C "$dst" -czf - . | base64 > "${GCOV_PORT:-/dev/ttyS2}"
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

# run_into DIR PATH: run the test program PATH (under $TESTROOT/TIER/) with
# its framed output in DIR/TIER/, one file per program.
# In distro mode every program reports in the distro tier, named with
# its own tier ("e2e/criu_plain_test.sh").
run_into() {
	local dir=$1 t=$2 rel tier name
	rel=${t#$TESTROOT/}
	tier=${rel%%/*}
	name=${rel#*/}
	if [ -n "${TIER_AS:-}" ]; then
		tier=$TIER_AS
		name=$rel
	fi
	mkdir -p "$dir/$tier"
	case "$t" in
	*.sh) run_one "$tier" "$name" sh "$t" ;;
	*) run_one "$tier" "$name" "$t" ;;
	esac > "$dir/$tier/$(echo "$name" | tr / _).out" 2>&1
}

# The guest has two CPUs and the tests are single threaded, so two
# workers run them, each taking the next program nobody has taken yet
# from one list. The list starts with the longest programs (measured
# under TCG with KASAN: the CRIU dump/restore test and the mutation
# campaign about 100 s each, DRM reattach 40 s, the fault tests 20 s),
# so that the short ones fill in at the end and the workers finish
# close together (at most one short program apart) whatever a program's
# length on the day. Any two programs may run at once; a kernel splat
# in the log fails the run whichever program it names. CRIU restores
# processes at their old pids: the tests never wrap the pid space, so no
# other test can take one meanwhile.
LONGEST_FIRST="e2e/kfd_criu_dump_restore_test.sh e2e/kfd_mutate_test"
LONGEST_FIRST="$LONGEST_FIRST e2e/kfd_drm_reattach_test.sh e2e/kfd_faults_test"

# test_programs TIER: the test programs of TIER, in name order.
test_programs() {
	[ -d "$TESTROOT/$1" ] || return 0
	find "$TESTROOT/$1" -type f \( -name '*_test' -o -name '*_test.sh' \) | sort
}

# in_list WORD LIST...: whether WORD is one of LIST
in_list() {
	local w=$1 x
	shift
	for x in "$@"; do
		[ "$x" = "$w" ] && return 0
	done
	return 1
}

# run_worker DIR PATH...: run each program of the list that no other
# worker has taken. mkdir is atomic, so a program's claim directory
# (its index in the list) is made by exactly one worker.
run_worker() {
	local dir=$1 t i=0
	shift

	for t in "$@"; do
		i=$((i + 1))
		[ -f "$t" ] || continue
		mkdir "$dir/.claimed/$i" 2>/dev/null || continue
		run_into "$dir" "$t"
	done
}

# run_lanes DIR: every test program of both tiers, by two workers; FIRST,
# when set, replaces LONGEST_FIRST at the head of the list. The programs
# of ALONE run after the others, one at a time, with nothing beside them.
run_lanes() {
	local dir=$1 first=${FIRST:-$LONGEST_FIRST} alone=${ALONE:-}
	local list="" t rel n=0

	for rel in $first; do
		list="$list $TESTROOT/$rel"
	done
	for t in $(test_programs selftests) $(test_programs e2e) \
		 $(test_programs distro) $(test_programs debian13); do
		rel=${t#$TESTROOT/}
		in_list "$rel" $first $alone || list="$list $t"
	done
	for t in $list; do
		[ -f "$t" ] && n=$((n + 1))
	done
	for rel in $alone; do
		[ -f "$TESTROOT/$rel" ] && n=$((n + 1))
	done
	progress plan "$n"
	mkdir -p "$dir/.claimed"
	run_worker "$dir" $list &
	run_worker "$dir" $list &
	wait
	for rel in $alone; do
		[ -f "$TESTROOT/$rel" ] && run_into "$dir" "$TESTROOT/$rel"
	done
	return 0
}

run_check_mode() {
	local dir=/tmp/results tier

	rm -rf "$dir"
	run_lanes "$dir"
	{
		echo "### begin"
		for tier in selftests e2e; do
			echo "### tier $tier"
			cat "$dir/$tier"/*.out 2>/dev/null
		done
		report_kmemleak
		echo "### done"
	} > "$RESULTS" 2>&1
	report_gcov
}

# The selftests alone, as check mode reports them: for a kernel whose KFD
# state the e2e cannot carry, such as 7.3's without a GPU
# (scripts/run-vm.sh --base 7.3 --append kfdcriu.mode=selftests).
run_selftests_mode() {
	local dir=/tmp/results

	rm -rf "$dir"
	mkdir -p "$dir/.claimed"
	progress plan "$(test_programs selftests | wc -l)"
	run_worker "$dir" $(test_programs selftests)
	{
		echo "### begin"
		echo "### tier selftests"
		cat "$dir/selftests"/*.out 2>/dev/null
		echo "### done"
	} > "$RESULTS" 2>&1
}

# The distro lane (scripts/distro.sh): Debian's stock kernel with our
# amdgpu module, which /init has loaded. The initramfs holds the programs
# this lane runs (not those of the debug lane only) and the lane's own
# check of the module; all report as the distro tier. The stock kernel
# has no kmemleak: the leak check is the debug lane's.
run_distro_mode() {
	local dir=/tmp/results

	rm -rf "$dir"
	# The check of the module first: the rest means little without it
	TIER_AS=distro FIRST="distro/kfd_module_test.sh $LONGEST_FIRST" \
		run_lanes "$dir"
	{
		echo "### begin"
		echo "### tier distro"
		cat "$dir/distro"/*.out 2>/dev/null
		echo "### done"
	} > "$RESULTS" 2>&1
}

# The Debian 13 lane (scripts/debian13.sh): trixie's stock kernel with our
# amdgpu from its DKMS, which /init has loaded, and trixie's criu 4.1.
# The initramfs holds only the programs the manifest gives this tier;
# all report as the debian13 tier, the module check first.
run_debian13_mode() {
	local dir=/tmp/results

	rm -rf "$dir"
	# podman makes cgroups (runc, conmon) that a CRIU dump beside it reads
	# half made: criu 4.3 failed "cg: controller  not found" on a restored
	# process while kfd_podman_test.sh started. It runs alone, last.
	TIER_AS=debian13 FIRST="debian13/kfd_module_test.sh e2e/kfd_criu_dump_restore_test.sh debian13/kfd_criu43_worker_test.sh" \
		ALONE="debian13/kfd_podman_test.sh" run_lanes "$dir"
	{
		echo "### begin"
		echo "### tier debian13"
		cat "$dir/debian13"/*.out 2>/dev/null
		echo "### done"
	} > "$RESULTS" 2>&1
}
