#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# "make check": every tier, one summary line each. Builds what is stale,
# runs the host tier, boots the VM for the kunit, selftests and e2e tiers
# and parses what came back.
set -euo pipefail
. "$(dirname "$0")/common.sh"

usage() {
	cat <<'TXT'
Usage: scripts/check.sh [--no-vm | --no-distro | --coverage]

Runs the host tier, builds the kernel, test programs and initramfs, boots
the test VM (kunit, selftests, e2e tiers) while it builds our amdgpu
module with DKMS for Debian 12's stock kernel and, in a Debian 13
userland, for Debian 13's, then boots those (distro and debian13 tiers;
the second needs root), and prints "TIER: N passed, N failed, N skipped" per tier and a
total line.
Exits non-zero if anything failed or an expected tier did not run.
--no-vm      only the host tier (it needs the prepared tree, not a kernel
             build).
--no-distro  everything but the two stock-kernel lanes (distro: Debian
             12; debian13: Debian 13, its userland and CRIU 4.1), whose
             module builds take 10 to 20 minutes each with an empty
             ccache (a quicker loop while developing; "make check" runs
             them).
--coverage   the debug lane only (kernel, test programs, VM), then the
             coverage of our kernel code in it, per file (make coverage).
Every run but --no-vm also builds the 7.3 test kernel and runs
KUnit on it (kunit-7.3 tier; README, "Two bases").
(--host-tests, --fuzz-after, --distro-build, --debian13-build and
--port73-build are internal: the background parts of the host tier and
of the other lanes.)
TXT
}

# A failed step returns its status, also where the caller tests it (in
# an "if", set -e is off).
step() {
	local name=$1 start=$SECONDS
	shift
	log "$name..."
	"$@" || return
	log "$name: $((SECONDS - start)) s"
}

# Each host test program writes its own TAP file. All but the fuzzer's
# timed run need only the prepared tree, so they run while the kernel
# builds, at the lowest priority: they take the CPU the build leaves idle
# (configuring, linking) rather than the build's own.
run_host_tests() {
	run_host_test "$BUILD_DIR/host-codec.tap" make -s -C "$TOP/host" KSRC="$KSRC" check
	# The plugin's harness against Debian 12's CRIU header (plays 3.17,
	# 3.19, 4.0 and 4.3), criu-dev's, and those of 4.1, 4.2 and 4.3
	run_host_test "$BUILD_DIR/host-plugin.tap" make -s -C "$TOP/plugin" \
		KHDR="$KHDR" O="$BUILD_DIR/plugin-check" check-installed
	run_host_test "$BUILD_DIR/host-plugin-criu-dev.tap" make -s -C "$TOP/plugin" \
		KHDR="$KHDR" O="$BUILD_DIR/plugin-check" check-criu-dev
	run_plugin_header_tests
	run_host_test "$BUILD_DIR/host-harness.tap" "$TOP/scripts/tests/parse-results-test.py"
	# Its failure shows as the fuzzer's own failure to run
	make -s -C "$TOP/fuzz" KSRC="$KSRC" O="$BUILD_DIR/fuzz" all \
		> "$BUILD_DIR/fuzz-build.log" 2>&1 || true
	run_host_test "$BUILD_DIR/host-progress.tap" "$TOP/scripts/tests/progress_test.py"
	run_host_test "$BUILD_DIR/host-coverage.tap" "$TOP/scripts/tests/coverage_test.py"
	run_host_test "$BUILD_DIR/host-kfdcrit.tap" make -s -C "$TOP/kfdcrit" \
		KSRC="$KSRC" O="$BUILD_DIR/kfdcrit" check
	run_checkpatch
}

# The plugin built and played against the real criu-plugin.h of each later
# release (CRIU_HEADER_PKGS). A header that cannot be fetched fails its
# test: the build finds no criu-plugin.h.
run_plugin_header_tests() {
	local spec suite ver sum rel name inc

	for spec in "${CRIU_HEADER_PKGS[@]}"; do
		read -r suite ver sum rel name <<< "$spec"
		inc=$(criu_plugin_header "$suite" "$ver" "$sum") || inc=/nonexistent
		run_host_test "$BUILD_DIR/$name.tap" make -s -C "$TOP/plugin" KHDR="$KHDR" \
			O="$BUILD_DIR/plugin-check-$rel" CRIU_INC="$inc" CRIU_HEADER="$rel" \
			check-installed
	done
}

# run_host_test TAP CMD...: one host test program, its output in TAP and
# its exit status appended, which parse-results.py checks: a sanitizer
# report after a complete plan fails the program only through its status.
run_host_test() {
	local tap=$1 rc=0

	shift
	"$@" > "$tap" 2>&1 || rc=$?
	echo "# exit status $rc" >> "$tap"
}

# Written when the host tests end, however they end: the fuzzer's run
# waits for it, as a PID alone could be another process's by then.
HOST_DONE=$BUILD_DIR/.host-tests.done

# A host test that never ran must not be read from a previous run's TAP.
start_host_tests() {
	HOST_START=$SECONDS
	rm -f "$BUILD_DIR"/host-*.tap "$HOST_DONE"
	log "host tests started in the background"
	setsid nice -n 19 "$0" --host-tests &
	HOST_PID=$!
	trap stop_background EXIT
}

wait_host_tests() {
	wait "$HOST_PID" || true
	HOST_PID=
	log "host tests: done $((SECONDS - HOST_START)) s after they started"
}

# The fuzzer's run is timed, so it runs at normal priority beside the VM.
run_host_tier() {
	wait_host_tests
	run_fuzz
}

# pid_running PID: whether PID still runs (a zombie that its parent has
# not reaped yet has finished).
pid_running() {
	local stat

	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}

# Beside the VM, the host tier finishes in the background, in a session of
# its own, so that the VM's progress line has the terminal to itself: when
# the host tests are done, the fuzzer's timed run. Its messages go to
# build/host-tier.log, shown when the VM is done.
start_host_tier() {
	TIER_START=$SECONDS
	setsid "$0" --fuzz-after "$HOST_PID" > "$BUILD_DIR/host-tier.log" 2>&1 &
	TIER_PID=$!
}

# await PID WHAT [LOG]: wait until PID has ended, saying "WHAT, waited
# N s" every 30 s meanwhile, as the progress lines do, with the last
# progress line of the DKMS build in LOG; WAITED is set to N.
await() {
	local pid=$1 what=$2 log=${3:-} last

	WAITED=0
	while pid_running "$pid"; do
		if [ $((WAITED % 30)) -eq 0 ] && [ "$WAITED" -ne 0 ]; then
			last=
			[ -z "$log" ] ||
				last=$(grep -a '^DKMS build: ' "$log" 2>/dev/null | tail -n1)
			log "$what, waited $WAITED s${last:+ ($last)}"
		fi
		sleep 1
		WAITED=$((WAITED + 1))
	done
}

# On a busy machine the host tests can outlast the VM: say so while
# waiting.
wait_host_tier() {
	await "$TIER_PID" "host tier: still running"
	wait "$TIER_PID" || true
	TIER_PID=
	wait "$HOST_PID" || true
	HOST_PID=
	sed 's/^/  /' "$BUILD_DIR/host-tier.log"
	log "host tier: done $((SECONDS - TIER_START)) s after the VM started"
}

# The quick form of the series checks: checkpatch --strict and kernel-doc
# on kernel/ and patches/ (W=1 on our objects is in the kernel build).
run_checkpatch() {
	local tap=$BUILD_DIR/host-checkpatch.tap log=$BUILD_DIR/checkpatch.log

	echo "1..1" > "$tap"
	if "$TOP/scripts/checkpatch.sh" > "$log" 2>&1; then
		echo "ok 1 - checkpatch --strict and kernel-doc: $(tail -n 1 "$log")" >> "$tap"
	else
		sed 's/^/# /' "$log" | tail -n 40 >> "$tap"
		echo "not ok 1 - checkpatch --strict and kernel-doc" >> "$tap"
	fi
	echo "# exit status 0" >> "$tap"
}

# The codec fuzzer: corpus and regression replay plus a bounded run
# (FUZZ_SECONDS, default 30). Failing to build or start is a failed test.
run_fuzz() {
	run_host_test "$BUILD_DIR/host-fuzz.tap" make -s -C "$TOP/fuzz" \
		KSRC="$KSRC" O="$BUILD_DIR/fuzz" FUZZ_SECONDS="${FUZZ_SECONDS:-30}" check
}

build_test_programs() {
	make -s -C "$TOP/selftests" KSRC="$KSRC" KHDR="$KHDR" O="$BUILD_DIR/selftests"
	make -s -C "$TOP/e2e" KHDR="$KHDR" O="$BUILD_DIR/e2e"
	make -s -C "$TOP/plugin" KHDR="$KHDR" O="$BUILD_DIR/plugin"
	make -s -C "$TOP/kfdcrit" KSRC="$KSRC" O="$BUILD_DIR/kfdcrit" static
}

# The VM runs in the foreground behind a progress line (boot, KUnit, which
# guest test programs run); its own messages go to build/vm/run.log and
# are shown when it ends. The logs of an earlier run must not be read as
# this run's progress.
run_vm() {
	local vmdir=$BUILD_DIR/vm start=$SECONDS rc=0

	mkdir -p "$vmdir"
	rm -f "$vmdir/console.log" "$vmdir/results.log"
	"$TOP/scripts/progress.py" vm --label "VM run" --output "$vmdir/run.log" \
		--console "$vmdir/console.log" --results "$vmdir/results.log" -- \
		"$TOP/scripts/run-vm.sh" --mode check || rc=$?
	sed 's/^/  /' "$vmdir/run.log"
	log "VM run: $((SECONDS - start)) s"
	return "$rc"
}

# The distro lane: our amdgpu built by DKMS into an unpacked copy of
# Debian's stock kernel, then that kernel booted with it.
build_distro() {
	rm -f "$DISTRO_DIR/vm/initramfs.cpio.gz"
	"$TOP/scripts/distro.sh" --initramfs-only
}

DISTRO_BUILD_LOG=$BUILD_DIR/distro-build.log

# The module and initramfs of the distro lane build beside the debug VM,
# in their own session at the lowest priority: the compiler takes mostly
# the CPU time the VM leaves (one vCPU idles while KUnit runs at boot,
# and again during the kmemleak scans), and a starved compiler, unlike
# a starved guest, cannot time out. The two VMs still run one after the
# other. Only as root: for anyone else DKMS goes through sudo, which
# needs the terminal a background session lacks and would start a
# session of its own at the normal priority; the module is then built
# after the debug VM, in the foreground, as before.
start_distro_build() {
	DISTRO_BUILD_PID=
	# A lane whose build fails must not be judged on a last run's logs
	rm -f "$DISTRO_DIR/vm/console.log" "$DISTRO_DIR/vm/results.log" \
		"$DISTRO_DIR/kernel-hook.tap"
	[ "$(id -u)" -eq 0 ] || return 0
	DISTRO_BUILD_START=$SECONDS
	log "distro module and initramfs: building in the background"
	setsid nice -n 19 "$0" --distro-build > "$DISTRO_BUILD_LOG" 2>&1 &
	DISTRO_BUILD_PID=$!
}

# wait_distro_build: the background build's end, with a line every 30 s
# meanwhile and its log after; or, when it did not start, the build itself.
wait_distro_build() {
	local rc=0

	if [ -z "$DISTRO_BUILD_PID" ]; then
		step "distro module and initramfs" build_distro
		return
	fi
	await "$DISTRO_BUILD_PID" "distro module and initramfs: still building" \
		"$DISTRO_BUILD_LOG"
	wait "$DISTRO_BUILD_PID" || rc=$?
	DISTRO_BUILD_PID=
	sed 's/^/  /' "$DISTRO_BUILD_LOG"
	if [ "$rc" -ne 0 ]; then
		log "distro module and initramfs: failed with status $rc"
		return "$rc"
	fi
	log "distro module and initramfs: done $((SECONDS - DISTRO_BUILD_START)) s after they started, $WAITED s after the VM run"
}

run_distro_vm() {
	local vmdir=$DISTRO_DIR/vm start=$SECONDS rc=0

	rm -f "$vmdir/console.log" "$vmdir/results.log"
	"$TOP/scripts/progress.py" vm --label "distro VM run" --output "$vmdir/run.log" \
		--console "$vmdir/console.log" --results "$vmdir/results.log" -- \
		"$TOP/scripts/run-vm.sh" --distro --mode check || rc=$?
	sed 's/^/  /' "$vmdir/run.log"
	log "distro VM run: $((SECONDS - start)) s"
	return "$rc"
}

# The Debian 13 lane (scripts/debian13.sh): its userland, our amdgpu
# built by its DKMS, and its initramfs, beside the debug VM as the
# distro lane's build is; its VM runs after the distro VM. Only as root
# (the lane enters a chroot); for anyone else it is not run, and the
# verdict says the tier did not run.
D13_BUILD_LOG=$BUILD_DIR/debian13-build.log

start_debian13_build() {
	D13_BUILD_PID=
	rm -f "$D13_DIR/vm/console.log" "$D13_DIR/vm/results.log"
	[ "$(id -u)" -eq 0 ] || return 0
	D13_BUILD_START=$SECONDS
	log "Debian 13 userland, module and initramfs: building in the background"
	setsid nice -n 19 "$0" --debian13-build > "$D13_BUILD_LOG" 2>&1 &
	D13_BUILD_PID=$!
}

wait_debian13_build() {
	local rc=0

	if [ -z "$D13_BUILD_PID" ]; then
		log "Debian 13 lane: not run (it needs root)"
		return 1
	fi
	await "$D13_BUILD_PID" "Debian 13 lane: still building" "$D13_BUILD_LOG"
	wait "$D13_BUILD_PID" || rc=$?
	D13_BUILD_PID=
	sed 's/^/  /' "$D13_BUILD_LOG"
	if [ "$rc" -ne 0 ]; then
		log "Debian 13 userland, module and initramfs: failed with status $rc"
		return "$rc"
	fi
	log "Debian 13 userland, module and initramfs: done $((SECONDS - D13_BUILD_START)) s after they started"
}

run_debian13_vm() {
	local vmdir=$D13_DIR/vm start=$SECONDS rc=0

	rm -f "$vmdir/console.log" "$vmdir/results.log"
	"$TOP/scripts/progress.py" vm --label "Debian 13 VM run" --output "$vmdir/run.log" \
		--console "$vmdir/console.log" --results "$vmdir/results.log" -- \
		"$TOP/scripts/run-vm.sh" --debian13 --mode check || rc=$?
	sed 's/^/  /' "$vmdir/run.log"
	log "Debian 13 VM run: $((SECONDS - start)) s"
	return "$rc"
}

# The 7.3 lane: its test kernel (scripts/build-kernel.sh --base 7.3:
# Debian's 7.3 with patches/ applied, the debug lane's config) builds
# beside the other lanes, at the lowest priority, and boots to run every
# KUnit suite once more (kunit-7.3 tier). Without a GPU a 7.3 process has
# no KFD state the guest tiers could carry (a signal event needs a GPU
# event page there), so they run on 6.12 only.
PORT73_BUILD_LOG=$BUILD_DIR/port73-build.log

start_port73_build() {
	PORT73_BUILD_START=$SECONDS
	rm -f "$BUILD_DIR/vm-7.3/console.log"
	log "7.3 test kernel: building in the background"
	setsid nice -n 19 "$0" --port73-build > "$PORT73_BUILD_LOG" 2>&1 &
	PORT73_BUILD_PID=$!
}

wait_port73_build() {
	local rc=0

	await "$PORT73_BUILD_PID" "7.3 test kernel: still building" "$PORT73_BUILD_LOG"
	wait "$PORT73_BUILD_PID" || rc=$?
	PORT73_BUILD_PID=
	if [ "$rc" -ne 0 ]; then
		sed 's/^/  /' "$PORT73_BUILD_LOG"
		log "7.3 test kernel: failed with status $rc"
		return "$rc"
	fi
	grep -v '^kernel: [0-9]' "$PORT73_BUILD_LOG" | sed 's/^/  /'
	log "7.3 test kernel: done $((SECONDS - PORT73_BUILD_START)) s after it started"
}

run_port73_vm() {
	local vmdir=$BUILD_DIR/vm-7.3 start=$SECONDS rc=0

	mkdir -p "$vmdir"
	"$TOP/scripts/progress.py" vm --label "7.3 KUnit VM run" --output "$vmdir/run.log" \
		--console "$vmdir/console.log" -- \
		"$TOP/scripts/run-vm.sh" --base 7.3 --mode check --timeout 600 || rc=$?
	sed 's/^/  /' "$vmdir/run.log"
	log "7.3 KUnit VM run: $((SECONDS - start)) s"
	return "$rc"
}

# What the debug lane executed of our kernel code (scripts/coverage.py),
# after the verdict: the table goes to build/coverage/, the figure here.
# No counters fail the check, as a tier that did not run does.
report_coverage() {
	local log=$BUILD_DIR/coverage.log

	if "$TOP/scripts/coverage.py" > "$log" 2>&1; then
		echo "$(tail -n 1 "$log") (per file: build/coverage/summary.txt)"
	else
		sed 's/^/  /' "$log" >&2
		echo "coverage: no figure, see above"
		return 1
	fi
}

# make coverage: the debug lane alone and the whole table. The VM tiers'
# verdict comes first: a figure from a run that failed says little.
run_coverage() {
	local rc=0

	step "kernel" "$TOP/scripts/build-kernel.sh"
	step "test programs" build_test_programs
	step "initramfs" "$TOP/scripts/build-initramfs.sh"
	run_vm || log "QEMU exited with status $? (124: timeout)"
	"$TOP/scripts/parse-results.py" $VERDICT --expect kunit,selftests,e2e \
		--console "$BUILD_DIR/vm/console.log" \
		--results "$BUILD_DIR/vm/results.log" || rc=$?
	"$TOP/scripts/coverage.py" || rc=1
	return "$rc"
}

# An interrupted or failed check must not leave the host tests or the
# distro lane's build running.
stop_background() {
	[ -z "${TIER_PID:-}" ] || kill -- "-$TIER_PID" 2>/dev/null || true
	[ -z "${HOST_PID:-}" ] || kill -- "-$HOST_PID" 2>/dev/null || true
	[ -z "${DISTRO_BUILD_PID:-}" ] || kill -- "-$DISTRO_BUILD_PID" 2>/dev/null || true
	[ -z "${D13_BUILD_PID:-}" ] || kill -- "-$D13_BUILD_PID" 2>/dev/null || true
	[ -z "${PORT73_BUILD_PID:-}" ] || kill -- "-$PORT73_BUILD_PID" 2>/dev/null || true
}

HOST_TAPS="--host-tap $BUILD_DIR/host-codec.tap --host-tap $BUILD_DIR/host-plugin.tap"
HOST_TAPS+=" --host-tap $BUILD_DIR/host-plugin-criu-dev.tap"
for spec in "${CRIU_HEADER_PKGS[@]}"; do
	HOST_TAPS+=" --host-tap $BUILD_DIR/$(awk '{ print $5 }' <<< "$spec").tap"
done
HOST_TAPS+=" --host-tap $BUILD_DIR/host-fuzz.tap"
HOST_TAPS+=" --host-tap $BUILD_DIR/host-checkpatch.tap"
HOST_TAPS+=" --host-tap $BUILD_DIR/host-harness.tap"
HOST_TAPS+=" --host-tap $BUILD_DIR/host-progress.tap"
HOST_TAPS+=" --host-tap $BUILD_DIR/host-coverage.tap"
HOST_TAPS+=" --host-tap $BUILD_DIR/host-kfdcrit.tap"
# What must have run, and the campaign's base images the fuzzer seeds from
VERDICT="--manifest $TOP/scripts/test-manifest --corpus $TOP/fuzz/corpus"
VERDICT+=" --seed-images empty,selftest,types,many"

main() {
	local vm=1 distro=1 coverage=0 rc=0 drc=0 d13rc=0 p73rc=0 verdict=0
	local -a distro_logs=()
	case "${1:-}" in
	-h|--help) usage; exit 0 ;;
	--no-vm) vm=0 ;;
	--no-distro) distro=0 ;;
	--host-tests)
		# Internal: start_host_tests runs this in its own session. The
		# kernel weighs CPU time per session (autogroup), so nice alone
		# would rank the tests only against themselves.
		echo 19 > /proc/self/autogroup 2>/dev/null || true
		trap 'touch "$HOST_DONE"' EXIT
		run_host_tests
		return
		;;
	--distro-build)
		# Internal: start_distro_build runs this in its own session,
		# weighed below the VM as --host-tests is.
		echo 19 > /proc/self/autogroup 2>/dev/null || true
		build_distro
		return
		;;
	--debian13-build)
		# Internal: start_debian13_build runs this in its own session.
		echo 19 > /proc/self/autogroup 2>/dev/null || true
		rm -f "$D13_DIR/vm/initramfs.cpio.gz"
		"$TOP/scripts/debian13.sh" --initramfs-only
		return
		;;
	--port73-build)
		# Internal: start_port73_build runs this in its own session.
		echo 19 > /proc/self/autogroup 2>/dev/null || true
		"$TOP/scripts/build-kernel.sh" --base 7.3
		return
		;;
	--fuzz-after)
		# Internal: start_host_tier runs this in its own session. The
		# PID is only the fallback of a run killed before its trap.
		while [ ! -e "$HOST_DONE" ] && pid_running "$2"; do
			sleep 1
		done
		log "host tests: done"
		run_fuzz
		return
		;;
	--coverage) coverage=1 ;;
	"") ;;
	*) usage >&2; exit 2 ;;
	esac
	mkdir -p "$BUILD_DIR"
	exec 9> "$BUILD_DIR/.lock"
	flock 9
	step "dependencies" "$TOP/scripts/install-deps.sh"
	if [ "$coverage" -eq 1 ]; then
		run_coverage
		return
	fi
	# The host tier reads the patched tree's uAPI headers.
	step "kernel tree" "$TOP/scripts/build-kernel.sh" --prepare
	start_host_tests
	if [ "$vm" -eq 0 ]; then
		step "host tier" run_host_tier
		"$TOP/scripts/parse-results.py" $HOST_TAPS $VERDICT --expect host
		return
	fi
	step "kernel" "$TOP/scripts/build-kernel.sh"
	step "test programs" build_test_programs
	step "initramfs" "$TOP/scripts/build-initramfs.sh"
	# The guest runs KUnit on one vCPU for half a minute, so the fuzzer's
	# timed run goes beside the VM rather than before it.
	start_host_tier
	if [ "$distro" -eq 1 ]; then
		start_distro_build
		start_debian13_build
	fi
	start_port73_build
	run_vm || rc=$?
	[ "$rc" -eq 0 ] || log "QEMU exited with status $rc (124: timeout)"
	# The host tier, starved by the VM's two vCPUs, finishes beside the
	# distro lane rather than before it (it took 70 s after the VM).
	if [ "$distro" -eq 1 ]; then
		if wait_distro_build; then
			run_distro_vm || drc=$?
		else
			log "distro lane: the module or its initramfs did not build"
			verdict=1
		fi
		[ "$drc" -eq 0 ] || log "distro lane: QEMU exited with status $drc (124: timeout)"
		distro_logs=(--distro-console "$DISTRO_DIR/vm/console.log"
			     --distro-results "$DISTRO_DIR/vm/results.log"
			     --distro-tap "$DISTRO_DIR/kernel-hook.tap")
		d13rc=0
		if wait_debian13_build; then
			run_debian13_vm || d13rc=$?
		else
			verdict=1
		fi
		[ "$d13rc" -eq 0 ] || log "Debian 13 lane: QEMU exited with status $d13rc (124: timeout)"
		distro_logs+=(--debian13-console "$D13_DIR/vm/console.log"
			      --debian13-results "$D13_DIR/vm/results.log")
	else
		log "distro and Debian 13 lanes: not run (--no-distro)"
		distro_logs=(--expect host,kunit,kunit-7.3,selftests,e2e)
	fi
	if wait_port73_build; then
		run_port73_vm || p73rc=$?
	else
		verdict=1
	fi
	[ "$p73rc" -eq 0 ] || log "7.3 lane: QEMU exited with status $p73rc (124: timeout)"
	wait_host_tier
	"$TOP/scripts/parse-results.py" $HOST_TAPS $VERDICT \
		--console "$BUILD_DIR/vm/console.log" \
		--kunit73-console "$BUILD_DIR/vm-7.3/console.log" \
		--results "$BUILD_DIR/vm/results.log" "${distro_logs[@]}" || verdict=$?
	report_coverage || verdict=1
	return "$verdict"
}

main "$@"
