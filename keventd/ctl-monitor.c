// SPDX-License-Identifier: GPL-2.0-or-later
/* keventctl monitor: print each event keventd receives, as udevadm
 * monitor does: with the time, filtered, for a count or a time. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "event.h"
#include "proto.h"
#include "util.h"

struct watch {
	bool json, utc;
	uint64_t count, seen; /* count 0: no bound */
};

/* One line: the time it came (text), then keventd's line; whether it was
 * an event (not a note about lines lost). */
static bool print_line(struct watch *w, const char *text)
{
	if (w->json) {
		printf("%s\n", text);
	} else {
		char t[64];
		ctl_format_time(now_realtime_ns(), w->utc, t, sizeof(t));
		ctl_print(stdout, "%s %s", t, text);
	}
	fflush(stdout);
	return text[0] != '(';
}

/* Reads the stream until keventd stops, count events were shown or
 * timeout_ms passed (0: no bound).  0, or 1 on an error. */
static int watch_stream(int fd, struct watch *w, uint64_t timeout_ms)
{
	char buf[KCTL_MSG_MAX + 1];
	uint64_t deadline = timeout_ms ? now_monotonic_ns() + timeout_ms * 1000000ull : 0;
	for (;;) {
		struct kctl_msg m;
		int n = ctl_recv(fd, buf, deadline, &m);
		if (n == 0 || n == -ETIMEDOUT)
			return 0; /* keventd stopped, or the time is up */
		if (n == -EBADMSG)
			return 1;
		if (n < 0) {
			fprintf(stderr, "keventctl: reading from keventd: %s\n", strerror(-n));
			return 1;
		}
		if (strcmp(m.f[0], "err") == 0) {
			ctl_print(stderr, "keventctl: keventd: %s", m.n > 1 ? m.f[1] : "error");
			return 1;
		}
		if (strcmp(m.f[0], "data") == 0 && m.n > 1 && print_line(w, m.f[1]) && w->count &&
		    ++w->seen == w->count)
			return 0;
	}
}

int ctl_monitor(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},	   {"utc", no_argument, NULL, 'u'},
		{"source", required_argument, NULL, 's'},  {"type", required_argument, NULL, 'T'},
		{"rule", required_argument, NULL, 'r'},	   {"count", required_argument, NULL, 'c'},
		{"timeout", required_argument, NULL, 't'}, {"failed", no_argument, NULL, 'F'},
		{"help", no_argument, NULL, 'h'},	   {0},
	};
	struct watch w = {0};
	uint64_t timeout_ms = 0;
	const char *f[6] = {"monitor"};
	size_t nf = 2;
	char bufs[3][160];
	int o;
	while ((o = getopt_long(argc, argv, "hjc:t:", opts, NULL)) != -1) {
		int64_t v;
		switch (o) {
		case 'h':
			printf("Usage: keventctl monitor [--json] [--utc] [--source SRC] [--type "
			       "TYPE] [--rule NAME]\n"
			       "                         [-c N] [-t SECONDS]\n"
			       "Prints each event keventd receives and the rules it matched, with "
			       "the time\n"
			       "(local unless --utc), until interrupted, N events were shown (-c) "
			       "or\n"
			       "SECONDS passed (-t).\n");
			return 0;
		case 'j':
			w.json = true;
			break;
		case 'u':
			w.utc = true;
			break;
		case 'c':
			if (parse_int64(optarg, &v) < 0 || v < 1)
				return ctl_usage_error("-c wants a number of events, not '%s'",
						       optarg);
			w.count = (uint64_t)v;
			break;
		case 't':
			if (ctl_timeout_arg("-t", optarg, &timeout_ms))
				return EXIT_USAGE;
			break;
		case 's':
		case 'T':
		case 'r': {
			const char *kind = o == 's' ? "source" : o == 'T' ? "type" : "rule";
			if (o == 's' && kevent_source_from_name(optarg) < 0)
				return ctl_usage_error("unknown source '%s' (%s)", optarg,
						       kevent_source_names());
			if (o == 'T' && kevent_type_from_name(optarg) < 0)
				return ctl_usage_error(
					"unknown type '%s' (general, storage, power, "
					"fs, hotplug)",
					optarg);
			if (o == 'r' && (!*optarg || strlen(optarg) > 128))
				return ctl_usage_error("a rule name is 1-128 bytes");
			if (nf == 5)
				return ctl_usage_error("each filter is given once");
			char *b = bufs[nf - 2];
			snprintf(b, sizeof(bufs[0]), "%s=%s", kind, optarg);
			f[nf++] = b;
			break;
		}
		case 'F':
			return ctl_usage_error("monitor shows events as they come, before their "
					       "handlers run: --failed is for events");
		default:
			return ctl_option_error("monitor");
		}
	}
	if (optind < argc)
		return ctl_usage_error("monitor takes no arguments");
	f[1] = w.json ? "json" : "text";
	int fd = ctl_open(c, f, nf);
	if (fd < 0)
		return 1;
	/* the "ok" that starts the stream */
	int status = ctl_replies(fd, NULL, NULL, (char *[]){NULL});
	if (status == 0) {
		fprintf(stderr, "keventctl: monitoring %s (interrupt to stop)\n", c->control);
		status = watch_stream(fd, &w, timeout_ms);
	}
	close(fd);
	return status;
}
