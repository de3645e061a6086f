#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Export what maintainers receive: our kernel/ files and patches/ as a
# git format-patch series against the pinned 7.3 base, one logical change
# per patch, in the order and with the messages of scripts/series.d/.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/series-common.sh"

usage() {
	cat <<'TXT'
Usage: scripts/make-series.sh [-v N] [--rfc]

Commits the pristine 7.3 tree in build/series-work/linux (tagged "base",
reproducible), then one commit per scripts/series.d/*.commit, and writes
"git format-patch --cover-letter --base" output to build/series/ (the
cover letter text comes from scripts/series.d/cover-letter.txt). Checks
that every kernel/ file and every patch of patches/series is in exactly
one commit, that the last commit's tree is exactly what
scripts/prepare-tree.sh builds, and that the series applies with git am.
-v N   reroll count (v2, v3, ...)
--rfc  subject prefix "RFC PATCH"

A .commit file: header lines, a blank line, then the commit message
(empty: the first patch's preamble). Header lines:
  files: GLOB...      files under kernel/ (tree paths; * crosses /)
  patches: NAME...    patches from patches/series, applied in its order
The KUnit block at the bottom of a .c file ("#include "tests/x.c"") is
left out until the commit that adds tests/x.c. A section of a header that
begins with a one-line comment naming a .c file ("/* x.c: ... */") is
left out until the commit that adds x.c. A kselftest Makefile's
"TEST_GEN_PROGS += x" line waits for the commit that adds x.c. Every
file the series adds must be covered, when the series ends, by an F:
line of a MAINTAINERS entry whose list is amd-gfx (AMD KFD, AMDGPU).
TXT
}

WORK=$SERIES_WORK/linux
MSG_DIR=$SERIES_WORK/messages

declare -A CLAIMED_FILE=() CLAIMED_PATCH=()

# Reads header field $2 of commit definition $1.
def_field() {
	sed -n '/^$/q; s/^'"$2"':[[:space:]]*//p' "$1" | tr '\n' ' '
}

# The commit message part of definition $1.
def_message() {
	sed '1,/^$/d' "$1"
}

patch_preamble() {
	sed '/^---$/,$d' "$TOP/patches/$1"
}

# Files patch $1 touches, tree-relative.
patch_files() {
	sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$TOP/patches/$1"
}

# Kernel files matching the globs of definition $1, one per line.
def_kernel_files() {
	local pat f
	for pat in $(def_field "$1" files); do
		while read -r f; do
			# shellcheck disable=SC2053 # the glob is the point
			if [[ $f == $pat ]]; then
				echo "$f"
			fi
		done < <(series_kernel_files)
	done | LC_ALL=C sort -u
}

# Patches of definition $1, in patches/series order.
def_patches() {
	local want p
	want=" $(def_field "$1" patches) "
	for p in $(def_field "$1" patches); do
		[ -f "$TOP/patches/$p" ] || die "${1##*/}: no patch $p"
		series_patch_names | grep -xF "$p" > /dev/null ||
			die "${1##*/}: $p is not in patches/series"
	done
	for p in $(series_patch_names); do
		case "$want" in *" $p "*) echo "$p" ;; esac
	done
}

# Every kernel/ file and every patch must land in exactly one commit.
check_claims() {
	local def f p files patches bad=0
	for def in "$SERIES_DEFS"/*.commit; do
		files=$(def_kernel_files "$def")
		patches=$(def_patches "$def")
		for f in $files; do
			if [ -n "${CLAIMED_FILE[$f]:-}" ]; then
				log "kernel/$f is in ${CLAIMED_FILE[$f]} and ${def##*/}"
				bad=1
			fi
			CLAIMED_FILE[$f]=${def##*/}
		done
		for p in $patches; do
			if [ -n "${CLAIMED_PATCH[$p]:-}" ]; then
				log "$p is in ${CLAIMED_PATCH[$p]} and ${def##*/}"
				bad=1
			fi
			CLAIMED_PATCH[$p]=${def##*/}
		done
	done
	for f in $(series_kernel_files); do
		[ -n "${CLAIMED_FILE[$f]:-}" ] && continue
		log "kernel/$f is in no scripts/series.d/*.commit"
		bad=1
	done
	for p in $(series_patch_names); do
		[ -n "${CLAIMED_PATCH[$p]:-}" ] && continue
		log "patches/$p is in no scripts/series.d/*.commit"
		bad=1
	done
	[ "$bad" -eq 0 ] || die "fix scripts/series.d/ (see above)"
}

# Without fuzz, as prepare-tree.sh applies them: a patch that needs fuzz
# fails here too.
apply_patch() {
	patch -d "$WORK" -p1 -s -F0 --no-backup-if-mismatch -r - -f < "$TOP/patches/$1" ||
		die "patches/$1 does not apply in series order without fuzz"
}

# The tests file a .c file includes at its bottom, if any.
kunit_include() {
	sed -n 's|^#include "\(tests/[^"]*\.c\)"$|\1|p' "$1"
}

# Copies kernel/$1 into the tree, without its KUnit block while the test
# file it includes is not in the tree yet.
install_kernel_file() {
	local f=$1 test dst=$WORK/$1
	mkdir -p "$(dirname "$dst")"
	case "$f" in
	*.h) install_header_sections "$f"; return ;;
	tools/testing/selftests/*/Makefile) install_selftest_makefile "$f"; return ;;
	esac
	test=$(kunit_include "$TOP/kernel/$f")
	if [ -n "$test" ] && [ ! -f "$(dirname "$dst")/$test" ]; then
		# Drop "#if IS_BUILTIN(...)", the include, "#endif" and the
		# blank line before them.
		awk -v inc="#include \"$test\"" '
			{ line[NR] = $0 }
			$0 == inc { at = NR }
			END {
				for (i = 1; i <= NR; i++)
					if (!at || i < at - 2 || i > at + 1)
						print line[i]
			}' "$TOP/kernel/$f" > "$dst"
		if grep -q "^#include \"$test\"" "$dst"; then
			die "cannot strip the KUnit block of $f"
		fi
	else
		cp "$TOP/kernel/$f" "$dst"
	fi
}

# Copies kernel/$1, a header, without the sections whose file is not in
# the tree yet: a section starts at a one-line comment that names a .c
# file of the header's directory ("/* kfd_criu_bos.c: ... */", after a
# blank line) and ends at the blank line before the next one or before
# the header's closing #endif. So a header that several patches share
# grows with the files it declares.
install_header_sections() {
	local f=$1 dst=$WORK/$1
	awk -v dir="$(dirname "$dst")" '
		{ line[NR] = $0 }
		/^\/\* [a-z0-9_]+\.c: .*\*\/$/ { start[++n] = NR }
		/^#endif/ { last_endif = NR }
		END {
			for (i = 1; i <= n; i++) {
				file = substr(line[start[i]], 4)
				sub(/:.*/, "", file)
				to = (i < n ? start[i + 1] : last_endif) - 2
				if (system("test -f \"" dir "/" file "\"") != 0)
					for (j = start[i] - 1; j <= to; j++)
						skip[j] = 1
			}
			for (i = 1; i <= NR; i++)
				if (!(i in skip))
					print line[i]
		}' "$TOP/kernel/$f" > "$dst"
}

# Copies kernel/$1, a kselftest Makefile, without the lines
# "TEST_GEN_PROGS += prog" (or TEST_GEN_PROGS_EXTENDED) whose prog.c is
# not in the tree yet, so that each commit that adds a test program adds
# its line. A paragraph (lines between blank lines) that loses all such
# lines goes whole, with its comment.
install_selftest_makefile() {
	local f=$1 dst=$WORK/$1
	awk -v dir="$(dirname "$dst")" '
		BEGIN { RS = ""; sep = "" }
		{
			n = split($0, line, "\n"); progs = 0; kept = 0; out = ""
			for (i = 1; i <= n; i++) {
				if (line[i] ~ /^TEST_GEN_PROGS(_EXTENDED)? \+= [a-z0-9_]+$/) {
					progs++
					split(line[i], w, " ")
					if (system("test -f \"" dir "/" w[3] ".c\"") != 0)
						continue
					kept++
				}
				out = out line[i] "\n"
			}
			if (progs && !kept)
				next
			printf "%s%s", sep, out
			sep = "\n"
		}' "$TOP/kernel/$f" > "$dst"
}

# Headers with sections get those of the files now in the tree.
complete_header_sections() {
	local f
	for f in "${!CLAIMED_FILE[@]}"; do
		case "$f" in *.h) ;; *) continue ;; esac
		[ -f "$WORK/$f" ] && install_header_sections "$f"
	done
	return 0
}

# kselftest Makefiles list the programs now in the tree.
complete_selftest_makefiles() {
	local f
	for f in "${!CLAIMED_FILE[@]}"; do
		case "$f" in tools/testing/selftests/*/Makefile) ;; *) continue ;; esac
		[ -f "$WORK/$f" ] && install_selftest_makefile "$f"
	done
	return 0
}

# Files whose KUnit block waits for kernel/$1 get it now.
complete_kunit_blocks() {
	local test=$1 f
	for f in "${!CLAIMED_FILE[@]}"; do
		case "$f" in *.c) ;; *) continue ;; esac
		[ -f "$WORK/$f" ] || continue
		[ "$(dirname "$f")/$(kunit_include "$TOP/kernel/$f")" = "$test" ] &&
			cp "$TOP/kernel/$f" "$WORK/$f"
	done
	return 0
}

commit_message() {
	local def=$1 first out=$MSG_DIR/${1##*/}.msg
	def_message "$def" > "$out"
	if ! grep -q '[^[:space:]]' "$out"; then
		first=$(def_patches "$def" | head -n1)
		[ -n "$first" ] || die "${def##*/}: no message and no patch"
		patch_preamble "$first" > "$out"
	fi
	echo "$out"
}

make_commit() {
	local def=$1 f p files patches
	files=$(def_kernel_files "$def")
	patches=$(def_patches "$def")
	if [ -z "$files$patches" ]; then
		log "${def##*/}: nothing to commit yet, skipped"
		return
	fi
	for p in $patches; do
		apply_patch "$p"
	done
	for f in $files; do
		install_kernel_file "$f"
	done
	for f in $files; do
		case "$f" in */tests/*.c) complete_kunit_blocks "$f" ;; esac
	done
	complete_header_sections
	complete_selftest_makefiles
	series_git -C "$WORK" add -A -f .
	series_git -C "$WORK" commit -q --no-verify --cleanup=whitespace -s \
		-F "$(commit_message "$def")"
	log "$(series_git -C "$WORK" log -1 --format=%s)"
}

# The last commit must hold exactly what prepare-tree.sh lays on the base.
check_final_tree() {
	local want got p
	series_git -C "$WORK" checkout -q -f --detach "$SERIES_BASE_TAG"
	(cd "$TOP/kernel" && find . -type f | cpio -pdm --quiet "$WORK")
	for p in $(series_patch_names); do
		apply_patch "$p"
	done
	series_git -C "$WORK" add -A -f .
	want=$(series_git -C "$WORK" write-tree)
	got=$(series_git -C "$WORK" rev-parse "$SERIES_BRANCH^{tree}")
	series_git -C "$WORK" checkout -q -f "$SERIES_BRANCH"
	if [ "$want" != "$got" ]; then
		series_git -C "$WORK" diff --stat "$got" "$want" >&2
		die "the series does not end in the tree prepare-tree.sh builds"
	fi
}

export_series() {
	local prefix=$1 reroll=$2
	local -a args=(--cover-letter --cover-from-description=subject
		       --base="$SERIES_BASE_TAG" --subject-prefix="$prefix"
		       -o "$SERIES_DIR")
	[ -z "$reroll" ] || args+=(-v "$reroll")
	series_git -C "$WORK" config "branch.$SERIES_BRANCH.description" \
		"$(cat "$SERIES_DEFS/cover-letter.txt")"
	rm -rf "$SERIES_DIR"
	series_git -C "$WORK" format-patch -q "${args[@]}" "$SERIES_BASE_TAG..$SERIES_BRANCH"
}

# The F: patterns of the MAINTAINERS entries whose list is amd-gfx, one
# a line.
amd_gfx_patterns() {
	awk 'BEGIN { RS = "" }
	     /\nL:\tamd-gfx@lists\.freedesktop\.org\n/ {
		n = split($0, line, "\n")
		for (i = 1; i <= n; i++)
			if (line[i] ~ /^F:\t/)
				print substr(line[i], 4)
	     }' "$WORK/MAINTAINERS"
}

# Every file the series adds is in an entry reviewed on amd-gfx (AMD KFD,
# AMDGPU): checkpatch's question about MAINTAINERS on each patch that
# adds files (FILE_PATH_CHANGES, which series-check ignores) is answered
# here, once, for the series.
check_maintainers() {
	local f pat bad=0 hit
	local -a pats
	mapfile -t pats < <(amd_gfx_patterns)
	while read -r f; do
		hit=0
		for pat in "${pats[@]}"; do
			case "$pat" in
			*/) [[ $f == "$pat"* ]] && hit=1 ;;
			# shellcheck disable=SC2053 # the glob is the point
			*) [[ $f == $pat ]] && hit=1 ;;
			esac
			[ "$hit" -eq 0 ] || break
		done
		[ "$hit" -eq 1 ] && continue
		log "$f: no MAINTAINERS entry with amd-gfx covers it"
		bad=1
	done < <(series_git -C "$WORK" diff --name-only --diff-filter=A \
			"$SERIES_BASE_TAG" "$SERIES_BRANCH")
	[ "$bad" -eq 0 ] || die "add F: lines to the AMD KFD entry of MAINTAINERS"
}

# The exported files, not only the commits, must apply with git am.
check_git_am() {
	local got want
	series_git -C "$WORK" checkout -q -f -B series-am "$SERIES_BASE_TAG"
	if ! series_git -C "$WORK" am -q --whitespace=error-all \
		$(ls "$SERIES_DIR"/*.patch | grep -v '0000-cover-letter\.patch$') \
		> "$SERIES_WORK/am.log" 2>&1; then
		cat "$SERIES_WORK/am.log" >&2
		series_git -C "$WORK" am --abort > /dev/null 2>&1 || true
		series_git -C "$WORK" checkout -q -f "$SERIES_BRANCH"
		die "git am of build/series failed"
	fi
	got=$(series_git -C "$WORK" rev-parse "HEAD^{tree}")
	want=$(series_git -C "$WORK" rev-parse "$SERIES_BRANCH^{tree}")
	series_git -C "$WORK" checkout -q -f "$SERIES_BRANCH"
	series_git -C "$WORK" branch -q -D series-am
	[ "$got" = "$want" ] || die "git am of build/series gives another tree"
}

main() {
	local prefix=PATCH reroll="" def
	while [ $# -gt 0 ]; do
		case "$1" in
		-h|--help) usage; exit 0 ;;
		-v) reroll=${2:?-v needs a number}; shift ;;
		--rfc) prefix="RFC PATCH" ;;
		*) usage >&2; exit 2 ;;
		esac
		shift
	done
	mkdir -p "$BUILD_DIR"
	exec 8> "$BUILD_DIR/.series-lock"
	flock 8
	# A failed run must not leave an old series behind
	rm -rf "$SERIES_DIR"
	check_claims
	series_base_repo "$WORK"
	rm -rf "$MSG_DIR"
	mkdir -p "$MSG_DIR"
	for def in "$SERIES_DEFS"/*.commit; do
		make_commit "$def"
	done
	check_final_tree
	check_maintainers
	export_series "$prefix" "$reroll"
	check_git_am
	log "$(ls "$SERIES_DIR"/*.patch | grep -vc 'cover-letter') patches and a cover letter in ${SERIES_DIR#"$TOP"/}/," \
		"base-commit $(series_git -C "$WORK" rev-parse "$SERIES_BASE_TAG")"
}

main "$@"
