// SPDX-License-Identifier: GPL-2.0-or-later
/* The pager of the reading commands (keventctl(8), ENVIRONMENT): on a
 * terminal, their output goes through $KEVENTCTL_PAGER, else $PAGER, else
 * less (with LESS=FRXMK unless set: it quits when the text fits a
 * screen, keeps colours and does not clear the screen), as systemctl and
 * git do.  Not when stdout is not a terminal (or $TERM is unset or
 * "dumb"), with --no-pager, or when the pager is "" or "cat". */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl.h"

static pid_t pager_pid;

static void pager_close(void)
{
	if (pager_pid <= 0)
		return;
	fflush(stdout);
	/* the pager sees the end of the text, and keventctl waits until the
	 * reader quits it */
	close(STDOUT_FILENO);
	while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
		;
	pager_pid = 0;
}

void ctl_pager(const struct ctl *c)
{
	if (c->no_pager || pager_pid || !isatty(STDOUT_FILENO))
		return;
	/* a terminal that cannot show a pager (as systemd's pager decides) */
	const char *term = getenv("TERM");
	if (!term || !*term || strcmp(term, "dumb") == 0)
		return;
	const char *pager = getenv("KEVENTCTL_PAGER");
	if (!pager)
		pager = getenv("PAGER");
	if (!pager)
		pager = "less";
	if (!*pager || strcmp(pager, "cat") == 0)
		return;
	int fds[2];
	if (pipe(fds) < 0)
		return;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		dup2(fds[0], STDIN_FILENO);
		close(fds[0]);
		close(fds[1]);
		setenv("LESS", "FRXMK", 0);
		execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
		/* no shell: the text goes to the terminal as it is */
		execlp("cat", "cat", (char *)NULL);
		_exit(127);
	}
	dup2(fds[1], STDOUT_FILENO);
	close(fds[0]);
	close(fds[1]);
	/* a reader who quits the pager early ends keventctl quietly */
	signal(SIGPIPE, SIG_DFL);
	pager_pid = pid;
	atexit(pager_close);
}
