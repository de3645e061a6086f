# SPDX-License-Identifier: GPL-2.0
#
# "make bench", guest side: criu dump + restore of kfd_heartbeat with its
# KFD state against the same program beating through an eventfd, median
# of several runs, and CRIU's peak RSS (the plugin runs inside CRIU).
# Prints figures; it is not a test. Runs on the console.

BIN=/opt/kfd-criu/e2e
RUNS=${BENCH_RUNS:-5}
WORK=/tmp/bench

field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# bench_once VARIANT N: one dump and restore; appends figures to files.
bench_once() {
	local variant=$1 n=$2 dir=$WORK/$1-$2 pid out
	mkdir -p "$dir"
	setsid "$BIN/kfd_heartbeat" $([ "$variant" = nokfd ] && echo --no-kfd) \
		< /dev/null > "$dir/beats.log" 2>&1 &
	pid=$!
	sleep 1
	out=$("$BIN/rusage_run" criu dump -t $pid -D "$dir" -o dump.log)
	wait $pid 2>/dev/null
	echo "$out" | field elapsed_ms >> "$WORK/$variant.dump_ms"
	echo "$out" | field maxrss_kb >> "$WORK/$variant.dump_rss"
	out=$("$BIN/rusage_run" criu restore -D "$dir" -d -o restore.log)
	echo "$out" | field elapsed_ms >> "$WORK/$variant.restore_ms"
	echo "$out" | field maxrss_kb >> "$WORK/$variant.restore_rss"
	[ "$(echo "$out" | field status)" = 0 ] || echo "bench: $variant run $n: restore failed"
	kill -9 $pid 2>/dev/null
	sleep 0.5
}

bench_variant() {
	local variant=$1 n=1
	while [ $n -le "$RUNS" ]; do
		bench_once "$variant" $n
		n=$((n + 1))
	done
	paste "$WORK/$variant.dump_ms" "$WORK/$variant.restore_ms" |
		awk '{ print $1 + $2 }' > "$WORK/$variant.total_ms"
}

report() {
	local k n
	k=$(median < "$WORK/kfd.total_ms")
	n=$(median < "$WORK/nokfd.total_ms")
	echo "bench: $RUNS runs each under QEMU TCG with KASAN, lockdep and kmemleak on"
	echo "bench: dump+restore median: with KFD state $k ms, without $n ms," \
	     "ratio $(awk -v a="$k" -v b="$n" 'BEGIN { printf "%.2f", a / b }')"
	echo "bench: criu peak RSS, dump: with KFD $(median < "$WORK/kfd.dump_rss") KiB," \
	     "without $(median < "$WORK/nokfd.dump_rss") KiB"
	echo "bench: criu peak RSS, restore: with KFD $(median < "$WORK/kfd.restore_rss") KiB," \
	     "without $(median < "$WORK/nokfd.restore_rss") KiB"
	echo "bench: KFD stream size: $(wc -c < "$(ls "$WORK"/kfd-1/kfdcriu-*.stream | head -n1)") bytes"
}

mkdir -p "$WORK"
bench_variant kfd
bench_variant nokfd
report
