#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Check build/series as a maintainer and the kernel test robot would: it
# applies with git am to an independently unpacked 7.3 tree, every patch
# builds, checkpatch --strict is clean, our code is warning-free with W=1,
# sparse and clang, and kernel-doc and the documentation build are clean.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/series-common.sh"

usage() {
	cat <<'TXT'
Usage: scripts/series-check.sh [--no-clang] [--no-docs]

Checks the series in build/series ("make series" writes it) in
build/series-check/: that every file a patch touches is one the amdgpu
tree takes (drivers/gpu/drm/amd, the amdkfd uAPI header, Documentation,
MAINTAINERS, tools/testing/selftests: no core-kernel export), then git am
patch by patch onto its own unpack of the pinned tree, with the test config (tinyconfig + config/*.config), and an
incremental build after each patch of drivers/gpu/drm/amd/amdgpu/ and the
other directories the patch touches (selftests, "make headers" for uAPI
changes), with every kfd_criu_* symbol our objects use defined by them,
then bzImage. Then: checkpatch --strict on every patch, W=1
and sparse (C=1) on the objects the series adds or changes, clang
(LLVM=-19, clang 19) on the same objects in build/series-check/clang,
scripts/kernel-doc -Wall on every file the series adds or changes, and
"make htmldocs" of Documentation/gpu/amdgpu (docutils alone when Sphinx
is missing).

Prints one PASS/FAIL line per check with its time; logs are in
build/series-check/logs/. Exits non-zero if any check failed. Warnings
count when they are in a file the series adds, or on a line it adds to an
upstream file; kernel-doc warnings of an upstream file count when the
unpatched file does not have them.
--no-clang  skip the clang build
--no-docs   skip the documentation build
TXT
}

CHECK_DIR=$BUILD_DIR/series-check
TREE=$CHECK_DIR/linux
LOGS=$CHECK_DIR/logs
CLANG_OUT=$CHECK_DIR/clang
# The 7.3 test kernel's config (build-kernel.sh --base 7.3), so that
# ccache shares objects with build/linux-7.3
mapfile -t FRAGMENTS < <(config_fragments_of 7.3)
mapfile -t GONE_SYMBOLS < <(gone_symbols_of 7.3)
FAILED=0
declare -a RESULTS=()

# 7.3 builds with clang 17 or later; Debian 12's clang is 14, and it has
# 19 beside it (scripts/install-deps.sh).
SERIES_CLANG=19

# The tree must look like build/linux-7.3 to ccache.
export CCACHE_BASEDIR=$TREE

kmake() {
	nice make -C "$TREE" -j2 CC="ccache gcc" "$@"
}

# Runs "$2..." as check $1, logging to logs/$1.log; the command's last
# output line is the detail shown on FAIL.
run_check() {
	local name=$1 start=$SECONDS rc=0 detail
	shift
	"$@" > "$LOGS/$name.log" 2>&1 || rc=$?
	detail=$(tail -n 1 "$LOGS/$name.log")
	if [ "$rc" -eq 0 ]; then
		RESULTS+=("PASS $name ($((SECONDS - start)) s)${detail:+: $detail}")
	else
		RESULTS+=("FAIL $name ($((SECONDS - start)) s): $detail (logs/$name.log)")
		FAILED=1
	fi
	echo "${RESULTS[-1]}"
	return "$rc"
}

series_patches() {
	ls "$SERIES_DIR"/*.patch | grep -v '0000-cover-letter\.patch$'
}

series_base_commit() {
	sed -n 's/^base-commit: //p' "$SERIES_DIR"/*0000-cover-letter.patch
}

check_base() {
	local want got
	want=$(series_base_commit)
	series_base_repo "$TREE" keep
	got=$(series_git -C "$TREE" rev-parse HEAD)
	echo "independent unpack: $got"
	[ "$want" = "$got" ] || { echo "series base-commit is $want"; return 1; }
	echo "base-commit $got"
}

configure() {
	(cd "$TREE" &&
	 make -s tinyconfig > /dev/null &&
	 scripts/kconfig/merge_config.sh -m -O . .config \
		"${FRAGMENTS[@]}" > /dev/null &&
	 make -s olddefconfig > /dev/null)
}

# After the last patch every symbol config/ asks for must exist, but
# those 7.3 no longer has.
verify_config() {
	local frag line bad=0
	for frag in "${FRAGMENTS[@]}"; do
		while IFS= read -r line; do
			case "$line" in
			CONFIG_*=*)
				[[ " ${GONE_SYMBOLS[*]} " != *" ${line%%=*} "* ]] || continue
				grep -qxF "$line" "$TREE/.config" ||
				{ echo "config: $line did not take effect"; bad=1; } ;;
			esac
		done < "$frag"
	done
	return "$bad"
}

# Files patch $1 touches.
patch_paths() {
	sed -n 's|^diff --git a/\([^ ]*\) b/.*|\1|p' "$1"
}

# What the series may touch: it goes through the amdgpu tree and builds
# as a module against a stock kernel, so nothing of the core kernel (no
# export from kernel/, nothing in mm/ or include/linux).
SCOPE_RE='^(drivers/gpu/drm/amd/|include/uapi/linux/kfd_ioctl\.h$|Documentation/|MAINTAINERS$|tools/testing/selftests/)'

check_scope() {
	local p f n=0 bad=0
	for p in $(series_patches); do
		for f in $(patch_paths "$p"); do
			n=$((n + 1))
			grep -Eq "$SCOPE_RE" <<< "$f" && continue
			echo "$(basename "$p"): $f is outside what the amdgpu tree takes"
			bad=1
		done
	done
	[ "$bad" -eq 0 ] || { echo "the series touches files outside its scope"; return 1; }
	echo "$n files, all under drivers/gpu/drm/amd, the kfd uAPI header, Documentation, MAINTAINERS, selftests"
}

# The KFD ioctl version is upstream's to set (series_version_claims).
check_version() {
	local claims

	# shellcheck disable=SC2046 # one word per patch path
	claims=$(series_version_claims $(series_patches))
	if [ -n "$claims" ]; then
		echo "$claims"
		echo "the series changes the KFD ioctl version, which upstream sets at merge"
		return 1
	fi
	echo "KFD_IOCTL_MAJOR_VERSION and KFD_IOCTL_MINOR_VERSION left as the base has them"
}

# The make goals that build what patch $1 touches.
patch_build_dirs() {
	local f
	{
		echo drivers/gpu/drm/amd/amdgpu/
		for f in $(patch_paths "$1"); do
			case "$f" in
			include/uapi/*) echo headers ;;
			drivers/gpu/drm/amd/*|include/*|tools/*|Documentation/*|MAINTAINERS) ;;
			*.c|*/Makefile|*/Kbuild) echo "$(dirname "$f")/" ;;
			esac
		done
	} | sort -u
}

build_selftests() {
	local dir
	for dir in $(patch_paths "$1" | sed -n 's|^\(tools/testing/selftests/.*\)/[^/]*$|\1|p' | sort -u); do
		[ -f "$TREE/$dir/Makefile" ] || continue
		case "$dir" in tools/testing/selftests) continue ;; esac
		kmake -s headers
		mkdir -p "$CHECK_DIR/selftests/$dir"
		nice make -C "$TREE/$dir" OUTPUT="$CHECK_DIR/selftests/$dir" \
			KHDR_INCLUDES="-isystem $TREE/usr/include" USERCFLAGS=-Werror
	done
}

# git am one patch, reconfigure when it changed Kconfig, build.
apply_and_build() {
	local patch=$1 out
	series_git -C "$TREE" am -q --whitespace=error-all "$patch" || {
		series_git -C "$TREE" am --abort || true
		echo "git am failed"
		return 1
	}
	if patch_paths "$patch" | grep -q 'Kconfig'; then
		configure
	fi
	out=$LOGS/build-$(basename "$patch" .patch).out
	if ! kmake -s $(patch_build_dirs "$patch") > "$out" 2>&1 ||
	   ! build_selftests "$patch" >> "$out" 2>&1; then
		tail -n 30 "$out"
		echo "build failed"
		return 1
	fi
	check_our_symbols || return 1
	record_our_lines
	print_our_warnings "$out" || { echo "warnings in the series' code"; return 1; }
	echo "built $(patch_build_dirs "$patch" | tr '\n' ' ')"
}

# Building a directory compiles without linking, so a patch whose code
# calls a function of a later patch would pass until bzImage. Every
# kfd_criu_* symbol our objects use must be defined in amdkfd by then.
check_our_symbols() {
	local dir=$TREE/drivers/gpu/drm/amd/amdkfd o missing
	local -a objs=() others=()
	for o in $(sed -n 's|.*(AMDKFD_PATH)/\(kfd_criu[a-z0-9_]*\.o\).*|\1|p' "$dir/Makefile"); do
		[ -f "$dir/$o" ] && objs+=("$dir/$o")
	done
	[ "${#objs[@]}" -gt 0 ] || return 0
	# Upstream objects define some (the legacy BO restore a patch shares)
	for o in "$dir"/*.o; do
		case "${o##*/}" in kfd_criu*) ;; *) others+=("$o") ;; esac
	done
	missing=$(comm -23 \
		<(nm -u "${objs[@]}" | awk '$2 ~ /^kfd_criu_/ { print $2 }' | sort -u) \
		<(nm --defined-only "${objs[@]}" "${others[@]}" 2> /dev/null |
		  awk 'NF == 3 { print $3 }' | sort -u))
	[ -z "$missing" ] && return 0
	echo "undefined in the series so far: $missing"
	return 1
}

build_bzimage() {
	local out=$LOGS/bzImage.out
	verify_config
	kmake -s bzImage > "$out" 2>&1 || { tail -n 30 "$out"; echo "build failed"; return 1; }
	print_our_warnings "$out" || { echo "warnings in the series' code"; return 1; }
	echo "$(du -h "$TREE/arch/x86/boot/bzImage" | cut -f1) bzImage"
}

# What the series adds: "A path" and "M path" lines, and for M the
# added line ranges, in $CHECK_DIR/ours.
record_our_lines() {
	local status path
	series_git -C "$TREE" diff --name-status "$SERIES_BASE_TAG" HEAD |
	while read -r status path; do
		case "$status" in
		A) echo "A $path" ;;
		M) series_git -C "$TREE" diff -U0 "$SERIES_BASE_TAG" HEAD -- "$path" |
		   sed -n 's/^@@ -[0-9,]* +\([0-9]*\)\(,\([0-9]*\)\)\? @@.*/\1 \3/p' |
		   while read -r start count; do
			echo "M $path $start ${count:-1}"
		   done ;;
		esac
	done > "$CHECK_DIR/ours"
}

# Prints compiler, sparse and kernel-doc diagnostics of log $1 that are in
# our files or lines; fails when there is one. Paths may be absolute or
# relative to another directory: they match by their tree-relative tail.
print_our_warnings() {
	[ -f "$CHECK_DIR/ours" ] || return 0
	python3 - "$CHECK_DIR/ours" "$1" <<'PY'
import os, re, sys
added, ranges = set(), {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == 'A':
        added.add(f[1])
    else:
        ranges.setdefault(f[1], []).append((int(f[2]), int(f[2]) + int(f[3])))
diag = re.compile(r'^(\S+?):(\d+):(?:\d+:)? (warning|error|WARNING|ERROR)[:!]? ?(.*)$')
def ours(path, line):
    # amdkfd objects build from drivers/gpu/drm/amd/amdgpu/../amdkfd/
    path = os.path.normpath(path)
    for p in added:
        if path == p or path.endswith('/' + p):
            return True
    for p, rs in ranges.items():
        if path == p or path.endswith('/' + p):
            return any(a <= line < b for a, b in rs)
    return False
def names_ours(text):
    return any(re.search(r'(^|[/\s\'])' + re.escape(p) + r'\b', text) for p in added)
bad = 0
for text in open(sys.argv[2], errors='replace'):
    text = text.rstrip('\n')
    m = diag.match(text)
    if m:
        hit = ours(m.group(1), int(m.group(2)))
    else:
        # Sphinx reports a failed kernel-doc directive without a location
        hit = re.search(r'warning|error', text, re.I) and names_ours(text)
    if hit:
        print(text)
        bad += 1
sys.exit(1 if bad else 0)
PY
}

# The .c files the series adds or changes that this config compiles, as
# tree paths of their objects.
our_objects() {
	awk '$1 == "A" || $1 == "M" { print $2 }' "$CHECK_DIR/ours" | sort -u |
	while read -r f; do
		case "$f" in
		tools/*|*/tests/*) ;;
		*.c) [ -f "$TREE/${f%.c}.o" ] && echo "${f%.c}.o" ;;
		esac
	done
	return 0
}

# Make goals that rebuild the objects in "$@".
object_dirs() {
	local o
	for o in "$@"; do
		case "$o" in
		drivers/gpu/drm/amd/*) echo drivers/gpu/drm/amd/amdgpu/ ;;
		*) echo "$(dirname "$o")/" ;;
		esac
	done | sort -u
}

# Rebuilds only our objects with extra make arguments: KBUILD_NOCMDDEP
# keeps kbuild from rebuilding everything else for the changed flags.
rebuild_ours() {
	local -a objs
	mapfile -t objs < <(our_objects)
	[ "${#objs[@]}" -gt 0 ] || { echo "no objects of ours in this config"; return 1; }
	echo "objects: ${objs[*]}"
	(cd "$TREE" && rm -f "${objs[@]}")
	kmake KBUILD_NOCMDDEP=1 "$@" $(object_dirs "${objs[@]}")
}

check_w1() {
	local log=$LOGS/w1.out
	rebuild_ours -s W=1 > "$log" 2>&1 || { cat "$log"; return 1; }
	print_our_warnings "$log" || { echo "W=1 warnings in the series' code"; return 1; }
	echo "no W=1 warnings in $(our_objects | wc -l) objects"
}

# Debian 12's sparse (0.6.4) sizes struct amd_sriov_msg_vf2pf_info
# differently from gcc, fails the _Static_assert of amdgv_sriovmsg.h that
# every amdgpu file includes, and after an error sparse prints no more
# warnings: it would check none of our code. -U__linux__ removes only
# those asserts (their guard; no other header amdkfd includes tests it).
# Sparse still stopping at an error in a file the series adds fails the
# check; one in an upstream file the series changes is reported.
SPARSE_FLAGS=-U__linux__

check_sparse() {
	local log=$LOGS/sparse.out
	command -v sparse > /dev/null || { echo "sparse is not installed"; return 1; }
	# -j1 and no -s: each file's diagnostics follow its CHECK line
	rebuild_ours -j1 C=1 CF="$SPARSE_FLAGS" > "$log" 2>&1 || { cat "$log"; return 1; }
	print_our_warnings "$log" || { echo "sparse warnings in the series' code"; return 1; }
	sparse_stopped "$log" || { echo "sparse stopped at an error in the series' files"; return 1; }
	echo "sparse: nothing in the series' code"
}

# Which checked files had a sparse error, after which sparse is silent.
sparse_stopped() {
	python3 - "$CHECK_DIR/ours" "$1" <<'PY'
import os, re, sys
added = {l.split()[1] for l in open(sys.argv[1]) if l.startswith('A ')}
current, bad = None, 0
for text in open(sys.argv[2], errors='replace'):
    m = re.match(r'\s+CHECK\s+(\S+)', text)
    if m:
        current = os.path.normpath(m.group(1))
    elif current and re.search(r': error: ', text):
        print('%s: sparse stopped at: %s' % (current, text.strip()))
        bad += current in added
        current = None
sys.exit(1 if bad else 0)
PY
}

# clang builds out of tree, from build/series-work (clean, same tree):
# the objects the series adds or changes, as W=1 and sparse check them.
# (All of amdgpu/ took 6 minutes with a warm ccache and far longer cold;
# its upstream files are clang-clean upstream.)
check_clang() {
	local src=$SERIES_WORK/linux log=$LOGS/clang.out
	local -a objs
	local -a cmake=(nice make -C "$src" O="$CLANG_OUT" LLVM="-$SERIES_CLANG" -j2
			CC="ccache clang-$SERIES_CLANG")
	command -v "clang-$SERIES_CLANG" > /dev/null ||
		{ echo "clang-$SERIES_CLANG is not installed"; return 1; }
	if [ "$(series_git -C "$src" rev-parse "HEAD^{tree}" 2>/dev/null)" != \
	     "$(series_git -C "$TREE" rev-parse "HEAD^{tree}")" ]; then
		echo "build/series-work is not at the series; run make series"
		return 1
	fi
	mkdir -p "$CLANG_OUT"
	CCACHE_BASEDIR=$BUILD_DIR "${cmake[@]}" -s tinyconfig > /dev/null
	(cd "$CLANG_OUT" && "$src/scripts/kconfig/merge_config.sh" -m -O . .config \
		"${FRAGMENTS[@]}") > /dev/null
	CCACHE_BASEDIR=$BUILD_DIR "${cmake[@]}" -s olddefconfig > /dev/null
	mapfile -t objs < <(our_objects)
	[ "${#objs[@]}" -gt 0 ] || { echo "no objects of ours in this config"; return 1; }
	(cd "$CLANG_OUT" && rm -f "${objs[@]}")
	# amdkfd's objects build with amdgpu's flags, from amdgpu's Makefile
	CCACHE_BASEDIR=$BUILD_DIR "${cmake[@]}" \
		$(printf '%s\n' "${objs[@]}" | sed 's|^drivers/gpu/drm/amd/amdkfd/|drivers/gpu/drm/amd/amdgpu/../amdkfd/|') \
		> "$log" 2>&1 || { tail -n 30 "$log"; echo "clang build failed"; return 1; }
	print_our_warnings "$log" || { echo "clang warnings in the series' code"; return 1; }
	echo "the series' ${#objs[@]} objects build with clang $("clang-$SERIES_CLANG" -dumpversion)"
}

# A diagnostic without its line numbers, which the series' own lines shift
# in an upstream file ("file:372: ... on line 372 ...", or since 7.0
# "Warning: file:372 ...").
kernel_doc_unnumbered() {
	sed -E 's/:[0-9]+:? /: /; s/ on line [0-9]+/ on line N/'
}

# kernel-doc diagnostics of the files the series changes, before it.
kernel_doc_baseline() {
	local p f
	: > "$CHECK_DIR/kernel-doc.base"
	for p in $(series_patches); do
		for f in $(patch_paths "$p"); do
			case "$f" in *.[ch]) ;; *) continue ;; esac
			[ -f "$TREE/$f" ] || continue
			(cd "$TREE" && scripts/kernel-doc -none -Wall "$f" 2>&1) |
				kernel_doc_unnumbered >> "$CHECK_DIR/kernel-doc.base"
		done
	done
}

check_kernel_doc() {
	local f out bad=0 n=0
	for f in $(awk '{ print $2 }' "$CHECK_DIR/ours" | sort -u); do
		case "$f" in tools/*) continue ;; *.[ch]) ;; *) continue ;; esac
		n=$((n + 1))
		out=$(cd "$TREE" && scripts/kernel-doc -none -Wall "$f" 2>&1) || true
		[ -n "$out" ] || continue
		while IFS= read -r line; do
			grep -qxF "$(echo "$line" | kernel_doc_unnumbered)" \
				"$CHECK_DIR/kernel-doc.base" && continue
			echo "$line"
			bad=1
		done <<< "$out"
	done
	[ "$bad" -eq 0 ] || { echo "kernel-doc warnings in the series' files"; return 1; }
	echo "kernel-doc: no new warnings in $n files"
}

check_checkpatch() {
	local p out counts e=0 w=0 c=0 n=0
	PATH=$(series_checkpatch_path) || { echo "python3-ply missing"; return 1; }
	for p in $(series_patches); do
		n=$((n + 1))
		out=$(cd "$TREE" && scripts/checkpatch.pl "${SERIES_CHECKPATCH_ARGS[@]}" "$p" 2>&1 |
		      series_checkpatch_filter) || true
		counts=$(echo "$out" | series_checkpatch_counts)
		set -- $counts
		e=$((e + $1)); w=$((w + $2)); c=$((c + $3))
		if [ "$counts" != "0 0 0" ]; then
			echo "$(basename "$p"):"
			echo "$out"
		fi
	done
	echo "checkpatch --strict, $n patches: $e errors, $w warnings, $c checks"
	[ "$((e + w + c))" -eq 0 ]
}

# The .rst files the series adds, checked with Sphinx when it is there.
# In the check tree: htmldocs writes generated files into the source tree.
check_docs() {
	local log=$LOGS/docs.out
	if command -v sphinx-build > /dev/null; then
		# -E: a fresh build, or warnings of unchanged files are not repeated
		nice make -C "$TREE" SPHINXDIRS=gpu/amdgpu SPHINXOPTS=-E htmldocs \
			> "$log" 2>&1 || { tail -n 20 "$log"; echo "htmldocs failed"; return 1; }
		print_our_warnings "$log" || { echo "htmldocs warnings from the series' files"; return 1; }
		grep -q 'amdkfd-criu' "$TREE/Documentation/output/gpu/amdgpu/index.html" ||
			{ echo "the index does not link the new document"; return 1; }
		echo "htmldocs of gpu/amdgpu: no warnings from the series' files"
		return
	fi
	check_docs_docutils
}

# Without Sphinx: docutils parses the .rst (kernel-doc directives
# replaced by what scripts/kernel-doc makes of them).
check_docs_docutils() {
	local f
	python3 -c 'import docutils' 2> /dev/null ||
		{ echo "neither Sphinx nor docutils: apt-get install python3-docutils"; return 1; }
	for f in $(awk '$1 == "A" && $2 ~ /\.rst$/ { print $2 }' "$CHECK_DIR/ours"); do
		python3 - "$TREE" "$f" <<'PY' || return 1
import re, subprocess, sys
import docutils.core
from docutils import nodes
from docutils.parsers.rst import Directive, directives, roles

tree, rst = sys.argv[1], sys.argv[2]

class KernelDoc(Directive):
    required_arguments = 1
    option_spec = {'doc': directives.unchanged, 'identifiers': directives.unchanged,
                   'functions': directives.unchanged, 'internal': directives.flag,
                   'export': directives.flag}
    def run(self):
        args = ['scripts/kernel-doc', '-rst', '-Wall']
        if 'doc' in self.options:
            args += ['-function', self.options['doc']]
        for name in (self.options.get('identifiers') or '').split():
            args += ['-function', name]
        args.append(self.arguments[0])
        out = subprocess.run(args, cwd=tree, capture_output=True, text=True)
        if out.returncode or out.stderr or not out.stdout.strip():
            raise self.error('kernel-doc %s: %s' % (' '.join(args[3:]), out.stderr or 'no output'))
        self.state_machine.insert_input(out.stdout.splitlines(), self.arguments[0])
        return []

class AnyOption(dict):
    def __contains__(self, key):
        return True
    def __getitem__(self, key):
        return directives.unchanged

class SphinxOnly(Directive):
    """Sphinx's C domain and friends: keep the content, check its markup."""
    optional_arguments = 20
    final_argument_whitespace = True
    has_content = True
    option_spec = AnyOption()
    def run(self):
        node = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]

def sphinx_role(name, rawtext, text, lineno, inliner, options={}, content=[]):
    return [nodes.literal(rawtext, text)], []

directives.register_directive('kernel-doc', KernelDoc)
for name in ('c:macro', 'c:struct', 'c:enum', 'c:function', 'c:type',
             'c:union', 'c:var', 'toctree', 'only'):
    directives.register_directive(name, SphinxOnly)
for name in ('c:type', 'c:func', 'c:macro', 'c:member', 'c:data', 'ref',
             'doc', 'manpage', 'c:expr'):
    roles.register_local_role(name, sphinx_role)
text = open(f'{tree}/{rst}').read()
docutils.core.publish_doctree(text, source_path=rst, settings_overrides={
    'report_level': 2, 'halt_level': 5, 'warning_stream': sys.stdout,
    'syntax_highlight': 'none'})
PY
	done > "$LOGS/docs.out" 2>&1
	if grep -E '\((WARNING|ERROR|SEVERE)/' "$LOGS/docs.out"; then
		echo "docutils warnings"
		return 1
	fi
	echo "docutils: the new documents parse cleanly (Sphinx not installed)"
}

main() {
	local clang=1 docs=1 p start=$SECONDS
	while [ $# -gt 0 ]; do
		case "$1" in
		-h|--help) usage; exit 0 ;;
		--no-clang) clang=0 ;;
		--no-docs) docs=0 ;;
		*) usage >&2; exit 2 ;;
		esac
		shift
	done
	[ -f "$SERIES_DIR/0000-cover-letter.patch" ] || ls "$SERIES_DIR"/*0000-cover-letter.patch > /dev/null 2>&1 ||
		die "no series in ${SERIES_DIR#"$TOP"/}: run make series"
	mkdir -p "$CCACHE_DIR"
	exec 8> "$BUILD_DIR/.series-lock"
	flock 8
	rm -rf "$LOGS" "$CHECK_DIR/ours"
	mkdir -p "$LOGS"

	run_check scope check_scope || true
	run_check version check_version || true
	run_check base check_base || exit 1
	run_check config configure || exit 1
	kernel_doc_baseline
	for p in $(series_patches); do
		run_check "build-$(basename "$p" .patch)" apply_and_build "$p" || exit 1
	done
	record_our_lines
	run_check bzImage build_bzimage || true
	run_check checkpatch check_checkpatch || true
	run_check W=1 check_w1 || true
	run_check sparse check_sparse || true
	run_check kernel-doc check_kernel_doc || true
	[ "$clang" -eq 0 ] || run_check clang check_clang || true
	[ "$docs" -eq 0 ] || run_check docs check_docs || true

	echo "series-check: $(printf '%s\n' "${RESULTS[@]}" | grep -c '^PASS') passed," \
		"$(printf '%s\n' "${RESULTS[@]}" | grep -c '^FAIL') failed in $((SECONDS - start)) s"
	return "$FAILED"
}

main "$@"
