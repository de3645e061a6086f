#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian 13 lane of "make check": a Debian 13 (trixie) userland made
# from Debian's binary packages, trixie's stock 6.12 kernel, our amdgpu
# built by DKMS inside that userland with its own gcc and headers, and
# trixie's CRIU 4.1 running the e2e cases in the VM with our plugin.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/stock-lane.sh"

usage() {
	cat <<'TXT'
Usage: scripts/debian13.sh [--userland-only | --module-only | --initramfs-only]

Makes a Debian 13 userland with mmdebstrap (~/.cache/amdkfd-criu/debian13/
KVER; made once, remade when a pinned package changes): build-essential,
dkms, ccache, trixie's criu, its ROCm userspace (libhsa-runtime64,
libhsakmt, rocminfo) and the stock kernel's image and headers, the
pinned packages fetched into the download cache and checked against
their checksums first. In that userland (chroot), its DKMS builds and
installs our amdgpu for the stock kernel through the shared ccache, and
its gcc builds the ROCm clients (vm/debian13/rocm). The guest's
initramfs takes criu, rocminfo, the clients, their libraries and busybox
from the userland, the stock modules and ours from its kernel; the stock
vmlinuz boots it in debian13 mode, and the verdict of "make check" on the
debian13 tier is printed. Results: build/debian13/vm/results.log, the
kernel log in console.log, timings in build/debian13/times.
--userland-only   only make the userland
--module-only     the userland, then the module
--initramfs-only  the userland, the module, the initramfs
--add-modules DIR (for scripts/build-initramfs.sh) copy the modules the
                  guest loads into the initramfs root DIR, with their
                  load order in DIR/etc/kfd-criu/modules
TXT
}

# package suite version sha256 pin-variable: what the userland is about
D13_DEBS=(
	"linux-image-$D13_KVER-unsigned $D13_KERNEL_SUITE $D13_KERNEL_VERSION $D13_SHA256_IMAGE D13_SHA256_IMAGE"
	"linux-headers-$D13_KVER $D13_KERNEL_SUITE $D13_KERNEL_VERSION $D13_SHA256_HEADERS D13_SHA256_HEADERS"
	"linux-headers-${D13_KVER%-amd64}-common $D13_KERNEL_SUITE $D13_KERNEL_VERSION $D13_SHA256_HEADERS_COMMON D13_SHA256_HEADERS_COMMON"
	"linux-kbuild-${D13_KVER%-amd64} $D13_KERNEL_SUITE $D13_KERNEL_VERSION $D13_SHA256_KBUILD D13_SHA256_KBUILD"
	"criu trixie $D13_CRIU_VERSION $D13_SHA256_CRIU D13_SHA256_CRIU"
	"libcompel1 trixie $D13_CRIU_VERSION $D13_SHA256_LIBCOMPEL D13_SHA256_LIBCOMPEL"
	"dkms trixie $TRIXIE_DKMS_VERSION $TRIXIE_DKMS_SHA256 TRIXIE_DKMS_SHA256"
	"libhsa-runtime64-1 trixie $D13_HSA_VERSION $D13_SHA256_HSA D13_SHA256_HSA"
	"libhsa-runtime-dev trixie $D13_HSA_VERSION $D13_SHA256_HSA_DEV D13_SHA256_HSA_DEV"
	"libhsakmt1 trixie $D13_HSAKMT_VERSION $D13_SHA256_HSAKMT D13_SHA256_HSAKMT"
	"libhsakmt-dev trixie $D13_HSAKMT_VERSION $D13_SHA256_HSAKMT_DEV D13_SHA256_HSAKMT_DEV"
	"rocminfo trixie $D13_ROCMINFO_VERSION $D13_SHA256_ROCMINFO D13_SHA256_ROCMINFO"
	"podman trixie $D13_PODMAN_VERSION $D13_SHA256_PODMAN D13_SHA256_PODMAN"
	"runc trixie-security $D13_RUNC_VERSION $D13_SHA256_RUNC D13_SHA256_RUNC"
	"conmon trixie $D13_CONMON_VERSION $D13_SHA256_CONMON D13_SHA256_CONMON"
)

# The rest of the userland, from trixie as it is on the day: the
# compiler and make (build-essential, and gcc-14 the headers ask for),
# ccache for the module's objects, openssl for DKMS's signing key, a
# static busybox for the guest's /init, catatonit for podman's pods.
D13_PACKAGES="build-essential,ccache,kmod,openssl,busybox-static,catatonit"

# Modules the guest loads besides amdgpu's own dependencies, as the
# Debian 12 lane (scripts/distro.sh) has them.
EXTRA_MODULES="unix_diag inet_diag tcp_diag udp_diag netlink_diag af_packet_diag nf_tables veth vgem"

ROOT_STAMP=$D13_ROOT/.kfd-criu-root
MODULE_STAMP=$D13_ROOT/.kfd-criu-module
TIMES=$D13_DIR/times

# timed WHAT CMD...: CMD, its wall time appended to build/debian13/times
timed() {
	local what=$1 start=$SECONDS

	shift
	"$@" || return
	echo "$what: $((SECONDS - start)) s" >> "$TIMES"
	log "$what: $((SECONDS - start)) s"
}

# The kernel's release is the one the module's sources are of; the pins
# move together (scripts/repin.sh moves the Debian 12 ones).
check_pins() {
	[[ $D13_KERNEL_VERSION == "$PIN_UPSTREAM"-* ]] && return 0
	die "the Debian 13 kernel pin ($D13_KERNEL_VERSION) is not the module's release $PIN_UPSTREAM: move the D13_* pins in scripts/common.sh to trixie-security's $PIN_UPSTREAM"
}

# fetch_pinned: the pinned packages' files, one per line, verified.
fetch_pinned() {
	local entry pkg suite ver sum var

	for entry in "${D13_DEBS[@]}"; do
		read -r pkg suite ver sum var <<< "$entry"
		fetch_suite_deb "$suite" "$pkg" "$ver" "$sum" "$var"
	done
}

# Nothing may be mounted in the root when it is replaced (the chroot
# binds /dev and the ccache into it while DKMS runs).
check_unmounted() {
	check_unmounted_in "$D13_ROOT"
	check_unmounted_in "$D13_ROOT.new"
}

check_unmounted_in() {
	local m

	m=$(findmnt -rn -o TARGET | grep "^$1/" || true)
	[ -z "$m" ] || die "something is still mounted under $1: $(echo $m)"
}

# unpack_criu43: experimental's CRIU 4.3 and the sid libraries it needs,
# unpacked under D13_CRIU43_DIR in the userland (trixie's criu 4.1 stays
# the installed one), once per set of pinned files; ldd in the userland
# must then find every library 4.3 asks for.
unpack_criu43() {
	local dir=$D13_ROOT$D13_CRIU43_DIR entry pkg suite ver sum var debs= key deb

	for entry in "${D13_CRIU43_DEBS[@]}"; do
		read -r pkg suite ver sum var <<< "$entry"
		debs+=" $(fetch_suite_deb "$suite" "$pkg" "$ver" "$sum" "$var")"
	done
	key=$(sha256sum $debs | cut -d' ' -f1 | sha256sum | cut -d' ' -f1)
	[ "$(cat "$dir/.kfd-criu-stamp" 2>/dev/null)" != "$key" ] || return 0
	rm -rf "$dir"
	for deb in $debs; do
		dpkg-deb -x "$deb" "$dir"
	done
	if criu43_ldd | grep 'not found'; then
		die "CRIU $D13_CRIU43_VERSION misses the libraries above in the Debian 13 userland"
	fi
	echo "$key" > "$dir/.kfd-criu-stamp"
	log "CRIU $D13_CRIU43_VERSION unpacked in the userland: $D13_CRIU43_DIR"
}

# criu43_ldd: what ldd says of the unpacked criu 4.3 in the userland.
criu43_ldd() {
	in_userland env LD_LIBRARY_PATH="$(criu43_lib_path)" \
		ldd "$D13_CRIU43_DIR/usr/sbin/criu"
}

# The userland, made once per set of pinned packages and package list.
prepare_userland() {
	local debs key tmp inc=() deb

	check_pins
	debs=$(fetch_pinned)
	key=$( (echo "$D13_ROOT $D13_SUITES $D13_PACKAGES"
		sha256sum $debs | cut -d' ' -f1
		sed -n '/^make_userland()/,/^}/p' "$0") | sha256sum | cut -d' ' -f1)
	if [ -f "$ROOT_STAMP" ] && [ "$(cat "$ROOT_STAMP")" = "$key" ]; then
		log "Debian 13 userland is current: $D13_ROOT"
		return
	fi
	check_unmounted
	for deb in $debs; do
		inc+=(--include="$deb")
	done
	tmp=$D13_ROOT.new
	rm -rf "$tmp" "$D13_ROOT"
	timed "Debian 13 userland (mmdebstrap)" make_userland "$tmp" "${inc[@]}"
	# The hook's mount points of the pinned files, empty, are left behind
	check_unmounted_in "$tmp"
	rm -rf "${tmp:?}$CACHE_DIR"
	chroot "$tmp" dpkg-query -W > "$tmp/.kfd-criu-packages"
	mv "$tmp" "$D13_ROOT"
	echo "$key" > "$ROOT_STAMP"
	log "Debian 13 userland: $(wc -l < "$D13_ROOT/.kfd-criu-packages") packages, $(du -sh "$D13_ROOT" | cut -f1) ($D13_ROOT/.kfd-criu-packages lists them)"
}

# make_userland DIR --include=DEB...: mmdebstrap from trixie and its
# security updates. The pinned packages are given as files (the
# file-mirror hook makes them visible inside). initramfs-tools' kernel
# hook is left out: the guest boots the lane's own initramfs, and making
# Debian's would only cost time. Documentation is left out too.
make_userland() {
	local dir=$1 s
	local -a mirrors=()

	shift
	for s in $D13_SUITES; do
		mirrors+=("deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(suite_uri "$s") $s main")
	done
	log "making the Debian 13 userland in $dir (mmdebstrap, about 10 minutes cold)"
	mmdebstrap --mode=root --variant=apt --quiet \
		--aptopt='Acquire::Languages "none"' \
		--dpkgopt='path-exclude=/etc/kernel/postinst.d/initramfs-tools' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
		--include="$D13_PACKAGES" "$@" \
		trixie "$dir" "${mirrors[@]}"
}

# The chroot's mounts, undone on every exit.
CHROOT_MOUNTS=()

mount_chroot() {
	local ccache=$D13_ROOT/var/cache/kfd-criu-ccache

	mkdir -p "$CCACHE_DIR" "$ccache"
	mount -t proc proc "$D13_ROOT/proc" && CHROOT_MOUNTS+=("$D13_ROOT/proc")
	mount --bind /dev "$D13_ROOT/dev" && CHROOT_MOUNTS+=("$D13_ROOT/dev")
	mount --bind "$CCACHE_DIR" "$ccache" && CHROOT_MOUNTS+=("$ccache")
	# An interrupted build must not leave the host's /dev bound in the root
	trap umount_chroot EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

umount_chroot() {
	local m

	for m in "${CHROOT_MOUNTS[@]}"; do
		umount "$m" || umount -l "$m" || true
	done
	CHROOT_MOUNTS=()
}

# in_userland CMD...: CMD in the userland, with the environment of the
# project's builds (shared ccache, reproducible build metadata) only.
IN_USERLAND=(chroot "$D13_ROOT" /usr/bin/env -i
	PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8
	CCACHE_DIR=/var/cache/kfd-criu-ccache CCACHE_BASEDIR=/
	CCACHE_NOHASHDIR=true "CCACHE_MAXSIZE=$CCACHE_MAXSIZE"
	"CCACHE_DEPEND=$CCACHE_DEPEND" DEBIAN_KERNEL_USE_CCACHE=1
	"KBUILD_BUILD_TIMESTAMP=$KBUILD_BUILD_TIMESTAMP"
	"KBUILD_BUILD_USER=$KBUILD_BUILD_USER"
	"KBUILD_BUILD_HOST=$KBUILD_BUILD_HOST")

in_userland() {
	"${IN_USERLAND[@]}" "$@"
}

# DKMS of the userland builds and installs the staged sources for the
# stock kernel: dkms add, install (the kernel's own headers package put
# /lib/modules/KVER/build in place).
install_module() {
	local key ko src=/usr/src/$MODULE_PKG-$MODULE_PKG_VERSION

	key=$(stock_module_key "$D13_ROOT" "$D13_KVER" "$ROOT_STAMP" "$0")
	ko=$(ls "$D13_ROOT/lib/modules/$D13_KVER/updates/dkms/amdgpu.ko"* 2>/dev/null | head -n1 || true)
	if [ -f "$MODULE_STAMP" ] && [ "$(cat "$MODULE_STAMP")" = "$key" ] && [ -n "$ko" ]; then
		log "amdgpu for the Debian 13 lane is current: ${ko#$D13_ROOT}"
		return
	fi
	rm -f "$MODULE_STAMP"
	mount_chroot
	remove_modules
	rm -rf "$D13_ROOT/usr/src/$MODULE_PKG-"*
	mkdir -p "$D13_ROOT$src"
	rsync -a --delete "$BUILD_DIR/dkms-src-$D13_KVER/" "$D13_ROOT$src/"
	in_userland dkms add -m "$MODULE_PKG" -v "$MODULE_PKG_VERSION" >&2
	timed "DKMS build in the Debian 13 userland" dkms_build
	umount_chroot
	ko=$(ls "$D13_ROOT/lib/modules/$D13_KVER/updates/dkms/amdgpu.ko"* 2>/dev/null | head -n1 || true)
	[ -n "$ko" ] || die "DKMS installed no amdgpu under updates/dkms for $D13_KVER"
	stock_check_build_log "$D13_ROOT" "$D13_KVER"
	check_vermagic "$ko"
	log "amdgpu for the Debian 13 lane: ${ko#$D13_ROOT}, vermagic $(modinfo -F vermagic "$ko"), built by $(in_userland gcc --version | head -n1)"
	echo "$key" > "$MODULE_STAMP"
}

# Every version of our package DKMS holds for any kernel goes, and with
# it the stock amdgpu comes back from original_module. Debian 13's dkms
# (3.2) wants the version named: "remove -m PKG --all" alone is a usage
# error, which left an earlier build in place.
remove_modules() {
	local dir ver

	for dir in "$D13_ROOT/var/lib/dkms/$MODULE_PKG"/*/; do
		[ -L "$dir/source" ] || continue
		ver=$(basename "$dir")
		in_userland dkms remove -m "$MODULE_PKG" -v "$ver" --all > /dev/null ||
			die "dkms could not remove $MODULE_PKG/$ver from the Debian 13 userland"
	done
}

# dkms install with the progress display of scripts/module.sh (DKMS
# prints nothing until it is done).
dkms_build() {
	local tree=$D13_ROOT/var/lib/dkms/$MODULE_PKG/$MODULE_PKG_VERSION

	"$TOP/scripts/progress.py" kbuild --label "DKMS build (Debian 13)" \
		--total "$(cat "$CACHE_DIR/module-objects" 2>/dev/null || echo 877)" \
		--output "$D13_DIR/dkms-install.log" \
		--follow "$tree/build/make.log" -- \
		"${IN_USERLAND[@]}" dkms install -m "$MODULE_PKG" \
		-v "$MODULE_PKG_VERSION" -k "$D13_KVER" || {
		tail -n 30 "$D13_DIR/dkms-install.log" >&2
		die "DKMS failed for $D13_KVER (its output: $D13_DIR/dkms-install.log)"
	}
}

# Our module carries the stock kernel's vermagic. Debian 13's dkms (3.2)
# moves the stock amdgpu it replaces into its original_module directory
# (Debian 12's 3.0 left it in place); "dkms remove" puts it back.
check_vermagic() {
	local ours stock orig

	orig=$D13_ROOT/var/lib/dkms/$MODULE_PKG/original_module/$D13_KVER/x86_64
	stock=$(ls "$D13_ROOT/lib/modules/$D13_KVER/kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko"* \
		"$orig"/amdgpu.ko "$orig"/amdgpu.ko.xz 2>/dev/null | head -n1 || true)
	[ -n "$stock" ] || die "the stock amdgpu of $D13_KVER is neither in its kernel tree nor in $orig"
	ours=$(modinfo -F vermagic "$1")
	stock=$(modinfo -F vermagic "$stock")
	[ "$ours" = "$stock" ] ||
		die "vermagic of $1 is '$ours', the stock kernel's is '$stock'"
}

# The modules the guest loads, in load order, one path per line, as the
# userland's modprobe resolves them.
module_load_order() {
	local m

	for m in amdgpu $EXTRA_MODULES; do
		in_userland modprobe -S "$D13_KVER" --show-depends "$m" ||
			die "modprobe: no module $m for $D13_KVER in $D13_ROOT"
	done | sed -n 's/^insmod \([^ ]*\).*/\1/p' | awk '!seen[$0]++'
}

# The ROCm clients of vm/debian13/kfd_rocm_test.sh, built in the
# userland with its gcc against trixie's ROCm packages; the initramfs
# takes them from there with the libraries ldd names (D13_ROCM_DIR in
# scripts/common.sh). Always rebuilt: make takes seconds.
build_rocm_clients() {
	local src=/opt/kfd-criu/rocm-src

	mkdir -p "$D13_ROOT$src"
	rsync -a --delete "$TOP/vm/debian13/rocm/" "$D13_ROOT$src/"
	rm -rf "$D13_ROOT$D13_ROCM_DIR"
	in_userland make -s -C "$src" O="$D13_ROCM_DIR" >&2 ||
		die "the ROCm clients did not build in the Debian 13 userland"
}

build_initramfs() {
	mkdir -p "$D13_DIR/vm"
	timed "Debian 13 initramfs" "$TOP/scripts/build-initramfs.sh" --debian13 \
		"$D13_DIR/vm/initramfs.cpio.gz"
}

main() {
	local what=all
	case "${1:-}" in
	-h|--help) usage; exit 0 ;;
	--userland-only) what=userland ;;
	--module-only) what=module ;;
	--initramfs-only) what=initramfs ;;
	--add-modules)
		[ $# -eq 2 ] || { usage >&2; exit 2; }
		stock_add_modules "$2" "$D13_ROOT" "$D13_KVER" "$(module_load_order)"
		exit 0
		;;
	"") ;;
	*) usage >&2; exit 2 ;;
	esac
	[ "$(id -u)" -eq 0 ] ||
		die "the Debian 13 lane makes and enters a chroot: run it as root"
	command -v mmdebstrap > /dev/null ||
		die "mmdebstrap is not installed (scripts/install-deps.sh; Debian: apt-get install mmdebstrap)"
	mkdir -p "$D13_DIR" "$(dirname "$D13_ROOT")"
	exec 8> "$D13_ROOT.lock"
	flock 8
	prepare_userland
	unpack_criu43
	[ "$what" != userland ] || return 0
	install_module
	[ "$what" != module ] || return 0
	build_rocm_clients
	build_initramfs
	[ "$what" != initramfs ] || return 0
	timed "Debian 13 VM run" "$TOP/scripts/run-vm.sh" --debian13 --mode check ||
		log "QEMU exited with status $? (124: timeout)"
	# The verdict of "make check" on this tier alone
	"$TOP/scripts/parse-results.py" --manifest "$TOP/scripts/test-manifest" \
		--expect debian13 --debian13-console "$D13_DIR/vm/console.log" \
		--debian13-results "$D13_DIR/vm/results.log"
}

main "$@"
