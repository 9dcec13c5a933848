// SPDX-License-Identifier: GPL-2.0-or-later
/* keventctl reload, status, events and explain. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "event.h"
#include "util.h"

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
	return ctl_call(c, f, 1, ctl_put_text, NULL, NULL);
}

/* What about tells, for status's verdict. */
struct about {
	struct strbuf head;	  /* the verdict's lines after the first */
	struct strbuf sources;	  /* a line per source on */
	struct strbuf conditions; /* the rows that hold, the first of them */
	char version[32], since[32], pid[16], rules[32], files[32];
	unsigned sources_on;	       /* bit per source enabled */
	size_t broken, holding, shown; /* conditions: holding, and named */
	bool failing, utc, colour;
};

static void head_line(struct strbuf *o, const char *label, const char *value)
{
	strbuf_printf(o, "%10s: ", label);
	strbuf_put_escaped(o, value);
	strbuf_putc(o, '\n');
}

/* "  critical  md-degraded /org/kernel/block/md0 since 10:02:11 (acknowledged)" */
static void condition_line(struct about *a, const char *const *f)
{
	int64_t since = 0;
	(void)parse_int64(f[4], &since);
	char when[64];
	ctl_format_time((uint64_t)since, a->utc, when, sizeof(when));
	const char *c = !a->colour			? ""
			: strcmp(f[1], "critical") == 0 ? "\033[1;31m"
			: strcmp(f[1], "warning") == 0	? "\033[1;33m"
							: "";
	strbuf_printf(&a->conditions, "            %s%-8s%s ", c, f[1], a->colour ? "\033[0m" : "");
	strbuf_put_escaped(&a->conditions, f[2]);
	strbuf_putc(&a->conditions, ' ');
	strbuf_put_escaped(&a->conditions, f[3]);
	strbuf_printf(&a->conditions, " since %s%s\n", when,
		      strcmp(f[5], "1") == 0 ? " (acknowledged)" : "");
	a->shown++;
}

static void about_line(const char *text, void *ud)
{
	struct about *a = ud;
	_cleanup_free_ char *copy = strdup(text);
	if (!copy)
		return;
	/* KEY and up to five values, split at \x1f */
	const char *f[6] = {copy, NULL, NULL, NULL, NULL, NULL};
	size_t n = 1;
	for (char *p = strchr(copy, '\x1f'); p && n < 6; p = strchr(p + 1, '\x1f')) {
		*p = '\0';
		f[n++] = p + 1;
	}
	if (n < 2)
		return;
	const char *bold = a->colour ? "\033[1;31m" : "", *off = a->colour ? "\033[0m" : "";
	if (strcmp(f[0], "version") == 0) {
		snprintf(a->version, sizeof(a->version), "%s", f[1]);
	} else if (strcmp(f[0], "pid") == 0) {
		snprintf(a->pid, sizeof(a->pid), "%s", f[1]);
	} else if (strcmp(f[0], "since") == 0) {
		snprintf(a->since, sizeof(a->since), "%s", f[1]);
	} else if (strcmp(f[0], "config") == 0) {
		head_line(&a->head, "config", f[1]);
	} else if (strcmp(f[0], "rule_dir") == 0) {
		head_line(&a->head, "rule dir", f[1]);
	} else if (strcmp(f[0], "state_dir") == 0) {
		head_line(&a->head, "state", f[1]);
	} else if (strcmp(f[0], "lib_dir") == 0) {
		head_line(&a->head, "lib", f[1]);
	} else if (strcmp(f[0], "source") == 0) {
		int src = kevent_source_from_name(f[1]);
		if (src >= 0)
			a->sources_on |= 1u << src;
		strbuf_printf(&a->sources, "%s%-10s ", a->sources.len ? "            " : "", f[1]);
		strbuf_put_escaped(&a->sources, n > 2 ? f[2] : "");
		strbuf_putc(&a->sources, '\n');
	} else if (strcmp(f[0], "rules") == 0 && n > 2) {
		snprintf(a->rules, sizeof(a->rules), "%s", f[1]);
		snprintf(a->files, sizeof(a->files), "%s", f[2]);
	} else if ((strcmp(f[0], "broken") == 0 || strcmp(f[0], "broken_kept") == 0) && n > 2) {
		a->broken++;
		strbuf_printf(&a->head, "    %sbroken%s: ", bold, off);
		strbuf_put_escaped(&a->head, f[1]);
		strbuf_puts(&a->head, strcmp(f[0], "broken") == 0
					      ? " (not in force): "
					      : " (its last good version in force): ");
		strbuf_put_escaped(&a->head, f[2]);
		strbuf_putc(&a->head, '\n');
	} else if (strcmp(f[0], "journal_failing") == 0) {
		a->failing = true;
		strbuf_printf(&a->head, "   %sjournal%s: failing (", bold, off);
		strbuf_put_escaped(&a->head, f[1]);
		strbuf_puts(&a->head, "): accepted events are not kept for a restart\n");
	} else if (strcmp(f[0], "conditions") == 0 && n == 5) {
		int64_t h = 0;
		(void)parse_int64(f[1], &h);
		a->holding = (size_t)h;
		if (!h)
			strbuf_puts(&a->conditions, "none hold\n");
		else
			strbuf_printf(&a->conditions, "%s hold: %s critical, %s warning, %s info\n",
				      f[1], f[2], f[3], f[4]);
	} else if (strcmp(f[0], "condition") == 0 && n == 6) {
		condition_line(a, f);
	}
}

/* "2h 3min", "5min 2s", "12s" */
static void put_age(struct strbuf *o, uint64_t s)
{
	if (s >= 86400)
		strbuf_printf(o, "%" PRIu64 "d %" PRIu64 "h", s / 86400, s % 86400 / 3600);
	else if (s >= 3600)
		strbuf_printf(o, "%" PRIu64 "h %" PRIu64 "min", s / 3600, s % 3600 / 60);
	else if (s >= 60)
		strbuf_printf(o, "%" PRIu64 "min %" PRIu64 "s", s / 60, s % 60);
	else
		strbuf_printf(o, "%" PRIu64 "s", s);
}

/* The verdict, as systemctl status starts: its first line, then the rest. */
static void print_verdict(const struct about *a)
{
	bool degraded = a->broken || a->failing;
	const char *dot = !a->colour ? "" : degraded ? "\033[1;33m" : "\033[1;32m";
	const char *off = a->colour ? "\033[0m" : "";
	int64_t since = 0;
	(void)parse_int64(a->since, &since);
	char when[64];
	ctl_format_time((uint64_t)since, a->utc, when, sizeof(when));
	_cleanup_strbuf_ struct strbuf o = STRBUF_INIT;
	uint64_t now = now_realtime_ns();
	put_age(&o, now > (uint64_t)since ? (now - (uint64_t)since) / 1000000000ull : 0);
	printf("%s\u25cf%s keventd %s: %s%s%s since %s (%s ago), pid %s\n", dot, off, a->version,
	       dot, degraded ? "running, degraded" : "running", off, when, strbuf_str(&o), a->pid);
	printf("     rules: %s in %s file%s%s\n", a->rules, a->files,
	       strcmp(a->files, "1") == 0 ? "" : "s",
	       a->broken ? "; broken files below (keventctl verify says more)" : "");
	fputs(strbuf_str(&a->head), stdout);
	printf("   sources: %s", a->sources.len ? strbuf_str(&a->sources) : "none\n");
	if (a->conditions.len) {
		printf("conditions: %s", strbuf_str(&a->conditions));
		if (a->holding > a->shown)
			printf("            ... %zu more (keventctl conditions)\n",
			       a->holding - a->shown);
	}
	putchar('\n');
}

/* The counters' text, without the rows of the sources that are off. */
struct counters {
	unsigned sources;
	bool all;
};

static void counters_text(const char *text, void *ud)
{
	const struct counters *c = ud;
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text + 1) : strlen(text);
		size_t word = strcspn(text, " \n");
		bool skip = false;
		for (int i = 0; !c->all && i < KEVENT_SOURCE_MAX; i++) {
			const char *name = kevent_source_name((enum kevent_source)i);
			if (word == strlen(name) && strncmp(text, name, word) == 0 &&
			    !(c->sources & (1u << i)))
				skip = true;
		}
		if (!skip)
			fwrite(text, 1, len, stdout);
		text += len;
	}
}

int ctl_status(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'}, {"prometheus", no_argument, NULL, 'p'},
		{"all", no_argument, NULL, 'a'},  {"utc", no_argument, NULL, 'u'},
		{"help", no_argument, NULL, 'h'}, {0},
	};
	const char *format = "text";
	bool all = false, utc = false;
	int o;
	while ((o = getopt_long(argc, argv, "hja", opts, NULL)) != -1) {
		if (o == 'h') {
			printf("Usage: keventctl status [--all] [--utc] [--json|--prometheus]\n"
			       "Prints, as systemctl status does, keventd's verdict (version, "
			       "pid,\n"
			       "since, config, rule, state and lib directories, each source on "
			       "with\n"
			       "what it watches, the broken files, the conditions that hold), "
			       "then\n"
			       "its counters (the sources that are off only with --all).  --json:\n"
			       "the verdict as \"keventd\", then the counters; --prometheus: the\n"
			       "counters alone.\n");
			return 0;
		}
		if (o == 'a') {
			all = true;
			continue;
		}
		if (o == 'u') {
			utc = true;
			continue;
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
	if (strcmp(format, "text") != 0) {
		/* --prometheus has a line per condition row */
		ctl_large_output();
		return ctl_call(c, f, 2, ctl_put_text, NULL, NULL);
	}
	const char *fa[] = {"about"};
	int fd = ctl_open(c, fa, 1);
	if (fd < 0)
		return 1;
	struct about a = {
		.head = STRBUF_INIT, .sources = STRBUF_INIT, .conditions = STRBUF_INIT, .utc = utc};
	a.colour = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
	ctl_pager(c); /* after the terminal's colours were decided */
	int status = ctl_replies(fd, about_line, &a, NULL);
	struct counters cs = {.sources = a.sources_on, .all = all};
	if (status == 0) {
		print_verdict(&a);
		status = ctl_request(fd, f, 2) < 0 ? 1 : ctl_replies(fd, counters_text, &cs, NULL);
	}
	strbuf_release(&a.head);
	strbuf_release(&a.sources);
	strbuf_release(&a.conditions);
	close(fd);
	return status;
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
	if (strcmp(format, "text") == 0)
		ctl_pager(c);
	return ctl_call(c, f, nf, print_local, &utc, NULL);
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
	if (strcmp(format, "text") == 0)
		ctl_pager(c);
	return ctl_call(c, f, 4, print_local, &utc, NULL);
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
	const char *f[] = {"trigger", action, strbuf_str(&list)};
	char *ok = NULL;
	int status = ctl_call(c, f, 3, ctl_put_text, NULL, &ok);
	if (status == 0)
		printf("%s device%s reported as %s events\n", ok ? ok : "0",
		       ok && strcmp(ok, "1") == 0 ? "" : "s", action);
	free(ok);
	return status;
}
