#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# The kfdcrit tests, as TAP. Run by "make -C kfdcrit check" (the host tier
# of "make check"), with a kfdcrit built with ASan and UBSan.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
KFDCRIT=
MKIMAGE=
VERDICT=
EXPLAIN=
WORK=
MUTANTS=${KFDCRIT_MUTANTS:-150}

usage() {
	cat <<'TXT'
Usage: kfdcrit/tests/run-tests.sh --kfdcrit BIN --mkimage BIN --verdict BIN --explain BIN
                                  --work DIR

Tests kfdcrit (built with ASan and UBSan) and prints TAP:
  - --help is a manual; a bad command line exits 64
  - check of every kc_mkimage case: exit status (the errno RESTORE
    returns), reason, and that the offset and type it names are a record
    of that type in decode's output
  - for each record validator (kc_explain_test): every refusal, one
    broken field at a time, is explained naming that field
  - check agrees with the fuzz target's model of RESTORE (kc_fuzz_verdict)
    on every file of fuzz/corpus/ and fuzz/regressions/, and on
    KFDCRIT_MUTANTS (default 150) mutations of each seed image, except the
    two documented differences of that model; never a sanitizer report
  - decode --format json: the schema of tests/json-fields.txt, the data
    hashes, and the round trip "decode --format json --data | encode" to
    the same bytes, for every kc_mkimage case, seed image, fuzz corpus
    and regression file that decodes
  - encode refuses malformed documents (syntax, missing keys and fields,
    wrong types, values out of range, ...) with their errno and one line
    naming the place, writes nothing, and survives 240 byte-edited or
    cut documents without a sanitizer report
  - show of a stream and of an images directory with the plugin's
    kfdcriu-<id>.img (render nodes reattached without their state and
    kfdcriu-drm.img too); check of a directory
  - compat against fake sysfs topologies
  - diff of images that differ in known records, and --ignore-volatile
  - make install with DESTDIR and PREFIX
Work files go to DIR.
TXT
}

N=0
FAILED=0
PLAN=96

tap() {
	N=$((N + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $N - $2"
	else
		echo "not ok $N - $2"
		FAILED=1
	fi
}

# Runs kfdcrit; its status in RC, its output (stdout and stderr) in OUT
run() {
	RC=0
	OUT=$("$KFDCRIT" "$@" 2>&1) || RC=$?
}

test_help() {
	local bad=0
	run --help
	[ "$RC" -eq 0 ] || bad=1
	for word in show decode encode check compat diff "Exit status" KFDCRIT_SYSFS \
		    KFD_CRIU_GPU_MAP "--format" "--data" "--sysfs"; do
		grep -q -- "$word" <<< "$OUT" || { echo "# --help lacks $word"; bad=1; }
	done
	tap "$bad" "--help is a manual of every command, option and exit status"
	run frobnicate x
	[ "$RC" -eq 64 ] && r=0 || r=1
	tap "$r" "an unknown command exits 64"
	run check
	[ "$RC" -eq 64 ] && r=0 || r=1
	tap "$r" "check without a file exits 64"
}

# case|exit status|what the reason must say
CASES='ok-events|0|ok, 7 records
ok-gpu|0|ok, 10 records
unknown-optional|0|ok, 8 records
trailing|0|16 bytes after END
event-intmax|22|EVENT record: event id 2147483647 out of range
event-dup|17|EVENT record: event id 1 repeats: EEXIST
event-order|22|EVENT record: event id 2 below the one before it
event-slot|22|EVENT record: event 9: its signal slot is outside the 8-slot signal page
events-extra|22|EVENT record: more EVENT records than
events-missing|22|END record: PROCESS announces 4 events, 3 EVENT records came
process-bool|22|PROCESS record: xnack_enabled 2 is not 0 or 1
compat-not-first|22|offset 88: PROCESS record: the first record is not COMPAT
unknown-mandatory|95|record type 4096: EOPNOTSUPP
gpu-missing|22|PROCESS record: COMPAT announces 2 GPUs, 1 GPU records came
gpu-bad|22|offset 112: GPU record: gpu 0x8a3c: num_xcc 0 out of range
bo-overlap|22|BO record: BO 2 on GPU index 0: its VA range overlaps
bo-dup|17|BO record: BO 1 on GPU index 0: handle repeats
bo-data-offset|22|BO_DATA record: chunk of BO index 1 at offset 4096
bo-data-missing|22|END record: END before the contents of the BOs
event-after-bo|22|EVENT record: out of order: after the BO records
counts-zero|22|COUNTS record: both counts are zero
bad-crc|74|EVENT record: CRC32C 0x
truncated|61|EVENT record: stream ends inside the record
no-end|61|stream ends before its END record: ENODATA
version|71|offset 0: header: format version 2
magic|22|offset 0: header: bad magic
end-count|22|END record: END counts 7 records'

# The offset and type check names must be a record of decode's listing
named_record_exists() {
	local img=$1 offset type
	offset=$(sed -n 's/.*: offset \([0-9]*\): \([A-Z_]*\) record: .*/\1/p' <<< "$OUT")
	type=$(sed -n 's/.*: offset \([0-9]*\): \([A-Z_]*\) record: .*/\2/p' <<< "$OUT")
	[ -n "$offset" ] || return 0	# the header, or no record there
	case $OUT in *"stream ends"*) return 0 ;; esac
	"$KFDCRIT" decode "$img" 2>/dev/null | grep -q "^$offset $type " && return 0
	# A record the reader refused is not listed: read its type field
	[ "$(type_name "$(od -An -tu4 -j"$offset" -N4 "$img" | tr -d ' ')")" = "$type" ] ||
		{ echo "# no $type record at offset $offset"; return 1; }
}

type_name() {
	local names=(UNKNOWN END COMPAT PROCESS SIGNAL_PAGE EVENT GPU BO BO_DATA
		     QUEUE QUEUE_STATE SVM_RANGE COUNTS TRAP_HANDLER)
	if [ "$1" -ge 1 ] && [ "$1" -lt ${#names[@]} ]; then
		echo "${names[$1]}"
	else
		echo UNKNOWN
	fi
}

test_cases() {
	local name rc want img bad
	mkdir -p "$WORK/cases"
	while IFS='|' read -r name rc want; do
		img=$WORK/cases/$name.img
		bad=0
		"$MKIMAGE" "$name" "$img" || bad=1
		run check "$img"
		[ "$RC" -eq "$rc" ] || { echo "# exit $RC, want $rc: $OUT"; bad=1; }
		grep -qF -- "$want" <<< "$OUT" || { echo "# got: $OUT"; bad=1; }
		named_record_exists "$img" || bad=1
		tap "$bad" "check $name: exit $rc, \"$want\""
	done <<< "$CASES"
	[ "$("$MKIMAGE" --list | wc -l)" -eq "$(wc -l <<< "$CASES")" ] && r=0 || r=1
	tap "$r" "every kc_mkimage case has an expectation"
}

# One TAP line per record validator: its refusals explained by field
test_explain() {
	local line n=0
	while IFS= read -r line; do
		case $line in
		PASS\|*) tap 0 "${line#PASS|}"; n=$((n + 1)) ;;
		FAIL\|*) tap 1 "${line#FAIL|}"; n=$((n + 1)) ;;
		*) echo "$line" ;;
		esac
	done < <("$EXPLAIN" 2>&1 || true)
	[ "$n" -eq 7 ] || { tap 1 "kc_explain_test reported $n of 7 validators"; }
}

# Compares check of a directory of kfdcriu-*.stream with the fuzz model
compare_dir() {
	local dir=$1

	"$VERDICT" verdict "$dir"/kfdcriu-*.stream > "$dir/verdict.txt" || return 1
	"$KFDCRIT" check "$dir" > "$dir/check.txt" 2>&1 || true
	"$HERE/kc_json.py" agree "$dir/verdict.txt" "$dir/check.txt" "$KFDCRIT" ${2:+--allow}
}

test_agreement() {
	local dir=$WORK/corpus i=0 f seed
	rm -rf "$dir" "$WORK/mutants"
	mkdir -p "$dir" "$WORK/mutants"
	for f in "$TOP"/fuzz/corpus/* "$TOP"/fuzz/regressions/*; do
		case ${f##*/} in README*) continue ;; esac
		cp "$f" "$dir/kfdcriu-$i.stream"
		i=$((i + 1))
	done
	compare_dir "$dir" && r=0 || r=1
	tap "$r" "check agrees with the fuzz model on all $i corpus and regression inputs"
	i=0
	for seed in "$TOP"/fuzz/corpus/*.img; do
		mkdir -p "$WORK/mutants/$i"
		"$VERDICT" mutate "$seed" "$MUTANTS" "$i" "$WORK/mutants/$i" ||
			echo "# kc_fuzz_verdict mutate failed on $seed"
		i=$((i + 1))
	done
	local bad=0
	for dir in "$WORK"/mutants/*/; do
		compare_dir "${dir%/}" allow || bad=1
	done
	tap "$bad" "check agrees with the fuzz model on $((i * MUTANTS)) mutated images, no sanitizer report"
}

# round_trips WHAT FILE...: for every FILE that decodes, decode --format
# json --data | encode gives its bytes up to END (the JSON does not carry
# those after it)
round_trips() {
	local what=$1 f n=0 all=0 bad=0 out=$WORK/json size trailing
	shift
	for f in "$@"; do
		case ${f##*/} in README*) continue ;; esac
		all=$((all + 1))
		"$KFDCRIT" decode --format json --data "$f" > /dev/null 2>&1 || continue
		n=$((n + 1))
		if ! "$KFDCRIT" decode --format json --data "$f" | tee "$out/x.json" |
		     "$KFDCRIT" encode > "$out/x.bin" 2> "$out/x.err"; then
			echo "# ${f##*/}: encode failed: $(cat "$out/x.err")"
			bad=1
			continue
		fi
		size=$(stat -c %s "$f")
		trailing=$(sed -n 's/^  "trailing_bytes": \([0-9]*\),$/\1/p' "$out/x.json")
		head -c $((size - trailing)) "$f" | cmp -s - "$out/x.bin" ||
			{ echo "# ${f##*/} differs after the round trip"; bad=1; }
	done
	[ "$n" -gt 0 ] || bad=1
	tap "$bad" "decode --format json --data | encode: the same bytes for the $n of $all $what that decode"
}

test_json() {
	local f bad=0 fields=$HERE/json-fields.txt out=$WORK/json i=0 r
	rm -rf "$out"
	mkdir -p "$out"
	for f in "$TOP"/fuzz/corpus/*.img "$WORK"/cases/*.img; do
		"$KFDCRIT" decode --format json --data "$f" > "$out/$i.json" 2>/dev/null || true
		i=$((i + 1))
	done
	"$HERE/kc_json.py" schema "$fields" "$out"/*.json && r=0 || r=1
	tap "$r" "decode --format json --data of $i images follows the schema; data hashes match"
	round_trips "kc_mkimage cases and seed images" \
		"$WORK"/cases/*.img "$TOP"/fuzz/corpus/*.img
	round_trips "fuzz corpus and regression files" "$TOP"/fuzz/corpus/* "$TOP"/fuzz/regressions/*
	run decode --format json "$WORK/cases/event-dup.img"
	grep -q '"error": null' <<< "$OUT" && grep -q '"complete": true' <<< "$OUT" && r=0 || r=1
	tap "$r" "decode reports no reader error for an image only the set checks refuse"
	run decode --format json "$WORK/cases/bad-crc.img"
	[ "$RC" -eq 74 ] && grep -q '"errno": "EBADMSG", "errno_value": 74' <<< "$OUT" && r=0 || r=1
	tap "$r" "decode --format json of a bad CRC: the error object and exit 74"
}

# Malformed documents for encode: name|exit|what it must say|sed script
# that makes it from the JSON of ok-events.img (line 5 the header, 7 COMPAT,
# 9 SIGNAL_PAGE, 10 the first EVENT, 12 the last, 13 END), or empty for a
# document bad_json writes itself
ENCODE_CASES=$(cat <<'TXT'
syntax|74|'"' where ',' or '}' was expected: EBADMSG|7s/"num_gpus": 0, /"num_gpus": 0 /
truncated|74|the end of the text where ',' or '}' was expected: EBADMSG|$d
empty|74|:1:1: the end of the text where a value was expected: EBADMSG|
deep|74|nested deeper than 32: EBADMSG|
control-char|74|control characters must be escaped) was expected: EBADMSG|
missing-field|61|records[3] (EVENT): no "fields.event_id": ENODATA|10s/"event_id": 1, //
missing-key|61|records[0]: no "type_id": ENODATA|7s/"type_id": 2, //
no-hex|61|records[2] (SIGNAL_PAGE): no "data.hex": decode --data gives the bytes to encode: ENODATA|
no-end|61|no END record: a stream ends with one: ENODATA|12s/,$//;13d
header-null|61|header: null: decode read no header|5s/"header": {.*},$/"header": null,/
wrong-type|22|records[3] (EVENT): "fields.signaled" is a string, not a number: EINVAL|10s/"signaled": 1/"signaled": "1"/
wrong-type-bool|22|"skipped" is a number, not false or true: EINVAL|10s/"skipped": false/"skipped": 0/
not-object|22|:1:1: the document is an array, not an object: EINVAL|
fraction|22|"fields.event_id" is 1.0, not an integer: EINVAL|10s/"event_id": 1,/"event_id": 1.0,/
unknown-key|22|records[3] (EVENT): unknown key "fields.colour": EINVAL|10s/"event_id": 1,/"event_id": 1, "colour": 3,/
repeated-key|22|key "event_id" repeats: EINVAL|10s/"event_id": 1,/"event_id": 1, "event_id": 1,/
type-mismatch|22|"type" is "GPU", but type_id 5 is EVENT: EINVAL|10s/"type": "EVENT"/"type": "GPU"/
bad-flags|22|"flags" 0x3: only MANDATORY (1) is defined: EINVAL|10s/"flags": 1/"flags": 3/
odd-hex|22|"data.hex" has an odd number of digits: EINVAL|9s/"hex": "f/"hex": "/
bad-hex|22|"data.hex": byte 0 is not two hex digits: EINVAL|9s/"hex": "f/"hex": "g/
end-count|22|END must be flags 1, records 6, reserved 0, payload_bytes 344|13s/"records": 6/"records": 5/
after-end|22|records[7]: a record after END: EINVAL|12h;13{s/$/,/;G;s/,$//}
error-set|22|"error" is not null: decode stopped where the reader failed|s/"error": null/"error": {}/
out-of-range|34|"fields.event_id" 4294967296 out of range (0..4294967295): ERANGE|10s/"event_id": 1,/"event_id": 4294967296,/
out-of-range-u64|34|"fields.event_age" 18446744073709551616 out of range (0..18446744073709551615): ERANGE|10s/"event_age": 2,/"event_age": 18446744073709551616,/
negative|34|"fields.event_id" -1 out of range (0..4294967295): ERANGE|10s/"event_id": 1,/"event_id": -1,/
release-long|34|header: "release" is longer than 63 bytes: ERANGE|
schema|71|:2:13: schema 2: encode reads schema 1: EPROTO|s/"schema": 1/"schema": 2/
version|71|header: the codec writes format version 1 only: EPROTO|5s/"version": 1/"version": 2/
too-big|90|over the 1048576-byte limit of a record: EMSGSIZE|
TXT
)

# bad_json NAME SCRIPT GOOD OUT: the malformed document NAME
bad_json() {
	local name=$1 script=$2 good=$3 out=$4

	case $name in
	empty) : > "$out" ;;
	deep) printf '%0100000d' 0 | tr 0 '[' > "$out" ;;
	control-char) printf '{"schema": 1, "file": "a\tb"}' > "$out" ;;
	not-object) echo '[]' > "$out" ;;
	no-hex) "$KFDCRIT" decode --format json "$WORK/cases/ok-events.img" > "$out" ;;
	release-long)
		sed "5s/\"release\": \"[^\"]*\"/\"release\": \"$(printf '%064d' 0)\"/" "$good" > "$out" ;;
	too-big)
		{ sed -n 1,8p "$good"
		  printf '    {"type": "SIGNAL_PAGE", "type_id": 4, "flags": 1, "skipped": false, "fields": {}, "data": {"hex": "'
		  printf '%02097154d' 0
		  printf '"}},\n'
		  sed -n '10,$p' "$good"; } > "$out" ;;
	*) sed -e "$script" "$good" > "$out" ;;
	esac
}

# encode refuses each malformed document with its errno and a message
# naming the place, writes nothing, and never trips a sanitizer
test_encode_errors() {
	local out=$WORK/encode name rc want script bad
	rm -rf "$out"
	mkdir -p "$out"
	"$KFDCRIT" decode --format json --data "$WORK/cases/ok-events.img" > "$out/good.json"
	while IFS='|' read -r name rc want script; do
		bad=0
		bad_json "$name" "$script" "$out/good.json" "$out/$name.json"
		cmp -s "$out/good.json" "$out/$name.json" &&
			{ echo "# the edit of $name changed nothing"; bad=1; }
		run encode -o "$out/$name.bin" "$out/$name.json"
		[ "$RC" -eq "$rc" ] || { echo "# exit $RC, want $rc"; bad=1; }
		grep -qF -- "$want" <<< "$OUT" || { echo "# got: ${OUT:0:300}"; bad=1; }
		[ "$(wc -l <<< "$OUT")" -eq 1 ] || { echo "# more than one line: ${OUT:0:300}"; bad=1; }
		[ ! -e "$out/$name.bin" ] || { echo "# it wrote $name.bin"; bad=1; }
		tap "$bad" "encode refuses $name: exit $rc, \"$want\""
	done <<< "$ENCODE_CASES"
}

# Replaces, deletes or inserts a byte of a small document, or cuts it, at
# many places: encode exits 0 or with one of its errnos, never a sanitizer
# report
test_encode_mutants() {
	local out=$WORK/encode good size i pos bad=0 ch exits=
	local chars='"{}[],:0-1a\ '
	good=$out/good.json
	size=$(stat -c %s "$good")
	for ((i = 0; i < 240; i++)); do
		pos=$(((i * 7919) % size))
		ch=${chars:$((i % ${#chars})):1}
		case $((i % 4)) in
		0) { head -c "$pos" "$good"; printf '%s' "$ch"; tail -c +$((pos + 2)) "$good"; } ;;
		1) { head -c "$pos" "$good"; tail -c +$((pos + 2)) "$good"; } ;;
		2) { head -c "$pos" "$good"; printf '%s' "$ch"; tail -c +$((pos + 1)) "$good"; } ;;
		3) head -c "$pos" "$good" ;;
		esac > "$out/mutant.json"
		run encode -o "$out/mutant.bin" "$out/mutant.json"
		exits+=" $RC"
		case $RC in
		0|22|34|61|71|74|90) ;;
		*) echo "# mutant $i (offset $pos): exit $RC: ${OUT:0:300}"; bad=1 ;;
		esac
		if grep -q 'Sanitizer\|runtime error' <<< "$OUT"; then
			echo "# mutant $i (offset $pos): ${OUT:0:300}"
			bad=1
		fi
	done
	echo "# exit statuses: $(tr ' ' '\n' <<< "$exits" | grep . | sort -n | uniq -c | awk '{ printf "%s x%s ", $2, $1 }')"
	tap "$bad" "encode of 240 byte-edited or cut documents: an errno or success, no sanitizer report"
}

# The plugin's kfdcriu-<id>.img: format_version 1, file_id ID, stream_size
meta_img() {
	local id=$1 size=$2
	printf "\\x08\\x01\\x10\\x$(printf %02x "$id")\\x18\\x$(printf %02x $((size & 0x7f | 0x80)))\\x$(printf %02x $((size >> 7)))"
}

# A render node of no KFD GPU, dumped with the drm_reattach plugin: file 9,
# open flags 02, node vgem at renderD128 (field 11), and the list of render
# minors whose mappings the dump took, 128 and 131 (kfdcriu-drm.img)
test_show_drm() {
	local dir=$WORK/drm-images bad=0
	rm -rf "$dir"
	mkdir -p "$dir"
	{ meta_img 9 0; printf '\x38\x02\x5a\x09\x0a\x04vgem\x10\x80\x01'; } > "$dir/kfdcriu-9.img"
	printf '\x08\x80\x01\x08\x83\x01' > "$dir/kfdcriu-drm.img"
	run show "$dir"
	grep -q 'kfdcriu-9.img: file id 9, render node renderD128 of DRM driver vgem, reattached without its state (drm_reattach), open flags 02$' <<< "$OUT" || bad=1
	grep -q 'kfdcriu-drm.img: mappings of renderD128, renderD131: restored as zero-filled memory' <<< "$OUT" || bad=1
	[ "$RC" -eq 0 ] || bad=1
	[ "$bad" -eq 0 ] || echo "$OUT" | sed 's/^/# /'
	tap "$bad" "show DIR: a render node reattached without its state, and the render nodes whose mappings are zeros"
}

test_show() {
	local dir=$WORK/images bad=0
	run show "$WORK/cases/ok-events.img"
	grep -q 'events: 3, 1 signaled, 2 signal, 1 nodechange' <<< "$OUT" || bad=1
	grep -q 'written by Linux 6.12.117' <<< "$OUT" || bad=1
	grep -q '^check: ok' <<< "$OUT" || bad=1
	tap "$bad" "show: events, signaled, release, verdict"
	bad=0
	run show "$WORK/cases/ok-gpu.img"
	grep -q 'BOs: 2, VRAM 1 (8192 bytes), GTT 1 (4096 bytes), largest 8192 bytes' <<< "$OUT" || bad=1
	grep -q 'gpu 0: gpu_id 0x8a3c, gfx1100' <<< "$OUT" || bad=1
	grep -q 'a restore needs: device 0x744c' <<< "$OUT" || bad=1
	grep -q 'BO_DATA 2 (12352 bytes)' <<< "$OUT" || bad=1
	tap "$bad" "show: BOs per domain, GPUs and what a restore needs, bytes per record type"
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$WORK/cases/ok-events.img" "$dir/kfdcriu-5.stream"
	cp "$WORK/cases/event-dup.img" "$dir/kfdcriu-7.stream"
	meta_img 5 560 > "$dir/kfdcriu-5.img"
	# a render node of a GPU the process did not use (field 10, 0x4321)
	{ meta_img 8 0; printf '\x50\xa1\x86\x01\x38\x02'; } > "$dir/kfdcriu-8.img"
	bad=0
	run show "$dir"
	grep -q 'kfdcriu-5.img: file id 5, /dev/kfd, stream format version 1, 560 bytes' <<< "$OUT" || bad=1
	grep -q 'kfdcriu-8.img: file id 8, render node of topology GPU 0x4321, which the process did not use, open flags 02$' <<< "$OUT" || bad=1
	grep -q 'kfdcriu-7.stream: offset 336: EVENT record: event id 1 repeats: EEXIST' <<< "$OUT" || bad=1
	[ "$RC" -eq 0 ] || bad=1
	tap "$bad" "show DIR: the plugin's metadata and every stream with its verdict"
	run check "$dir"
	[ "$RC" -eq 17 ] && grep -q 'kfdcriu-5.stream: ok' <<< "$OUT" && r=0 || r=1
	tap "$r" "check DIR: every stream, exit with the first refusal's errno"
	test_show_drm
	run check "$WORK/no-such-file"
	[ "$RC" -eq 2 ] && r=0 || r=1
	tap "$r" "check of a missing file exits ENOENT"
}

# A fake sysfs root with one GPU node: fake_gpu ROOT NODE GPU_ID MEC_FW GFX
fake_gpu() {
	local root=$1 node=$2 id=$3 fw=$4 gfx=$5
	local d=$root/class/kfd/kfd/topology/nodes/$node
	mkdir -p "$d/mem_banks/0" "$root/class/drm/renderD$((128 + node))/device"
	echo "$id" > "$d/gpu_id"
	cat > "$d/properties" <<TXT
cpu_cores_count 0
simd_count 192
gfx_target_version $gfx
device_id 29772
drm_render_minor $((128 + node))
cwsr_size 385024
ctl_stack_size 12288
fw_version $fw
sdma_fw_version 22
num_xcc 1
TXT
	printf 'heap_type 1\nsize_in_bytes %d\n' $((24 << 30)) > "$d/mem_banks/0/properties"
	echo 0x00 > "$root/class/drm/renderD$((128 + node))/device/revision"
	echo SPX > "$root/class/drm/renderD$((128 + node))/device/current_compute_partition"
}

fake_cpu() {
	mkdir -p "$1/class/kfd/kfd/topology/nodes/0" "$1/module/amdgpu/parameters"
	echo 0 > "$1/class/kfd/kfd/topology/nodes/0/gpu_id"
	echo "cpu_cores_count 2" > "$1/class/kfd/kfd/topology/nodes/0/properties"
	echo 1 > "$1/module/amdgpu/parameters/cwsr_enable"
}

test_compat() {
	local sys=$WORK/sys img=$WORK/cases/ok-gpu.img
	rm -rf "$sys"
	fake_cpu "$sys/same"
	fake_gpu "$sys/same" 1 35388 2280 110000
	run compat --sysfs "$sys/same" "$img"
	[ "$RC" -eq 0 ] && grep -q '^KFD_CRIU_GPU_MAP=0x8a3c=0x8a3c$' <<< "$OUT" &&
		grep -q 'local 0x8a3c (node 1) fits$' <<< "$OUT" && r=0 || r=1
	tap "$r" "compat: the same GPU under the same gpu_id"
	# The image says 110000: another stepping is another ISA target (only
	# a renumbering the kernel made of one GPU is taken, as RESTORE does;
	# the codec's tests cover that list), and so is another minor version
	fake_cpu "$sys/step"
	fake_gpu "$sys/step" 1 4369 2280 110100
	fake_gpu "$sys/step" 2 35388 2280 110001
	run compat --sysfs "$sys/step" "$img"
	[ "$RC" -eq 19 ] &&
		grep -q 'local 0x1111 (node 1) differs in gfx_target_version' <<< "$OUT" &&
		grep -q 'local 0x8a3c (node 2) differs in gfx_target_version' <<< "$OUT" &&
		r=0 || r=1
	tap "$r" "compat: another gfx stepping or minor version fits nowhere: ENODEV"
	fake_cpu "$sys/two"
	fake_gpu "$sys/two" 1 4369 2280 90402
	fake_gpu "$sys/two" 2 8738 2281 110000
	KFDCRIT_SYSFS=$sys/two run compat "$img"
	[ "$RC" -eq 0 ] && grep -q '^KFD_CRIU_GPU_MAP=0x8a3c=0x2222$' <<< "$OUT" &&
		grep -q 'local 0x1111 (node 1) differs in gfx_target_version' <<< "$OUT" && r=0 || r=1
	tap "$r" "compat (KFDCRIT_SYSFS): another gpu_id with newer firmware, not the other gfx"
	fake_cpu "$sys/old"
	fake_gpu "$sys/old" 1 35388 2279 110000
	run compat --sysfs "$sys/old" "$img"
	[ "$RC" -eq 19 ] && grep -q 'differs in mec_fw_version' <<< "$OUT" && r=0 || r=1
	tap "$r" "compat: older MEC firmware fits nowhere: ENODEV"
	fake_cpu "$sys/none"
	run compat --sysfs "$sys/none" "$img"
	[ "$RC" -eq 19 ] && grep -q '0 local GPUs' <<< "$OUT" && r=0 || r=1
	tap "$r" "compat: a machine without GPUs: ENODEV"
	KFD_CRIU_GPU_MAP=0x8a3c=0x1111 KFDCRIT_SYSFS=$sys/two run compat "$img"
	[ "$RC" -eq 19 ] && grep -q 'RESTORE fails: image GPU 0x8a3c, local 0x1111: gfx_target_version: ENODEV' <<< "$OUT" && r=0 || r=1
	tap "$r" "compat: what RESTORE does with the KFD_CRIU_GPU_MAP given"
	KFD_CRIU_GPU_MAP=0x8a3c=0x2222 KFDCRIT_SYSFS=$sys/two run compat "$img"
	[ "$RC" -eq 0 ] && r=0 || r=1
	tap "$r" "compat: a KFD_CRIU_GPU_MAP that places every GPU"
	rm "$sys/same/class/drm/renderD129/device/revision" "$sys/same/module/amdgpu/parameters/cwsr_enable"
	run compat --sysfs "$sys/same" "$img"
	[ "$RC" -eq 0 ] && grep -q 'fits (not verified: revision_id cwsr_enable)' <<< "$OUT" && r=0 || r=1
	tap "$r" "compat: says which fields the topology did not give"
	run compat --sysfs "$sys/none" "$WORK/cases/ok-events.img"
	[ "$RC" -eq 0 ] && grep -q 'restores on any machine' <<< "$OUT" && r=0 || r=1
	tap "$r" "compat: an image without GPUs restores anywhere"
}

test_diff() {
	local c=$WORK/cases
	run diff "$c/ok-gpu.img" "$c/ok-gpu.img"
	[ "$RC" -eq 0 ] && [ -z "$OUT" ] && r=0 || r=1
	tap "$r" "diff of an image with itself: nothing, exit 0"
	run diff "$c/ok-events.img" "$c/event-dup.img"
	[ "$RC" -eq 1 ] && grep -q '^- EVENT event_id=2 (offset 336)$' <<< "$OUT" &&
		grep -q '^+ EVENT event_id=1 (offset 336)$' <<< "$OUT" &&
		[ "$(wc -l <<< "$OUT")" -eq 2 ] && r=0 || r=1
	tap "$r" "diff pairs events by id: one only in A, one only in B, exit 1"
	run diff "$c/ok-gpu.img" "$c/bo-overlap.img"
	[ "$RC" -eq 1 ] &&
		[ "$OUT" = "~ BO gpu_index=0 handle=2: va 0x7ff000200000 -> 0x7ff000001000" ] && r=0 || r=1
	run diff --ignore BO.va "$c/ok-gpu.img" "$c/bo-overlap.img"
	[ "$r" -eq 0 ] && [ "$RC" -eq 0 ] && r=0 || r=1
	tap "$r" "diff names the field that differs; --ignore TYPE.FIELD leaves it out"
	diff_volatile
}

# What a running process changes (an event fired, its slot) differs, and
# only --ignore-volatile leaves it out; what it cannot change still shows
diff_volatile() {
	local c=$WORK/cases j=$WORK/json r=0
	"$KFDCRIT" decode --format json --data "$c/ok-events.img" > "$j/events.json"
	sed -e '10s/"signaled": 1/"signaled": 0/; 11s/"event_age": 1/"event_age": 7/' \
	    -e '9s/"hex": "ff/"hex": "00/' "$j/events.json" |
		"$KFDCRIT" encode -o "$j/ran.img" || r=1
	sed -e '11s/"event_age": 1/"event_age": 7/; 11s/"auto_reset": 0/"auto_reset": 1/' \
		"$j/events.json" | "$KFDCRIT" encode -o "$j/broken.img" || r=1
	run diff "$c/ok-events.img" "$j/ran.img"
	[ "$RC" -eq 1 ] && [ "$(wc -l <<< "$OUT")" -eq 3 ] || { echo "# $OUT"; r=1; }
	run diff --ignore-volatile "$c/ok-events.img" "$j/ran.img"
	[ "$RC" -eq 0 ] && [ -z "$OUT" ] || { echo "# $OUT"; r=1; }
	run diff --ignore-volatile "$c/ok-events.img" "$j/broken.img"
	[ "$RC" -eq 1 ] && [ "$OUT" = "~ EVENT event_id=2: auto_reset 0 -> 1" ] || { echo "# $OUT"; r=1; }
	tap "$r" "diff --ignore-volatile leaves out signaled, event_age and the signal page, not auto_reset"
}

test_install() {
	local dest=$WORK/dest
	rm -rf "$dest"
	make -s -C "$TOP/kfdcrit" O="${KFDCRIT%/san/kfdcrit}" DESTDIR="$dest" \
		PREFIX=/opt/kc install > "$WORK/install.log" 2>&1 &&
		[ -x "$dest/opt/kc/bin/kfdcrit" ] &&
		[ -f "$dest/opt/kc/share/man/man1/kfdcrit.1" ] &&
		"$dest/opt/kc/bin/kfdcrit" check "$WORK/cases/ok-gpu.img" > /dev/null && r=0 || r=1
	tap "$r" "make install honours DESTDIR and PREFIX; the installed kfdcrit runs"
}

main() {
	while [ $# -gt 0 ]; do
		case $1 in
		-h|--help) usage; exit 0 ;;
		--kfdcrit) KFDCRIT=$2; shift 2 ;;
		--mkimage) MKIMAGE=$2; shift 2 ;;
		--verdict) VERDICT=$2; shift 2 ;;
		--explain) EXPLAIN=$2; shift 2 ;;
		--work) WORK=$2; shift 2 ;;
		*) usage >&2; exit 2 ;;
		esac
	done
	[ -n "$KFDCRIT" ] && [ -n "$MKIMAGE" ] && [ -n "$VERDICT" ] && [ -n "$EXPLAIN" ] &&
		[ -n "$WORK" ] ||
		{ usage >&2; exit 2; }
	mkdir -p "$WORK"
	export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
	echo "1..$PLAN"
	trap '[ "$N" -eq "$PLAN" ] || echo "not ok - run-tests.sh stopped after $N of $PLAN tests"' EXIT
	for t in test_help test_cases test_explain test_agreement test_json \
		 test_encode_errors test_encode_mutants test_show test_compat \
		 test_diff test_install; do
		local start=$SECONDS
		"$t"
		echo "# $t: $((SECONDS - start)) s"
	done
	return "$FAILED"
}

main "$@"
