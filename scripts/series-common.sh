# SPDX-License-Identifier: GPL-2.0
#
# What make-series.sh, series-check.sh and checkpatch.sh share: the
# pinned base tarball, git trees of it with a reproducible base commit,
# and the checkpatch/kernel-doc invocations. Sourced after common.sh.

SERIES_DIR=${SERIES_DIR:-$BUILD_DIR/series}
SERIES_WORK=$BUILD_DIR/series-work
SERIES_DEFS=$TOP/scripts/series.d
# The series is in the byte order of the names in $SERIES_DEFS
# ("13-x" before "13a-y"), which a glob gives only in the C locale.
export LC_COLLATE=C
SERIES_BRANCH=amdkfd-criu
SERIES_BASE_TAG=base
SERIES_AUTHOR=${SERIES_AUTHOR:-amdkfd-criu developers <amdkfd-criu@example.org>}
# Fixed dates make every commit, and so the base-commit line of the
# series, the same on every machine for the same inputs.
SERIES_DATE='2026-01-01T00:00:00+0000'

# The files of the series: what checkpatch and kernel-doc look at.
# Untracked files count, ignored ones (editor and tool droppings) do not.
series_kernel_files() {
	local f
	(cd "$TOP/kernel" && git ls-files --cached --others --exclude-standard .) |
	LC_ALL=C sort -u | while read -r f; do
		if [ -f "$TOP/kernel/$f" ]; then
			echo "$f"
		fi
	done
}

series_patch_names() {
	local p
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		echo "$p"
	done < "$TOP/patches/series"
}

# series_version_claims PATCH...: the lines of the PATCHes that change
# the KFD ioctl version. Upstream gives minor versions out in merge
# order and ROCr enables features by the number it reads, so the series
# takes none: userspace finds image mode by its probe (the uAPI DOC).
series_version_claims() {
	grep -Hn '^[-+]#define KFD_IOCTL_M\(AJ\|IN\)OR_VERSION' "$@" || true
}

# The series' base: Debian's 7.3 (common.sh), which stands in for the
# tree maintainers apply to. The 6.12 backport is not exported.
SERIES_PKG=$PORT73_PKG
SERIES_PKG_VERSION=$PORT73_VERSION
SERIES_PKG_SHA256=$PORT73_SHA256

# Prints the pinned linux-source .deb, downloading it when missing. The
# series is only meaningful on the pinned base, so there is no fallback.
series_source_deb() {
	fetch_suite_deb "$PORT73_SUITE" "$SERIES_PKG" "$SERIES_PKG_VERSION" \
		"$SERIES_PKG_SHA256" PORT73_SHA256
}

# Prints the path of the source tarball inside the pinned .deb, extracted
# once into build/.
series_tarball() {
	local deb tarball=$BUILD_DIR/series-base/$SERIES_PKG.tar.xz tmp

	if [ -f "$tarball" ] && [ "$(cat "$tarball.deb-sha256" 2>/dev/null)" = "$SERIES_PKG_SHA256" ]; then
		echo "$tarball"
		return
	fi
	deb=$(series_source_deb)
	mkdir -p "$(dirname "$tarball")"
	tmp=$(mktemp -d "$BUILD_DIR/series-base/unpack.XXXXXX")
	dpkg-deb --fsys-tarfile "$deb" |
		tar -x -C "$tmp" --wildcards './usr/src/linux-source-*.tar.xz'
	mv "$tmp"/usr/src/linux-source-*.tar.xz "$tarball"
	rm -rf "$tmp"
	echo "$SERIES_PKG_SHA256" > "$tarball.deb-sha256"
	echo "$tarball"
}

# git with the series identity and dates, and no user configuration.
series_git() {
	local name=${SERIES_AUTHOR% <*} email=${SERIES_AUTHOR##*<}

	email=${email%>}
	GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 \
	GIT_AUTHOR_NAME=$name GIT_AUTHOR_EMAIL=$email \
	GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email \
	GIT_AUTHOR_DATE=$SERIES_DATE GIT_COMMITTER_DATE=$SERIES_DATE \
		git "$@"
}

# Unpacks the pristine tree into $1 (a new directory) and commits it as
# is, ignored files included, tagged $SERIES_BASE_TAG. The commit depends
# only on the tarball, so every machine gets the same base-commit id.
series_make_base_repo() {
	local dir=$1 tarball

	tarball=$(series_tarball)
	log "unpacking and committing the pristine tree in ${dir#"$TOP"/} (a few minutes, once)"
	rm -rf "$dir"
	mkdir -p "$dir"
	tar -x -C "$dir" --strip-components=1 -f "$tarball"
	series_git -C "$dir" init -q -b "$SERIES_BRANCH"
	series_git -C "$dir" config core.autocrlf false
	series_git -C "$dir" config gc.auto 0
	series_git -C "$dir" add -A -f .
	series_git -C "$dir" commit -q --no-verify -m "Linux $SERIES_PKG_VERSION (Debian $SERIES_PKG)" \
		-m "The pristine tree of Debian's $SERIES_PKG package, version
$SERIES_PKG_VERSION (.deb sha256 $SERIES_PKG_SHA256),
committed as is by amdkfd-criu's scripts/make-series.sh."
	series_git -C "$dir" tag "$SERIES_BASE_TAG"
	echo "$SERIES_PKG_SHA256" > "$dir/.git/amdkfd-criu-base"
}

# Makes sure $1 is a base repository of the pinned tree, creating it if
# not, and checks out a clean $SERIES_BRANCH at the base. With $2 "keep",
# build outputs (files the kernel's .gitignore ignores) survive, so builds
# stay incremental; otherwise every untracked file goes.
series_base_repo() {
	local dir=$1 clean=-fdx

	if [ "$(cat "$dir/.git/amdkfd-criu-base" 2>/dev/null)" != "$SERIES_PKG_SHA256" ]; then
		series_make_base_repo "$dir"
	fi
	series_git -C "$dir" am --abort >/dev/null 2>&1 || true
	[ "${2:-}" != keep ] || clean=-fd
	series_git -C "$dir" checkout -q -f -B "$SERIES_BRANCH" "$SERIES_BASE_TAG"
	series_git -C "$dir" clean -q "$clean"
}

# A kernel tree with scripts/checkpatch.pl for the quick checks: the
# series work tree, created if need be. It is a git tree, which
# checkpatch needs for its SPDX checks; scripts/ and LICENSES/ are the
# same at every commit of the series.
series_tools_tree() {
	if [ "$(cat "$SERIES_WORK/linux/.git/amdkfd-criu-base" 2>/dev/null)" != \
	     "$SERIES_PKG_SHA256" ]; then
		exec 8> "$BUILD_DIR/.series-lock"
		flock 8
		series_base_repo "$SERIES_WORK/linux" >&2
		exec 8>&-
	fi
	echo "$SERIES_WORK/linux"
}

# checkpatch as series-check and checkpatch.sh run it. Exceptions, each
# with its reason:
# - UNKNOWN_COMMIT_ID: the base is the Debian source tree committed as
#   one commit, without upstream history, so checkpatch cannot find the
#   upstream commit a Fixes: tag names (patches/0000-*). Check such a tag
#   in an upstream tree instead.
# - FILE_PATH_CHANGES: checkpatch asks each patch that adds a file
#   whether MAINTAINERS needs updating. The files are under the existing
#   AMD KFD and AMDGPU entries, and one patch at the end adds the
#   selftests directory to AMD KFD; make-series.sh checks that every file
#   the series adds has an entry.
SERIES_CHECKPATCH_ARGS=(--strict --quiet --no-summary --show-types --color=never
			--ignore=UNKNOWN_COMMIT_ID --ignore=FILE_PATH_CHANGES)

# The KUnit tests' fake processes hold upstream's struct idr fields
# (event_idr, alloc_idr), which only idr_init() sets up; checkpatch
# calls idr_init() deprecated (DEPRECATED_API) for new code, which should
# use an xarray. Those reports are dropped from checkpatch's output on
# stdin when they are in a test file, and no other.
series_checkpatch_filter() {
	awk '
		skip && (/^$/ || /^(ERROR|WARNING|CHECK):/) { skip = 0 }
		skip { next }
		held != "" {
			if ($0 ~ /FILE: drivers\/gpu\/drm\/amd\/amdkfd\/tests\//) {
				held = ""; skip = 1; next
			}
			print held; held = ""
		}
		/^WARNING:DEPRECATED_API: Deprecated use of .idr_init./ {
			held = $0; next
		}
		{ print }
		END { if (held != "") print held }'
}

# checkpatch checks SPDX lines with scripts/spdxcheck.py, which needs
# python3-ply and python3-git; without them checkpatch prints a traceback
# and passes any SPDX line.
# Prints a PATH whose python3 has ply, or fails.
series_checkpatch_path() {
	local py dir=$BUILD_DIR/checkpatch-python
	for py in "$(command -v python3)" /usr/bin/python3; do
		[ -x "$py" ] || continue
		"$py" -c 'import ply, git' 2> /dev/null || continue
		mkdir -p "$dir"
		ln -sfn "$py" "$dir/python3"
		echo "$dir:$PATH"
		return 0
	done
	log "checkpatch's SPDX check needs: apt-get install python3-ply python3-git"
	return 1
}

# Prints "E W C" for a checkpatch output on stdin; a crashed helper
# script counts as an error.
series_checkpatch_counts() {
	awk '/^[^:]*:[0-9]+: ERROR:|^ERROR:|^Traceback/ { e++ }
	     /^[^:]*:[0-9]+: WARNING:|^WARNING:/ { w++ }
	     /^[^:]*:[0-9]+: CHECK:|^CHECK:/ { c++ }
	     END { printf "%d %d %d\n", e, w, c }'
}
