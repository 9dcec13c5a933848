// SPDX-License-Identifier: GPL-2.0-or-later
#include "fault.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *kfault_point;
static char point[32];
static unsigned long left;
static int sig = SIGKILL;

int kfault_init(void)
{
	const char *v = getenv("KEVENTD_FAULT");
	if (!v || !*v)
		return 0;
	const char *colon = strchr(v, ':');
	if (!colon || colon == v || (size_t)(colon - v) >= sizeof(point))
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long n = strtoul(colon + 1, &end, 10);
	if (errno || n == 0 || end == colon + 1)
		return -EINVAL;
	if (*end && strcmp(end, ":segv") != 0 && strcmp(end, ":kill") != 0)
		return -EINVAL;
	sig = strcmp(end, ":segv") == 0 ? SIGSEGV : SIGKILL;
	memcpy(point, v, (size_t)(colon - v));
	point[colon - v] = '\0';
	left = n;
	kfault_point = point;
	return 0;
}

void kfault_pass(const char *p)
{
	if (strcmp(p, kfault_point) != 0 || --left)
		return;
	/* the default action, whatever a sanitizer or anyone set */
	signal(sig, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	(void)!write(STDERR_FILENO, "keventd: fault point reached\n", 29);
	raise(sig);
	_exit(128 + sig);
}
