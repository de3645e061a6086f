// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_criu_options - the plugins' options and where they come from
 *
 * Built into both plugins, each with its own struct plugin_options: kfd_criu
 * (gpu_map, leave_running) and drm_reattach (enable). Each option has one
 * name and reaches its plugin PLUGIN through one of three channels, of
 * which the first that sets it wins:
 *
 * 1. CRIU 4.3's --plugin-option PLUGIN.NAME[=VALUE] (also from CRIU's
 *    configuration files, e.g. runc.conf, and the RPC's plugin_options),
 *    read through criu_plugin_get_options() when the criu that loaded the
 *    plugin exports it;
 * 2. the environment of criu: the plugin's prefix and NAME in capitals
 *    (KFD_CRIU_GPU_MAP, DRM_REATTACH_ENABLE), then an older name if the
 *    option had one (KFD_CRIU_DRM_REATTACH);
 * 3. /etc/criu/PLUGIN.conf, beside CRIU's own configuration files: one
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

#include "plugin_common.h"

#define CONFIG_DIR		"/etc/criu/"
#define CONFIG_LINE_MAX		1024

/* The option of @o called @name, of @len bytes; -ENOENT if there is none */
static int option_of_name(const struct plugin_options *o, const char *name, size_t len)
{
	unsigned int i;

	for (i = 0; i < o->nr; i++)
		if (strlen(o->names[i]) == len && !strncmp(o->names[i], name, len))
			return i;
	return -ENOENT;
}

/*
 * Sets @values[@name] (@name_len bytes) of @o to @value, saying where it
 * came from
 */
static void set_option(const struct plugin_options *o, char **values, const char *name,
		       size_t name_len, const char *value, const char *from)
{
	int i = option_of_name(o, name, name_len);
	char *copy;

	if (i < 0) {
		pr_warn("%s: unknown option \"%.*s\", ignored\n", from, (int)name_len, name);
		return;
	}
	copy = strdup(value);
	if (!copy) {
		pr_err("%s: option %s: out of memory, ignored\n", from, o->names[i]);
		return;
	}
	free(values[i]);
	values[i] = copy;
	pr_info("%s: %s=%s\n", from, o->names[i], copy);
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
static void read_config_line(struct plugin_options *o, char *line, const char *path,
			     unsigned int nr)
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
	set_option(o, o->config, name, strlen(name), trim(eq + 1), from);
}

/* Reads the config file, if there is one */
static void read_config_file(struct plugin_options *o)
{
	char path[PATH_MAX], line[CONFIG_LINE_MAX];
	unsigned int nr = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s" CONFIG_DIR "%s.conf", kfd_criu_root, o->plugin);
	f = fopen(path, "re");
	if (!f) {
		if (errno != ENOENT)
			pr_warn("cannot read %s: %s; its options are not used\n", path,
				strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f))
		read_config_line(o, line, path, ++nr);
	fclose(f);
}

/*
 * Takes this plugin's options from CRIU 4.3's list of every plugin's:
 * "--PLUGIN.NAME[=VALUE]" each, after a program name. A NAME without a
 * value is a flag: "1".
 */
static void read_plugin_options(struct plugin_options *o, criu_plugin_get_options_t *get_options)
{
	const char *arg, *eq;
	size_t len = strlen(o->plugin);
	char **argv;
	int argc, i, ret;

	ret = get_options(&argc, &argv);
	if (ret) {
		pr_warn("cannot get CRIU's plugin options: %s\n", strerror(-ret));
		return;
	}
	for (i = 1; i < argc && argv[i]; i++) {
		if (strncmp(argv[i], "--", 2) || strncmp(argv[i] + 2, o->plugin, len) ||
		    argv[i][len + 2] != '.')
			continue;
		arg = argv[i] + len + 3;
		eq = strchr(arg, '=');
		set_option(o, o->cli, arg, eq ? (size_t)(eq - arg) : strlen(arg),
			   eq ? eq + 1 : "1", "--plugin-option");
	}
}

/**
 * kfd_criu_options_load() - read a plugin's options of this criu command
 * @o: the plugin's options
 * @get_options: criu_plugin_get_options() of the criu that loaded the
 *		 plugin, NULL if it has none (CRIU before 4.3)
 *
 * The config file and the plugin options are read once, at the plugin's
 * init; the environment is read at each use.
 */
void kfd_criu_options_load(struct plugin_options *o, criu_plugin_get_options_t *get_options)
{
	kfd_criu_options_forget(o);
	read_config_file(o);
	if (get_options)
		read_plugin_options(o, get_options);
}

/**
 * kfd_criu_options_forget() - forget a plugin's options, at the end of a stage
 * @o: the plugin's options
 */
void kfd_criu_options_forget(struct plugin_options *o)
{
	unsigned int i;

	for (i = 0; i < o->nr; i++) {
		free(o->config[i]);
		free(o->cli[i]);
		o->config[i] = NULL;
		o->cli[i] = NULL;
	}
}

/**
 * kfd_criu_option() - the value of a plugin's option
 * @o: the plugin's options
 * @opt: which, by the plugin's number
 *
 * Return: its value from the first channel that sets it (--plugin-option,
 * the environment, the config file), or NULL if none does.
 */
const char *kfd_criu_option(const struct plugin_options *o, unsigned int opt)
{
	const char *value;
	char env[64], *s;

	if (o->cli[opt])
		return o->cli[opt];
	snprintf(env, sizeof(env), "%s%s", o->env_prefix, o->names[opt]);
	for (s = env + strlen(o->env_prefix); *s; s++)
		*s = toupper((unsigned char)*s);
	value = getenv(env);
	if (!value && o->old_env && o->old_env[opt])
		value = getenv(o->old_env[opt]);
	return value ?: o->config[opt];
}
