#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch the pinned 6.12 base, unpack it into build/linux and lay our work
# on top: copy kernel/ over the tree and apply patches/series, without
# fuzz. Idempotent:
# a stamp keyed on every input makes a re-run free, and only files whose
# content changes are rewritten, so make rebuilds only what it must.
set -euo pipefail
. "$(dirname "$0")/common.sh"

usage() {
	cat <<'TXT'
Usage: scripts/prepare-tree.sh [--force]

Downloads linux-source-6.12 (pinned version, checksum verified), unpacks it
into build/linux, copies kernel/ over it and applies patches/series.
--force  redo the overlay even when the stamp says it is current.
TXT
}

fetch_source_deb() {
	fetch_pinned_deb "$KERNEL_PKG" "$KERNEL_PKG_VERSION" "$KERNEL_PKG_SHA256"
}

unpack_base() {
	local deb=$1 key tmp
	key=$(sha256sum "$deb" | cut -d' ' -f1)
	if [ -f "$KSRC/.base-stamp" ] && [ "$(cat "$KSRC/.base-stamp")" = "$key" ]; then
		return
	fi
	log "unpacking $(basename "$deb") into $KSRC"
	rm -rf "$KSRC" "$BUILD_DIR/pristine" "$BUILD_DIR/overlay.manifest"
	tmp=$(mktemp -d "$BUILD_DIR/unpack.XXXXXX")
	dpkg-deb --fsys-tarfile "$deb" |
		tar -x -C "$tmp" --wildcards './usr/src/linux-source-*.tar.xz'
	mkdir -p "$KSRC"
	tar -x -C "$KSRC" --strip-components=1 -f "$tmp"/usr/src/linux-source-*.tar.xz
	rm -rf "$tmp"
	echo "$key" > "$KSRC/.base-stamp"
}

overlay_key() {
	{
		cat "$KSRC/.base-stamp" "$0" "$TOP/scripts/common.sh"
		(cd "$TOP" && find kernel patches -type f | LC_ALL=C sort |
		 xargs -r sha256sum)
	} | sha256sum | cut -d' ' -f1
}

# Files the patches in the series touch, tree-relative.
patched_files() {
	local p
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$TOP/patches/$p"
	done < "$TOP/patches/series"
}

# Build the overlay in a staging directory from pristine copies, so a
# patch that fails to apply leaves the tree untouched.
stage_overlay() {
	local stage=$1 f p
	mkdir -p "$stage"
	for f in $(patched_files | sort -u); do
		mkdir -p "$stage/$(dirname "$f")"
		if [ -f "$BUILD_DIR/pristine/$f" ]; then
			cp "$BUILD_DIR/pristine/$f" "$stage/$f"
		elif [ -f "$KSRC/$f" ]; then
			cp "$KSRC/$f" "$stage/$f"
		fi
	done
	(cd "$TOP/kernel" && find . -type f | cpio -pdm --quiet "$stage")
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		[ -f "$TOP/patches/$p" ] || die "patches/series names missing $p"
		stage_patch "$stage" "$p"
	done < "$TOP/patches/series"
	rm -f "$stage.log"
}

# Apply patch $2 to the staging directory $1 without fuzz. With fuzz, a
# hunk whose context has changed goes to the nearest place where the rest
# of its context matches, which need not be the place it was written for:
# such a patch fails here and is to be refreshed. A dry run first, so that
# the error tells fuzz from a patch that does not apply at all.
stage_patch() {
	local stage=$1 p=$2 file=$TOP/patches/$2
	local -a args=(-d "$stage" -p1 -s --no-backup-if-mismatch -r -)

	if ! patch "${args[@]}" -F0 --dry-run < "$file" > "$stage.log" 2>&1; then
		cat "$stage.log" >&2
		if patch "${args[@]}" --dry-run < "$file" > /dev/null 2>&1; then
			die "patch $p applies to $(basename "$KSRC") only with fuzz;" \
			    "refresh it so that patch -F0 takes it (tree left unchanged)"
		fi
		die "patch $p does not apply to $(basename "$KSRC") (tree left unchanged)"
	fi
	if ! patch "${args[@]}" -F0 < "$file" > "$stage.log" 2>&1; then
		cat "$stage.log" >&2
		die "patch $p does not apply to $(basename "$KSRC") (tree left unchanged)"
	fi
}

# Copy staged files whose content differs; put back pristine copies of
# files an earlier overlay touched and this one does not.
install_overlay() {
	local stage=$1 f new=$BUILD_DIR/overlay.manifest.new
	(cd "$stage" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) > "$new"
	for f in $(cat "$new"); do
		if [ -f "$KSRC/$f" ] && [ ! -f "$BUILD_DIR/pristine/$f" ] &&
		   ! grep -qxF "$f" "$BUILD_DIR/overlay.manifest" 2>/dev/null; then
			mkdir -p "$BUILD_DIR/pristine/$(dirname "$f")"
			cp -p "$KSRC/$f" "$BUILD_DIR/pristine/$f"
		fi
		if ! cmp -s "$stage/$f" "$KSRC/$f"; then
			mkdir -p "$KSRC/$(dirname "$f")"
			cp "$stage/$f" "$KSRC/$f"
		fi
	done
	[ -f "$BUILD_DIR/overlay.manifest" ] || touch "$BUILD_DIR/overlay.manifest"
	for f in $(comm -23 "$BUILD_DIR/overlay.manifest" "$new"); do
		if [ -f "$BUILD_DIR/pristine/$f" ]; then
			cp "$BUILD_DIR/pristine/$f" "$KSRC/$f"
		else
			rm -f "$KSRC/$f"
		fi
	done
	mv "$new" "$BUILD_DIR/overlay.manifest"
}

main() {
	local force=0 deb key
	case "${1:-}" in
	-h|--help) usage; exit 0 ;;
	--force) force=1 ;;
	"") ;;
	*) usage >&2; exit 2 ;;
	esac
	mkdir -p "$BUILD_DIR"
	deb=$(fetch_source_deb)
	unpack_base "$deb"
	key=$(overlay_key)
	if [ "$force" -eq 0 ] && [ -f "$KSRC/.overlay-stamp" ] &&
	   [ "$(cat "$KSRC/.overlay-stamp")" = "$key" ]; then
		exit 0
	fi
	STAGE_DIR=$(mktemp -d "$BUILD_DIR/stage.XXXXXX")
	trap 'rm -rf "$STAGE_DIR" "$STAGE_DIR.log"' EXIT
	stage_overlay "$STAGE_DIR"
	install_overlay "$STAGE_DIR"
	echo "$key" > "$KSRC/.overlay-stamp"
	log "tree ready: $KSRC"
}

main "$@"
