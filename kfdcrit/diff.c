// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: kfdcrit diff
 *
 * Record-level differences of two streams, for instance a dump and the
 * dump of its restore. Records are paired by what identifies them in the
 * format, not by position: an event by its id, a BO by (GPU index,
 * handle), a queue by its id, a queue state by (queue index, XCC), an SVM
 * range by its start, a contents chunk by (BO index, offset), a trap
 * handler by its GPU index, a GPU by its place among the GPU records, and
 * the single records (COMPAT, PROCESS, COUNTS, SIGNAL_PAGE, END) by their
 * type. A paired record differs in its fields (named as in decode) or in
 * its variable part (compared by size and FNV-1a hash).
 *
 * A dump of a restored process is not the same bytes as the dump it was
 * restored from, by design: the process ran in between (events fired, the
 * GPU wrote its memory and moved its queues), RESTORE gave its BOs new
 * mmap offsets (and told the plugin), and another kernel may have written
 * it. kc_volatile lists those fields; --ignore-volatile leaves them out,
 * so that what is left is what a restore must bring back unchanged.
 */

#include <linux/errno.h>
#include <linux/limits.h>
#include <asm/byteorder.h>

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "kfdcrit.h"

/**
 * struct kc_key - what identifies a record, for sorting and pairing
 * @type: record type (unknown types sort by their number)
 * @k1: first part of the identity
 * @k2: second part
 * @rec: the record
 */
struct kc_key {
	u32 type;
	u64 k1;
	u64 k2;
	const struct kc_record *rec;
};

static u32 kc_le32_at(const struct kc_record *r, size_t off)
{
	__le32 v;

	memcpy(&v, r->payload + off, sizeof(v));
	return le32_to_cpu(v);
}

static u64 kc_le64_at(const struct kc_record *r, size_t off)
{
	__le64 v;

	memcpy(&v, r->payload + off, sizeof(v));
	return le64_to_cpu(v);
}

/* @nth: how many records of the same type came before */
static void kc_key_of(const struct kc_record *r, u32 nth, struct kc_key *k)
{
	k->type = r->skipped ? U32_MAX : r->type;
	k->k1 = nth;
	k->k2 = r->skipped ? r->type : 0;
	k->rec = r;
	if (r->skipped)
		return;
	switch (r->type) {
	case KFD_CRIU_REC_EVENT:
		k->k1 = kc_le32_at(r, offsetof(struct kfd_criu_event_rec, event_id));
		break;
	case KFD_CRIU_REC_BO:
		k->k1 = kc_le32_at(r, offsetof(struct kfd_criu_bo_rec, gpu_index));
		k->k2 = kc_le32_at(r, offsetof(struct kfd_criu_bo_rec, handle));
		break;
	case KFD_CRIU_REC_BO_DATA:
		k->k1 = kc_le32_at(r, offsetof(struct kfd_criu_bo_data_hdr, bo_index));
		k->k2 = kc_le64_at(r, offsetof(struct kfd_criu_bo_data_hdr, offset));
		break;
	case KFD_CRIU_REC_QUEUE:
		k->k1 = kc_le32_at(r, offsetof(struct kfd_criu_queue_rec, queue_id));
		break;
	case KFD_CRIU_REC_QUEUE_STATE:
		k->k1 = kc_le32_at(r, offsetof(struct kfd_criu_queue_state_hdr, queue_index));
		k->k2 = kc_le32_at(r, offsetof(struct kfd_criu_queue_state_hdr, xcc));
		break;
	case KFD_CRIU_REC_SVM_RANGE:
		k->k1 = kc_le64_at(r, offsetof(struct kfd_criu_svm_rec, start));
		break;
	case KFD_CRIU_REC_TRAP_HANDLER:
		k->k1 = kc_le32_at(r, offsetof(struct kfd_criu_trap_rec, gpu_index));
		break;
	}
}

static int kc_key_cmp(const void *a, const void *b)
{
	const struct kc_key *x = a, *y = b;

	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->k1 != y->k1)
		return x->k1 < y->k1 ? -1 : 1;
	if (x->k2 != y->k2)
		return x->k2 < y->k2 ? -1 : 1;
	return x->rec->offset < y->rec->offset ? -1 : x->rec->offset > y->rec->offset;
}

static struct kc_key *kc_keys(const struct kc_stream *s)
{
	u32 nth[KFD_CRIU_REC_NR + 1] = { };
	struct kc_key *keys;
	u32 t;
	size_t i;

	keys = calloc(s->nrecs + 1, sizeof(*keys));
	if (!keys)
		return NULL;
	for (i = 0; i < s->nrecs; i++) {
		t = s->recs[i].skipped || s->recs[i].type >= KFD_CRIU_REC_NR ?
		    KFD_CRIU_REC_NR : s->recs[i].type;
		kc_key_of(&s->recs[i], nth[t]++, &keys[i]);
	}
	qsort(keys, s->nrecs, sizeof(*keys), kc_key_cmp);
	return keys;
}

/*
 * What changes between a dump and the dump of its restore by design, in
 * --ignore's syntax; kfdcrit(1) explains each.
 */
static const char kc_volatile[] =
	"header.release,"
	"EVENT.signaled,EVENT.event_age,"
	"SIGNAL_PAGE.data,"
	"BO.mmap_offset,"
	"BO_DATA.data,"
	"QUEUE_STATE.rptr,QUEUE_STATE.wptr,QUEUE_STATE.cntl_stack_offset,"
	"QUEUE_STATE.wg_state_offset,QUEUE_STATE.eop_rptr,QUEUE_STATE.eop_wptr,"
	"QUEUE_STATE.data_len,QUEUE_STATE.data,"
	"END.payload_bytes";

/**
 * struct kc_diff - a diff in progress
 * @ignore: "TYPE.field,..." not to compare, or NULL
 * @ignore_volatile: leave out the fields of kc_volatile too
 * @differences: differences printed
 */
struct kc_diff {
	const char *ignore;
	bool ignore_volatile;
	u32 differences;
};

/* Whether the comma-separated @list names @want */
static bool kc_listed(const char *list, const char *want)
{
	size_t n = strlen(want);
	const char *p;

	for (p = list; (p = strstr(p, want)); p += n)
		if ((p == list || p[-1] == ',') && (!p[n] || p[n] == ','))
			return true;
	return false;
}

static bool kc_ignored(const struct kc_diff *d, u32 type, const char *field)
{
	char want[96];

	snprintf(want, sizeof(want), "%s.%s",
		 type ? kc_type_name(type) : "header", field);
	return (d->ignore && kc_listed(d->ignore, want)) ||
	       (d->ignore_volatile && kc_listed(kc_volatile, want));
}

static void kc_print_key(const char *mark, const struct kc_key *k)
{
	printf("%s %s", mark, kc_type_name(k->rec->type));
	switch (k->type) {
	case KFD_CRIU_REC_EVENT:
		printf(" event_id=%llu", (unsigned long long)k->k1);
		break;
	case KFD_CRIU_REC_BO:
		printf(" gpu_index=%llu handle=%llu", (unsigned long long)k->k1,
		       (unsigned long long)k->k2);
		break;
	case KFD_CRIU_REC_BO_DATA:
		printf(" bo_index=%llu offset=%#llx", (unsigned long long)k->k1,
		       (unsigned long long)k->k2);
		break;
	case KFD_CRIU_REC_QUEUE:
		printf(" queue_id=%llu", (unsigned long long)k->k1);
		break;
	case KFD_CRIU_REC_QUEUE_STATE:
		printf(" queue_index=%llu xcc=%llu", (unsigned long long)k->k1,
		       (unsigned long long)k->k2);
		break;
	case KFD_CRIU_REC_SVM_RANGE:
		printf(" start=%#llx", (unsigned long long)k->k1);
		break;
	case KFD_CRIU_REC_TRAP_HANDLER:
		printf(" gpu_index=%llu", (unsigned long long)k->k1);
		break;
	case KFD_CRIU_REC_GPU:
		printf(" #%llu", (unsigned long long)k->k1);
		break;
	}
}

/* Compares two records with the same identity; prints their differences */
static void kc_diff_pair(struct kc_diff *d, const struct kc_key *a,
			 const struct kc_key *b)
{
	const struct kc_record *x = a->rec, *y = b->rec;
	const struct kc_field *f;
	bool printed = false;
	u32 fixed;
	u64 va, vb;

	f = x->skipped ? NULL : kc_fields_of(x->type, &fixed);
	if (!f)
		fixed = 0;
	for (; f && f->name; f++) {
		va = kc_field_value(f, x->payload);
		vb = kc_field_value(f, y->payload);
		if (va == vb || kc_ignored(d, x->type, f->name))
			continue;
		if (!printed)
			kc_print_key("~", a);
		printf(f->hex ? "%s %s %#llx -> %#llx" : "%s %s %llu -> %llu",
		       printed ? "," : ":", f->name, (unsigned long long)va,
		       (unsigned long long)vb);
		printed = true;
	}
	if ((x->length != y->length ||
	     memcmp(x->payload + fixed, y->payload + fixed, x->length - fixed)) &&
	    !kc_ignored(d, x->type, "data")) {
		if (!printed)
			kc_print_key("~", a);
		printf("%s data %u bytes %016llx -> %u bytes %016llx",
		       printed ? "," : ":", x->length - fixed,
		       (unsigned long long)kc_fnv1a64(x->payload + fixed, x->length - fixed),
		       y->length - fixed,
		       (unsigned long long)kc_fnv1a64(y->payload + fixed, y->length - fixed));
		printed = true;
	}
	if (printed) {
		printf("\n");
		d->differences++;
	}
}

static void kc_diff_one_side(struct kc_diff *d, const char *mark,
			     const struct kc_key *k)
{
	kc_print_key(mark, k);
	printf(" (offset %llu)\n", (unsigned long long)k->rec->offset);
	d->differences++;
}

/* Merges the two sorted key lists */
static void kc_diff_records(struct kc_diff *d, const struct kc_key *a,
			    size_t na, const struct kc_key *b, size_t nb)
{
	size_t i = 0, j = 0;
	int c;

	while (i < na || j < nb) {
		if (i == na)
			c = 1;
		else if (j == nb)
			c = -1;
		else
			c = a[i].type != b[j].type ? (a[i].type < b[j].type ? -1 : 1) :
			    a[i].k1 != b[j].k1 ? (a[i].k1 < b[j].k1 ? -1 : 1) :
			    a[i].k2 != b[j].k2 ? (a[i].k2 < b[j].k2 ? -1 : 1) : 0;
		if (c < 0)
			kc_diff_one_side(d, "-", &a[i++]);
		else if (c > 0)
			kc_diff_one_side(d, "+", &b[j++]);
		else
			kc_diff_pair(d, &a[i++], &b[j++]);
	}
}

static void kc_diff_header(struct kc_diff *d, const struct kc_stream *a,
			   const struct kc_stream *b)
{
	if (!a->header_ok || !b->header_ok || kc_ignored(d, 0, "release"))
		return;
	if (memcmp(a->hdr.release, b->hdr.release, KFD_CRIU_RELEASE_LEN)) {
		printf("~ header: release %.*s -> %.*s\n", KFD_CRIU_RELEASE_LEN,
		       (const char *)a->hdr.release, KFD_CRIU_RELEASE_LEN,
		       (const char *)b->hdr.release);
		d->differences++;
	}
}

static int kc_diff_streams(struct kc_diff *d, struct kc_stream *a,
			   struct kc_stream *b)
{
	struct kc_key *ka, *kb;

	if (a->diag.err)
		kc_diag_print(stderr, a->name, &a->diag);
	if (b->diag.err)
		kc_diag_print(stderr, b->name, &b->diag);
	ka = kc_keys(a);
	kb = kc_keys(b);
	if (!ka || !kb) {
		free(ka);
		free(kb);
		return ENOMEM;
	}
	kc_diff_header(d, a, b);
	kc_diff_records(d, ka, a->nrecs, kb, b->nrecs);
	free(ka);
	free(kb);
	return d->differences ? 1 : 0;
}

/**
 * kc_cmd_diff() - "kfdcrit diff [--ignore TYPE.FIELD,...] [--ignore-volatile] A B"
 * @argc: arguments after "diff"
 * @argv: them
 *
 * Return: exit status: 0 when the records are the same, 1 when they
 * differ (as diff(1)), or the errno of a file that cannot be read.
 */
int kc_cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "ignore", required_argument, NULL, 'i' },
		{ "ignore-volatile", no_argument, NULL, 'v' },
		{ }
	};
	struct kc_diff d = { };
	struct kc_stream a, b;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:", longopts, NULL)) != -1) {
		if (c == 'i')
			d.ignore = optarg;
		else if (c == 'v')
			d.ignore_volatile = true;
		else
			return KC_EXIT_USAGE;
	}
	if (optind != argc - 2)
		return KC_EXIT_USAGE;
	ret = kc_stream_load(&a, argv[optind]);
	if (ret) {
		fprintf(stderr, "kfdcrit: %s: %s\n", argv[optind], strerror(-ret));
		return -ret;
	}
	ret = kc_stream_load(&b, argv[optind + 1]);
	if (ret) {
		fprintf(stderr, "kfdcrit: %s: %s\n", argv[optind + 1], strerror(-ret));
		kc_stream_free(&a);
		return -ret;
	}
	ret = kc_diff_streams(&d, &a, &b);
	kc_stream_free(&a);
	kc_stream_free(&b);
	return ret;
}
