// SPDX-License-Identifier: GPL-2.0-or-later
/* keventctl reload, status, events and explain. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "event.h"
#include "util.h"

static void print_text(const char *text, void *ud)
{
	(void)ud;
	fputs(text, stdout);
}

static int simple(struct ctl *c, const char *const *f, size_t n)
{
	int fd = ctl_connect(c);
	if (fd < 0)
		return 1;
	char *ok = NULL;
	int status = ctl_request(fd, f, n) < 0 ? 1 : ctl_replies(fd, print_text, NULL, &ok);
	free(ok);
	close(fd);
	return status;
}

int ctl_reload(struct ctl *c, int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("Usage: keventctl reload\nMakes keventd reload its rules now and prints "
		       "what changed.\n");
		return 0;
	}
	if (argc > 1)
		return ctl_usage_error("reload takes no arguments");
	const char *f[] = {"reload"};
	return simple(c, f, 1);
}

int ctl_status(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"prometheus", no_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *format = "text";
	int o;
	while ((o = getopt_long(argc, argv, "hj", opts, NULL)) != -1) {
		if (o == 'h') {
			printf("Usage: keventctl status [--json|--prometheus]\n"
			       "Prints keventd's counters: as text, as JSON, or in the Prometheus\n"
			       "text exposition format.\n");
			return 0;
		}
		if (o != 'j' && o != 'p')
			return ctl_option_error("status");
		if (strcmp(format, "text") != 0)
			return ctl_usage_error("--json and --prometheus exclude each other");
		format = o == 'j' ? "json" : "prometheus";
	}
	if (optind < argc)
		return ctl_usage_error("status takes no arguments");
	const char *f[] = {"status", format};
	return simple(c, f, 2);
}

/* Adds a filter's field, --source/--type checked here for a clear error. */
static int add_filter(const char **f, size_t *n, size_t max, char *buf, size_t size,
		      const char *kind, const char *value)
{
	if (strcmp(kind, "source") == 0 && kevent_source_from_name(value) < 0)
		return ctl_usage_error("unknown source '%s' (%s)", value, kevent_source_names());
	if (strcmp(kind, "type") == 0 && kevent_type_from_name(value) < 0)
		return ctl_usage_error("unknown type '%s' (general, storage, power, fs, hotplug)",
				       value);
	if (*n == max)
		return ctl_usage_error("--%s is given once", kind);
	snprintf(buf, size, "%s=%s", kind, value);
	f[(*n)++] = buf;
	return 0;
}

static void print_local(const char *text, void *ud)
{
	ctl_put_times(stdout, text, *(bool *)ud);
}

int ctl_events(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},	{"source", required_argument, NULL, 's'},
		{"type", required_argument, NULL, 'T'}, {"rule", required_argument, NULL, 'r'},
		{"failed", no_argument, NULL, 'F'},	{"utc", no_argument, NULL, 'u'},
		{"help", no_argument, NULL, 'h'},	{0},
	};
	const char *format = "text", *n = "0";
	const char *f[8] = {"events"};
	size_t nf = 3;
	char src[80], type[80], rule[160];
	bool utc = false;
	int o, rc;
	while ((o = getopt_long(argc, argv, "hjn:", opts, NULL)) != -1) {
		switch (o) {
		case 'h':
			printf("Usage: keventctl events [--json] [--utc] [-n N] [--source SRC] "
			       "[--type TYPE]\n"
			       "                        [--rule NAME] [--failed]\n"
			       "Prints the last N events keventd handled (default: all it keeps,\n"
			       "keventd --history) of those the filters let through, oldest "
			       "first,\n"
			       "and what became of each rule they matched; times in local time\n"
			       "unless --utc.  --failed: the events of which a run failed.\n");
			return 0;
		case 'j':
			format = "json";
			break;
		case 'u':
			utc = true;
			break;
		case 'n': {
			int64_t v;
			if (parse_int64(optarg, &v) < 0 || v < 1)
				return ctl_usage_error("-n wants a number of events, not '%s'",
						       optarg);
			n = optarg;
			break;
		}
		case 's':
			if ((rc = add_filter(f, &nf, 7, src, sizeof(src), "source", optarg)))
				return rc;
			break;
		case 'T':
			if ((rc = add_filter(f, &nf, 7, type, sizeof(type), "type", optarg)))
				return rc;
			break;
		case 'r':
			if (strlen(optarg) > 128)
				return ctl_usage_error("a rule name is 1-128 bytes");
			if ((rc = add_filter(f, &nf, 7, rule, sizeof(rule), "rule", optarg)))
				return rc;
			break;
		case 'F':
			if (nf == 7)
				return ctl_usage_error("--failed is given once");
			f[nf++] = "failed";
			break;
		default:
			return ctl_option_error("events");
		}
	}
	if (optind < argc)
		return ctl_usage_error("events takes no arguments");
	f[1] = n;
	f[2] = format;
	int fd = ctl_connect(c);
	if (fd < 0)
		return 1;
	char *ok = NULL;
	int status = ctl_request(fd, f, nf) < 0 ? 1 : ctl_replies(fd, print_local, &utc, &ok);
	free(ok);
	close(fd);
	return status;
}

int ctl_explain(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"source", required_argument, NULL, 's'},
		{"utc", no_argument, NULL, 'u'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *format = "text", *source = "";
	bool utc = false;
	int o;
	while ((o = getopt_long(argc, argv, "hjs:", opts, NULL)) != -1) {
		if (o == 'h') {
			printf("Usage: keventctl explain SEQ|last [--source SRC] [--json] [--utc]\n"
			       "Shows, for an event of keventd's history, every rule in order:\n"
			       "matched or not and why not, against the rules in force when it\n"
			       "was handled, and whether today's rules decide differently.\n");
			return 0;
		}
		if (o == 'j') {
			format = "json";
		} else if (o == 'u') {
			utc = true;
		} else if (o == 's') {
			if (kevent_source_from_name(optarg) < 0)
				return ctl_usage_error("unknown source '%s' (%s)", optarg,
						       kevent_source_names());
			source = optarg;
		} else {
			return ctl_option_error("explain");
		}
	}
	if (argc - optind != 1)
		return ctl_usage_error("explain needs SEQ or last");
	int64_t v;
	if (strcmp(argv[optind], "last") != 0 && (parse_int64(argv[optind], &v) < 0 || v < 0))
		return ctl_usage_error("explain wants a sequence number or 'last', not '%s'",
				       argv[optind]);
	const char *f[] = {"explain", argv[optind], source, format};
	int fd = ctl_connect(c);
	if (fd < 0)
		return 1;
	char *ok = NULL;
	int status = ctl_request(fd, f, 4) < 0 ? 1 : ctl_replies(fd, print_local, &utc, &ok);
	free(ok);
	close(fd);
	return status;
}

int ctl_trigger(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"subsystem", required_argument, NULL, 's'},
		{"action", required_argument, NULL, 'a'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *action = "add";
	_cleanup_strbuf_ struct strbuf list = STRBUF_INIT;
	int o;
	while ((o = getopt_long(argc, argv, "ha:s:", opts, NULL)) != -1) {
		if (o == 'h') {
			printf("Usage: keventctl trigger [--subsystem S]... [--action add|change]\n"
			       "Makes keventd report the devices present (of the subsystems S, or\n"
			       "all) as udev events, for its own rules alone: handlers get\n"
			       "KEVENT_SYNTHETIC=1.  No uevent file is written, so udev rules do\n"
			       "not run again.  Prints how many devices were reported.\n");
			return 0;
		}
		if (o == 'a') {
			if (strcmp(optarg, "add") != 0 && strcmp(optarg, "change") != 0)
				return ctl_usage_error("--action is add or change, not '%s'",
						       optarg);
			action = optarg;
		} else if (o == 's') {
			if (!*optarg || strchr(optarg, ','))
				return ctl_usage_error("bad subsystem name '%s'", optarg);
			if (list.len)
				strbuf_putc(&list, ',');
			strbuf_puts(&list, optarg);
		} else {
			return ctl_option_error("trigger");
		}
	}
	if (optind < argc)
		return ctl_usage_error("trigger takes no arguments");
	if (list.oom)
		return ctl_usage_error("out of memory");
	int fd = ctl_connect(c);
	if (fd < 0)
		return 1;
	const char *f[] = {"trigger", action, strbuf_str(&list)};
	char *ok = NULL;
	int status = ctl_request(fd, f, 3) < 0 ? 1 : ctl_replies(fd, print_text, NULL, &ok);
	if (status == 0)
		printf("%s device%s reported as %s events\n", ok ? ok : "0",
		       ok && strcmp(ok, "1") == 0 ? "" : "s", action);
	free(ok);
	close(fd);
	return status;
}
