/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 */

#ifndef KFD_CRIU_H_INCLUDED
#define KFD_CRIU_H_INCLUDED

#include <linux/types.h>

#include "kfd_criu_image.h"

/**
 * DOC: CRIU image mode internals
 *
 * kfd_criu.c runs the image-mode ops: the dump/restore state machine,
 * privilege checks, the stream I/O on the caller's file descriptor and the
 * order of records. kfd_criu_events.c owns the process and event state:
 * it snapshots that state into a &struct kfd_criu_events_image on dump,
 * and on restore collects the records into one, validates them as a set
 * and applies them to the process all or nothing.
 *
 * A &struct kfd_criu_events_image holds records in their little-endian
 * stream layout, so dump writes them unchanged and restore validates
 * exactly the bytes it read.
 */

struct file;
struct kfd_process;
struct mm_struct;

/**
 * struct kfd_criu_events_image - process and event state in kernel memory
 * @process: the PROCESS record
 * @signal_page: contents of the signal page, or NULL when there is none
 * @signal_page_size: bytes at @signal_page
 * @events: the EVENT records, @num_events of them, ascending ids on dump
 * @num_events: entries in @events
 * @events_read: EVENT records collected so far on restore
 * @have_process: the PROCESS record was collected
 */
struct kfd_criu_events_image {
	struct kfd_criu_process_rec process;
	void *signal_page;
	u32 signal_page_size;
	struct kfd_criu_event_rec *events;
	u32 num_events;
	u32 events_read;
	bool have_process;
};

void kfd_criu_events_image_free(struct kfd_criu_events_image *img);
int kfd_criu_events_snapshot(struct kfd_process *p,
			     struct kfd_criu_events_image *img);
int kfd_criu_events_write(struct kfd_criu_image_writer *w,
			  const struct kfd_criu_events_image *img);
int kfd_criu_events_collect(struct kfd_criu_events_image *img,
			    const struct kfd_criu_record *rec,
			    const void *payload);
int kfd_criu_events_validate(const struct kfd_criu_events_image *img);
int kfd_criu_events_restore(struct file *devkfd, struct kfd_process *p,
			    struct mm_struct *mm,
			    const struct kfd_criu_events_image *img);
void kfd_criu_events_count(struct kfd_process *p, u32 *num_events,
			   u32 *signal_page_size);

#endif /* KFD_CRIU_H_INCLUDED */
