// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * keventctl record [-o FILE]: every event keventd receives, whole, as one
 * JSON line each (event-json.h), until interrupted.
 * keventctl replay FILE [--dry-run] [--rules-dir DIR]... [--strict]: the
 * events of such a file through the rules offline (test's output for
 * each), or into keventd as socket events, posted as send --batch does.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl.h"
#include "event-json.h"
#include "proto.h"
#include "ruleset.h"
#include "util.h"

#define MAX_DIRS	64
#define RECORD_LINE_MAX (256 * 1024) /* far above the longest record */

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* "SOURCE\x1fSEQNUM\x1fTIMESTAMP\x1fTYPE\x1fOBJECT\x1fSIGNAL\x1fPAYLOAD"
 * (kmonitor_record()) as an event. */
static int from_record_text(char *text, struct kevent **out, const char **why)
{
	char *f[7];
	f[0] = text;
	for (int i = 1; i < 7; i++) {
		char *sep = strchr(f[i - 1], '\x1f');
		if (!sep) {
			*why = "malformed record message";
			return -EINVAL;
		}
		*sep = '\0';
		f[i] = sep + 1;
	}
	int src = kevent_source_from_name(f[0]), type = kevent_type_from_name(f[3]);
	int64_t seq, ts;
	if (src < 0 || type < 0 || parse_int64(f[1], &seq) < 0 || parse_int64(f[2], &ts) < 0) {
		*why = "malformed record message";
		return -EINVAL;
	}
	return kevent_new(type, f[4], f[5], f[6], (enum kevent_source)src, (uint64_t)seq,
			  (uint64_t)ts, NULL, 0, out, why);
}

static int record_loop(int fd, FILE *out, unsigned long *n)
{
	char buf[KCTL_MSG_MAX + 1];
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	while (!interrupted) {
		ssize_t len = recv(fd, buf, sizeof(buf) - 1, MSG_TRUNC);
		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0) {
			fprintf(stderr, "keventctl: reading from keventd: %s\n", strerror(errno));
			return 1;
		}
		if (len == 0)
			return 0; /* keventd stopped */
		struct kctl_msg m;
		if ((size_t)len > KCTL_MSG_MAX || kctl_decode(buf, (size_t)len, &m) < 0) {
			fprintf(stderr, "keventctl: malformed reply from keventd\n");
			return 1;
		}
		if (strcmp(m.f[0], "data") != 0 || m.n < 2)
			continue;
		_cleanup_(kevent_freep) struct kevent *ev = NULL;
		const char *why = NULL;
		char *text = (char *)m.f[1];
		if (!strchr(text, '\x1f')) {
			/* keventd's notes, such as events lost to a slow reader */
			ctl_print(stderr, "keventctl: keventd: %s", text);
			continue;
		}
		int rc = from_record_text(text, &ev, &why);
		if (rc < 0) {
			fprintf(stderr, "keventctl: %s\n", why ? why : strerror(-rc));
			continue;
		}
		strbuf_reset(&sb);
		kevent_json_record(&sb, ev);
		if (sb.oom || fputs(strbuf_str(&sb), out) == EOF || fflush(out) == EOF) {
			fprintf(stderr, "keventctl: writing the record: %s\n",
				sb.oom ? "out of memory" : strerror(errno));
			return 1;
		}
		(*n)++;
	}
	return 0;
}

int ctl_record(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *path = NULL;
	int o;
	while ((o = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		if (o == 'h') {
			printf("Usage: keventctl record [-o FILE]\n"
			       "Writes every event keventd receives, whole, as one JSON line\n"
			       "each, to FILE (default: standard output), until interrupted.\n"
			       "keventctl replay reads it.\n");
			return 0;
		}
		if (o != 'o')
			return ctl_option_error("record");
		path = optarg;
	}
	if (optind < argc)
		return ctl_usage_error("record takes no arguments");
	FILE *out = stdout;
	if (path && !(out = fopen(path, "we"))) {
		fprintf(stderr, "keventctl: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: recv() returns */
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);
	unsigned long n = 0;
	int status = 1;
	const char *f[] = {"monitor", "record"};
	int fd = ctl_open(c, f, 2);
	if (fd >= 0) {
		status = ctl_replies(fd, NULL, NULL, (char *[]){NULL});
		if (status == 0) {
			fprintf(stderr,
				"keventctl: recording the events of %s (interrupt to stop)\n",
				c->control);
			status = record_loop(fd, out, &n);
		}
		close(fd);
	}
	if (path && fclose(out) == EOF && status == 0) {
		fprintf(stderr, "keventctl: writing %s: %s\n", path, strerror(errno));
		status = 1;
	}
	if (fd >= 0)
		fprintf(stderr, "keventctl: %lu event%s recorded\n", n, n == 1 ? "" : "s");
	return status;
}

/* replay */

struct replay {
	struct kevent *ev; /* the last line's, which f[] points into */
};

static size_t parse_record(void *userdata, char *line, size_t len, const char *f[6],
			   const char **why)
{
	struct replay *r = userdata;
	kevent_free(r->ev);
	r->ev = NULL;
	int rc = kevent_json_read(line, len, &r->ev, why);
	if (rc < 0) {
		if (!*why)
			*why = strerror(-rc);
		return 0;
	}
	/* each event as its source's (a socket event as any send) */
	size_t k = 1;
	if (r->ev->source != KEVENT_SOURCE_SOCKET) {
		f[0] = "post-as";
		f[k++] = kevent_source_name(r->ev->source);
	}
	f[k++] = kevent_type_name(r->ev->type);
	f[k++] = r->ev->object;
	f[k++] = r->ev->signal;
	f[k++] = r->ev->payload;
	return k;
}

static int replay_dry(const char *path, const char **dirs, size_t n_dirs, bool strict, bool json)
{
	bool is_stdin = strcmp(path, "-") == 0;
	FILE *in = is_stdin ? stdin : fopen(path, "re");
	if (!in) {
		fprintf(stderr, "keventctl: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	_cleanup_(kruleset_freep) struct kruleset *rs = NULL;
	int status = ctl_test_load(dirs, n_dirs, &rs) < 0 ? 1 : 0;
	_cleanup_free_ char *buf = NULL;
	size_t cap = 0;
	unsigned long line = 0, events = 0, failed = 0;
	while (status == 0) {
		errno = 0;
		ssize_t len = getline(&buf, &cap, in);
		if (len < 0) {
			if (errno) {
				fprintf(stderr, "keventctl: reading %s: %s\n", path,
					strerror(errno));
				status = 1;
			}
			break;
		}
		line++;
		if (len > 0 && buf[len - 1] == '\n')
			buf[--len] = '\0';
		if (len == 0)
			continue;
		_cleanup_(kevent_freep) struct kevent *ev = NULL;
		const char *why = NULL;
		int rc = len > RECORD_LINE_MAX ? -EINVAL
					       : kevent_json_read(buf, (size_t)len, &ev, &why);
		if (rc < 0) {
			fprintf(stderr, "%s:%lu: error: %s\n", is_stdin ? "(stdin)" : path, line,
				len > RECORD_LINE_MAX ? "line too long"
				: why		      ? why
						      : strerror(-rc));
			failed++;
			if (strict)
				break;
			continue;
		}
		if (events++ && !json)
			putchar('\n');
		ctl_test_print(rs, ev, json, line);
	}
	if (!is_stdin)
		fclose(in);
	if (failed)
		fprintf(stderr, "%lu event(s) replayed, %lu line(s) failed\n", events, failed);
	return status ? status : failed ? 1 : 0;
}

int ctl_replay(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"dry-run", no_argument, NULL, 'n'},
		{"rules-dir", required_argument, NULL, 'd'},
		{"strict", no_argument, NULL, 's'},
		{"verbose", no_argument, NULL, 'v'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *dirs[MAX_DIRS];
	size_t n_dirs = 0;
	bool dry = false, strict = false, verbose = false, json = false;
	int o;
	while ((o = getopt_long(argc, argv, "hnd:sv", opts, NULL)) != -1) {
		switch (o) {
		case 'n':
			dry = true;
			break;
		case 'd':
			if (n_dirs == MAX_DIRS)
				return ctl_usage_error("too many --rules-dir");
			dirs[n_dirs++] = optarg;
			break;
		case 's':
			strict = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			printf("Usage: keventctl replay FILE|- [--dry-run [--json]] [--rules-dir "
			       "DIR]... [--strict] [-v]\n"
			       "Feeds the events of a record (keventctl record) through the "
			       "rules:\n"
			       "with --dry-run offline, printing what keventctl test prints for\n"
			       "each (--json: one JSON object per event); else into keventd,\n"
			       "each event as its source's.  A bad line is an error\n"
			       "with its number, and the next line is read (--strict: stop).\n");
			return 0;
		default:
			return ctl_option_error("replay");
		}
	}
	if (argc - optind != 1)
		return ctl_usage_error("replay needs FILE");
	if (json && !dry)
		return ctl_usage_error("--json goes with --dry-run");
	if (n_dirs && !dry)
		return ctl_usage_error(
			"--rules-dir goes with --dry-run: keventd has its own rules");
	const char *path = argv[optind];
	if (!dry) {
		struct replay r = {0};
		struct ctl_post_source src = {.parse = parse_record,
					      .userdata = &r,
					      .line_max = RECORD_LINE_MAX,
					      .strict = strict};
		int status = ctl_post_events(c, path, &src, verbose);
		kevent_free(r.ev);
		return status;
	}
	if (!n_dirs)
		n_dirs = ctl_default_dirs(c, dirs);
	char *abs[MAX_DIRS] = {NULL};
	int status = 0;
	for (size_t i = 0; i < n_dirs && status == 0; i++) {
		abs[i] = path_absolute(dirs[i]);
		if (!abs[i])
			status = ctl_usage_error("%s: %s", dirs[i], strerror(errno));
		else
			dirs[i] = abs[i];
	}
	if (status == 0)
		status = replay_dry(path, dirs, n_dirs, strict, json);
	for (size_t i = 0; i < n_dirs; i++)
		free(abs[i]);
	return status;
}
