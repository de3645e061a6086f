# SPDX-License-Identifier: GPL-2.0
#
# "make bench", guest side: criu dump + restore of kfd_heartbeat with its
# KFD state against the same program beating through an eventfd, and
# CRIU's peak RSS (the plugin runs inside CRIU). The two variants run
# interleaved, which goes first alternating, so that a slow spell of a
# noisy host slows both alike; each gets BENCH_RUNS runs (11 unless
# set), and every figure is a median, the times also with their spread.
# Prints figures; it is not a test. Runs on the console.

BIN=/opt/kfd-criu/e2e
RUNS=${BENCH_RUNS:-11}
WORK=/tmp/bench

field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# spread: "min-max, IQR q1-q3" of the numbers on stdin, quartiles
# interpolated between the sorted values.
spread() {
	sort -n | awk '
	function q(p,  i, f) {
		i = 1 + p * (NR - 1)
		f = i - int(i)
		return v[int(i)] + f * (v[int(i) + (f > 0)] - v[int(i)])
	}
	{ v[NR] = $1 }
	END { printf "%d-%d, IQR %.0f-%.0f", v[1], v[NR], q(0.25), q(0.75) }'
}

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

total_ms() {
	paste "$WORK/$1.dump_ms" "$WORK/$1.restore_ms" |
		awk '{ print $1 + $2 }' > "$WORK/$1.total_ms"
}

# Run n of each variant back to back, odd runs with KFD first.
bench_interleaved() {
	local n=1
	while [ $n -le "$RUNS" ]; do
		if [ $((n % 2)) -eq 1 ]; then
			bench_once kfd $n
			bench_once nokfd $n
		else
			bench_once nokfd $n
			bench_once kfd $n
		fi
		n=$((n + 1))
	done
	total_ms kfd
	total_ms nokfd
}

report() {
	local k n
	k=$(median < "$WORK/kfd.total_ms")
	n=$(median < "$WORK/nokfd.total_ms")
	echo "bench: $RUNS runs each, interleaved, under QEMU TCG with KASAN, lockdep and kmemleak on"
	echo "bench: dump+restore median: with KFD state $k ms, without $n ms," \
	     "ratio $(awk -v a="$k" -v b="$n" 'BEGIN { printf "%.2f", a / b }')"
	echo "bench: dump+restore spread: with KFD state $(spread < "$WORK/kfd.total_ms") ms," \
	     "without $(spread < "$WORK/nokfd.total_ms") ms"
	echo "bench: ratio of each interleaved pair: median" \
	     "$(paste "$WORK/kfd.total_ms" "$WORK/nokfd.total_ms" |
		awk '{ printf "%.3f\n", $1 / $2 }' | sort -n |
		awk '{ v[NR] = $1 } END { printf "%.2f, min-max %.2f-%.2f", v[int((NR + 1) / 2)], v[1], v[NR] }')"
	echo "bench: criu peak RSS, dump: with KFD $(median < "$WORK/kfd.dump_rss") KiB," \
	     "without $(median < "$WORK/nokfd.dump_rss") KiB"
	echo "bench: criu peak RSS, restore: with KFD $(median < "$WORK/kfd.restore_rss") KiB," \
	     "without $(median < "$WORK/nokfd.restore_rss") KiB"
	echo "bench: KFD stream size: $(wc -c < "$(ls "$WORK"/kfd-1/kfdcriu-*.stream | head -n1)") bytes"
}

mkdir -p "$WORK"
bench_interleaved
report
