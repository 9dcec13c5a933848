// SPDX-License-Identifier: GPL-2.0-or-later
/* keventctl monitor [--json]: print each event keventd receives. */
#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "ctl.h"

static void print_line(const char *text, void *ud)
{
	(void)ud;
	printf("%s\n", text);
	fflush(stdout);
}

int ctl_monitor(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	bool json = false;
	int o;
	while ((o = getopt_long(argc, argv, "+hj", opts, NULL)) != -1) {
		if (o == 'h') {
			printf("Usage: keventctl monitor [--json]\n"
			       "Prints each event keventd receives and the rules it matched, until "
			       "interrupted.\n");
			return 0;
		}
		if (o != 'j')
			return ctl_option_error("monitor");
		json = true;
	}
	if (optind < argc)
		return ctl_usage_error("monitor takes no arguments");
	int fd = ctl_connect(c);
	if (fd < 0)
		return 1;
	const char *f[] = {"monitor", json ? "json" : "text"};
	int status = ctl_request(fd, f, 2) < 0 ? 1 : 0;
	/* the "ok" that starts the stream */
	if (status == 0)
		status = ctl_replies(fd, print_line, NULL, (char *[]){NULL});
	if (status == 0) {
		fprintf(stderr, "keventctl: monitoring %s (interrupt to stop)\n", c->control);
		status = ctl_replies(fd, print_line, NULL, NULL);
	}
	close(fd);
	return status;
}
