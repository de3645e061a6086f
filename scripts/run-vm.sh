#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the test kernel and initramfs under QEMU with a hard timeout. The
# kernel console goes to build/vm/console.log, the guest's test results to
# build/vm/results.log (second serial port).
set -euo pipefail
. "$(dirname "$0")/common.sh"

usage() {
	cat <<'TXT'
Usage: scripts/run-vm.sh [--distro | --debian13 | --base 7.3]
                         [--mode check|demo|bench|shell|mutate]
                         [--timeout SECONDS] [--append KERNEL-ARGS]

check  (default) run the guest tiers, logs in build/vm/, exit with QEMU's
       status (124 on timeout)
demo   run the demo on this terminal
bench  print the dump/restore benchmark's figures on this terminal
shell  interactive shell on this terminal (Ctrl-A X quits QEMU)
mutate only the mutation campaign, logs as for check (make mutate)
--append adds to the kernel command line (kfdcriu.mutate_images=N, ...)
--distro boots Debian's stock kernel with the distro lane's initramfs
       (scripts/distro.sh), logs in build/distro/vm/; check mode runs
       the distro tier there (kfdcriu.mode=distro)
--debian13 boots Debian 13's stock kernel with the Debian 13 lane's
       initramfs (scripts/debian13.sh), logs in build/debian13/vm/; check
       mode runs the debian13 tier there (kfdcriu.mode=debian13)
--base 7.3 boots the 7.3 test kernel (scripts/build-kernel.sh
       --base 7.3) with the debug lane's initramfs, logs in build/vm-7.3/;
       check mode runs KUnit at boot and powers off (kfdcriu.mode=probe):
       without a GPU, 7.3 has no KFD state for the guest tiers to carry
In demo, bench and shell modes the kernel log goes to build/vm/console.log
as in check mode, and the guest talks to this terminal on a serial port of
its own; V=1 or VERBOSE=1 puts the kernel log on this terminal instead.
KUnit does not run at boot in these modes (make check runs it).
KVM is used when /dev/kvm works, TCG otherwise; AMDKFD_CRIU_ACCEL
overrides (kvm or tcg).
TXT
}

# KVM is used only when a guest really runs under it: /dev/kvm can exist
# where the host is itself a VM that cannot run nested guest code. The
# probe boots the real kernel and initramfs with kfdcriu.mode=probe, which
# only prints a marker and powers off; the answer is cached (outside the
# checkout) until the host reboots. Under working KVM the probe is at
# /init in a few seconds; where KVM does not work the guest never prints
# at all, so the wait is short: a cold "make check" pays it once per boot.
# A guest that printed but did not finish in time proves nothing either
# way: that run uses TCG and the next one probes again.
kvm_really_works() {
	local cache=$CACHE_DIR/kvm-probe out wait=12
	mkdir -p "$CACHE_DIR"
	[ -w /dev/kvm ] || return 1
	if [ -f "$cache" ] && [ "$(cat "$cache.boot" 2>/dev/null)" = "$(cat /proc/sys/kernel/random/boot_id)" ]; then
		[ "$(cat "$cache")" = yes ]
		return
	fi
	out=$(timeout -k 5 "$wait" qemu-system-x86_64 -accel kvm -m 512 \
		-kernel "$KSRC/arch/x86/boot/bzImage" \
		-initrd "$BUILD_DIR/vm/initramfs.cpio.gz" \
		-append "console=ttyS0 panic=-1 kfdcriu.mode=probe kunit.enable=0" \
		-display none -monitor none -no-reboot -nic none \
		-serial stdio 2>&1 || true)
	if grep -q 'kfdcriu-probe-ok' <<<"$out"; then
		echo yes > "$cache"
	elif grep -q 'Linux version' <<<"$out"; then
		log "KVM probe: the guest started but did not finish in $wait s; using TCG this time"
		return 1
	else
		echo no > "$cache"
	fi
	cat /proc/sys/kernel/random/boot_id > "$cache.boot"
	[ "$(cat "$cache")" = yes ]
}

pick_accel() {
	if [ -n "${AMDKFD_CRIU_ACCEL:-}" ]; then
		echo "$AMDKFD_CRIU_ACCEL"
	elif kvm_really_works; then
		echo kvm
	else
		echo tcg
	fi
}

# KUnit cases marked slow (whole-range worst cases that take half a minute
# under KASAN and TCG) are reported as skipped here; the host tier runs
# the same test file, slow cases included.
KUNIT_ARGS="kunit.filter=speed>slow kunit.filter_action=skip"

verbose() {
	case "${V:-}${VERBOSE:-}" in
	*[1-9]*) return 0 ;;
	esac
	return 1
}

# A problem the kernel logged while the console was out of sight.
report_console_splats() {
	local log=$1

	grep -qE "$SPLAT_RE" "$log" 2>/dev/null || return 0
	log "the kernel logged a problem; from ${log#$TOP/}:"
	grep -m1 -A20 -E "$SPLAT_RE" "$log" | sed 's/^/  /' >&2
}

# What scripts/parse-results.py counts as a splat, in short.
SPLAT_RE='BUG: |WARNING: |Kernel panic|Oops|general protection fault|UBSAN: '

main() {
	local mode=check timeout=900 accel vmdir=$BUILD_DIR/vm extra= rc=0
	local kunit=$KUNIT_ARGS quiet=0 kernel=$KSRC/arch/x86/boot/bzImage
	local guest_mode cpu= initrd=
	local -a serial
	while [ $# -gt 0 ]; do
		case "$1" in
		-h|--help) usage; exit 0 ;;
		--distro)
			vmdir=$DISTRO_DIR/vm
			kernel=$DISTRO_ROOT/boot/vmlinuz-$DISTRO_KVER
			kunit=
			;;
		--debian13)
			vmdir=$D13_DIR/vm
			kernel=$D13_ROOT/boot/vmlinuz-$D13_KVER
			kunit=
			;;
		--base)
			[ "${2:-}" = 7.3 ] || { usage >&2; exit 2; }
			vmdir=$BUILD_DIR/vm-7.3
			kernel=$PORT73_KSRC/arch/x86/boot/bzImage
			initrd=$BUILD_DIR/vm/initramfs.cpio.gz
			shift
			;;
		--mode) mode=$2; shift ;;
		--timeout) timeout=$2; shift ;;
		--append) extra=" $2"; shift ;;
		*) usage >&2; exit 2 ;;
		esac
		shift
	done
	accel=$(pick_accel)
	guest_mode=$mode
	[ -n "$initrd" ] || initrd=$vmdir/initramfs.cpio.gz
	[ "$vmdir" != "$BUILD_DIR/vm-7.3" ] || [ "$mode" != check ] || guest_mode=probe
	if [ "$vmdir" = "$DISTRO_DIR/vm" ] || [ "$vmdir" = "$D13_DIR/vm" ]; then
		[ "$mode" != check ] || guest_mode=distro
		[ "$vmdir" != "$D13_DIR/vm" ] || [ "$mode" != check ] ||
			guest_mode=debian13
		# Debian's kernel is built for a newer CPU than QEMU's default
		# model (its decompressor stops at a BMI2 instruction)
		cpu="-cpu max"
	fi
	# Debian 13's kernel patches its text while both vCPUs run (static
	# keys, int3 first); under multi-threaded TCG one boot in four hit
	# that int3 in enqueue_timer() and oopsed. One host thread for both
	# vCPUs runs the same guest without it.
	[ "$vmdir" != "$D13_DIR/vm" ] || [ "$accel" != tcg ] || accel=tcg,thread=single
	# Its containers need a root pivot_root(2) accepts (vm/init)
	[ "$vmdir" != "$D13_DIR/vm" ] || extra+=" kfdcriu.tmpfsroot=1"
	mkdir -p "$vmdir"
	case "$mode" in
	check|mutate)
		rm -f "$vmdir/console.log" "$vmdir/results.log" "$vmdir/gcov.b64"
		# The third port carries the coverage counters (scripts/coverage.py)
		serial=(-serial "file:$vmdir/console.log" -serial "file:$vmdir/results.log"
			-serial "file:$vmdir/gcov.b64")
		;;
	demo|bench|shell)
		kunit="kunit.enable=0"
		if verbose; then
			serial=(-serial mon:stdio -serial "file:$vmdir/results.log")
		else
			quiet=1
			rm -f "$vmdir/console.log"
			serial=(-serial "file:$vmdir/console.log"
				-serial "file:$vmdir/results.log" -serial mon:stdio)
			extra+=" kfdcriu.tty=ttyS2"
		fi
		;;
	*) usage >&2; exit 2 ;;
	esac
	log "booting ($accel, mode $mode, timeout ${timeout}s)"
	[ "$quiet" -eq 0 ] ||
		log "kernel log: ${vmdir#$TOP/}/console.log (V=1 shows it here); the VM boots in about a minute"
	timeout --foreground -k 10 "$timeout" \
		qemu-system-x86_64 -accel "$accel" $cpu -m 2048 -smp 2 \
		-kernel "$kernel" \
		-initrd "$initrd" \
		-append "console=ttyS0 panic=-1 kfdcriu.mode=$guest_mode $kunit$extra" \
		-display none -monitor none -no-reboot -nic none \
		"${serial[@]}" || rc=$?
	[ "$quiet" -eq 0 ] || report_console_splats "$vmdir/console.log"
	return "$rc"
}

main "$@"
