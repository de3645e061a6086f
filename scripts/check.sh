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
Usage: scripts/check.sh [--no-vm]

Runs the host tier, builds the kernel, test programs and initramfs, boots
the test VM (kunit, selftests, e2e tiers) and prints
"TIER: N passed, N failed, N skipped" per tier and a total line. Exits
non-zero if anything failed or an expected tier did not run.
--no-vm  only the host tier (it needs the prepared tree, not a kernel build).
(--host-tests is internal: the background part of the host tier.)
TXT
}

step() {
	local name=$1 start=$SECONDS
	shift
	log "$name..."
	"$@"
	log "$name: $((SECONDS - start)) s"
}

# Each host test program writes its own TAP file. All but the fuzzer's
# timed run need only the prepared tree, so they run while the kernel
# builds, at the lowest priority: they take the CPU the build leaves idle
# (configuring, linking) rather than the build's own.
run_host_tests() {
	make -s -C "$TOP/host" KSRC="$KSRC" check > "$BUILD_DIR/host-codec.tap" 2>&1 || true
	make -s -C "$TOP/plugin" KHDR="$KHDR" O="$BUILD_DIR/plugin-check" check \
		> "$BUILD_DIR/host-plugin.tap" 2>&1 || true
	make -s -C "$TOP/fuzz" KSRC="$KSRC" O="$BUILD_DIR/fuzz" all \
		> "$BUILD_DIR/fuzz-build.log" 2>&1 || true
	make -s -C "$TOP/kfdcrit" KSRC="$KSRC" O="$BUILD_DIR/kfdcrit" check \
		> "$BUILD_DIR/host-kfdcrit.tap" 2>&1 || true
	run_checkpatch
}

# A host test that never ran must not be read from a previous run's TAP.
start_host_tests() {
	HOST_START=$SECONDS
	rm -f "$BUILD_DIR"/host-*.tap
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
}

# The codec fuzzer: corpus and regression replay plus a bounded run
# (FUZZ_SECONDS, default 30). Failing to build or start is a failed test.
run_fuzz() {
	local tap=$BUILD_DIR/host-fuzz.tap
	make -s -C "$TOP/fuzz" KSRC="$KSRC" O="$BUILD_DIR/fuzz" \
		FUZZ_SECONDS="${FUZZ_SECONDS:-30}" check > "$tap" 2>&1 ||
		grep -q '^1\.\.' "$tap" ||
		echo "not ok - fuzz: make -C fuzz check did not run" >> "$tap"
}

build_test_programs() {
	make -s -C "$TOP/selftests" KSRC="$KSRC" KHDR="$KHDR" O="$BUILD_DIR/selftests"
	make -s -C "$TOP/e2e" KHDR="$KHDR" O="$BUILD_DIR/e2e"
	make -s -C "$TOP/plugin" KHDR="$KHDR" O="$BUILD_DIR/plugin"
}

# The VM runs in the background; its own messages go to build/vm/run.log
# and are shown when it ends.
start_vm() {
	VM_START=$SECONDS
	mkdir -p "$BUILD_DIR/vm"
	log "VM run started in the background"
	setsid "$TOP/scripts/run-vm.sh" --mode check > "$BUILD_DIR/vm/run.log" 2>&1 &
	VM_PID=$!
}

# An interrupted or failed check must not leave QEMU or the host tests
# running.
stop_background() {
	[ -z "${VM_PID:-}" ] || kill -- "-$VM_PID" 2>/dev/null || true
	[ -z "${HOST_PID:-}" ] || kill -- "-$HOST_PID" 2>/dev/null || true
}

wait_vm() {
	local rc=0

	wait "$VM_PID" || rc=$?
	VM_PID=
	sed 's/^/  /' "$BUILD_DIR/vm/run.log"
	log "VM run: $((SECONDS - VM_START)) s"
	return "$rc"
}

HOST_TAPS="--host-tap $BUILD_DIR/host-codec.tap --host-tap $BUILD_DIR/host-plugin.tap"
HOST_TAPS+=" --host-tap $BUILD_DIR/host-fuzz.tap"
HOST_TAPS+=" --host-tap $BUILD_DIR/host-checkpatch.tap"
HOST_TAPS+=" --host-tap $BUILD_DIR/host-kfdcrit.tap"

main() {
	local vm=1 rc=0
	case "${1:-}" in
	-h|--help) usage; exit 0 ;;
	--no-vm) vm=0 ;;
	--host-tests)
		# Internal: start_host_tests runs this in its own session. The
		# kernel weighs CPU time per session (autogroup), so nice alone
		# would rank the tests only against themselves.
		echo 19 > /proc/self/autogroup 2>/dev/null || true
		run_host_tests
		return
		;;
	"") ;;
	*) usage >&2; exit 2 ;;
	esac
	mkdir -p "$BUILD_DIR"
	exec 9> "$BUILD_DIR/.lock"
	flock 9
	step "dependencies" "$TOP/scripts/install-deps.sh"
	# The host tier reads the patched tree's uAPI headers.
	step "kernel tree" "$TOP/scripts/build-kernel.sh" --prepare
	start_host_tests
	if [ "$vm" -eq 0 ]; then
		step "host tier" run_host_tier
		"$TOP/scripts/parse-results.py" $HOST_TAPS --expect host
		return
	fi
	step "kernel" "$TOP/scripts/build-kernel.sh"
	step "test programs" build_test_programs
	step "initramfs" "$TOP/scripts/build-initramfs.sh"
	# The guest runs KUnit on one vCPU for half a minute, so the fuzzer's
	# timed run goes beside the VM rather than before it.
	start_vm
	step "host tier" run_host_tier
	wait_vm || rc=$?
	[ "$rc" -eq 0 ] || log "QEMU exited with status $rc (124: timeout)"
	"$TOP/scripts/parse-results.py" $HOST_TAPS \
		--console "$BUILD_DIR/vm/console.log" \
		--results "$BUILD_DIR/vm/results.log"
}

main "$@"
