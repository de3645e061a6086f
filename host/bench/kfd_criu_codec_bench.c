// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: kfd_criu_codec_bench - what the image codec costs on BO contents
 *
 * Usage: kfd_criu_codec_bench [--size MIB] [--reps N]
 *
 * Moves the contents of one BO (256 MiB unless --size says otherwise)
 * through the kernel's codec (kfd_criu_image.c, built with the host shims
 * and their SSE4.2 CRC32C, as the kernel's crc32c() uses the instruction)
 * and, in the same run, through plain memcpy(), and prints one line:
 *
 *   codec: N MB/s, memcpy: N MB/s, ratio: N.NN
 *
 * One round of the codec writes the BO as BO_DATA records of
 * %KFD_CRIU_BO_CHUNK bytes into an image in memory, as CHECKPOINT writes
 * them to the image file, then reads them back through the reader into a
 * one-record bounce buffer and checks each against the BO cursor, as
 * RESTORE does before the contents go to the BO. The memory sink and
 * source copy with memcpy(), standing for the copy into and out of the
 * file. One round of memcpy copies the same chunks the same way: BO to
 * image, image to bounce buffer. The difference is the codec's own work:
 * framing, CRC32C on both sides, the record checks.
 *
 * Each figure is the BO's bytes times two (out and back in) over the
 * median time of a round, in MB/s of 10^6 bytes; rounds of the two kinds
 * alternate, which kind goes first alternating too, so that a noisy
 * machine slows both alike. ratio is the median codec round's time over
 * the median memcpy round's time: the goal, framing and CRC
 * costing under 10% of a memcpy of the same data, is ratio <= 1.10.
 *
 * A second line says how much of that is the CRC32C instruction's own
 * speed, which no change to the codec can beat:
 *
 *   crc32c: N MB/s in cache, floor: N.NN
 *
 * is CRC32C over bytes already in the CPU's cache, as the codec's pieces
 * are (see KFD_CRIU_CRC_PIECE), and the ratio a codec would have that
 * cost nothing but that CRC on both sides.
 *
 * An untimed first round checks that every byte comes back and that the
 * stream ends where it should; any failure exits 1 without a figure.
 */

#include <linux/errno.h>
#include <linux/kfd_ioctl.h>
#include <linux/types.h>
#include <asm/byteorder.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kfd_criu_image.h"
#include "kfd_criu_mem_source.h"

#define BENCH_DEFAULT_MIB	256
#define BENCH_DEFAULT_REPS	11
#define BENCH_MAX_MIB		4096
#define BENCH_MAX_REPS		1001
#define BENCH_CRC_PIECE		SZ_64K
#define BENCH_BOUNCE_SIZE	(sizeof(struct kfd_criu_bo_data_hdr) + \
				 KFD_CRIU_BO_CHUNK)

/**
 * struct bench_sink - the image in memory, as the writer's sink
 * @data: the buffer
 * @size: its size
 * @len: bytes written
 */
struct bench_sink {
	u8 *data;
	size_t size;
	size_t len;
};

/**
 * struct bench - one run's buffers
 * @bo: the BO's contents
 * @size: bytes of @bo
 * @image: the stream the codec writes and reads
 * @image_size: bytes of @image
 * @bounce: one BO_DATA payload, where the reader puts a record
 * @rec: the one BO record the image describes, for the BO cursor
 */
struct bench {
	u8 *bo;
	u64 size;
	u8 *image;
	size_t image_size;
	u8 *bounce;
	struct kfd_criu_bo_rec rec;
};

static int bench_sink_write(void *ctx, const void *buf, size_t len)
{
	struct bench_sink *sink = ctx;

	if (len > sink->size - sink->len)
		return -ENOSPC;
	memcpy(sink->data + sink->len, buf, len);
	sink->len += len;
	return 0;
}

static double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int bench_write_chunks(struct kfd_criu_image_writer *w,
			      const struct bench *b)
{
	struct kfd_criu_bo_data_hdr hdr = { 0 };
	u64 offset;
	u32 len;
	int ret;

	for (offset = 0; offset < b->size; offset += len) {
		len = kfd_criu_chunk_len(b->size, offset, KFD_CRIU_BO_CHUNK);
		hdr.offset = cpu_to_le64(offset);
		ret = kfd_criu_image_begin_record(w, KFD_CRIU_REC_BO_DATA,
						  KFD_CRIU_RECORD_MANDATORY,
						  sizeof(hdr) + len);
		if (!ret)
			ret = kfd_criu_image_write_data(w, &hdr, sizeof(hdr));
		if (!ret)
			ret = kfd_criu_image_write_data(w, b->bo + offset, len);
		if (!ret)
			ret = kfd_criu_image_finish_record(w);
		if (ret)
			return ret;
	}
	return 0;
}

/* Writes the image; returns its length, or a negative errno. */
static long bench_write_image(const struct bench *b)
{
	struct bench_sink sink = { .data = b->image, .size = b->image_size };
	struct kfd_criu_image_io io = {
		.write = bench_sink_write,
		.ctx = &sink,
	};
	struct kfd_criu_image_writer w;
	int ret;

	kfd_criu_image_writer_init(&w, &io);
	ret = kfd_criu_image_write_header(&w, "bench");
	if (!ret)
		ret = bench_write_chunks(&w, b);
	if (!ret)
		ret = kfd_criu_image_write_end(&w);
	return ret ? ret : (long)sink.len;
}

/*
 * Reads the image back; with @verify, compares each chunk with the BO and
 * checks that nothing follows END.
 */
static int bench_read_image(const struct bench *b, size_t image_len,
			    bool verify)
{
	struct kfd_criu_mem_source src = { .data = b->image, .len = image_len };
	struct kfd_criu_image_io io = {
		.read = kfd_criu_mem_source_read,
		.ctx = &src,
	};
	const struct kfd_criu_bo_data_hdr *hdr = (const void *)b->bounce;
	struct kfd_criu_image_header header;
	struct kfd_criu_image_reader r;
	struct kfd_criu_bo_cursor cur;
	struct kfd_criu_record rec;
	u64 offset;
	int ret;

	kfd_criu_image_reader_init(&r, &io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	kfd_criu_bo_cursor_init(&cur, &b->rec, 1);
	ret = kfd_criu_image_read_header(&r, &header);
	while (!ret) {
		ret = kfd_criu_image_read_record(&r, &rec, b->bounce,
						 BENCH_BOUNCE_SIZE);
		if (ret || rec.type == KFD_CRIU_REC_END)
			break;
		if (rec.type != KFD_CRIU_REC_BO_DATA)
			return -EPROTO;
		offset = cur.offset;
		ret = kfd_criu_bo_data_check(&cur, &b->rec, 1, hdr, rec.length);
		if (!ret && verify &&
		    memcmp(hdr + 1, b->bo + offset, rec.length - sizeof(*hdr))) {
			fprintf(stderr, "kfd_criu_codec_bench: the chunk at %llu differs\n",
				(unsigned long long)offset);
			ret = -EIO;
		}
	}
	if (ret)
		return ret;
	if (cur.bo_index != 1)
		return -ENODATA;	/* END before the last chunk */
	return verify ? kfd_criu_image_expect_eof(&r) : 0;
}

static double bench_codec_round(const struct bench *b, size_t image_len)
{
	double start = bench_now();

	if (bench_write_image(b) != (long)image_len ||
	    bench_read_image(b, image_len, false)) {
		fprintf(stderr, "kfd_criu_codec_bench: a timed round failed\n");
		exit(1);
	}
	return bench_now() - start;
}

/* The same chunks, the same way, without the codec. */
static double bench_memcpy_round(const struct bench *b)
{
	double start = bench_now();
	u64 offset;
	u32 len;

	for (offset = 0; offset < b->size; offset += len) {
		len = kfd_criu_chunk_len(b->size, offset, KFD_CRIU_BO_CHUNK);
		memcpy(b->image + offset, b->bo + offset, len);
	}
	for (offset = 0; offset < b->size; offset += len) {
		len = kfd_criu_chunk_len(b->size, offset, KFD_CRIU_BO_CHUNK);
		memcpy(b->bounce + sizeof(struct kfd_criu_bo_data_hdr),
		       b->image + offset, len);
	}
	return bench_now() - start;
}

/* Where the CRC round leaves its result, so that it is computed. */
static volatile u32 bench_crc_keep;

/*
 * CRC32C over as many bytes as a codec round checksums (the BO, out and
 * back), one piece of the bounce buffer at a time, from the cache.
 */
static double bench_crc_round(const struct bench *b)
{
	double start = bench_now();
	u32 crc = 0;
	u64 done;

	for (done = 0; done < 2 * b->size; done += BENCH_CRC_PIECE)
		crc = kfd_criu_crc32c(crc, b->bounce, BENCH_CRC_PIECE);
	bench_crc_keep = crc;
	return bench_now() - start;
}

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double bench_median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Touches every page, so that no round pays for the first faults. */
static void *bench_alloc(size_t size)
{
	u8 *p = malloc(size);

	if (p)
		memset(p, 0, size);
	return p;
}

/* Contents that no chunk repeats, from a xorshift generator. */
static void bench_fill(u8 *p, u64 size)
{
	u64 x = 0x9e3779b97f4a7c15ULL, i;

	for (i = 0; i + 8 <= size; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
}

static int bench_setup(struct bench *b, u64 mib)
{
	u64 chunks;

	b->size = mib << 20;
	kfd_criu_chunk_count(b->size, KFD_CRIU_BO_CHUNK, &chunks);
	b->image_size = sizeof(struct kfd_criu_image_header) + b->size +
			chunks * (KFD_CRIU_RECORD_OVERHEAD +
				  sizeof(struct kfd_criu_bo_data_hdr)) +
			KFD_CRIU_RECORD_OVERHEAD + sizeof(struct kfd_criu_end_rec);
	b->bo = bench_alloc(b->size);
	b->image = bench_alloc(b->image_size);
	b->bounce = bench_alloc(BENCH_BOUNCE_SIZE);
	if (!b->bo || !b->image || !b->bounce)
		return -ENOMEM;
	bench_fill(b->bo, b->size);
	memset(&b->rec, 0, sizeof(b->rec));
	b->rec.size = cpu_to_le64(b->size);
	b->rec.alloc_flags = cpu_to_le32(KFD_IOC_ALLOC_MEM_FLAGS_VRAM);
	return 0;
}

static void bench_usage(FILE *f)
{
	fprintf(f,
		"usage: kfd_criu_codec_bench [--size MIB] [--reps N]\n"
		"Moves a BO of MIB MiB (default %d) through the KFD CRIU image\n"
		"codec and through memcpy, N rounds each (default %d), and prints\n"
		"\"codec: N MB/s, memcpy: N MB/s, ratio: N.NN\" (medians).\n",
		BENCH_DEFAULT_MIB, BENCH_DEFAULT_REPS);
}

/* Parses "--size MIB" and "--reps N"; exits on anything else. */
static void bench_args(int argc, char **argv, u64 *mib, unsigned int *reps)
{
	unsigned long v;
	char *end;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			bench_usage(stdout);
			exit(0);
		}
		if (i + 1 == argc ||
		    (strcmp(argv[i], "--size") && strcmp(argv[i], "--reps")))
			goto bad;
		v = strtoul(argv[i + 1], &end, 10);
		if (*end || !v)
			goto bad;
		if (!strcmp(argv[i], "--size") && v <= BENCH_MAX_MIB)
			*mib = v;
		else if (!strcmp(argv[i], "--reps") && v <= BENCH_MAX_REPS)
			*reps = v;
		else
			goto bad;
		i++;
	}
	return;
bad:
	bench_usage(stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned int reps = BENCH_DEFAULT_REPS, i;
	u64 mib = BENCH_DEFAULT_MIB;
	double *codec, *copy, *crc, tc, tm, tcrc;
	struct bench b;
	long len;
	int ret;

	bench_args(argc, argv, &mib, &reps);
	codec = calloc(reps, sizeof(*codec));
	copy = calloc(reps, sizeof(*copy));
	crc = calloc(reps, sizeof(*crc));
	if (!codec || !copy || !crc || bench_setup(&b, mib)) {
		fprintf(stderr, "kfd_criu_codec_bench: out of memory\n");
		return 1;
	}
	len = bench_write_image(&b);
	ret = len < 0 ? len : bench_read_image(&b, len, true);
	if (ret) {
		fprintf(stderr, "kfd_criu_codec_bench: the contents did not come back: %s\n",
			strerror(-ret));
		return 1;
	}
	for (i = 0; i < reps; i++) {
		if (i % 2) {
			copy[i] = bench_memcpy_round(&b);
			codec[i] = bench_codec_round(&b, len);
		} else {
			codec[i] = bench_codec_round(&b, len);
			copy[i] = bench_memcpy_round(&b);
		}
		crc[i] = bench_crc_round(&b);
	}
	tc = bench_median(codec, reps);
	tm = bench_median(copy, reps);
	tcrc = bench_median(crc, reps);
	printf("codec: %.0f MB/s, memcpy: %.0f MB/s, ratio: %.2f\n",
	       2 * b.size / tc / 1e6, 2 * b.size / tm / 1e6, tc / tm);
	printf("crc32c: %.0f MB/s in cache, floor: %.2f\n",
	       2 * b.size / tcrc / 1e6, 1 + tcrc / tm);
	return 0;
}
