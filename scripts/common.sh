# SPDX-License-Identifier: GPL-2.0
#
# Paths and settings shared by the scripts. Sourced, not run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# depmod, modinfo, modprobe and dkms live there, out of a user's PATH
PATH=$PATH:/usr/sbin:/sbin
BUILD_DIR=${BUILD_DIR:-$TOP/build}
KSRC=$BUILD_DIR/linux
KHDR=$BUILD_DIR/headers
CACHE_DIR=${AMDKFD_CRIU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/amdkfd-criu}

# The base tree: Debian's linux-source-6.12, pinned.
KERNEL_PKG=linux-source-6.12
KERNEL_PKG_VERSION=6.12.117-1~deb12u1
KERNEL_PKG_SHA256=e849faf31ca3555757f3a8877cb01af92122f744f75d1f3102734651c4e14703

export CCACHE_DIR=${CCACHE_DIR:-$CACHE_DIR/ccache}
export CCACHE_BASEDIR=$KSRC
export CCACHE_NOHASHDIR=true
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
# Key on the compiler's own dependency output (kbuild's -Wp,-MMD) instead
# of running the preprocessor a second time: a cold build through ccache
# then costs about what one without it does (25 amdgpu objects, empty
# cache: 11.9-13.3 s, against 15.9-16.3 s without it and 13.5 s with
# plain gcc).
export CCACHE_DEPEND=${CCACHE_DEPEND:-true}
# Reproducible build metadata keeps ccache hits across checkouts.
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026'
export KBUILD_BUILD_USER=amdkfd-criu
export KBUILD_BUILD_HOST=build

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# The external amdgpu module (make module, make dkms-install): its DKMS
# package and the version it reports (modinfo, /sys/module/amdgpu/version)
MODULE_PKG=amdgpu-kfd-criu
MODULE_PKG_VERSION=6.12.117-kfdcriu.1

# The distro lane: Debian 12's stock 6.12 kernel, pinned, with our amdgpu
# installed into an unpacked copy of it by DKMS (scripts/distro.sh). The
# root is kept in the cache, at one path for every checkout: ccache then
# finds DKMS's rebuilds of the module whichever clone asks for them.
DISTRO_KVER=6.12.117+deb12-amd64
DISTRO_PKG_VERSION=6.12.117-1~deb12u1
DISTRO_DIR=$BUILD_DIR/distro
DISTRO_ROOT=$CACHE_DIR/distro/$DISTRO_KVER
