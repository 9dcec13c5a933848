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

/* A SIGSEGV that another process sent (kill(2): si_code SI_USER, or
 * another of the codes at or below 0) says so before keventd dies of it;
 * one of keventd's own faults (si_code above 0) dies unmarked: a test
 * tells the crashes it injected from a real one. */
static void on_segv(int signo, siginfo_t *si, void *uc)
{
	static const char sent[] =
		"keventd: fault: injected crash: SIGSEGV sent by another process\n";
	(void)uc;
	signal(signo, SIG_DFL);
	if (si->si_code <= 0)
		(void)!write(STDERR_FILENO, sent, sizeof(sent) - 1);
	/* blocked until the return: then the default action, a real fault too */
	raise(signo);
}

int kfault_init(void)
{
	const char *v = getenv("KEVENTD_FAULT");
	if (!v || !*v)
		return 0;
	if (strcmp(v, "none") != 0) {
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
	}
	struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO};
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGSEGV, &sa, NULL) < 0 ? -errno : 0;
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
	char msg[128];
	int n = snprintf(msg, sizeof(msg),
			 "keventd: fault point reached: injected crash at %s (%s)\n", p,
			 sig == SIGSEGV ? "SIGSEGV" : "SIGKILL");
	if (n > 0)
		(void)!write(STDERR_FILENO, msg,
			     (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	raise(sig);
	_exit(128 + sig);
}
