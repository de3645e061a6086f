#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the image codec fuzzer: replay the committed corpus and every crash
# ever found, fuzz for a bounded time, measure source coverage, and report
# as TAP plus one line "fuzz: N execs, N crashes, N corpus".
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$HERE/../build/fuzz
SECONDS_TO_FUZZ=60
MERGE=0
MAX_LEN=131072
# The seed corpus alone reaches 79% of the codec's lines, a 30 s run about
# 83%: less means the fuzzer lost inputs or stopped reaching code
MIN_LINE_COVERAGE=75

usage() {
	cat <<'TXT'
Usage: fuzz/run-fuzz.sh [--build DIR] [--seconds N] [--merge]

Needs the binaries of "make -C fuzz" in DIR (default build/fuzz).
Steps, each a TAP result:
  1. the seed generator's images equal the committed fuzz/corpus/ seeds
  2. every input of fuzz/corpus/ runs clean
  3. every input of fuzz/regressions/ (crashes found before) runs clean
  4. N seconds of fuzzing from fuzz/corpus/ find no crash; a crash is
     copied to fuzz/regressions/ so that it is replayed from then on
  5. source coverage of kfd_criu_image.c over the resulting corpus, at
     least 75% of its lines
--merge  afterwards, add the inputs that reach new coverage to fuzz/corpus/
libFuzzer's own output goes to DIR/fuzz.log.
TXT
}

N=0
FAILED=0

tap() {
	N=$((N + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $N - $2"
	else
		echo "not ok $N - $2"
		FAILED=1
	fi
}

# Lists the inputs of a directory, README files excluded.
inputs_of() {
	find "$1" -maxdepth 1 -type f ! -name 'README*' ! -name '.*' | sort
}

check_seeds() {
	local seeds=$BUILD/seeds f bad=0
	rm -rf "$seeds"
	mkdir -p "$seeds"
	"$BUILD/kfd_criu_seedgen" "$seeds" >> "$BUILD/fuzz.log" 2>&1 || bad=1
	for f in "$seeds"/*.img; do
		[ -f "$f" ] || { bad=1; continue; }
		cmp -s "$f" "$HERE/corpus/${f##*/}" || {
			echo "# ${f##*/} differs from fuzz/corpus/; run make -C fuzz corpus"
			bad=1
		}
	done
	tap $bad "the seed generator's images equal the committed seeds ($(ls "$seeds" | wc -l))"
}

# replay NAME DIR: run every input of DIR once.
replay() {
	local name=$1 dir=$2 rc=0 count
	local -a files
	mapfile -t files < <(inputs_of "$dir")
	count=${#files[@]}
	if [ "$count" -gt 0 ]; then
		"$BUILD/kfd_criu_fuzz" -max_len=$((MAX_LEN * 2)) "${files[@]}" \
			>> "$BUILD/fuzz.log" 2>&1 || rc=1
	fi
	[ $rc -eq 0 ] || tail -n 30 "$BUILD/fuzz.log" | sed 's/^/# /'
	tap $rc "replay of $name: $count inputs run clean"
}

# Runs the fuzzer; sets EXECS, CRASHES, CORPUS, COV.
fuzz_bounded() {
	local work=$BUILD/corpus art=$BUILD/artifacts log=$BUILD/fuzz-run.log f
	rm -rf "$work" "$art"
	mkdir -p "$work" "$art" "$HERE/regressions"
	cp "$HERE"/corpus/* "$work"/
	"$BUILD/kfd_criu_fuzz" -max_total_time="$SECONDS_TO_FUZZ" \
		-max_len=$MAX_LEN -timeout=25 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$art/" "$work" \
		> "$log" 2>&1 || true
	cat "$log" >> "$BUILD/fuzz.log"
	EXECS=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	COV=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1 || true)
	CRASHES=0
	for f in "$art"/*; do
		[ -f "$f" ] || continue
		CRASHES=$((CRASHES + 1))
		cp "$f" "$HERE/regressions/"
		echo "# crash saved as fuzz/regressions/${f##*/}"
	done
	[ "$CRASHES" -eq 0 ] || grep -m 1 -A 12 'ERROR\|abort\|differs\|undocumented' "$log" | sed 's/^/# /' || true
	CORPUS=$(inputs_of "$work" | wc -l)
	# A run that executed nothing found nothing
	if [ "${EXECS:-0}" -eq 0 ]; then
		tail -n 20 "$log" | sed 's/^/# /'
		tap 1 "${SECONDS_TO_FUZZ} s of fuzzing: no input executed"
		return
	fi
	tap "$CRASHES" "${SECONDS_TO_FUZZ} s of fuzzing: ${EXECS:-0} execs (${COV:-no cov}), $CRASHES crashes"
}

coverage() {
	local raw=$BUILD/cov.profraw data=$BUILD/cov.profdata line low=0
	local src=$HERE/../kernel/drivers/gpu/drm/amd/amdkfd/kfd_criu_image.c
	if ! command -v llvm-cov-14 > /dev/null; then
		N=$((N + 1))
		echo "ok $N - source coverage # SKIP llvm-cov-14 not installed"
		return
	fi
	rm -f "$raw"
	LLVM_PROFILE_FILE=$raw "$BUILD/kfd_criu_fuzz_cov" -runs=0 \
		-max_len=$MAX_LEN "$BUILD/corpus" >> "$BUILD/fuzz.log" 2>&1
	llvm-profdata-14 merge -sparse "$raw" -o "$data"
	# Columns after the name: regions, missed, cover, functions, missed,
	# executed, lines, missed, cover, branches, missed, cover
	line=$(llvm-cov-14 report "$BUILD/kfd_criu_fuzz_cov" -instr-profile="$data" \
		"$(readlink -f "$src")" | grep 'kfd_criu_image.c')
	set -- $line
	echo "# coverage of kfd_criu_image.c: lines ${10}, functions $7, branches ${13}, regions $4"
	# The corpus must keep reaching most of the codec
	awk -v l="${10%\%}" -v min="$MIN_LINE_COVERAGE" \
		'BEGIN { exit !(l + 0 >= min) }' || low=1
	tap $low "source coverage of kfd_criu_image.c: lines ${10} (at least ${MIN_LINE_COVERAGE}%), branches ${13}"
}

main() {
	while [ $# -gt 0 ]; do
		case "$1" in
		-h|--help) usage; exit 0 ;;
		--build) BUILD=$2; shift ;;
		--seconds) SECONDS_TO_FUZZ=$2; shift ;;
		--merge) MERGE=1 ;;
		*) usage >&2; exit 2 ;;
		esac
		shift
	done
	BUILD=$(cd "$BUILD" && pwd)
	: > "$BUILD/fuzz.log"
	echo "1..5"
	check_seeds
	replay corpus "$HERE/corpus"
	replay regressions "$HERE/regressions"
	fuzz_bounded
	coverage
	if [ "$MERGE" -eq 1 ]; then
		"$BUILD/kfd_criu_fuzz" -merge=1 -max_len=$MAX_LEN "$HERE/corpus" \
			"$BUILD/corpus" >> "$BUILD/fuzz.log" 2>&1
		echo "# fuzz/corpus/ now holds $(inputs_of "$HERE/corpus" | wc -l) inputs"
	fi
	echo "fuzz: ${EXECS:-0} execs, $CRASHES crashes, $CORPUS corpus"
	exit $FAILED
}

main "$@"
