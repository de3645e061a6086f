#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The distro lane of "make check": Debian 12's stock 6.12 kernel, not
# rebuilt, with our amdgpu built and installed by DKMS, runs the
# selftests and the real-CRIU e2e tests in the VM.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/stock-lane.sh"

usage() {
	cat <<'TXT'
Usage: scripts/distro.sh [--root-only | --module-only | --initramfs-only]

Unpacks Debian's packages of the stock kernel (pinned, checksums
verified; downloaded once into the cache) into a root in the cache
(~/.cache/amdkfd-criu/distro/KVER), installs our amdgpu there with
"make dkms-install" (SYSROOT=that root),
packs an initramfs that loads the stock modules amdgpu needs and ours,
and boots the stock vmlinuz with it in distro mode. The guest's results
are in build/distro/vm/results.log, the kernel log in console.log.
--root-only       only unpack the kernel packages
--module-only     unpack, then install the module with DKMS
--initramfs-only  unpack, install the module, pack the initramfs
--add-modules DIR (for scripts/build-initramfs.sh) copy the modules the
                  guest loads into the initramfs root DIR, with their
                  load order in DIR/etc/kfd-criu/modules
TXT
}

# package sha256: the four packages of the pinned kernel release
# (scripts/common.sh)
DISTRO_DEBS=(
	"linux-image-$DISTRO_KVER-unsigned $PIN_SHA256_IMAGE"
	"linux-headers-$DISTRO_KVER $PIN_SHA256_HEADERS"
	"linux-headers-${DISTRO_KVER%-amd64}-common $PIN_SHA256_HEADERS_COMMON"
	"linux-kbuild-${DISTRO_KVER%-amd64} $PIN_SHA256_KBUILD"
)

# Modules the guest loads besides amdgpu's own dependencies: CRIU's
# socket diagnostics and what "criu check" wants (nf_tables, veth), and
# vgem for the DRM reattach test. The test kernel has them built in.
EXTRA_MODULES="unix_diag inet_diag tcp_diag udp_diag netlink_diag af_packet_diag nf_tables veth vgem"

# fetch_deb PACKAGE SHA256: the package file in the cache, verified.
fetch_deb() {
	fetch_pinned_deb "$1" "$DISTRO_PKG_VERSION" "$2"
}

# The headers package names its paths absolutely: point them into the
# root, so that the kernel's build system finds itself there.
relocate_headers() {
	local hdr=$DISTRO_ROOT/usr/src/linux-headers-$DISTRO_KVER
	local common=linux-headers-${DISTRO_KVER%-amd64}-common

	echo "include $DISTRO_ROOT/usr/src/$common/Makefile" > "$hdr/Makefile"
	ln -sfn "../../../usr/src/linux-headers-$DISTRO_KVER" \
		"$DISTRO_ROOT/lib/modules/$DISTRO_KVER/build"
}

ROOT_STAMP=$DISTRO_ROOT/.kfd-criu-root

# Unpacked once per set of packages.
prepare_root() {
	local entry debs=() key

	for entry in "${DISTRO_DEBS[@]}"; do
		debs+=("$(fetch_deb $entry)")
	done
	key=$( (echo "$DISTRO_ROOT"; sha256sum "${debs[@]}" | cut -d' ' -f1) | sha256sum | cut -d' ' -f1)
	if [ -f "$ROOT_STAMP" ] && [ "$(cat "$ROOT_STAMP")" = "$key" ]; then
		return
	fi
	log "unpacking Debian's $DISTRO_KVER kernel into $DISTRO_ROOT"
	rm -rf "$DISTRO_ROOT"
	mkdir -p "$DISTRO_ROOT"
	for entry in "${debs[@]}"; do
		dpkg-deb -x "$entry" "$DISTRO_ROOT"
	done
	relocate_headers
	depmod -b "$DISTRO_ROOT" "$DISTRO_KVER"
	echo "$key" > "$ROOT_STAMP"
}

# "make dkms-install" for the unpacked kernel; skipped when the staged
# sources are what DKMS last installed (a change to the selftests or the
# documentation does not rebuild the module).
install_module() {
	local ko key stamp=$DISTRO_ROOT/.kfd-criu-module

	key=$(stock_module_key "$DISTRO_ROOT" "$DISTRO_KVER" "$ROOT_STAMP")
	ko=$(modinfo_path amdgpu 2>/dev/null || true)
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ] &&
	   [ -f "$ko" ] && [ "${ko#*/updates/dkms/}" != "$ko" ]; then
		log "amdgpu for the distro lane is current: ${ko#$DISTRO_ROOT}"
		return
	fi
	rm -f "$stamp"
	SYSROOT=$DISTRO_ROOT KVER=$DISTRO_KVER "$TOP/scripts/module.sh" dkms-install
	ko=$(modinfo_path amdgpu)
	case "$ko" in
	*/updates/dkms/*) ;;
	*) die "modprobe would load $ko, not the DKMS module" ;;
	esac
	stock_check_build_log "$DISTRO_ROOT" "$DISTRO_KVER"
	check_vermagic "$ko"
	log "amdgpu for the distro lane: ${ko#$DISTRO_ROOT}, vermagic $(modinfo -F vermagic "$ko"), signer: $(modinfo -F signer "$ko")"
	echo "$key" > "$stamp"
}

# Our module must carry the stock kernel's vermagic: that of the
# distribution's own amdgpu.
check_vermagic() {
	local ours stock

	ours=$(modinfo -F vermagic "$1")
	stock=$(modinfo -F vermagic "$DISTRO_ROOT/lib/modules/$DISTRO_KVER/kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko.xz")
	[ "$ours" = "$stock" ] ||
		die "vermagic of $1 is '$ours', the stock kernel's is '$stock'"
}

# modinfo_path MODULE: the file modprobe picks for MODULE in the root.
modinfo_path() {
	modinfo -b "$DISTRO_ROOT" -k "$DISTRO_KVER" -F filename "$1"
}

# The modules the guest loads, in load order, one path per line; the
# root's modprobe configuration, not this machine's.
module_load_order() {
	local m

	for m in amdgpu $EXTRA_MODULES; do
		modprobe -C "$DISTRO_ROOT/etc/modprobe.d" -d "$DISTRO_ROOT" \
			-S "$DISTRO_KVER" --show-depends "$m" ||
			die "modprobe: no module $m for $DISTRO_KVER in $DISTRO_ROOT"
	done | sed -n 's/^insmod \([^ ]*\).*/\1/p' | awk '!seen[$0]++'
}

# What a kernel upgrade sees of the package (dkms/tests/): TAP for the
# distro tier, with the exit status, as the host tier's files have it.
check_kernel_hooks() {
	local tap=$DISTRO_DIR/kernel-hook.tap rc=0 deb trixie=$DISTRO_DIR/dkms-trixie

	deb=$(fetch_suite_deb trixie dkms "$TRIXIE_DKMS_VERSION" "$TRIXIE_DKMS_SHA256")
	rm -rf "$trixie"
	dpkg-deb -x "$deb" "$trixie"
	DKMS_TRIXIE=$trixie "$TOP/dkms/tests/kernel_hook_test.sh" "$DISTRO_ROOT" "$DISTRO_KVER" \
		"$MODULE_PKG" "$MODULE_PKG_VERSION" > "$tap.new" 2>&1 || rc=$?
	echo "# exit status $rc" >> "$tap.new"
	mv -f "$tap.new" "$tap"
	log "kernel hooks: $(grep -c '^ok' "$tap") of $(sed -n 's/^1\.\.//p' "$tap" | head -n1) passed ($tap)"
}

build_initramfs() {
	local out=$DISTRO_DIR/vm/initramfs.cpio.gz

	mkdir -p "$DISTRO_DIR/vm"
	"$TOP/scripts/build-initramfs.sh" --distro "$out"
}

main() {
	local what=all
	case "${1:-}" in
	-h|--help) usage; exit 0 ;;
	--root-only) what=root ;;
	--module-only) what=module ;;
	--initramfs-only) what=initramfs ;;
	--add-modules)
		[ $# -eq 2 ] || { usage >&2; exit 2; }
		stock_add_modules "$2" "$DISTRO_ROOT" "$DISTRO_KVER" "$(module_load_order)"
		exit 0
		;;
	"") ;;
	*) usage >&2; exit 2 ;;
	esac
	mkdir -p "$DISTRO_DIR" "$(dirname "$DISTRO_ROOT")"
	# One checkout at a time changes the shared root
	exec 8> "$DISTRO_ROOT.lock"
	flock 8
	prepare_root
	[ "$what" != root ] || return 0
	install_module
	check_kernel_hooks
	[ "$what" != module ] || return 0
	build_initramfs
	[ "$what" != initramfs ] || return 0
	"$TOP/scripts/run-vm.sh" --distro --mode check
}

main "$@"
