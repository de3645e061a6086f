// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: kc_fuzz_verdict - the fuzzer's model of RESTORE, as a program
 *
 * Usage:
 *   kc_fuzz_verdict verdict FILE...
 *	prints "ERRNO FILE" per file: what the fuzz target's model of
 *	RESTORE (restore() in fuzz/kfd_criu_fuzz.c) returns, 0 for accepted
 *   kc_fuzz_verdict mutate SEED_FILE N RNG_SEED OUTDIR
 *	writes N images made from SEED_FILE by the structure-aware mutator
 *	the fuzzer and the VM's mutation campaign share, as
 *	OUTDIR/kfdcriu-<i>.stream
 *
 * The fuzz target is included whole, unchanged, so its static model is
 * reachable without exporting anything from it; libFuzzer is not linked,
 * and the one libFuzzer function it calls is stubbed. This gives the
 * kfdcrit tests an independent second reading of every image to compare
 * "kfdcrit check" with.
 */

#include "../../fuzz/kfd_criu_fuzz.c"

/* Only LLVMFuzzerCustomMutator() calls it, and this program never does */
size_t LLVMFuzzerMutate(u8 *data, size_t size, size_t max_size)
{
	(void)data;
	(void)max_size;
	abort();
	return size;
}

static int verdict(const char *path)
{
	struct kfd_criu_image_header hdr;
	struct kfd_criu_image_reader r;
	struct fuzz_image img = {};
	struct kfd_criu_mem_source src = {};
	const struct kfd_criu_image_io io = {
		.read = kfd_criu_mem_source_read, .ctx = &src,
	};
	static u8 data[4 << 20];
	size_t len;
	FILE *f;
	int ret;

	f = fopen(path, "rb");
	if (!f)
		return -1;
	len = fread(data, 1, sizeof(data), f);
	fclose(f);
	src.data = data;
	src.len = len;
	kfd_criu_image_reader_init(&r, &io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	ret = restore(&r, &hdr, &img);
	fuzz_image_free(&img);
	printf("%d %s\n", -ret, path);
	return 0;
}

static int mutate(const char *seed_file, unsigned long n, unsigned long rng,
		  const char *dir)
{
	static u8 seed[FUZZ_MAX_IMAGE], buf[FUZZ_MAX_IMAGE];
	char path[4096];
	size_t len, out;
	unsigned long i;
	FILE *f;

	f = fopen(seed_file, "rb");
	if (!f)
		return 1;
	len = fread(seed, 1, sizeof(seed), f);
	fclose(f);
	for (i = 0; i < n; i++) {
		memcpy(buf, seed, len);
		kfd_img_mutator_seed(&mutator, rng * 1000003 + i);
		out = kfd_img_mutate(&mutator, buf, len, sizeof(buf), -1);
		snprintf(path, sizeof(path), "%s/kfdcriu-%lu.stream", dir, i);
		f = fopen(path, "wb");
		if (!f || fwrite(buf, 1, out, f) != out)
			return 1;
		fclose(f);
	}
	return 0;
}

/**
 * main() - see the DOC block
 * @argc: argument count
 * @argv: arguments
 *
 * Return: 0, 1 on an I/O error, 2 for a bad command line.
 */
int main(int argc, char **argv)
{
	int i;

	LLVMFuzzerInitialize(&argc, &argv);
	if (argc >= 3 && !strcmp(argv[1], "verdict")) {
		for (i = 2; i < argc; i++)
			if (verdict(argv[i]))
				return 1;
		return 0;
	}
	if (argc == 6 && !strcmp(argv[1], "mutate"))
		return mutate(argv[2], strtoul(argv[3], NULL, 0),
			      strtoul(argv[4], NULL, 0), argv[5]);
	fprintf(stderr, "usage: %s verdict FILE... | mutate SEED N RNG DIR\n",
		argv[0]);
	return 2;
}
