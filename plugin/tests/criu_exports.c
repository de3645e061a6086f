// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: what only CRIU 4.3's criu binary exports to plugins
 *
 * criu links with -rdynamic (criu/Makefile), so each of its global
 * functions is there for a plugin's dlsym(RTLD_DEFAULT, ...).
 * criu_plugin_get_options() is new in 4.3: "nm -D" of Debian's criu
 * 4.3-1~exp2 lists it, of 4.2.1-1 and of Debian 12's 3.17.1 does not, and
 * criu-dev had none as of 2cf8f13ca (2025-11-16). The harness loads this
 * object RTLD_GLOBAL while it plays 4.3 and unloads it after, so that the
 * plugin finds the function then and only then.
 */
#include <stddef.h>

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
