// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_criu_dump_end - whether the dumped processes go on
 *
 * At the end of a successful dump kfd_criu UNPAUSEs the processes it paused
 * unless they are killed, and no CRIU release tells plugins which: the
 * option leave_running=0 says so, and is followed only where no action
 * script can make CRIU resume them anyway; a --lazy-pages dump of CRIU
 * before 4.0, which ends plugins before it serves the memory, keeps them
 * paused. The images' pagemaps tell a lazy dump.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kfd_criu.h"

/* CRIU's image format: criu/include/magic.h, criu/include/pagemap.h */
#define CR_IMG_COMMON_MAGIC	0x54564319
#define CR_PAGEMAP_MAGIC	0x56084025
#define CR_PE_LAZY		(1 << 1)
#define CR_PE_PRESENT		(1 << 2)

/* CRIU before 4.0 ends a dump's plugins before its post-dump and lazy work */
bool criu_fini_first;

/* A varint of a protobuf message at *@p, before @end */
static bool pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *val)
{
	unsigned int shift;

	for (*val = 0, shift = 0; *p < end && shift < 64; shift += 7) {
		*val |= (uint64_t)(**p & 0x7f) << shift;
		if (!(*(*p)++ & 0x80))
			return true;
	}
	return false;
}

/*
 * Whether pagemap entry @p (to @end) leaves its pages to be served later:
 * PE_LAZY without PE_PRESENT in its flags, field 4 (images/pagemap.proto;
 * criu/page-xfer.c ppb_xfer_flags(): pages that could be lazy are PE_LAZY
 * in every dump, and PE_PRESENT too unless criu dump --lazy-pages).
 */
static bool pagemap_entry_lazy(const uint8_t *p, const uint8_t *end)
{
	uint64_t key, val;

	while (pb_varint(&p, end, &key) && (key & 7) == 0 && pb_varint(&p, end, &val))
		if (key >> 3 == 4 && (val & (CR_PE_LAZY | CR_PE_PRESENT)) == CR_PE_LAZY)
			return true;
	return false;
}

/*
 * Whether pagemap image @name leaves pages to be served lazily, by its
 * first 64 KiB: the two magics, then each entry's size and message, the
 * first of which is the head (criu/image.c).
 */
static bool pagemap_lazy(int dir, const char *name)
{
	const uint8_t *p = (uint8_t *)io_buf, *end;
	uint32_t magic[2], len;
	ssize_t n;

	n = kfd_criu_read_file(dir, name, io_buf, sizeof(io_buf));
	if (n < (ssize_t)sizeof(magic))
		return false;
	memcpy(magic, p, sizeof(magic));
	if (magic[0] != CR_IMG_COMMON_MAGIC || magic[1] != CR_PAGEMAP_MAGIC)
		return false;
	end = p + n;
	for (p += sizeof(magic); end - p >= (ssize_t)sizeof(len); p += len) {
		memcpy(&len, p, sizeof(len));
		p += sizeof(len);
		if (len > end - p)
			return false;
		if (p != (uint8_t *)io_buf + sizeof(magic) + sizeof(len) &&
		    pagemap_entry_lazy(p, p + len))
			return true;
	}
	return false;
}

/* Whether this dump is criu dump --lazy-pages: a task's pages are left to serve */
static bool lazy_dump(void)
{
	int dir = openat(criu_get_image_dir(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dir < 0 ? NULL : fdopendir(dir);
	struct dirent *de;
	unsigned long pid;
	bool lazy = false;
	char end;

	while (d && !lazy && (de = readdir(d)))
		lazy = sscanf(de->d_name, "pagemap-%lu.im%c", &pid, &end) == 2 && end == 'g' &&
		       pagemap_lazy(dirfd(d), de->d_name);
	if (d)
		closedir(d);
	else if (dir >= 0)
		close(dir);
	return lazy;
}

/*
 * Whether this criu serves an RPC client: started as "criu swrk FD" or
 * "criu service", and once a request is taken, titled after it. The
 * service names its work in its process title, e.g. "dump --rpc -t PID
 * -D DIR" (criu/cr-service.c, __setproctitle()); Debian's criu sets titles
 * with libbsd, whose setproctitle() makes /proc/self/cmdline the one
 * string "criu: dump --rpc -t PID -D DIR" (seen under runc in the
 * Debian 13 lane). A criu built without it keeps its arguments.
 */
static bool rpc_service(void)
{
	char path[512], cmd[256], word[16] = "";
	ssize_t n, i;

	snprintf(path, sizeof(path), "%s/proc/self/cmdline", kfd_criu_root);
	n = kfd_criu_read_file(AT_FDCWD, path, cmd, sizeof(cmd));
	for (i = 0; i < n; i++)
		if (!cmd[i])
			cmd[i] = ' ';
	if (n <= 0)
		return false;
	if (strstr(cmd, " --rpc"))
		return true;
	return sscanf(cmd, "%*s %15s", word) == 1 &&
	       (!strcmp(word, "swrk") || !strcmp(word, "service"));
}

/*
 * Whether CRIU may resume the dumped tasks although fini is told that the
 * dump succeeded: every release resumes them when a post-dump action
 * script fails, and passes fini only its own result (criu/cr-dump.c
 * cr_dump_finish(): "ret || post_dump_ret"). CRIU sets
 * CRTOOLS_SCRIPT_ACTION in its own environment whenever it runs shell
 * scripts (--action-script), the pre-dump ones before plugins load
 * (criu/action-scripts.c run_shell_scripts()); an RPC service (criu swrk,
 * criu service: runc, podman, libcriu) may ask its client instead.
 */
static bool scripts_may_resume(void)
{
	return getenv("CRTOOLS_SCRIPT_ACTION") || rpc_service();
}

/**
 * unpause_after_dump() - whether a successful dump UNPAUSEs its tasks
 *
 * Whether a successful dump UNPAUSEs its tasks, which may be killed or go
 * on: no CRIU release tells plugins, and the option leave_running=0 says
 * they are killed. An UNPAUSE of a task that is then killed costs little, a
 * missing one hangs a live task. So leave_running=0 holds only where no
 * action script can make CRIU resume them. CRIU before 4.0 calls fini
 * before it serves a --lazy-pages dump's memory (v3.19:criu/cr-dump.c
 * cr_dump_finish()): the GPU then stays paused, or it would write pages
 * that are still to be served.
 */
bool unpause_after_dump(void)
{
	const char *keep = kfd_option(KFD_OPT_LEAVE_RUNNING);
	bool scripts = scripts_may_resume();

	if (criu_fini_first && lazy_dump()) {
		if (scripts)
			pr_err("criu dump --lazy-pages of CRIU before 4.0 serves memory after this plugin's end: the GPU stays paused, and if a post-dump action script fails, the resumed tasks hang\n");
		return false;
	}
	if (!keep || strcmp(keep, "0"))
		return true;
	if (scripts)
		pr_warn("leave_running=0 not followed: CRIU runs action scripts, and resumes the tasks when a post-dump one fails, without telling plugins\n");
	return scripts;
}
