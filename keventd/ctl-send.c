// SPDX-License-Identifier: GPL-2.0-or-later
/* keventctl send TYPE OBJECT SIGNAL [PAYLOAD|-]: inject an event
 * (--batch FILE: many, see ctl-batch.c). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "event.h"
#include "util.h"

int ctl_send(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{"verbose", no_argument, NULL, 'v'},
		{"batch", required_argument, NULL, 'b'},
		{0},
	};
	bool verbose = false;
	const char *batch = NULL;
	int o;
	while ((o = getopt_long(argc, argv, "+hvb:", opts, NULL)) != -1) {
		if (o == 'h') {
			printf("Usage: keventctl send [-v] TYPE OBJECT SIGNAL [PAYLOAD|-]\n"
			       "       keventctl send [-v] --batch FILE|-\n"
			       "Queues an event in keventd; '-' reads the payload from stdin.\n"
			       "--batch queues one event per line of FILE:\n"
			       "TYPE<TAB>OBJECT<TAB>SIGNAL[<TAB>PAYLOAD], with \\n, \\t, \\\\ "
			       "escapes.\n");
			return 0;
		}
		if (o == 'b')
			batch = optarg;
		else if (o == 'v')
			verbose = true;
		else
			return ctl_option_error("send");
	}
	if (batch) {
		if (optind != argc)
			return ctl_usage_error("send --batch takes no other arguments");
		return ctl_send_batch(c, batch, verbose);
	}
	if (argc - optind < 3 || argc - optind > 4)
		return ctl_usage_error("send needs TYPE OBJECT SIGNAL [PAYLOAD]");
	_cleanup_free_ char *stdin_payload = NULL;
	const char *payload = argc - optind == 4 ? argv[optind + 3] : "";
	if (strcmp(payload, "-") == 0) {
		size_t len;
		int rc = read_fd(0, KEVENT_PAYLOAD_MAX + 1, &stdin_payload, &len);
		if (rc < 0)
			return ctl_usage_error("cannot read the payload: %s",
					       rc == -EFBIG ? "longer than 4000 bytes"
							    : strerror(-rc));
		payload = stdin_payload;
	}
	int fd = ctl_connect(c);
	if (fd < 0)
		return 1;
	const char *f[] = {"send", argv[optind], argv[optind + 1], argv[optind + 2], payload};
	int status = ctl_request(fd, f, 5) < 0 ? 1 : 0;
	char *seq = NULL;
	if (status == 0)
		status = ctl_replies(fd, NULL, NULL, &seq);
	if (status == 0 && verbose)
		printf("queued as seqnum %s\n", seq ? seq : "?");
	free(seq);
	close(fd);
	return status;
}
