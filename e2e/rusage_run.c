// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: rusage_run - time a command and report its peak memory
 *
 * Runs a command, waits for it and prints one line:
 * "elapsed_ms=N maxrss_kb=N status=N". busybox has no time(1) that
 * reports peak RSS, and the benchmark needs CRIU's (the plugin runs inside
 * CRIU, so CRIU's peak is the plugin's while it moves the stream).
 *
 * Usage: rusage_run COMMAND [ARGS...]
 */

#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long elapsed_ms(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000;
}

int main(int argc, char **argv)
{
	struct timespec start, end;
	struct rusage ru;
	int status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: %s COMMAND [ARGS...]\n", argv[0]);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &end);
	printf("elapsed_ms=%ld maxrss_kb=%ld status=%d\n", elapsed_ms(&start, &end),
	       ru.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : 128);
	return 0;
}
