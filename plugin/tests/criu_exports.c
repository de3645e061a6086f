// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: what a CRIU release's criu binary exports, and the plugin looks for
 *
 * criu links with -rdynamic (criu/Makefile), so each of its global
 * functions is there for a plugin's dlsym(RTLD_DEFAULT, ...). Built once
 * per release played (CRIU_RELEASE: 317, 319, 400, 430), this object has
 * the functions by which the plugin tells releases apart, and no others;
 * the harness loads it RTLD_GLOBAL in a process that plays that release.
 *
 * - prepare_task_cgroup(): criu/cgroup.c up to 3.18; a638043a7 removed it
 *   in 3.19 ("nm -D" of Debian's criu 3.17.1 lists it, of 4.1.1 not).
 * - pmc_fill(): criu/pagemap-cache.c from 4.0 (cb64d73ad "page-cache: use
 *   the PAGEMAP_SCAN ioctl"), in v4.0, v4.1, v4.2 and criu-dev, not in
 *   v3.17.1 to v3.19. 4.0 is also the release that moved
 *   cr_plugin_fini(DUMP) after the post-dump scripts and --lazy-pages
 *   (1012e542e; v3.19:criu/cr-dump.c:2031 before :2045 and :2081, v4.0
 *   :2092 after :2051 and :2087).
 * - criu_plugin_get_options(): new in 4.3: Debian's libcriu-dev
 *   4.3-1~exp2 criu-plugin.h declares it, "nm -D" of its criu lists it,
 *   of 4.2.1-1 does not, and criu-dev had none as of 2cf8f13ca.
 */
#include <stddef.h>

#if CRIU_RELEASE < 319
int prepare_task_cgroup(void *me);

/* The real one moves a restored task into its cgroups; never called */
int prepare_task_cgroup(void *me)
{
	(void)me;
	return 0;
}
#endif

#if CRIU_RELEASE >= 400
int pmc_fill(void *pmc, unsigned long start, unsigned long end);

/* The real one fills criu's pagemap cache; never called */
int pmc_fill(void *pmc, unsigned long start, unsigned long end)
{
	(void)pmc;
	(void)start;
	(void)end;
	return -1;
}
#endif

#if CRIU_RELEASE >= 430
int criu_plugin_get_options(int *argc, char ***argv);
void harness_set_plugin_options(int argc, char **argv);

/*
 * What 4.3's criu_plugin_get_options() hands every plugin, as its
 * criu-plugin.h and Debian's 4.3-1~exp2 binary show: one list of all
 * plugins' options, argv[0] "criu-plugin", then each --plugin-option
 * P.N[=V] as "--P.N[=V]", argv[argc] NULL. None: argc 1.
 */
static char *no_options[] = { "criu-plugin", NULL };
static char **options = no_options;
static int nr_options = 1;

int criu_plugin_get_options(int *argc, char ***argv)
{
	*argc = nr_options;
	*argv = options;
	return 0;
}

/* The harness's, not criu's: the list the next calls return */
void harness_set_plugin_options(int argc, char **argv)
{
	nr_options = argc;
	options = argv;
}
#endif

/* The release this object plays, for the harness's checks */
int harness_criu_release(void);

int harness_criu_release(void)
{
	return CRIU_RELEASE;
}
