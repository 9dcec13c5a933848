// SPDX-License-Identifier: GPL-2.0-or-later
/* keventctl send TYPE OBJECT SIGNAL [PAYLOAD|-]: inject an event
 * (--batch FILE: many, see ctl-batch.c). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "duration.h"
#include "event.h"
#include "proto.h"
#include "util.h"

/* send --wait: each rule's outcome as keventd tells it, until the last.
 * timeout_ms 0: no bound. */
int ctl_wait_replies(int fd, uint64_t timeout_ms, const char *timeout_text)
{
	char buf[KCTL_MSG_MAX + 1];
	uint64_t deadline = timeout_ms ? now_monotonic_ns() + timeout_ms * 1000000ull : 0;
	for (;;) {
		struct kctl_msg m;
		int n = ctl_recv(fd, buf, deadline, &m);
		if (n == -ETIMEDOUT) {
			fprintf(stderr,
				"keventctl: timed out after %s waiting for the handlers of the "
				"event\n",
				timeout_text);
			return 1;
		}
		if (n == -EBADMSG)
			return 1;
		if (n <= 0) {
			/* after "event seqnum": the event is in keventd's journal,
			 * unless it runs without one */
			fprintf(stderr, "keventctl: keventd went away before the event's handlers "
					"were done; the event will be redelivered when keventd "
					"starts again (if it keeps a journal)\n");
			return CTL_EXIT_REDELIVERED;
		}
		const char *text = m.n > 1 ? m.f[1] : "";
		if (strcmp(m.f[0], "data") == 0) {
			ctl_print(stdout, "%s", text);
			fflush(stdout);
		} else if (strcmp(m.f[0], "ok") == 0 && strcmp(text, KCTL_WAIT_REDELIVERED) == 0) {
			fprintf(stderr, "keventctl: keventd restarted (or stopped) before the "
					"event's handlers were done; the event will be redelivered "
					"when it starts\n");
			return CTL_EXIT_REDELIVERED;
		} else if (strcmp(m.f[0], "ok") == 0) {
			return strcmp(text, "0") == 0 ? 0 : 1;
		} else if (strcmp(m.f[0], "err") == 0) {
			ctl_print(stderr, "keventctl: keventd: %s", text);
			return 1;
		}
	}
}

int ctl_send(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},	   {"verbose", no_argument, NULL, 'v'},
		{"batch", required_argument, NULL, 'b'},   {"wait", no_argument, NULL, 'w'},
		{"timeout", required_argument, NULL, 't'}, {0},
	};
	bool verbose = false, wait = false;
	const char *batch = NULL, *timeout = NULL;
	uint64_t timeout_ms = 0;
	int o;
	while ((o = getopt_long(argc, argv, "hvb:", opts, NULL)) != -1) {
		if (o == 'h') {
			printf("Usage: keventctl send [-v] [--wait [--timeout DURATION]] TYPE "
			       "OBJECT "
			       "SIGNAL [PAYLOAD|-]\n"
			       "       keventctl send [-v] --batch FILE|-\n"
			       "Queues an event in keventd; '-' reads the payload from stdin.\n"
			       "--wait waits until every handler of the event has finished and\n"
			       "prints each rule's outcome: exit 0 if all exited 0, else 1.\n"
			       "--batch queues one event per line of FILE:\n"
			       "TYPE<TAB>OBJECT<TAB>SIGNAL[<TAB>PAYLOAD], with \\n, \\t, \\\\ "
			       "escapes.\n");
			return 0;
		}
		if (o == 'b') {
			batch = optarg;
		} else if (o == 'v') {
			verbose = true;
		} else if (o == 'w') {
			wait = true;
		} else if (o == 't') {
			timeout = optarg;
			if (ctl_timeout_arg("--timeout", optarg, &timeout_ms))
				return EXIT_USAGE;
		} else {
			return ctl_option_error("send");
		}
	}
	if (timeout && !wait)
		return ctl_usage_error("--timeout goes with --wait");
	if (batch) {
		if (optind != argc || wait)
			return ctl_usage_error("send --batch takes no other arguments");
		return ctl_send_batch(c, batch, verbose);
	}
	if (argc - optind < 3 || argc - optind > 4)
		return ctl_usage_error("send needs TYPE OBJECT SIGNAL [PAYLOAD]");
	_cleanup_free_ char *stdin_payload = NULL;
	const char *payload;
	int rc = ctl_payload_arg(argc - optind == 4 ? argv[optind + 3] : "", &stdin_payload,
				 &payload);
	if (rc)
		return rc;
	const char *f[] = {wait ? "send-wait" : "send", argv[optind], argv[optind + 1],
			   argv[optind + 2], payload};
	int fd = ctl_open(c, f, 5);
	if (fd < 0)
		return 1;
	int status;
	if (wait) {
		char t[32];
		duration_format(timeout_ms, t, sizeof(t));
		status = ctl_wait_replies(fd, timeout_ms, timeout ? t : "");
		close(fd);
		return status;
	}
	char *seq = NULL;
	status = ctl_replies(fd, NULL, NULL, &seq);
	if (status == 0 && verbose)
		printf("queued as seqnum %s\n", seq ? seq : "?");
	free(seq);
	close(fd);
	return status;
}
