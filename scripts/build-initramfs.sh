#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Pack the test VM's initramfs: busybox-static, Debian's criu with the
# shared libraries it links, our guest scripts, test programs and plugin.
set -euo pipefail
. "$(dirname "$0")/common.sh"

usage() {
	cat <<'TXT'
Usage: scripts/build-initramfs.sh [--distro] [OUTPUT]

Writes build/vm/initramfs.cpio.gz (or OUTPUT). Test programs are taken from
build/selftests, build/e2e and the plugin from build/plugin when present;
kfdcrit, which the e2e tests run on every dump, from build/kfdcrit/static
into /usr/bin.
--distro  for the distro lane (scripts/distro.sh): add the stock modules
          and our amdgpu from the lane's kernel root, the lane's module test,
          and leave out the programs scripts/test-manifest keeps to the
          debug lane.
--debian13 for the Debian 13 lane (scripts/debian13.sh): criu,
          rocminfo, the ROCm clients, their libraries and busybox from
          the lane's Debian 13 userland, the
          stock modules and our amdgpu from its kernel, and only the test
          programs scripts/test-manifest gives the debian13 tier.
TXT
}

# The root the guest's criu, its libraries and busybox come from: this
# machine's, or the Debian 13 lane's userland (--debian13).
USERLAND=

# in_userland CMD...: CMD in that root.
in_userland() {
	if [ -n "$USERLAND" ]; then
		chroot "$USERLAND" "$@"
	else
		"$@"
	fi
}

# userland_file PATH: PATH of the userland, its symlinks followed there.
userland_file() {
	echo "$USERLAND$(in_userland readlink -f "$1")"
}

# Copy a binary and every shared library ldd reports into the root.
add_binary_with_libs() {
	local root=$1 bin=$2 lib
	install -D -m 0755 "$(userland_file "$bin")" "$root$bin"
	for lib in $(in_userland ldd "$bin" 2>/dev/null | grep -o '/[^ ]*'); do
		[ -e "$root$lib" ] || install -D -m 0755 "$(userland_file "$lib")" "$root$lib"
	done
}

populate_root() {
	local root=$1 d
	mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,etc,root,usr/lib/criu,opt/kfd-criu}
	install -m 0755 "$(userland_file /bin/busybox)" "$root/bin/busybox"
	ln -sf busybox "$root/bin/sh"
	add_binary_with_libs "$root" /usr/sbin/criu
	# criu needs the lib64 loader path the binary names.
	install -D -m 0755 "$(userland_file /lib64/ld-linux-x86-64.so.2)" \
		"$root/lib64/ld-linux-x86-64.so.2"
	install -m 0755 "$TOP/vm/init" "$root/init"
	cp -r "$TOP/vm/lib" "$root/opt/kfd-criu/lib"
	for d in selftests e2e; do
		if [ -d "$BUILD_DIR/$d" ]; then
			mkdir -p "$root/opt/kfd-criu/$d"
			cp -r "$BUILD_DIR/$d/." "$root/opt/kfd-criu/$d/"
		fi
	done
	cp -r "$TOP/e2e/." "$root/opt/kfd-criu/e2e/" 2>/dev/null || true
	find "$root/opt/kfd-criu/e2e" -name '*.c' -delete 2>/dev/null || true
	# Linked statically ("make -C kfdcrit static"), like the e2e programs
	# The e2e tests check every dump with it: no silent omission
	[ -x "$BUILD_DIR/kfdcrit/static/kfdcrit" ] ||
		die "$BUILD_DIR/kfdcrit/static/kfdcrit is missing (make -C kfdcrit static)"
	install -D -m 0755 "$BUILD_DIR/kfdcrit/static/kfdcrit" "$root/usr/bin/kfdcrit"
	# The plugins only: the harness builds its stand-ins (CRIU's own
	# amdgpu_plugin, criu exports) below build/plugin, which criu would
	# load from /usr/lib/criu as well
	if [ -d "$BUILD_DIR/plugin" ]; then
		find "$BUILD_DIR/plugin" -maxdepth 1 -name '*.so' -exec install -m 0755 {} "$root/usr/lib/criu/" \;
	fi
	echo 'root:x:0:0:root:/root:/bin/sh' > "$root/etc/passwd"
	echo 'nobody:x:65534:65534:nobody:/:/bin/false' >> "$root/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
}

# Programs the manifest's "debug-only" lines name (TIER/PROGRAM).
debug_only_programs() {
	awk '$1 == "debug-only" { print $2 }' "$TOP/scripts/test-manifest"
}

# The distro lane's additions, under the root of the debug lane's.
add_distro() {
	local root=$1 rel

	"$TOP/scripts/distro.sh" --add-modules "$root"
	echo "$DISTRO_KVER" > "$root/etc/kfd-criu/kernel-release"
	echo "$MODULE_PKG_VERSION" > "$root/etc/kfd-criu/module-version"
	mkdir -p "$root/opt/kfd-criu/distro"
	install -m 0755 "$TOP/vm/distro/"*_test.sh "$root/opt/kfd-criu/distro/"
	for rel in $(debug_only_programs); do
		[ -e "$root/opt/kfd-criu/$rel" ] ||
			die "test-manifest: debug-only $rel is not in the initramfs"
		rm -f "$root/opt/kfd-criu/$rel"
	done
}

# Programs the manifest gives the Debian 13 tier (TIER/PROGRAM).
debian13_programs() {
	awk '$1 == "debian13" { print $2 }' "$TOP/scripts/test-manifest"
}

# The Debian 13 lane's root: criu and busybox are the userland's (set
# before populate_root), the modules its kernel's, and only the programs
# the manifest gives the tier are left among the tests.
add_debian13() {
	local root=$1 t rel

	"$TOP/scripts/debian13.sh" --add-modules "$root"
	echo "$D13_KVER" > "$root/etc/kfd-criu/kernel-release"
	echo "$MODULE_PKG_VERSION" > "$root/etc/kfd-criu/module-version"
	echo "$D13_CRIU_VERSION" > "$root/etc/kfd-criu/criu-version"
	# ROCm as its clients use it: rocminfo and the lane's two programs,
	# with every library ldd names, all resolved in the userland
	for t in /usr/bin/rocminfo "$D13_ROCM_DIR/kfd_hsa_client" \
		 "$D13_ROCM_DIR/kfd_hsakmt_client"; do
		[ -x "$USERLAND$t" ] ||
			die "$t is not in the Debian 13 userland (scripts/debian13.sh builds it)"
		add_binary_with_libs "$root" "$t"
	done
	add_criu43 "$root"
	mkdir -p "$root/opt/kfd-criu/debian13"
	install -m 0755 "$TOP/vm/debian13/"*_test.sh "$TOP/vm/distro/kfd_module_test.sh" \
		"$root/opt/kfd-criu/debian13/"
	for t in $(cd "$root/opt/kfd-criu" && find . -type f \( -name '*_test' -o -name '*_test.sh' \)); do
		rel=${t#./}
		debian13_programs | grep -qxF "$rel" || rm -f "$root/opt/kfd-criu/$rel"
	done
	for rel in $(debian13_programs); do
		[ -e "$root/opt/kfd-criu/$rel" ] ||
			die "test-manifest: debian13 $rel is not in the initramfs"
	done
	add_podman "$root"
}

# What podman (Debian 13's, with runc) needs in the guest to run and
# checkpoint a container: its programs with their libraries, the
# package's defaults, the guest's configuration (vm/debian13/containers)
# and the image's root file system: the heartbeat alone (the e2e
# programs are static), which the test imports with "podman import".
# GNU tar and gzip are criu's: it saves a container's tmpfs mounts with
# them (busybox's tar lacks the options criu gives).
PODMAN_PROGRAMS="/usr/bin/podman /usr/sbin/runc /usr/bin/conmon /usr/lib/podman/netavark /usr/bin/tar /usr/bin/gzip"

add_podman() {
	local root=$1 p img

	for p in $PODMAN_PROGRAMS; do
		add_binary_with_libs "$root" "$p"
	done
	# before busybox's applets in /bin, which /init links only where free
	install -m 0755 "$root/usr/bin/tar" "$root/bin/tar"
	install -m 0755 "$root/usr/bin/gzip" "$root/bin/gzip"
	install -D -m 0755 "$(userland_file /usr/libexec/podman/catatonit)" \
		"$root/usr/libexec/podman/catatonit"
	mkdir -p "$root/etc/containers" "$root/usr/share/containers" "$root/var/tmp"
	cp "$(userland_file /usr/share/containers/containers.conf)" \
		"$(userland_file /usr/share/containers/seccomp.json)" "$root/usr/share/containers/"
	cp "$(userland_file /etc/containers/policy.json)" "$root/etc/containers/"
	cp "$TOP/vm/debian13/containers/"*.conf "$root/etc/containers/"
	img=$(mktemp -d "$BUILD_DIR/container.XXXXXX")
	install -m 0755 "$BUILD_DIR/e2e/kfd_heartbeat" "$img/kfd_heartbeat"
	mkdir -p "$img/dev" "$img/proc" "$img/sys" "$img/tmp" "$img/etc"
	mkdir -p "$root/opt/kfd-criu/container"
	tar -C "$img" -cf "$root/opt/kfd-criu/container/rootfs.tar" .
	rm -rf "$img"
}

# CRIU 4.3 beside the userland's 4.1 (scripts/debian13.sh unpacks it):
# its binary and the libraries newer than trixie's under D13_CRIU43_DIR,
# the rest where ldd finds them, and D13_CRIU43_DIR/bin/criu, which runs
# it with those libraries first.
add_criu43() {
	local root=$1 dir=$D13_CRIU43_DIR lib libs=$(criu43_lib_path)

	[ -x "$USERLAND$dir/usr/sbin/criu" ] ||
		die "CRIU $D13_CRIU43_VERSION is not in the Debian 13 userland (scripts/debian13.sh unpacks it)"
	install -D -m 0755 "$USERLAND$dir/usr/sbin/criu" "$root$dir/usr/sbin/criu"
	for lib in $(in_userland env LD_LIBRARY_PATH="$libs" ldd "$dir/usr/sbin/criu" |
		     grep -o '/[^ ]*'); do
		[ -e "$root$lib" ] || install -D -m 0755 "$(userland_file "$lib")" "$root$lib"
	done
	mkdir -p "$root$dir/bin"
	printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$libs" \
		"$dir/usr/sbin/criu" > "$root$dir/bin/criu"
	chmod 0755 "$root$dir/bin/criu"
	echo "$D13_CRIU43_VERSION" > "$root/etc/kfd-criu/criu43-version"
}

main() {
	local out distro=0 debian13=0
	case "${1:-}" in
	-h|--help) usage; exit 0 ;;
	--distro) distro=1; shift ;;
	--debian13) debian13=1; USERLAND=$D13_ROOT; shift ;;
	esac
	out=${1:-$BUILD_DIR/vm/initramfs.cpio.gz}
	mkdir -p "$(dirname "$out")"
	ROOT_DIR=$(mktemp -d "$BUILD_DIR/initramfs.XXXXXX")
	root=$ROOT_DIR
	trap 'rm -rf "$ROOT_DIR"' EXIT
	populate_root "$root"
	[ "$distro" -eq 0 ] || add_distro "$root"
	[ "$debian13" -eq 0 ] || add_debian13 "$root"
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) > "$out.tmp"
	mv "$out.tmp" "$out"
	log "initramfs ready: $out ($(du -h "$out" | cut -f1))"
}

main "$@"
