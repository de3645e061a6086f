// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: kfdcrit's command line
 *
 * One subcommand per job, as CRIU's crit has them. Exit statuses are
 * errnos, so that "check" exits with what RESTORE would return; a command
 * line kfdcrit does not understand exits with %KC_EXIT_USAGE (64,
 * sysexits' EX_USAGE), which no RESTORE errno equals.
 */

#include <linux/array_size.h>
#include <linux/errno.h>

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kfdcrit.h"

static const char kc_manual[] =
"Usage: kfdcrit COMMAND [OPTIONS] FILE|DIR\n"
"\n"
"Read, check and compare the KFD CRIU image streams (kfdcriu-<id>.stream)\n"
"that amdkfd's image-mode CHECKPOINT writes and the CRIU plugin keeps in\n"
"CRIU's images directory. kfdcrit is built from the kernel's own codec\n"
"(kfd_criu_image.c), so it reads a stream exactly as the kernel does.\n"
"\n"
"Commands:\n"
"  show DIR|FILE     summary of an images directory (every kfdcriu-*.img\n"
"                    and its stream) or of one stream: format version,\n"
"                    the writing kernel's release, process state, events\n"
"                    (count, signaled, per type), BOs (count and bytes per\n"
"                    domain, largest), queues per class, SVM ranges, trap\n"
"                    handlers, GPUs with what a restore needs of the\n"
"                    target, records and bytes per type, and the verdict\n"
"                    of check.\n"
"  decode [--format text|json] [--data] FILE\n"
"                    every record, one per line (offset, type, flags,\n"
"                    length, each field) or as JSON (schema in kfdcrit(1),\n"
"                    \"schema\": 1). Signal page, CU masks, control stacks,\n"
"                    BO contents and unknown payloads are shown by size and\n"
"                    FNV-1a hash; --data adds their bytes in hex.\n"
"  encode [-o OUT] [JSON]\n"
"                    the inverse of decode --format json --data: the\n"
"                    document (default stdin) back to the stream (to OUT,\n"
"                    default stdout, never a terminal), written by the\n"
"                    kernel's own writer, which frames each record and\n"
"                    computes the CRC32Cs and END's counts. Taken from the\n"
"                    JSON: the header's release, each record's type_id,\n"
"                    flags, fields and data hex. Checked but recomputed:\n"
"                    offsets, lengths, CRCs, data sizes and hashes, so an\n"
"                    edited document needs no arithmetic. Must agree with\n"
"                    the writer: header version 1, flags 0, size 88, END's\n"
"                    fields. Strict: an unknown or repeated key, a missing\n"
"                    one, a wrong type or a value out of its field's range\n"
"                    is an error, printed as\n"
"                      kfdcrit: encode: JSON:LINE:COL: records[N] (TYPE): what: ERRNO\n"
"                    and nothing is written.\n"
"  check DIR|FILE    the checks RESTORE runs on the image before it needs\n"
"                    the target: the codec's reader (header, CRC32C, lengths,\n"
"                    END counts), record order and counts as RESTORE collects\n"
"                    them, and every validator of the codec on every record\n"
"                    and set (event ids, GPUs, trap handlers, BOs, queues and\n"
"                    their states, SVM ranges, BO contents chunk by chunk).\n"
"                    Prints FILE: ok, or\n"
"                      FILE: offset N: TYPE record: reason: ERRNO\n"
"                    and exits with the errno RESTORE returns. Not checked:\n"
"                    what depends on the target (its GPUs: see compat; the\n"
"                    event ids the process already has; the caller).\n"
"  compat [--sysfs ROOT] FILE\n"
"                    which local GPUs of the KFD topology each image GPU\n"
"                    could be restored on (kfd_criu_gpu_incompatible()), and\n"
"                    a KFD_CRIU_GPU_MAP value that places them all, checked\n"
"                    with the kernel's kfd_criu_map_gpus(). With\n"
"                    KFD_CRIU_GPU_MAP set, says what RESTORE does with it.\n"
"  diff [--ignore TYPE.FIELD,...] [--ignore-volatile] A B\n"
"                    record-level differences of two streams (a dump and\n"
"                    the dump of its restore): records paired by identity\n"
"                    (event id, BO GPU index and handle, queue id, ...),\n"
"                    \"- \" only in A, \"+ \" only in B, \"~ \" fields that differ\n"
"                    (data: variable parts; header.release: the kernel).\n"
"                    --ignore-volatile leaves out what a running process\n"
"                    or a restore changes by design (kfdcrit(1), \"diff\n"
"                    of a dump and of its restore\"): header.release,\n"
"                    EVENT signaled and event_age, SIGNAL_PAGE data, BO\n"
"                    mmap_offset, BO_DATA data, QUEUE_STATE's dynamic\n"
"                    fields, control stack and data_len, END payload_bytes.\n"
"                    Exits 0 when the same, 1 when different.\n"
"\n"
"Options:\n"
"  --format json|text  decode's output (default text)\n"
"  --data              decode: dump variable-length parts in hex\n"
"  -o, --output OUT    encode: write the stream to OUT\n"
"  --ignore-volatile   diff: leave out what changes by design\n"
"  --sysfs ROOT        compat: a directory laid out like /sys\n"
"                      (ROOT/class/kfd/kfd/topology/nodes, ...); default\n"
"                      $KFDCRIT_SYSFS, else /sys\n"
"  -h, --help          this manual\n"
"\n"
"Environment:\n"
"  KFDCRIT_SYSFS       compat's sysfs root when --sysfs is not given\n"
"  KFD_CRIU_GPU_MAP    IMG=LOCAL[,IMG=LOCAL...] gpu_ids, as the plugin reads\n"
"                      it on restore; compat evaluates it when set\n"
"\n"
"Exit status:\n"
"  0    success (check: RESTORE accepts the image; compat: every image GPU\n"
"       has a place)\n"
"  N    an errno: check and decode exit with the errno RESTORE returns for\n"
"       the image (EINVAL 22, EPROTO 71, EBADMSG 74, EOPNOTSUPP 95,\n"
"       ENODATA 61, EEXIST 17); compat exits with ENODEV (19) when an image\n"
"       GPU has no place; a file that cannot be read gives its errno\n"
"       (ENOENT 2, ...)\n"
"       encode: EBADMSG (74) not JSON, EINVAL (22) a wrong type, an\n"
"       unknown or repeated key, values that disagree, ENODATA (61) a\n"
"       missing key or record, ERANGE (34) a value out of range, EPROTO\n"
"       (71) another schema or format version, EMSGSIZE (90) a record\n"
"       over 1 MiB\n"
"  1    diff: the streams differ\n"
"  64   a command line kfdcrit does not understand\n"
"\n"
"Examples:\n"
"  kfdcrit show /var/lib/criu/dump\n"
"  kfdcrit check /var/lib/criu/dump/kfdcriu-7.stream\n"
"  kfdcrit decode --format json kfdcriu-7.stream | jq .records[].type\n"
"  kfdcrit decode --format json --data kfdcriu-7.stream > 7.json\n"
"  kfdcrit encode -o kfdcriu-7.stream 7.json   # after editing 7.json\n"
"  kfdcrit diff --ignore-volatile dump1/kfdcriu-7.stream dump2/kfdcriu-7.stream\n"
"  kfdcrit compat --sysfs /tmp/fake-sys kfdcriu-7.stream\n"
"\n"
"See kfdcrit(1) for the JSON schema and the format's record types.\n";

static bool kc_is_stream(const char *name)
{
	size_t len = strlen(name);

	return !strncmp(name, "kfdcriu-", 8) && len > 15 &&
	       !strcmp(name + len - 7, ".stream");
}

/**
 * kc_for_each_stream() - call @fn on a stream file, or on each in a dir
 * @path: a stream file, or an images directory
 * @fn: called with each stream's path; its non-zero return is kept
 * @ctx: passed to @fn
 *
 * Return: the first non-zero return of @fn, a positive errno when @path
 * cannot be read, ENOENT for a directory without streams, or 0.
 */
int kc_for_each_stream(const char *path, kc_stream_fn fn, void *ctx)
{
	struct dirent **names;
	char file[4096];
	struct stat st;
	int n, i, ret = 0, one;
	bool found = false;

	if (stat(path, &st)) {
		fprintf(stderr, "kfdcrit: %s: %s\n", path, strerror(errno));
		return errno;
	}
	if (!S_ISDIR(st.st_mode))
		return fn(path, ctx);
	n = scandir(path, &names, NULL, versionsort);
	if (n < 0) {
		fprintf(stderr, "kfdcrit: %s: %s\n", path, strerror(errno));
		return errno;
	}
	for (i = 0; i < n; i++) {
		if (kc_is_stream(names[i]->d_name)) {
			found = true;
			snprintf(file, sizeof(file), "%s/%s", path, names[i]->d_name);
			one = fn(file, ctx);
			if (!ret)
				ret = one;
		}
		free(names[i]);
	}
	free(names);
	if (found)
		return ret;
	fprintf(stderr, "kfdcrit: %s: no kfdcriu-*.stream in it\n", path);
	return ENOENT;
}

static int kc_check_one(const char *path, void *ctx)
{
	struct kc_stream s;
	struct kc_diag d;
	int ret;

	(void)ctx;
	ret = kc_stream_load(&s, path);
	if (ret) {
		fprintf(stderr, "kfdcrit: %s: %s\n", path, strerror(-ret));
		return -ret;
	}
	ret = kc_check(&s, &d);
	if (ret) {
		kc_diag_print(stdout, path, &d);
	} else {
		printf("%s: ok, %zu records, %zu bytes\n", path, s.nrecs, s.size);
		if (s.consumed < s.size)
			printf("%s: warning: %zu bytes after END, which RESTORE does not read\n",
			       path, s.size - s.consumed);
	}
	kc_stream_free(&s);
	return -ret;
}

/**
 * kc_cmd_check() - "kfdcrit check DIR|FILE"
 * @argc: arguments after "check"
 * @argv: them
 *
 * Return: exit status: 0, or the errno RESTORE returns for the first
 * stream it refuses.
 */
int kc_cmd_check(int argc, char **argv)
{
	if (argc != 2)
		return KC_EXIT_USAGE;
	return kc_for_each_stream(argv[1], kc_check_one, NULL);
}

/**
 * main() - kfdcrit
 * @argc: argument count
 * @argv: "kfdcrit COMMAND ..."
 *
 * Return: the exit status of the command.
 */
int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} cmds[] = {
		{ "show", kc_cmd_show },
		{ "decode", kc_cmd_decode },
		{ "encode", kc_cmd_encode },
		{ "check", kc_cmd_check },
		{ "compat", kc_cmd_compat },
		{ "diff", kc_cmd_diff },
	};
	size_t i;
	int ret;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
			  !strcmp(argv[1], "help"))) {
		fputs(kc_manual, stdout);
		return 0;
	}
	for (i = 0; argc >= 2 && i < ARRAY_SIZE(cmds); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		ret = cmds[i].fn(argc - 1, argv + 1);
		if (ret == KC_EXIT_USAGE)
			fprintf(stderr, "kfdcrit: bad usage of %s; see kfdcrit --help\n",
				argv[1]);
		return ret;
	}
	fprintf(stderr, "Usage: kfdcrit show|decode|encode|check|compat|diff ... (kfdcrit --help)\n");
	return KC_EXIT_USAGE;
}
