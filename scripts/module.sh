#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# amdgpu with the series as an external module for an installed kernel:
# stage the sources, build them against the kernel's headers, or hand
# them to DKMS (make module, make dkms-install, make dkms-remove).
set -euo pipefail
. "$(dirname "$0")/common.sh"

usage() {
	cat <<'TXT'
Usage: scripts/module.sh stage DIR
       scripts/module.sh build
       scripts/module.sh dkms-install | dkms-remove | dkms-status

stage         write the module's source tree to DIR: amdgpu, amdkfd and
              display from the prepared tree (series applied), the
              series' kfd_ioctl.h, the top-level Kbuild, dkms.conf
build         build build/module/.../amdgpu.ko against the kernel headers
              of KVER (make module)
dkms-install  register, build and install the module with DKMS for KVER,
              replacing any version of ours already there, install its
              kernel hook (dkms/kernel-hook) and update KVER's initramfs
              (/boot/initrd.img-KVER, if there is one). KVER must be
              the pinned release; for another the refusal says which
              kernel to install.
              Refuses while another DKMS package named amdgpu (AMD's
              amdgpu-dkms) is there, unless FORCE=1: both install
              updates/dkms/amdgpu.ko and would replace each other.
dkms-remove   remove every version of ours from DKMS, for every kernel,
              and its kernel hook, and update KVER's initramfs (that of other kernels is
              updated when they next get a DKMS module, or by hand)
dkms-status   what DKMS knows of ours, and for every kernel installed (in
              SYSROOT) which amdgpu it runs: ours, with CRIU image
              mode, or the stock one

The sources are staged as the calling user (build/dkms-src); copying
them to /usr/src, DKMS and update-initramfs run through sudo when the
caller is not root.

Environment:
KVER     the kernel release to build for (default: the running one);
         its headers must be installed (linux-headers-KVER)
KDIR     the kernel's build directory (default /lib/modules/KVER/build)
SYSROOT  a root directory holding that kernel instead of / (its
         lib/modules/KVER and usr/src/linux-headers-KVER, as unpacked
         from Debian's packages): DKMS's trees and its signing key are
         then kept there too. The distro lane of "make check" uses this.
FORCE=1  install beside another amdgpu DKMS package
TXT
}

KVER=${KVER:-$(uname -r)}
SYSROOT=${SYSROOT:-}
MODULE_DIR=$BUILD_DIR/module
STAGE_DIR=$BUILD_DIR/dkms-src
AMD=drivers/gpu/drm/amd
VERSION_FILE=$AMD/amdgpu/amdgpu_kfd_criu_version.c

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo --preserve-env=CCACHE_DIR,CCACHE_BASEDIR,CCACHE_NOHASHDIR,CCACHE_MAXSIZE,CCACHE_DEPEND,DEBIAN_KERNEL_USE_CCACHE,KBUILD_BUILD_TIMESTAMP,KBUILD_BUILD_USER,KBUILD_BUILD_HOST,sign_file,mok_signing_key,mok_certificate"
fi

# Where the headers of KVER are.
kernel_build_dir() {
	if [ -n "${KDIR:-}" ]; then
		echo "$KDIR"
	elif [ -n "$SYSROOT" ]; then
		echo "$SYSROOT/usr/src/linux-headers-$KVER"
	else
		echo "/lib/modules/$KVER/build"
	fi
}

# The sources are one 6.12 release's amdgpu: refuse another release
# before a long build fails on it or drops its own changes, and say what
# to install when headers lack.
check_kernel() {
	local kdir=$1 rel

	check_release "$KVER"
	[ -f "$kdir/Makefile" ] ||
		die "no kernel headers for $KVER in $kdir (Debian: apt-get install linux-headers-$KVER)"
	rel=$(cat "$kdir/include/config/kernel.release" 2>/dev/null || echo "$KVER")
	check_release "$rel"
}

# check_release REL: REL is the release the sources are of, or stop and
# say which kernel to install, before anything is removed or staged.
check_release() {
	[[ $1 =~ $MODULE_KERNEL_RE ]] && return 0
	log "kernel $1: the module's sources are amdgpu of $PIN_UPSTREAM, and a build"
	log "for another release would drop or break on that release's own changes."
	log "Install and boot Debian's $PIN_UPSTREAM kernel (bookworm-security):"
	log "  apt-get install linux-image-$MODULE_SERVED_KVER linux-headers-$MODULE_SERVED_KVER"
	log "then run make dkms-install (or make module) again (KVER=$MODULE_SERVED_KVER to build before"
	log "booting it). A maintainer moves the pins to another release with"
	log "scripts/repin.sh (README, \"Follow Debian's point releases\")."
	die "kernel $1 is not $PIN_UPSTREAM"
}

# fill_in: standard input with the package's names and versions put in
# for the @NAME@ placeholders of dkms/.
fill_in() {
	sed -e "s/@PACKAGE@/$MODULE_PKG/g" -e "s/@VERSION@/$MODULE_PKG_VERSION/g" \
	    -e "s/@SERVED_KVER@/$MODULE_SERVED_KVER/g" \
	    -e "s/@KERNEL_RE@/$(printf '%s' "$MODULE_KERNEL_RE" | sed 's/[\\&/]/\\&/g')/g"
}

# stage DIR: the source tree the top-level Kbuild describes. Only files
# whose content changed are rewritten (rsync keeps times), so a rebuild
# in DIR compiles only what changed.
stage_tree() {
	local dir=$1 mk

	"$TOP/scripts/prepare-tree.sh"
	mkdir -p "$dir/$AMD" "$dir/include/uapi/linux"
	rsync -a --delete --prune-empty-dirs \
		--exclude=/amdgpu/Makefile --exclude="/${VERSION_FILE#$AMD/}" \
		--exclude='*.mod.c' \
		--include='*/' --include='*.[ch]' --include=Makefile \
		--include=Kconfig --exclude='*' \
		"$KSRC/$AMD/" "$dir/$AMD/"
	rsync -a "$KSRC/include/uapi/linux/kfd_ioctl.h" "$dir/include/uapi/linux/"
	write_if_changed "$dir/Kbuild" < "$TOP/Kbuild"
	fill_in < "$TOP/dkms/dkms.conf" | write_if_changed "$dir/dkms.conf"
	fill_in < "$TOP/dkms/kernel-hook" | write_if_changed "$dir/kernel-hook"
	chmod 755 "$dir/kernel-hook"
	fill_in < "$TOP/dkms/amdgpu_kfd_criu_version.c" |
		write_if_changed "$dir/$VERSION_FILE"
	mk=$KSRC/$AMD/amdgpu/Makefile
	{ cat "$mk"; printf '\n# make module, DKMS: the version of this build\n'
	  printf 'amdgpu-y += amdgpu_kfd_criu_version.o\n'; } |
		write_if_changed "$dir/$AMD/amdgpu/Makefile"
}

# write_if_changed FILE: standard input into FILE, untouched if equal.
write_if_changed() {
	local tmp

	tmp=$(mktemp "$1.XXXXXX")
	cat > "$tmp"
	if cmp -s "$tmp" "$1"; then
		rm -f "$tmp"
	else
		chmod 644 "$tmp"
		mv "$tmp" "$1"
	fi
}

build_module() {
	local kdir

	kdir=$(kernel_build_dir)
	check_kernel "$kdir"
	stage_tree "$MODULE_DIR"
	log "building amdgpu.ko for $KVER in $MODULE_DIR (10 to 20 minutes on 2 cores with an empty ccache)"
	CCACHE_BASEDIR=$MODULE_DIR use_ccache \
		make -C "$kdir" M="$MODULE_DIR" -j"$(nproc)" modules
	log "built $MODULE_DIR/$AMD/amdgpu/amdgpu.ko"
	modinfo -F vermagic "$MODULE_DIR/$AMD/amdgpu/amdgpu.ko" | sed 's/^/vermagic: /'
}

# use_ccache CMD...: run CMD with Debian's kernel headers compiling
# through ccache, where it is installed.
use_ccache() {
	if command -v ccache > /dev/null; then
		DEBIAN_KERNEL_USE_CCACHE=1 "$@"
	else
		"$@"
	fi
}

# DKMS's own trees, or their counterparts under SYSROOT. DKMS wants
# root, even for trees of its own.
dkms_cmd() {
	$SUDO dkms "$@" $(dkms_tree_args)
}

# The options that point DKMS at SYSROOT's trees (none without one).
dkms_tree_args() {
	[ -n "$SYSROOT" ] || return 0
	$SUDO mkdir -p "$SYSROOT/var/lib/dkms"
	echo "--dkmstree $SYSROOT/var/lib/dkms --sourcetree $SYSROOT/usr/src" \
	     "--installtree $SYSROOT/lib/modules --no-depmod"
}

# The kernel packages' hook directories our kernel hook goes into.
HOOK_DIRS="etc/kernel/postinst.d etc/kernel/header_postinst.d"
HOOK_NAME=dkms-$MODULE_PKG

install_hooks() {
	local d

	for d in $HOOK_DIRS; do
		$SUDO install -D -m 755 "$1/kernel-hook" "$SYSROOT/$d/$HOOK_NAME"
	done
}

remove_hooks() {
	local d

	for d in $HOOK_DIRS; do
		$SUDO rm -f "$SYSROOT/$d/$HOOK_NAME"
	done
}

dkms_versions() {
	dkms_cmd status -m "$MODULE_PKG" 2>/dev/null |
		sed -n "s|^$MODULE_PKG/\([^,:]*\).*|\1|p" | sort -u
}

dkms_remove() {
	local v

	for v in $(dkms_versions); do
		log "removing $MODULE_PKG/$v from DKMS"
		dkms_cmd remove -m "$MODULE_PKG" -v "$v" --all
	done
	$SUDO rm -rf "${SYSROOT}/usr/src/$MODULE_PKG-"*
	remove_hooks
	run_depmod
}

dkms_uninstall() {
	dkms_remove
	update_initramfs
}

# The distribution's initramfs may carry amdgpu (a display driver is
# loaded early): rebuild it so that it carries the same amdgpu as
# modprobe loads later. Not under SYSROOT, whose kernel is not booted
# from this machine's /boot.
update_initramfs() {
	[ -z "$SYSROOT" ] || return 0
	[ -f "/boot/initrd.img-$KVER" ] || return 0
	command -v update-initramfs > /dev/null || return 0
	log "updating /boot/initrd.img-$KVER"
	$SUDO update-initramfs -u -k "$KVER"
}

# depmod for KVER: DKMS runs it itself, except under SYSROOT.
run_depmod() {
	[ -n "$SYSROOT" ] || return 0
	[ -d "$SYSROOT/lib/modules/$KVER" ] || return 0
	$SUDO depmod -b "$SYSROOT" "$KVER"
}

# AMD's amdgpu-dkms installs updates/dkms/amdgpu.ko too: the two would
# replace each other at every kernel update.
check_other_amdgpu() {
	local other

	other=$(dkms_cmd status 2>/dev/null | grep '^amdgpu/' || true)
	[ -n "$other" ] || return 0
	if [ "${FORCE:-0}" = 1 ]; then
		log "FORCE=1: installing beside $other"
		return 0
	fi
	die "DKMS has another amdgpu ($other); remove it first (dkms remove amdgpu/VERSION --all) or set FORCE=1"
}

# Under SYSROOT, DKMS signs with a key of the root's own, by the kernel
# headers' sign-file, rather than with the host's /var/lib/dkms key.
signing_in_sysroot() {
	[ -n "$SYSROOT" ] || return 0
	export sign_file=$1/scripts/sign-file
	export mok_signing_key=$SYSROOT/var/lib/dkms/mok.key
	export mok_certificate=$SYSROOT/var/lib/dkms/mok.pub
}

# The objects a DKMS build of the module compiles, for the progress
# estimate: what the last build counted (in the cache), else the count
# measured for Debian's configuration (876 and the version object).
MODULE_OBJECTS=877

expected_module_objects() {
	local n

	n=$(cat "$CACHE_DIR/module-objects" 2>/dev/null || true)
	case "$n" in ''|*[!0-9]*) n=$MODULE_OBJECTS ;; esac
	echo "$n"
}

# dkms install, showing the objects compiled out of those expected and
# the time left (DKMS itself prints nothing until it is done). DKMS
# copies the sources to a fresh build directory each time: ccache,
# keyed on paths relative to the root the kernel and DKMS's tree are
# in, makes a rebuild cheap, also in another root.
dkms_build_with_progress() {
	local tree=$SYSROOT/var/lib/dkms/$MODULE_PKG/$MODULE_PKG_VERSION
	local out=$BUILD_DIR/dkms-install.log log n

	mkdir -p "$BUILD_DIR"
	CCACHE_BASEDIR=${SYSROOT:-/} use_ccache \
		"$TOP/scripts/progress.py" kbuild --label "DKMS build" \
		--total "$(expected_module_objects)" --output "$out" \
		--follow "$tree/build/make.log" -- \
		$SUDO dkms install -m "$MODULE_PKG" -v "$MODULE_PKG_VERSION" \
		-k "$KVER" --kernelsourcedir "$1" $(dkms_tree_args) ||
		die "DKMS failed for $KVER (its output: $out)"
	log=$tree/$KVER/$(uname -m)/log/make.log
	n=$(grep -c 'CC \[M\]' "$log" 2>/dev/null || true)
	if [ "${n:-0}" -gt 0 ]; then
		mkdir -p "$CACHE_DIR"
		echo "$n" > "$CACHE_DIR/module-objects"
	fi
}

dkms_install() {
	local kdir src

	command -v dkms > /dev/null ||
		die "dkms is not installed (Debian: apt-get install --no-install-recommends dkms)"
	kdir=$(kernel_build_dir)
	check_kernel "$kdir"
	check_other_amdgpu
	stage_tree "$STAGE_DIR"
	dkms_remove
	src=$SYSROOT/usr/src/$MODULE_PKG-$MODULE_PKG_VERSION
	$SUDO mkdir -p "$src"
	$SUDO rsync -a --delete "$STAGE_DIR/" "$src/"
	log "DKMS: building $MODULE_PKG/$MODULE_PKG_VERSION for $KVER (10 to 20 minutes on 2 cores with an empty ccache)"
	dkms_cmd add -m "$MODULE_PKG" -v "$MODULE_PKG_VERSION"
	signing_in_sysroot "$kdir"
	dkms_build_with_progress "$kdir"
	install_hooks "$src"
	run_depmod
	update_initramfs
	dkms_status
}

# amdgpu_of KVER: which amdgpu modprobe loads for KVER, in one line.
amdgpu_of() {
	local dir=$SYSROOT/lib/modules/$1 ko ver

	ko=$(ls "$dir"/updates/dkms/amdgpu.ko* 2>/dev/null | head -n1 || true)
	if [ -n "$ko" ]; then
		ver=$(modinfo -F version "$ko" 2>/dev/null || true)
		case "$ver" in
		*-kfdcriu.*) echo "$MODULE_PKG $ver (CRIU image mode)" ;;
		*) echo "another DKMS amdgpu${ver:+ $ver} (no CRIU image mode)" ;;
		esac
	elif ls "$dir"/kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko* > /dev/null 2>&1; then
		if [[ $1 =~ $MODULE_KERNEL_RE ]]; then
			echo "the stock amdgpu (no CRIU image mode; make dkms-install KVER=$1 builds ours)"
		else
			echo "the stock amdgpu (no CRIU image mode; ours serves $MODULE_SERVED_KVER only)"
		fi
	else
		echo "no amdgpu"
	fi
}

# What DKMS knows of ours, then for each installed kernel which amdgpu
# it runs.
dkms_status() {
	local dir

	dkms_cmd status -m "$MODULE_PKG"
	for dir in "$SYSROOT"/lib/modules/*/; do
		[ -d "$dir/kernel" ] || continue
		dir=${dir%/}
		echo "${dir##*/}: $(amdgpu_of "${dir##*/}")"
	done
}

main() {
	case "${1:-}" in
	-h|--help) usage ;;
	stage) [ $# -eq 2 ] || { usage >&2; exit 2; }; stage_tree "$2" ;;
	build) build_module ;;
	dkms-install) dkms_install ;;
	dkms-remove) dkms_uninstall ;;
	dkms-status) dkms_status ;;
	*) usage >&2; exit 2 ;;
	esac
}

main "$@"
