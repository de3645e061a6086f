#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# "make mutate": the mutation campaign of e2e/kfd_mutate_test.c alone, as
# large as asked, in the test VM (KASAN, lockdep, kmemleak on). "make
# check" runs a bounded campaign of its own in the e2e tier.
set -euo pipefail
. "$(dirname "$0")/common.sh"

usage() {
	cat <<'TXT'
Usage: scripts/mutate.sh [--images N] [--seed S] [--gpu-images G]

Builds what is stale, boots the VM with kfdcriu.mode=mutate and feeds N
(default 10000) mutated images, generated from seed S (default 1), to
RESTORE. At boot, KUnit's sweeps of the records that need a GPU try G
(default 200, at most 600) random images of each swept record on the
fake GPUs, from the same seed, besides their boundary values. Prints the campaign's
figures,
"mutation: N tried, N rejected, N accepted, N splats, N leaks",
"hostile records on fake GPUs: N tried, N refused, N accepted (...)",
and the usual tier summary; exits non-zero on any failure. A failing image
is reproduced in the VM with: kfd_mutate_test -s S -x INDEX > image; a
failing KUnit image by the record, index and seed its message names.
Logs: build/vm/console.log, build/vm/results.log and build/vm/run.log.
TXT
}

main() {
	local images=10000 seed=1 gpu_images=200 rc=0 timeout
	while [ $# -gt 0 ]; do
		case "$1" in
		-h|--help) usage; exit 0 ;;
		--images) images=$2; shift ;;
		--seed) seed=$2; shift ;;
		--gpu-images) gpu_images=$2; shift ;;
		*) usage >&2; exit 2 ;;
		esac
		shift
	done
	# KUnit gives each case 300 s. The BO sweep restores three records'
	# images, an accepted one twice with MAP, UNMAP and FREE after the
	# first: 705 images (GPU_N=200) took 60 s under TCG, so 600 per
	# record take about 170 s, and 1000 would come too near the limit.
	if [ "$gpu_images" -gt 600 ]; then
		die "--gpu-images $gpu_images: at most 600, or KUnit's 300 s per case may run out in the BO sweep"
	fi
	mkdir -p "$BUILD_DIR"
	exec 9> "$BUILD_DIR/.lock"
	flock 9
	# The kernel too: a campaign must test the code in kernel/ as it is
	make -s -C "$TOP" kernel initramfs
	# Boot and KUnit take about four minutes under TCG; the campaign,
	# whose oracle drives every restored event, runs at about 7 images a
	# second there (800 in 117 s; much faster under KVM). N=10000 did not
	# finish within 600 + N/5 s on a loaded 2-core machine.
	# KUnit's random images on the fake GPUs: ten swept records, about
	# 40 images a second under TCG, and five records of the ROCm process,
	# whose restores (18 BOs, 3 queues) run at about 6 a second.
	timeout=$((900 + images / 2 + gpu_images / 4 + gpu_images * 5 / 6))
	rm -f "$BUILD_DIR/vm/console.log" "$BUILD_DIR/vm/results.log"
	"$TOP/scripts/progress.py" vm --label "VM run" --output "$BUILD_DIR/vm/run.log" \
		--console "$BUILD_DIR/vm/console.log" --results "$BUILD_DIR/vm/results.log" -- \
		"$TOP/scripts/run-vm.sh" --mode mutate --timeout "$timeout" \
		--append "kfdcriu.mutate_images=$images kfdcriu.mutate_seed=$seed amdgpu.kfd_criu_test_random=$gpu_images amdgpu.kfd_criu_test_seed=$seed" || rc=$?
	sed 's/^/  /' "$BUILD_DIR/vm/run.log"
	[ "$rc" -eq 0 ] || log "QEMU exited with status $rc (124: timeout)"
	"$TOP/scripts/parse-results.py" --console "$BUILD_DIR/vm/console.log" \
		--results "$BUILD_DIR/vm/results.log" --expect kunit,e2e
}

main "$@"
