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

# The pins: Debian 12's 6.12 point release the series is based on, the
# checksums of its packages, and the module's version. They move together,
# by scripts/repin.sh, which checks a candidate release before it writes
# them (README, "Follow Debian's point releases").
PIN_UPSTREAM=6.12.118
PIN_PKG_VERSION=6.12.118-1~deb12u1
PIN_SHA256_SOURCE=896aff3b39299fa0dd36fef4f5db56ab189182e39abbbb1227dafdc7fcfe3fc3
PIN_SHA256_IMAGE=628257aaa694038ae776ddc9cbc89c096b4df55e6fccd8a51352288af69b4ad9
PIN_SHA256_HEADERS=a19e90266250d37e45448494da6e1bfd76a3b2935d28f99e6db2fbd34a5a7f8e
PIN_SHA256_HEADERS_COMMON=ed74603a3ba75ea8dfa271cbf5bf79a9a272f56e898729b7d5d02c60703d74c5
PIN_SHA256_KBUILD=1f35a2cbe452526944e3b89507a37ad607ea71ccfa21a5cb196f7fdcbb0af6f2
PIN_MODULE_REV=1

# The base tree: Debian's linux-source-6.12, pinned.
KERNEL_PKG=linux-source-6.12
KERNEL_PKG_VERSION=$PIN_PKG_VERSION
KERNEL_PKG_SHA256=$PIN_SHA256_SOURCE

# The series' base (README, "Two bases"): Debian's newest mainline,
# linux-source-7.3 from trixie-backports, pinned. It stands in for
# amd-staging-drm-next, where maintainers apply the series.
PORT73_PKG=linux-source-7.3
PORT73_VERSION=7.3.4-1~bpo13+1
PORT73_SUITE=trixie-backports
PORT73_SHA256=703e369ddd4cce971452f5a593ee55df3a5c10c83caf0fa0df039633ed181ee3
PORT73_KSRC=$BUILD_DIR/linux-7.3

# What is laid on each base after kernel/: the series' patches on 7.3,
# the backport layer on 6.12 (the same upstream-file changes, and a diff
# that gives the new files their 6.12 shape).
BACKPORT_612=$TOP/backport/6.12

# patch_dir_of BASE: the directory of the patches and series file of BASE.
patch_dir_of() {
	case "$1" in
	7.3) echo "$TOP/patches" ;;
	6.12) echo "$BACKPORT_612" ;;
	*) die "no base $1 (6.12 or 7.3)" ;;
	esac
}

# config_fragments_of BASE: the test kernel's config fragments on BASE,
# which go on tinyconfig in this order.
config_fragments_of() {
	echo "$TOP/config/qemu-base.config"
	echo "$TOP/config/debug.config"
	case "$1" in
	7.3) echo "$TOP/config/kfd-criu.config" ;;
	6.12) echo "$BACKPORT_612/kfd-criu.config" ;;
	*) die "no base $1 (6.12 or 7.3)" ;;
	esac
}

# gone_symbols_of BASE: symbols of config/debug.config that BASE no
# longer has; olddefconfig drops them, and nothing asks for them there.
gone_symbols_of() {
	case "$1" in
	7.3) echo CONFIG_PROC_SYSCTL ;;
	esac
}

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

# versions_in_archive PKG: the versions of PKG apt knows of, oldest first.
versions_in_archive() {
	local list

	list=$(apt-cache madison "$1" 2>/dev/null || true)
	awk -F'|' '{gsub(/ /, "", $2); print $2}' <<< "$list" | sort -uV
}

# newest_in_archive PKG: the newest version of PKG apt knows of.
newest_in_archive() {
	versions_in_archive "$1" | tail -n1
}

# in_archive PKG VERSION: whether apt knows VERSION of PKG.
in_archive() {
	versions_in_archive "$1" | grep -qxF "$2"
}

# pin_gone PKG VERSION: stop, saying that the pinned VERSION of PKG left
# Debian's archive (a point release replaces the last one in
# bookworm-security), which version is there now, and how to re-pin.
pin_gone() {
	local newest

	newest=$(newest_in_archive "$1")
	log "error: Debian's archive no longer has $1 $2, the pinned release."
	if [ -n "$newest" ]; then
		log "The newest there is $newest. Move the pins to it with"
		log "    scripts/repin.sh $newest"
		log "which checks that the series applies to it without fuzz and that"
		log "the module builds for its kernel, then rewrites scripts/common.sh."
	else
		log "apt knows no version of $1: check /etc/apt/sources.list* for"
		log "bookworm-security, then run scripts/repin.sh VERSION."
	fi
	exit 1
}

# suite_uri SUITE: where Debian publishes SUITE (its security updates
# have an archive of their own).
suite_uri() {
	case "$1" in
	*-security) echo http://deb.debian.org/debian-security ;;
	*) echo http://deb.debian.org/debian ;;
	esac
}

# apt_suite SUITE ARGS...: apt-get ARGS with the sources of Debian's SUITE
# only (trixie, trixie-security, sid), in an apt state of its own in the
# cache: this machine's apt configuration is not touched.
apt_suite() {
	apt_suite_run apt-get "$@"
}

# apt_suite_cache SUITE ARGS...: apt-cache ARGS in that state.
apt_suite_cache() {
	apt_suite_run apt-cache "$@"
}

# apt_suite_run TOOL SUITE ARGS...: TOOL (apt-get, apt-cache) in the
# suite's state, its lists fetched first when the state is new.
apt_suite_run() {
	local tool=$1 suite=$2 dir=$CACHE_DIR/apt/$2
	shift 2
	local -a opts=(-o "Dir::Etc::SourceList=$dir/sources.list"
		       -o Dir::Etc::SourceParts=/nonexistent
		       -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache")

	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(suite_uri "$suite") $suite main" \
		> "$dir/sources.list"
	if [ ! -f "$dir/updated" ] || [ "$1" = update ]; then
		apt-get "${opts[@]}" update -q >&2 && touch "$dir/updated" || return 1
		[ "$1" != update ] || return 0
	fi
	"$tool" "${opts[@]}" "$@"
}

# suite_pin_gone SUITE PKG VERSION VARIABLE: stop, saying that the pinned
# VERSION of PKG left SUITE (a point release or a security update
# replaced it), which version is there now with its checksum, and which
# pins in this file to move (VARIABLE is that of the checksum).
suite_pin_gone() {
	local suite=$1 pkg=$2 ver=$3 var=$4 newest sum

	newest=$(apt_suite_cache "$suite" madison "$pkg" 2>/dev/null |
		 awk -F'|' '{gsub(/ /, "", $2); print $2}' | sort -uV | tail -n1)
	log "error: Debian's $suite no longer has $pkg $ver, the pinned version."
	if [ -z "$newest" ]; then
		log "apt knows no version of $pkg in $suite: is the package renamed?"
		exit 1
	fi
	sum=$(apt_suite_cache "$suite" show "$pkg=$newest" 2>/dev/null |
	      sed -n 's/^SHA256: //p' | head -n1)
	log "The newest there is $newest (SHA256 $sum, as apt's signed lists say)."
	log "Move the version pin of $pkg and $var in scripts/common.sh to them."
	log "The Debian 13 kernel pins move with the Debian 12 ones (scripts/repin.sh):"
	log "the module's sources are one upstream release, $PIN_UPSTREAM."
	exit 1
}

# fetch_suite_deb SUITE PKG VERSION SHA256 [VARIABLE]: a package of
# another Debian suite in the download cache, checked against its pinned
# checksum; VARIABLE names the pin for the message when it is gone.
fetch_suite_deb() {
	local suite=$1 pkg=$2 ver=$3 sum=$4 var=${5:-the pin} dir=$CACHE_DIR/dl deb

	mkdir -p "$dir"
	deb=$(ls "$dir/${pkg}_${ver}_"*.deb 2>/dev/null | head -n1 || true)
	if [ -z "$deb" ]; then
		(cd "$dir" && apt_suite "$suite" download -q "$pkg=$ver" >&2) ||
		(cd "$dir" && apt_suite "$suite" update &&
		 apt_suite "$suite" download -q "$pkg=$ver" >&2) || true
		deb=$(ls "$dir/${pkg}_${ver}_"*.deb 2>/dev/null | head -n1 || true)
	fi
	if [ -z "$deb" ]; then
		apt_suite_cache "$suite" madison "$pkg" 2>/dev/null |
			awk -F'|' '{gsub(/ /, "", $2); print $2}' | grep -qxF "$ver" ||
			suite_pin_gone "$suite" "$pkg" "$ver" "$var"
		die "cannot download $pkg $ver, which $suite lists (network?)"
	fi
	echo "$sum  $deb" | sha256sum -c --quiet - >&2 ||
		die "checksum mismatch for $deb (pinned: $sum)"
	echo "$deb"
}

# fetch_pinned_deb PKG VERSION SHA256: the package file in the download
# cache, fetched when missing and checked against its pinned checksum.
fetch_pinned_deb() {
	local pkg=$1 ver=$2 sum=$3 dir=$CACHE_DIR/dl deb

	mkdir -p "$dir"
	deb=$(ls "$dir/${pkg}_${ver}_"*.deb 2>/dev/null | head -n1 || true)
	if [ -z "$deb" ]; then
		(cd "$dir" && apt-get download -q "$pkg=$ver" >&2) ||
		(cd "$dir" && apt-get update -q >&2 &&
		 apt-get download -q "$pkg=$ver" >&2) || true
		deb=$(ls "$dir/${pkg}_${ver}_"*.deb 2>/dev/null | head -n1 || true)
	fi
	if [ -z "$deb" ]; then
		in_archive "$pkg" "$ver" || pin_gone "$pkg" "$ver"
		die "cannot download $pkg $ver, which the archive lists (network?)"
	fi
	echo "$sum  $deb" | sha256sum -c --quiet - >&2 ||
		die "checksum mismatch for $deb (pinned: $sum)"
	echo "$deb"
}

# criu-plugin.h of the CRIU releases after Debian 12's, for the plugin's
# host tests (plugin/Makefile: CRIU_INC, CRIU_HEADER): Debian's libcriu-dev
# of each, pinned, unpacked in the cache and never installed. Each line:
# SUITE VERSION SHA256 CRIU_HEADER TEST (the test-manifest's name).
CRIU_HEADER_PKGS=(
	"trixie 4.1.1-1 00c66d1d242dd55046ac414243b5aefb43584ac8497dda42fc522cad957bc9c1 410 host-plugin-4.1"
	"sid 4.2.1-1 acd75142ecd36d735b6e83b4d225d694aaf8368327d34833332f40762693d80c 420 host-plugin-4.2"
	"experimental 4.3-1~exp2 c874652673c7ed22293e948fbade3b6602ccbb93090102ea4c2367638a07e6ad 430 host-plugin-4.3"
)

# criu_plugin_header SUITE VERSION SHA256: the directory that holds
# criu-plugin.h of that libcriu-dev, fetched and unpacked when missing.
criu_plugin_header() {
	local dir=$CACHE_DIR/criu-headers/$2 deb

	if [ ! -f "$dir/usr/include/criu/criu-plugin.h" ]; then
		deb=$(fetch_suite_deb "$1" libcriu-dev "$2" "$3") || return 1
		rm -rf "$dir.new" && mkdir -p "$dir.new" &&
			dpkg-deb -x "$deb" "$dir.new" &&
			[ -f "$dir.new/usr/include/criu/criu-plugin.h" ] || return 1
		rm -rf "$dir" && mv "$dir.new" "$dir"
	fi
	echo "$dir/usr/include/criu"
}

# The external amdgpu module (make module, make dkms-install): its DKMS
# package and the version it reports (modinfo, /sys/module/amdgpu/version)
MODULE_PKG=amdgpu-kfd-criu
MODULE_PKG_VERSION=$PIN_UPSTREAM-kfdcriu.$PIN_MODULE_REV
# The kernels it serves: the pinned point release, as Debian names its
# kernels (6.12.118+deb12-amd64), and the one the messages recommend.
MODULE_KERNEL_RE="^${PIN_UPSTREAM//./\\.}([+-]|\$)"
MODULE_SERVED_KVER=$PIN_UPSTREAM+deb12-amd64

# Debian 13's dkms, whose autoinstall the distro lane's kernel hook
# check runs beside Debian 12's (dkms/tests/kernel_hook_test.sh).
TRIXIE_DKMS_VERSION=3.2.2-1~deb13u1
TRIXIE_DKMS_SHA256=6840d049df96419be706d135bcba4355e08864b0794977a616db16330871d412

# The distro lane: Debian 12's stock 6.12 kernel, pinned, with our amdgpu
# installed into an unpacked copy of it by DKMS (scripts/distro.sh). The
# root is kept in the cache, at one path for every checkout: ccache then
# finds DKMS's rebuilds of the module whichever clone asks for them.
DISTRO_KVER=$PIN_UPSTREAM+deb12-amd64
DISTRO_PKG_VERSION=$PIN_PKG_VERSION
DISTRO_DIR=$BUILD_DIR/distro
DISTRO_ROOT=$CACHE_DIR/distro/$DISTRO_KVER

# The Debian 13 lane (scripts/debian13.sh): a Debian 13 (trixie) userland
# made by mmdebstrap from Debian's binary packages, with trixie's stock
# kernel of the pinned release, our amdgpu built in it by its DKMS and
# gcc, and trixie's criu, which the guest runs. Its own directory in the
# cache (the distro lane's is shared with other checkouts' runs of it).
# Pinned: the packages the lane is about; the rest of the userland is
# what trixie has on the day, verified by apt, listed in its manifest.
D13_SUITES="trixie trixie-security"
D13_KVER=$PIN_UPSTREAM+deb13-amd64
D13_KERNEL_VERSION=6.12.118-1
D13_KERNEL_SUITE=trixie-security
D13_SHA256_IMAGE=c86cba92a78c0ae7fe9fc937b4f757af2d5c5eab31cb0d8182eb636cabd78d59
D13_SHA256_HEADERS=55f0ca919f2ef3fbd6b7bdf441e8dd77aa2565f48f74eef1b4b1822cbd0bb7c8
D13_SHA256_HEADERS_COMMON=8228fa0989222cbce04b63eb85390208b4e823927a9c78e778cae9ce4f9689b0
D13_SHA256_KBUILD=1b14c7bbe1e23e44be9dfb0844c75cb2b3897f68751172c9233cef5b4eae55c0
D13_CRIU_VERSION=4.1.1-1
D13_SHA256_CRIU=f3120d90b37d893879213d799c83696d6175ac8df3dc290e4e6c1fd0d2c2f82f
D13_SHA256_LIBCOMPEL=1228c363e40e95892f0063d235b7f9795ad001b2317eb22f8750abc72fe3cf95
# Trixie's container engine, the client of the lane's podman test
# (vm/debian13/kfd_podman_test.sh): podman with runc as its runtime and
# conmon as its monitor.
D13_PODMAN_VERSION=5.4.2+ds1-2+b2
D13_SHA256_PODMAN=e3987a9d1e6d46cbd4ee11bd067927a5f7f886e41c7a2dbe5b89a436905d44a0
D13_RUNC_VERSION=1.1.15+ds1-2+deb13u1
D13_SHA256_RUNC=011a9400344c6412f8fbb9184c03fd7051faa45612de0d9cfc907ec8a1a20005
D13_CONMON_VERSION=2.1.12-4
D13_SHA256_CONMON=5de1cc371415dc0a75d988d74b89789a86a6d541de3ccaf2214e548c584d1605
# CRIU 4.3, which only experimental has, run beside trixie's 4.1 by the
# lane's kfd_criu43 tests: unpacked, never installed, under D13_CRIU43_DIR
# with the two libraries it needs newer than trixie's (sid's libnet9 and
# libnl-3-200 3.11+). Each line: package suite version sha256 pin-variable.
D13_CRIU43_VERSION=4.3-1~exp2
D13_CRIU43_DIR=/opt/criu-4.3
D13_CRIU43_DEBS=(
	"criu experimental $D13_CRIU43_VERSION 66a5c280fd06496dd127c6f4f3d4ddff527c1fb722c0d70d64df380d1ea8f8d0 D13_CRIU43_DEBS"
	"libcompel1 experimental $D13_CRIU43_VERSION c88d5ea44ae3d0aab48e99a5b335a652827ad3a119f88470b8a5fd7d301c38ca D13_CRIU43_DEBS"
	"libnet9 sid 1.3+dfsg-3+b2 2a27e79bb376a1052a77b6373e17b3c2e71b2b2d15bc05d899f2a6318e5d36ea D13_CRIU43_DEBS"
	"libnl-3-200 sid 3.12.0-2+b1 a5ca78bbb9d5cc067b78952c5d38b7caac831d42e94b85b91edf1f6f00dfd48a D13_CRIU43_DEBS"
)
# criu43_lib_path: where the unpacked 4.3 libraries are, for LD_LIBRARY_PATH
criu43_lib_path() {
	echo "$D13_CRIU43_DIR/usr/lib/x86_64-linux-gnu:$D13_CRIU43_DIR/lib/x86_64-linux-gnu"
}
# Trixie's ROCm userspace, the clients of the lane's ROCm test: ROCr
# (libhsa-runtime64) 6.1.2 on libhsakmt 6.2.4, and rocminfo.
D13_HSA_VERSION=6.1.2-3
D13_SHA256_HSA=5633b84b2f6527b19d70db064cfbbaf37b426f3a1a826316de115c8acb8c196d
D13_SHA256_HSA_DEV=210550164784b6f12067b6cfd8a9386f6855d12a5fdd768b14839c85c35e48c0
D13_HSAKMT_VERSION=6.2.4+ds-1
D13_SHA256_HSAKMT=1fd49134be5a29e0b978d230ffda6b419421e1237dac77e86131dba9f2037147
D13_SHA256_HSAKMT_DEV=1cb7a1e52e7a568de002a576f3893dc4e12fa007f9d66e11793622a9edf433ec
D13_ROCMINFO_VERSION=6.1.2-2
D13_SHA256_ROCMINFO=db9f196d4ca4a523132a36805668ef82ab76cc2b850e748b3aa04e67465aa90e
# Where the userland holds the ROCm clients it builds, and the guest too
D13_ROCM_DIR=/opt/kfd-criu/rocm
D13_DIR=$BUILD_DIR/debian13
D13_ROOT=$CACHE_DIR/debian13/$D13_KVER
