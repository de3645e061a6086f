#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# DOC: what a kernel upgrade sees of the amdgpu-kfd-criu DKMS package
#
# Runs the hooks of a kernel package the way Debian's kernel packages do
# (linux-run-hooks: run-parts --report --exit-on-error over
# /etc/kernel/postinst.d, the new kernel's release as the argument), with
# Debian's own dkms hook and ours, against the distro lane's root, where
# "make dkms-install" put our package: for a kernel the package does not
# serve (bookworm-backports' 6.12.95), and for the one it does. A kernel
# upgrade must never fail because of us (issue 35: Debian 12's dkms
# 3.0.10 answers "dkms autoinstall" for a kernel outside
# BUILD_EXCLUSIVE_KERNEL with status 11, which run-parts passes on).
#
# The hooks and dkms run unchanged, at their own paths: a private mount
# namespace puts a scratch copy of the root's DKMS tree, its /usr/src
# and a /lib/modules holding the served kernel and a stand-in for the
# other one (the served kernel's headers, Debian's stock amdgpu) where
# they look. Nothing of the root changes. Prints TAP; needs root.

set -uo pipefail

usage() {
	cat <<'TXT'
Usage: dkms/tests/kernel_hook_test.sh ROOT KVER PKG VERSION [DKMS_CONF]

ROOT       the distro lane's root (our package installed there by DKMS)
KVER       the kernel the package serves, installed in ROOT
PKG, VERSION  the DKMS package
DKMS_CONF  a dkms.conf to put in place of the installed one (to show
           that a recipe fails the check)

DKMS_TRIXIE, in the environment: the root of Debian 13's dkms package,
unpacked; its autoinstall is run too (dkms 3.2 counts a kernel outside
BUILD_EXCLUSIVE_KERNEL as skipped, 3.0 as failed).
TXT
}

[ $# -ge 4 ] || { usage >&2; exit 2; }
ROOT=$1 KVER=$2 PKG=$3 VER=$4 CONF=${5:-}
TRIXIE=${DKMS_TRIXIE:-}
UNSERVED=6.12.95+bpo-amd64
HOOK=dkms-$PKG
STOCK=kernel/drivers/gpu/drm/amd/amdgpu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
PATH=$PATH:/usr/sbin:/sbin

n=0
failed=0
ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=1
	fi
}

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (a private mount namespace)"
	exit 4
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
R=$WORK/root

# The scratch root: DKMS's tree copied (autoinstall may write there),
# /usr/src as links into ROOT's with our package's directory a tree of
# links, so that DKMS_CONF can replace its dkms.conf.
make_root() {
	local f

	mkdir -p "$R/var/lib" "$R/usr/src" "$R/lib/modules" "$WORK/hooks"
	cp -a "$ROOT/var/lib/dkms" "$R/var/lib/dkms" || return 1
	for f in "$ROOT"/usr/src/*; do
		ln -s "$f" "$R/usr/src/${f##*/}"
	done
	rm "$R/usr/src/$PKG-$VER"
	cp -rs "$ROOT/usr/src/$PKG-$VER" "$R/usr/src/$PKG-$VER" || return 1
	# DKMS reads dkms.conf through its tree's link to the sources: point
	# it at the scratch /usr/src, where DKMS_CONF goes.
	ln -sfn "/usr/src/$PKG-$VER" "$R/var/lib/dkms/$PKG/$VER/source"
	if [ -n "$CONF" ]; then
		rm "$R/usr/src/$PKG-$VER/dkms.conf"
		cp "$CONF" "$R/usr/src/$PKG-$VER/dkms.conf"
	fi
	ln -s "$ROOT/lib/modules/$KVER" "$R/lib/modules/$KVER"
	mkdir -p "$R/lib/modules/$UNSERVED/$STOCK"
	ln -s "/usr/src/linux-headers-$KVER" "$R/lib/modules/$UNSERVED/build"
	ln -s "$ROOT/lib/modules/$KVER/$STOCK/amdgpu.ko.xz" \
		"$R/lib/modules/$UNSERVED/$STOCK/amdgpu.ko.xz"
	cp /etc/kernel/postinst.d/dkms "$ROOT/etc/kernel/postinst.d/$HOOK" \
		"$WORK/hooks/"
}

# in_root CMD...: CMD with the scratch root's trees at DKMS's paths.
in_root() {
	# Debian systems have it; a bind mount needs its target.
	mkdir -p /lib/modules
	unshare -m --propagation private bash -c '
		mount --bind "$1/var/lib/dkms" /var/lib/dkms &&
		mount --bind "$1/usr/src" /usr/src &&
		mount --bind "$1/lib/modules" /lib/modules || exit 99
		shift
		exec "$@"' in_root "$R" "$@"
}

# run_hooks KVER: what the kernel package's postinst does, and its status.
run_hooks() {
	in_root run-parts --report --exit-on-error --arg="$1" "$WORK/hooks" \
		> "$WORK/out" 2>&1
	echo "# exit status $?" >> "$WORK/out"
	sed 's/^/# /' "$WORK/out"
}

ours_lines() {
	grep -c "^$PKG: " "$WORK/out"
}

main() {
	local rc

	echo "1..8"
	make_root
	ok $? "a scratch copy of the root's DKMS tree"
	[ -x "$WORK/hooks/$HOOK" ]
	ok $? "make dkms-install installed the kernel hook $HOOK"

	in_root dkms autoinstall --kernelver "$UNSERVED" > "$WORK/out" 2>&1
	rc=$?
	sed 's/^/# /' "$WORK/out"
	[ "$rc" -eq 0 ]
	ok $? "dkms autoinstall --kernelver $UNSERVED: status $rc"

	if [ -n "$TRIXIE" ]; then
		in_root bash "$TRIXIE/usr/sbin/dkms" autoinstall \
			--kernelver "$UNSERVED" > "$WORK/out" 2>&1
		rc=$?
		sed 's/^/# /' "$WORK/out"
		[ "$rc" -eq 0 ]
		ok $? "Debian 13's dkms autoinstall --kernelver $UNSERVED: status $rc"
	else
		n=$((n + 1))
		echo "ok $n # SKIP DKMS_TRIXIE is not set (Debian 13's dkms)"
	fi

	run_hooks "$UNSERVED"
	grep -qx '# exit status 0' "$WORK/out"
	ok $? "the kernel's hooks for $UNSERVED exit 0"
	[ "$(ours_lines)" -eq 1 ] &&
		grep -q "^$PKG: kernel $UNSERVED will boot with the stock amdgpu.*$KVER" "$WORK/out"
	ok $? "one line says $UNSERVED boots the stock amdgpu and names $KVER"

	run_hooks "$KVER"
	grep -qx '# exit status 0' "$WORK/out" && [ "$(ours_lines)" -eq 1 ] &&
		grep -q "^$PKG: kernel $KVER runs $PKG $VER (CRIU image mode)" "$WORK/out"
	ok $? "the kernel's hooks for $KVER exit 0 and say it runs ours"

	in_root env SYSROOT= KVER="$KVER" "$TOP/scripts/module.sh" dkms-status \
		> "$WORK/out" 2>&1
	sed 's/^/# /' "$WORK/out"
	grep -q "^$KVER: $PKG $VER (CRIU image mode)" "$WORK/out" &&
		grep -q "^$UNSERVED: the stock amdgpu (no CRIU image mode" "$WORK/out"
	ok $? "make dkms-status says which kernel runs which amdgpu"
	return "$failed"
}

main
