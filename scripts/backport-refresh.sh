#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Write the 6.12 backport's diff of our new files again, from the two
# shapes a developer edits: kernel/ (the 7.3 shape, which the series
# adds) and build/linux (the 6.12 tree that scripts/prepare-tree.sh laid
# out, edited by hand to build on 6.12).
set -euo pipefail
. "$(dirname "$0")/common.sh"

usage() {
	cat <<'TXT'
Usage: scripts/backport-refresh.sh

Rewrites backport/6.12/9999-*.patch: its message as it is, then for each
file under kernel/ whose copy in build/linux differs, the diff from the
first to the second. Edit kernel/ and build/linux first; run
scripts/prepare-tree.sh after, which applies the new diff (and fails,
leaving the tree as it is, if it does not apply without fuzz).
TXT
}

# new_file_diff FILE: the diff from kernel/FILE to build/linux/FILE, with
# tree-relative names, as patch -p1 takes it; nothing when they agree.
new_file_diff() {
	diff -u --label "a/$1" --label "b/$1" "$TOP/kernel/$1" "$KSRC/$1" || true
}

main() {
	local out f tmp

	case "${1:-}" in
	-h|--help) usage; exit 0 ;;
	'') ;;
	*) usage >&2; exit 2 ;;
	esac
	out=$(ls "$BACKPORT_612"/9999-*.patch)
	[ -f "$KSRC/.overlay-stamp" ] || die "no prepared build/linux; run scripts/prepare-tree.sh"
	tmp=$(mktemp "$BUILD_DIR/backport.XXXXXX")
	sed '/^---$/q' "$out" > "$tmp"
	(cd "$TOP/kernel" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) |
	while read -r f; do
		[ -f "$KSRC/$f" ] || die "build/linux has no $f; run scripts/prepare-tree.sh"
		new_file_diff "$f"
	done >> "$tmp"
	mv "$tmp" "$out"
	log "wrote ${out#"$TOP"/} ($(grep -c '^--- a/' "$out") files)"
}

main "$@"
