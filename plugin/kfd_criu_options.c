// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_criu_options - the plugin's options and where they come from
 *
 * Each option has one name (gpu_map, leave_running, drm_reattach) and
 * reaches the plugin through one of three channels, of which the first
 * that sets it wins:
 *
 * 1. CRIU 4.3's --plugin-option kfd_criu.NAME[=VALUE] (also from CRIU's
 *    configuration files, e.g. runc.conf, and the RPC's plugin_options),
 *    read through criu_plugin_get_options() when the criu that loaded the
 *    plugin exports it;
 * 2. the environment of criu: KFD_CRIU_<NAME in capitals>;
 * 3. /etc/criu/kfd_criu.conf, beside CRIU's own configuration files: one
 *    NAME=VALUE a line, blanks around either ignored, # starts a comment.
 *
 * Container engines start criu with an environment of their own (podman's
 * checkpoint passes only PATH and XDG_RUNTIME_DIR, Kubernetes has none per
 * restore), so only the first and the last reach a criu they run. Unset
 * everywhere, an option has its default, which the code that uses it
 * knows.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kfd_criu.h"

#define CONFIG_FILE		"/etc/criu/kfd_criu.conf"
#define CONFIG_LINE_MAX		1024
#define OPTION_PREFIX		"--kfd_criu."	/* how 4.3 hands over ours */
#define ENV_PREFIX		"KFD_CRIU_"

static const char *const option_names[] = {
	[KFD_OPT_GPU_MAP] = "gpu_map",
	[KFD_OPT_LEAVE_RUNNING] = "leave_running",
	[KFD_OPT_DRM_REATTACH] = "drm_reattach",
};

/* Values from the config file and from --plugin-option; NULL: not set */
static char *config_values[KFD_OPT_MAX];
static char *plugin_values[KFD_OPT_MAX];

/* The option called @name, of @len bytes; -ENOENT if there is none */
static int option_of_name(const char *name, size_t len)
{
	int i;

	for (i = 0; i < KFD_OPT_MAX; i++)
		if (strlen(option_names[i]) == len && !strncmp(option_names[i], name, len))
			return i;
	return -ENOENT;
}

/* Sets @values[@name] (@name_len bytes) to @value, saying where it came from */
static void set_option(char **values, const char *name, size_t name_len, const char *value,
		       const char *from)
{
	int i = option_of_name(name, name_len);
	char *copy;

	if (i < 0) {
		pr_warn("%s: unknown option \"%.*s\", ignored\n", from, (int)name_len, name);
		return;
	}
	copy = strdup(value);
	if (!copy) {
		pr_err("%s: option %s: out of memory, ignored\n", from, option_names[i]);
		return;
	}
	free(values[i]);
	values[i] = copy;
	pr_info("%s: %s=%s\n", from, option_names[i], copy);
}

/* @s without the blanks at its start and end, in place */
static char *trim(char *s)
{
	char *end = s + strlen(s);

	while (isspace((unsigned char)*s))
		s++;
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* One line of the config file: NAME=VALUE, blank, or a comment */
static void read_config_line(char *line, const char *path, unsigned int nr)
{
	char *eq, *name, from[PATH_MAX + 16];

	line[strcspn(line, "#")] = '\0';
	if (!*trim(line))
		return;
	snprintf(from, sizeof(from), "%s:%u", path, nr);
	eq = strchr(line, '=');
	if (!eq) {
		pr_warn("%s: expected NAME=VALUE, ignored\n", from);
		return;
	}
	*eq = '\0';
	name = trim(line);
	set_option(config_values, name, strlen(name), trim(eq + 1), from);
}

/* Reads the config file, if there is one */
static void read_config_file(void)
{
	char path[PATH_MAX], line[CONFIG_LINE_MAX];
	unsigned int nr = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s" CONFIG_FILE, kfd_criu_root);
	f = fopen(path, "re");
	if (!f) {
		if (errno != ENOENT)
			pr_warn("cannot read %s: %s; its options are not used\n", path,
				strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f))
		read_config_line(line, path, ++nr);
	fclose(f);
}

/*
 * Takes this plugin's options from CRIU 4.3's list of every plugin's:
 * "--PLUGIN.NAME[=VALUE]" each, after a program name. A NAME without a
 * value is a flag: "1".
 */
static void read_plugin_options(criu_plugin_get_options_t *get_options)
{
	const char *arg, *eq;
	char **argv;
	int argc, i, ret;

	ret = get_options(&argc, &argv);
	if (ret) {
		pr_warn("cannot get CRIU's plugin options: %s\n", strerror(-ret));
		return;
	}
	for (i = 1; i < argc && argv[i]; i++) {
		if (strncmp(argv[i], OPTION_PREFIX, strlen(OPTION_PREFIX)))
			continue;
		arg = argv[i] + strlen(OPTION_PREFIX);
		eq = strchr(arg, '=');
		set_option(plugin_values, arg, eq ? (size_t)(eq - arg) : strlen(arg),
			   eq ? eq + 1 : "1", "--plugin-option");
	}
}

/**
 * kfd_criu_options_load() - read the options of this criu command
 * @get_options: criu_plugin_get_options() of the criu that loaded the
 *		 plugin, NULL if it has none (CRIU before 4.3)
 *
 * The config file and the plugin options are read once, at the plugin's
 * init; the environment is read at each use.
 */
void kfd_criu_options_load(criu_plugin_get_options_t *get_options)
{
	kfd_criu_options_forget();
	read_config_file();
	if (get_options)
		read_plugin_options(get_options);
}

/**
 * kfd_criu_options_forget() - forget the options, at the end of a stage
 */
void kfd_criu_options_forget(void)
{
	int i;

	for (i = 0; i < KFD_OPT_MAX; i++) {
		free(config_values[i]);
		free(plugin_values[i]);
		config_values[i] = NULL;
		plugin_values[i] = NULL;
	}
}

/**
 * kfd_criu_option() - the value of an option
 * @opt: which
 *
 * Return: its value from the first channel that sets it (--plugin-option,
 * the environment, the config file), or NULL if none does.
 */
const char *kfd_criu_option(enum kfd_criu_opt opt)
{
	char env[64], *s;

	if (plugin_values[opt])
		return plugin_values[opt];
	snprintf(env, sizeof(env), ENV_PREFIX "%s", option_names[opt]);
	for (s = env + strlen(ENV_PREFIX); *s; s++)
		*s = toupper((unsigned char)*s);
	return getenv(env) ?: config_values[opt];
}
