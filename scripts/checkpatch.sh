#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The quick form of series-check for a working tree: checkpatch --strict
# on every file under kernel/ and every patch of patches/series, and
# kernel-doc -Wall on the C files under kernel/. No build, no git am.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/series-common.sh"

usage() {
	cat <<'TXT'
Usage: scripts/checkpatch.sh [FILE...]

Runs scripts/checkpatch.pl --strict (from build/series-work, the pinned
tree that make series uses; unpacked once) on the files under kernel/
and the patches of patches/series, or on the FILEs given (paths under
kernel/ or patches/), and scripts/kernel-doc -none -Wall on the C files
among them. Prints
what they report and a totals line; exits non-zero if anything was
reported. Patches are checked without their Signed-off-by, which
make-series.sh adds.
TXT
}

TOOLS=""
SCRATCH=$BUILD_DIR/checkpatch

# checkpatch writes a cache into its working directory and reads .git and
# include/ from there: run it in a directory of symlinks where the tree
# paths of kernel/ resolve, and .git and include/ are the pinned tree's.
checkpatch_kernel_file() {
	(cd "$SCRATCH" && "$TOOLS/scripts/checkpatch.pl" "${SERIES_CHECKPATCH_ARGS[@]}" \
		--file "$1" 2>&1 | series_checkpatch_filter) || true
}

make_scratch() {
	local d
	rm -rf "$SCRATCH"
	mkdir -p "$SCRATCH"
	ln -s "$TOOLS/.git" "$SCRATCH/.git"
	ln -s "$TOOLS/include" "$SCRATCH/include"
	for d in "$TOP"/kernel/*; do
		[ ! -e "$SCRATCH/${d##*/}" ] || die "kernel/${d##*/} hides the tree's own"
		ln -s "$d" "$SCRATCH/${d##*/}"
	done
}

checkpatch_patch() {
	(cd "$SCRATCH" && "$TOOLS/scripts/checkpatch.pl" "${SERIES_CHECKPATCH_ARGS[@]}" \
		--no-signoff "$TOP/patches/$1" 2>&1 | series_checkpatch_filter) || true
}

kernel_doc() {
	(cd "$SCRATCH" && "$TOOLS/scripts/kernel-doc" -none -Wall "$1" 2>&1) || true
}

# One item: "k path" (kernel/ file) or "p name" (patch). Prints the
# reports, then a line "@@counts E W C D".
check_item() {
	local kind=$1 name=$2 out doc=""
	if [ "$kind" = k ]; then
		out=$(checkpatch_kernel_file "$name")
		case "$name" in *.[ch]) doc=$(kernel_doc "$name") ;; esac
	else
		out=$(checkpatch_patch "$name")
	fi
	# One write per item keeps parallel items apart
	printf '%s%s@@counts %s %s\n' "${out:+$out$'\n'}" "${doc:+$doc$'\n'}" \
		"$(echo "$out" | series_checkpatch_counts)" \
		"$(echo -n "$doc" | grep -c 'warning\|error' || true)"
}

items() {
	local f
	if [ $# -gt 0 ]; then
		for f in "$@"; do
			f=$(realpath -m --relative-to="$TOP" "$f")
			case "$f" in
			kernel/*) echo "k ${f#kernel/}" ;;
			patches/*) echo "p ${f#patches/}" ;;
			*) die "$f is neither under kernel/ nor under patches/" ;;
			esac
		done
		return
	fi
	series_kernel_files | sed 's/^/k /'
	series_patch_names | sed 's/^/p /'
}

# The series and its 6.12 backport leave the KFD ioctl version alone
# (series_version_claims): each line that changes it is an error, in the
# form of check_item's.
version_claims() {
	local claims

	[ $# -eq 0 ] || return 0
	# shellcheck disable=SC2046 # one word per patch path
	claims=$(series_version_claims $(series_patch_names | sed "s|^|$TOP/patches/|") \
		"$BACKPORT_612"/*.patch)
	[ -n "$claims" ] || return 0
	echo "$claims" | sed 's|^|ERROR: the KFD ioctl version is upstream'"'"'s to set: |'
	echo "@@counts $(echo "$claims" | wc -l) 0 0 0"
}

main() {
	local start=$SECONDS out
	case "${1:-}" in
	-h|--help) usage; exit 0 ;;
	esac
	mkdir -p "$BUILD_DIR"
	TOOLS=$(series_tools_tree)
	PATH=$(series_checkpatch_path)
	make_scratch
	export TOOLS TOP SCRATCH
	export -f check_item checkpatch_kernel_file checkpatch_patch kernel_doc \
		series_checkpatch_counts series_checkpatch_filter
	export SERIES_CHECKPATCH_ARGS_STR="${SERIES_CHECKPATCH_ARGS[*]}"
	out=$(items "$@" | nice xargs -P2 -L1 bash -c \
		'SERIES_CHECKPATCH_ARGS=($SERIES_CHECKPATCH_ARGS_STR); check_item "$0" "$1"')
	out+=$'\n'$(version_claims "$@")
	echo "$out" | grep -v '^@@counts ' || true
	echo "$out" | awk -v t=$((SECONDS - start)) '
		/^@@counts / { n++; e += $2; w += $3; c += $4; d += $5 }
		END {
			printf "checkpatch --strict: %d errors, %d warnings, %d checks; kernel-doc: %d warnings (%d items, %d s)\n", e, w, c, d, n, t
			exit (e + w + c + d) ? 1 : 0
		}'
}

main "$@"
