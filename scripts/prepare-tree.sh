#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch a pinned base, unpack it and lay our work on top: copy kernel/
# over the tree and apply the base's series without fuzz. 6.12 (the
# default, which the debug lane and the DKMS module build) goes into
# build/linux with the backport layer, backport/6.12/series; 7.3, the
# series' own base, into build/linux-7.3 with patches/series. Idempotent:
# a stamp keyed on every input makes a re-run free, and only files whose
# content changes are rewritten, so make rebuilds only what it must.
set -euo pipefail
. "$(dirname "$0")/common.sh"

usage() {
	cat <<'TXT'
Usage: scripts/prepare-tree.sh [--force] [--base 7.3]

Downloads linux-source-6.12 (pinned version, checksum verified), unpacks it
into build/linux, copies kernel/ over it and applies backport/6.12/series.
--force     redo the overlay even when the stamp says it is current.
--base 7.3  the series' base instead: linux-source-7.3 (pinned, from
            trixie-backports) into build/linux-7.3, with patches/series.
TXT
}

fetch_source_deb() {
	if [ "$BASE" = 7.3 ]; then
		fetch_suite_deb "$PORT73_SUITE" "$PORT73_PKG" "$PORT73_VERSION" \
			"$PORT73_SHA256" PORT73_SHA256
	else
		fetch_pinned_deb "$KERNEL_PKG" "$KERNEL_PKG_VERSION" "$KERNEL_PKG_SHA256"
	fi
}

# select_base BASE: where the tree of BASE goes and what is laid on it.
select_base() {
	BASE=$1
	case "$BASE" in
	6.12)
		PATCH_DIR=$(patch_dir_of "$BASE")
		PRISTINE=$BUILD_DIR/pristine
		MANIFEST=$BUILD_DIR/overlay.manifest ;;
	7.3)
		KSRC=$PORT73_KSRC
		PATCH_DIR=$(patch_dir_of "$BASE")
		PRISTINE=$BUILD_DIR/pristine-7.3
		MANIFEST=$BUILD_DIR/overlay-7.3.manifest ;;
	*) usage >&2; exit 2 ;;
	esac
}

unpack_base() {
	local deb=$1 key tmp
	key=$(sha256sum "$deb" | cut -d' ' -f1)
	if [ -f "$KSRC/.base-stamp" ] && [ "$(cat "$KSRC/.base-stamp")" = "$key" ]; then
		return
	fi
	log "unpacking $(basename "$deb") into $KSRC"
	rm -rf "$KSRC" "$PRISTINE" "$MANIFEST"
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
		(cd "$TOP" && find kernel "${PATCH_DIR#"$TOP"/}" -type f | LC_ALL=C sort |
		 xargs -r sha256sum)
	} | sha256sum | cut -d' ' -f1
}

# Files the patches in the series touch, tree-relative.
patched_files() {
	local p
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$PATCH_DIR/$p"
	done < "$PATCH_DIR/series"
}

# Build the overlay in a staging directory from pristine copies, so a
# patch that fails to apply leaves the tree untouched.
stage_overlay() {
	local stage=$1 f p
	mkdir -p "$stage"
	for f in $(patched_files | sort -u); do
		mkdir -p "$stage/$(dirname "$f")"
		if [ -f "$PRISTINE/$f" ]; then
			cp "$PRISTINE/$f" "$stage/$f"
		elif [ -f "$KSRC/$f" ]; then
			cp "$KSRC/$f" "$stage/$f"
		fi
	done
	(cd "$TOP/kernel" && find . -type f | cpio -pdmu --quiet "$stage")
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		[ -f "$PATCH_DIR/$p" ] || die "${PATCH_DIR#"$TOP"/}/series names missing $p"
		stage_patch "$stage" "$p"
	done < "$PATCH_DIR/series"
	rm -f "$stage.log"
}

# Apply patch $2 to the staging directory $1 without fuzz. With fuzz, a
# hunk whose context has changed goes to the nearest place where the rest
# of its context matches, which need not be the place it was written for:
# such a patch fails here and is to be refreshed. A dry run first, so that
# the error tells fuzz from a patch that does not apply at all.
stage_patch() {
	local stage=$1 p=$2 file=$PATCH_DIR/$2
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
	local stage=$1 f new=$MANIFEST.new
	(cd "$stage" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) > "$new"
	for f in $(cat "$new"); do
		if [ -f "$KSRC/$f" ] && [ ! -f "$PRISTINE/$f" ] &&
		   ! grep -qxF "$f" "$MANIFEST" 2>/dev/null; then
			mkdir -p "$PRISTINE/$(dirname "$f")"
			cp -p "$KSRC/$f" "$PRISTINE/$f"
		fi
		if ! cmp -s "$stage/$f" "$KSRC/$f"; then
			mkdir -p "$KSRC/$(dirname "$f")"
			cp "$stage/$f" "$KSRC/$f"
		fi
	done
	[ -f "$MANIFEST" ] || touch "$MANIFEST"
	for f in $(comm -23 "$MANIFEST" "$new"); do
		if [ -f "$PRISTINE/$f" ]; then
			cp "$PRISTINE/$f" "$KSRC/$f"
		else
			rm -f "$KSRC/$f"
		fi
	done
	mv "$new" "$MANIFEST"
}

main() {
	local force=0 deb key

	select_base 6.12
	while [ $# -gt 0 ]; do
		case "$1" in
		-h|--help) usage; exit 0 ;;
		--force) force=1 ;;
		--base) select_base "${2:-}"; shift ;;
		*) usage >&2; exit 2 ;;
		esac
		shift
	done
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
