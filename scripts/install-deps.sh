#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages the build and the test VM need, if missing.
set -euo pipefail

usage() {
	cat <<'TXT'
Usage: scripts/install-deps.sh [--check | --module]

Installs the Debian 12 packages amdkfd-criu needs (kernel build tools,
ccache, QEMU, busybox-static, CRIU, protobuf-c, sparse, clang; dkms,
kmod and pahole for the module build of the distro lane; mmdebstrap for
the Debian 13 lane's userland). Uses
apt-get, through sudo when not root. With --check, only lists what is
missing and exits non-zero if anything is. With --module, only what
building the amdgpu module needs (make module, make dkms-install).
TXT
}

PACKAGES=(
	build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils
	python3 rsync ccache util-linux
	qemu-system-x86 busybox-static criu
	protobuf-c-compiler libprotobuf-c-dev pkg-config
	sparse clang llvm lld libclang-rt-14-dev
	clang-19 llvm-19 lld-19
	python3-sphinx python3-docutils python3-ply python3-git git
	dkms kmod dwarves openssl
	mmdebstrap
)

# What the module build alone needs (make module, make dkms-install on
# a user's machine): no QEMU, CRIU or test tools.
MODULE_PACKAGES=(
	build-essential bc bison flex libelf-dev libssl-dev xz-utils patch
	rsync ccache dkms kmod dwarves openssl
)

missing_packages() {
	local pkg
	for pkg in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$pkg"
	done
}

main() {
	local check_only=0 sudo=""
	case "${1:-}" in
	-h|--help) usage; exit 0 ;;
	--check) check_only=1 ;;
	--module) PACKAGES=("${MODULE_PACKAGES[@]}") ;;
	"") ;;
	*) usage >&2; exit 2 ;;
	esac

	mapfile -t missing < <(missing_packages)
	[ "${#missing[@]}" -eq 0 ] && exit 0
	if [ "$check_only" -eq 1 ]; then
		echo "missing packages: ${missing[*]}"
		exit 1
	fi
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"; then
		$sudo apt-get update -q
		$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
	fi
}

main "$@"
