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

static char *no_options[] = { "criu", NULL };

/*
 * No plugin options: 4.3's criu-plugin.h gives an empty list as argc 1,
 * argv[0] a program name, argv[argc] NULL.
 */
int criu_plugin_get_options(int *argc, char ***argv)
{
	*argc = 1;
	*argv = no_options;
	return 0;
}
