#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Configure and build the test kernel: tinyconfig plus the base's config
# fragments (config_fragments_of),
# every requested symbol verified, bzImage built through ccache, uAPI
# headers installed for the userspace tests.
set -euo pipefail
. "$(dirname "$0")/common.sh"

# The base tree: 6.12 (the backport, which the debug lane boots), or 7.3
# (the series' own base) with --base 7.3
BASE=6.12
mapfile -t FRAGMENTS < <(config_fragments_of "$BASE")
# Symbols config/ asks for that the base no longer has (7.3: sysctl is
# always built); verify_config does not look for them.
GONE_SYMBOLS=()
BUILD_LOG=$BUILD_DIR/kernel-build.log
OBJECTS_FILE=$CACHE_DIR/kernel-objects
# Objects in the tree after a build of this config from scratch: 1,914
# measured (kbuild compiled 1,894 of them); the cache's count of the last
# build replaces it (expected_objects).
KERNEL_OBJECTS=1914

usage() {
	cat <<'TXT'
Usage: scripts/build-kernel.sh [--prepare] [--base 7.3] [make-args...]

Prepares build/linux (scripts/prepare-tree.sh), configures it from
config/ (and backport/6.12/kfd-criu.config) on top of tinyconfig, checks
that every requested symbol took effect, installs the uAPI headers into build/headers and builds
bzImage with ccache. Extra arguments go to the kernel's make (e.g. W=1).
--prepare  stop before the bzImage build: the tree, its config and the
           uAPI headers, all that the host tier reads.
--base 7.3 the test kernel of the series' base instead, in build/linux-7.3.
TXT
}

# Fail when merge_config silently dropped a symbol we asked for.
verify_config() {
	local frag line sym bad=0
	for frag in "${FRAGMENTS[@]}"; do
		while IFS= read -r line; do
			sym=${line#\# }
			sym=${sym%%[= ]*}
			[[ " ${GONE_SYMBOLS[*]} " != *" $sym "* ]] || continue
			case "$line" in
			CONFIG_*=*) grep -qxF "$line" "$KSRC/.config" || {
				log "config: wanted '$line', got '$(grep -E "^(# )?${line%%=*}[= ]" "$KSRC/.config" || echo unset)'"
				bad=1; } ;;
			"# CONFIG_"*" is not set")
				sym=${line#\# }; sym=${sym%% *}
				grep -q "^$sym=" "$KSRC/.config" && {
					log "config: wanted $sym unset, it is set"; bad=1; } ;;
			esac
		done < "$frag"
	done
	[ "$bad" -eq 0 ] || die "kernel config does not match config/ (see above)"
}

# What the configuration depends on: the fragments, every Kconfig file of
# the tree (ours and the patched ones among them) and the compiler, which
# Kconfig asks about. Not the rest of the overlay: a change to a C file
# must not cost a reconfiguration (about 30 s).
config_key() {
	local f

	{
		for f in "${FRAGMENTS[@]}"; do
			cat "$f"
		done
		(cd "$KSRC" && find . -name 'Kconfig*' -type f -print0 |
			LC_ALL=C sort -z | xargs -0 cat)
		"${CC:-gcc}" --version
	} | sha256sum | cut -d' ' -f1
}

configure_kernel() {
	local key
	key=$(config_key)
	if [ -f "$KSRC/.config-stamp" ] && [ "$(cat "$KSRC/.config-stamp")" = "$key" ] &&
	   [ -f "$KSRC/.config" ]; then
		# Cheap, and kbuild may have rewritten .config since (a new
		# linker or pahole changes what Kconfig offers)
		verify_config
		return
	fi
	log "configuring kernel"
	(cd "$KSRC" &&
	 make -s tinyconfig >/dev/null &&
	 scripts/kconfig/merge_config.sh -m -O . .config \
		"${FRAGMENTS[@]}" >/dev/null &&
	 make -s olddefconfig >/dev/null)
	verify_config
	echo "$key" > "$KSRC/.config-stamp"
}

# Warnings in our own files are not noise: show them.
warn_about_our_files() {
	local files
	files=$(cd "$TOP/kernel" && find . -name '*.[ch]' -printf '%f\n' | sort -u |
		paste -sd'|')
	grep -E -A3 "($files):[0-9]+:[0-9]+: (warning|error)" \
		"$BUILD_LOG" >&2 || true
}

# Objects (*.o) in the tree, objtool's and the host programs' included.
count_objects() {
	find "$KSRC" -name '*.o' | wc -l
}

# How many objects this build will compile, for the progress estimate:
# what the last build in any checkout left in its tree (recorded in the
# cache), or, with an empty cache, the count measured for this config,
# less what the tree already holds. 0 (unknown) for a rebuild.
expected_objects() {
	local full before

	full=$(cat "$OBJECTS_FILE" 2>/dev/null || true)
	case "$full" in ''|*[!0-9]*) full=$KERNEL_OBJECTS ;; esac
	before=$(count_objects)
	echo $((full > before ? full - before : 0))
}

# The objects make coverage profiles: every C file of ours under the amd
# tree, and every upstream C file our patches change (their added lines
# are what is measured there). kbuild names an object by its path from
# the Makefile that builds it: the amdkfd objects are amdgpu's, as
# "../amdkfd/NAME". One GCOV_PROFILE_<object>=y per object on make's
# command line, so that nothing of it reaches the series or the module.
gcov_profile_args() {
	local f

	[ "$BASE" = 6.12 ] || return 0

	{
		(cd "$TOP/kernel" && find drivers/gpu/drm/amd -name '*.c' \
			-not -path '*/tests/*')
		sed -n 's|^+++ b/\(drivers/gpu/drm/amd/.*\.c\)$|\1|p' \
			"$BACKPORT_612"/*.patch
	} | sort -u | while read -r f; do
		case "$f" in
		*/tests/*) continue ;;
		drivers/gpu/drm/amd/amdkfd/*)
			f=../amdkfd/${f#drivers/gpu/drm/amd/amdkfd/} ;;
		drivers/gpu/drm/amd/amdgpu/*)
			f=${f#drivers/gpu/drm/amd/amdgpu/} ;;
		*) continue ;;
		esac
		echo "GCOV_PROFILE_${f%.c}.o=y"
	done
}

# Each profiled object's coverage notes (.gcno) must come from the compile
# that made the object, or make coverage cannot read the counters the
# guest sends. Objects whose notes do not are compiled again, without
# ccache, and bzImage is linked again.
check_gcov_notes() {
	local bad obj

	# The 7.3 kernel profiles nothing (gcov_profile_args)
	[ "$BASE" = 6.12 ] || return 0
	grep -q '^CONFIG_GCOV_KERNEL=y' "$KSRC/.config" || return 0
	bad=$("$TOP/scripts/coverage.py" --check-build --ksrc "$KSRC") && return
	log "coverage notes that are not their objects': $(echo $bad); compiling them again"
	for obj in $bad; do
		rm -f "$KSRC/$obj.o" "$KSRC/$obj.gcno"
	done
	CCACHE_DISABLE=1 make -C "$KSRC" -s -j"$(nproc)" CC="ccache gcc" \
		$(gcov_profile_args) "$@" bzImage >> "$BUILD_LOG" 2>&1 ||
		die "kernel build failed (full log: ${BUILD_LOG#"$TOP"/})"
	bad=$("$TOP/scripts/coverage.py" --check-build --ksrc "$KSRC") ||
		die "coverage notes still not their objects': $(echo $bad)"
}

# select_base BASE: build the test kernel of BASE (6.12, or 7.3, the
# series' base: build/linux-7.3, the uAPI headers in build/headers-7.3).
select_base() {
	BASE=$1
	case "$1" in
	6.12) ;;
	7.3)
		KSRC=$PORT73_KSRC
		KHDR=$BUILD_DIR/headers-7.3
		export CCACHE_BASEDIR=$KSRC
		mapfile -t FRAGMENTS < <(config_fragments_of "$BASE")
		BUILD_LOG=$BUILD_DIR/kernel-build-7.3.log
		OBJECTS_FILE=$CACHE_DIR/kernel-objects-7.3
		mapfile -t GONE_SYMBOLS < <(gone_symbols_of "$BASE") ;;
	*) usage >&2; exit 2 ;;
	esac
}

main() {
	local prepare_only=0 expected

	while [ $# -gt 0 ]; do
		case "$1" in
		-h|--help) usage; exit 0 ;;
		--prepare) prepare_only=1 ;;
		--base) select_base "${2:-}"; shift ;;
		*) break ;;
		esac
		shift
	done
	"$TOP/scripts/prepare-tree.sh" --base "$BASE"
	configure_kernel
	make -C "$KSRC" -s headers_install INSTALL_HDR_PATH="$KHDR" >/dev/null
	[ "$prepare_only" -eq 0 ] || return 0
	mkdir -p "$CCACHE_DIR"
	expected=$(expected_objects)
	log "building bzImage (make -j$(nproc)), log in ${BUILD_LOG#"$TOP"/}"
	# Compiler noise from upstream files (KASAN frame sizes) goes to the
	# log; on failure progress.py prints the compiler's error from it.
	"$TOP/scripts/progress.py" kbuild --label kernel --total "$expected" \
		--output "$BUILD_LOG" -- \
		make -C "$KSRC" -j"$(nproc)" CC="ccache gcc" \
		$(gcov_profile_args) "$@" bzImage ||
		die "kernel build failed (full log: ${BUILD_LOG#"$TOP"/})"
	check_gcov_notes "$@"
	count_objects > "$OBJECTS_FILE.$$"
	mv -f "$OBJECTS_FILE.$$" "$OBJECTS_FILE"
	warn_about_our_files
	log "kernel ready: $KSRC/arch/x86/boot/bzImage"
}

main "$@"
