#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Move the pins to another Debian 12 point release of 6.12: check the
# candidate, then rewrite the pin block of scripts/common.sh. The change
# it leaves is one reviewed commit of pins, not a hunt.
set -euo pipefail
. "$(dirname "$0")/common.sh"

usage() {
	cat <<'TXT'
Usage: scripts/repin.sh [--apply-only] [--check] VERSION
       scripts/repin.sh --list

VERSION is a version of Debian's linux-source-6.12 package (for example
6.12.119-1~deb12u1); --list prints those the archive has, newest last.

1. downloads the candidate's linux-source-6.12 and its stock kernel's
   image, headers and kbuild packages, and takes their checksums;
2. applies kernel/ and backport/6.12/series to the candidate's tree with no
   fuzz (patch -F0), in a scratch directory, naming any patch that needs
   fuzz or does not apply;
3. writes the candidate's pins into scripts/common.sh (the module's
   revision goes back to 1), prepares build/linux from the candidate and
   regenerates the fuzzer's seed images (fuzz/corpus/), which carry the
   kernel release the VM writes into its images;
4. builds the module by DKMS for the candidate's stock kernel, as the
   distro lane does (scripts/distro.sh --module-only: the build must be
   free of warnings and unresolved symbols, and the kernel hooks check
   must pass);
5. with --check, runs make check.

A failure in 2 leaves the pins as they were; one in 4 or 5 puts them
back. --apply-only stops after 2. Review what changed with git diff,
then commit the pins with the figures this script printed.
TXT
}

# The candidate's stock kernel packages, as scripts/distro.sh takes them.
candidate_packages() {
	local up=$1

	echo "linux-source-6.12"
	echo "linux-image-$up+deb12-amd64-unsigned"
	echo "linux-headers-$up+deb12-amd64"
	echo "linux-headers-$up+deb12-common"
	echo "linux-kbuild-$up+deb12"
}

# fetch_candidate VERSION: the packages in the download cache, and
# "PACKAGE SHA256" per line on stdout.
fetch_candidate() {
	local ver=$1 up=${1%%-*} dir=$CACHE_DIR/dl pkg deb

	mkdir -p "$dir"
	in_archive linux-source-6.12 "$ver" || {
		log "the archive has no linux-source-6.12 $ver; it has:"
		versions_in_archive linux-source-6.12 | sed 's/^/  /' >&2
		exit 1
	}
	for pkg in $(candidate_packages "$up"); do
		deb=$(ls "$dir/${pkg}_${ver}_"*.deb 2>/dev/null | head -n1 || true)
		if [ -z "$deb" ]; then
			(cd "$dir" && apt-get download -q "$pkg=$ver" >&2) ||
				die "cannot download $pkg $ver"
			deb=$(ls "$dir/${pkg}_${ver}_"*.deb | head -n1)
		fi
		echo "$pkg $(sha256sum "$deb" | cut -d' ' -f1)"
	done
}

# check_apply VERSION: the overlay on the candidate's tree, with no fuzz.
# Only the files the patches touch are unpacked.
check_apply() {
	local deb=$1 tmp p files rc=0

	tmp=$(mktemp -d)
	files=$(while read -r p; do
			case "$p" in ''|'#'*) continue ;; esac
			sed -n 's|^--- a/\([^[:space:]]*\).*|linux-source-6.12/\1|p' \
				"$BACKPORT_612/$p"
		done < "$BACKPORT_612/series" | sort -u)
	dpkg-deb --fsys-tarfile "$deb" |
		tar -x -C "$tmp" --wildcards './usr/src/linux-source-*.tar.xz'
	mkdir -p "$tmp/tree"
	# shellcheck disable=SC2086 # one name per file
	# A file our own kernel/ adds is not in the tarball: patch names it
	# if it is missing after the copy below.
	tar -x -C "$tmp/tree" -f "$tmp"/usr/src/linux-source-*.tar.xz \
		--strip-components=1 $files 2> /dev/null || true
	cp -r "$TOP/kernel/." "$tmp/tree/"
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		if ! patch -d "$tmp/tree" -p1 -F0 --no-backup-if-mismatch -r - \
		     < "$BACKPORT_612/$p" > "$tmp/out" 2>&1; then
			sed 's/^/  /' "$tmp/out" >&2
			log "FAIL: $p does not apply without fuzz"
			rc=1
			continue
		fi
		if grep -q 'offset' "$tmp/out"; then
			log "$p: applies, with offsets: $(grep -c offset "$tmp/out") hunks"
		fi
	done < "$BACKPORT_612/series"
	rm -rf "$tmp"
	return "$rc"
}

# write_pins VERSION SUMS...: the pin block of common.sh for VERSION.
write_pins() {
	local ver=$1 up=${1%%-*} f=$TOP/scripts/common.sh
	shift
	local -A sum=()
	local line

	for line in "$@"; do
		sum[${line%% *}]=${line#* }
	done
	sed -i \
		-e "s/^PIN_UPSTREAM=.*/PIN_UPSTREAM=$up/" \
		-e "s/^PIN_PKG_VERSION=.*/PIN_PKG_VERSION=$ver/" \
		-e "s/^PIN_SHA256_SOURCE=.*/PIN_SHA256_SOURCE=${sum[linux-source-6.12]}/" \
		-e "s/^PIN_SHA256_IMAGE=.*/PIN_SHA256_IMAGE=${sum[linux-image-$up+deb12-amd64-unsigned]}/" \
		-e "s/^PIN_SHA256_HEADERS=.*/PIN_SHA256_HEADERS=${sum[linux-headers-$up+deb12-amd64]}/" \
		-e "s/^PIN_SHA256_HEADERS_COMMON=.*/PIN_SHA256_HEADERS_COMMON=${sum[linux-headers-$up+deb12-common]}/" \
		-e "s/^PIN_SHA256_KBUILD=.*/PIN_SHA256_KBUILD=${sum[linux-kbuild-$up+deb12]}/" \
		-e "s/^PIN_MODULE_REV=.*/PIN_MODULE_REV=1/" \
		"$f"
}

main() {
	local apply_only=0 check=0 ver old start
	local -a sums

	while [ $# -gt 0 ]; do
		case "$1" in
		-h|--help) usage; exit 0 ;;
		--list) versions_in_archive linux-source-6.12; exit 0 ;;
		--apply-only) apply_only=1 ;;
		--check) check=1 ;;
		-*) usage >&2; exit 2 ;;
		*) ver=$1 ;;
		esac
		shift
	done
	[ -n "${ver:-}" ] || { usage >&2; exit 2; }

	start=$SECONDS
	mapfile -t sums < <(fetch_candidate "$ver")
	[ "${#sums[@]}" -eq 5 ] || die "could not fetch the candidate's packages"
	printf '%s\n' "${sums[@]}" | sed 's/^/sha256 /' >&2
	check_apply "$(ls "$CACHE_DIR/dl/linux-source-6.12_${ver}_"*.deb)" ||
		die "the series does not apply to $ver without fuzz; refresh the patches named above"
	log "the series applies to $ver without fuzz ($((SECONDS - start)) s)"
	[ "$apply_only" -eq 0 ] || exit 0

	old=$(mktemp)
	cp "$TOP/scripts/common.sh" "$old"
	trap 'cp "$old" "$TOP/scripts/common.sh"; log "pins put back"' ERR INT TERM
	write_pins "$ver" "${sums[@]}"
	"$TOP/scripts/prepare-tree.sh"
	make -s -C "$TOP/fuzz" corpus
	log "pins written for $ver; building the module for its stock kernel"
	"$TOP/scripts/distro.sh" --module-only
	if [ "$check" -eq 1 ]; then
		make -C "$TOP" check
	fi
	trap - ERR INT TERM
	rm -f "$old"
	log "done in $((SECONDS - start)) s; review and commit: git diff scripts/common.sh fuzz/corpus"
}

main "$@"
