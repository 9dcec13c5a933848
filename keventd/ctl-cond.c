// SPDX-License-Identifier: GPL-2.0-or-later
/* keventctl conditions, conditions --check and ack (keventctl(8)). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cond.h"
#include "ctl.h"
#include "file.h"
#include "render.h"
#include "util.h"

/* The monitoring plugins' statuses (Nagios, Icinga). */
enum { CHECK_OK, CHECK_WARNING, CHECK_CRITICAL, CHECK_UNKNOWN };

/* A table file read here, not asked of keventd: keventd down, or a copy. */
static int from_file(const char *path, bool json, bool all, bool check, const char *names)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	struct kcond_table t;
	struct kcond_marks m;
	unsigned line = 0;
	const char *why = NULL;
	int rc = read_file(path, KCOND_FILE_MAX, &buf, &len);
	if (rc < 0) {
		if (check)
			printf("CONDITIONS UNKNOWN - %s: %s\n", path, strerror(-rc));
		else
			fprintf(stderr, "keventctl: %s: %s\n", path, strerror(-rc));
		return check ? CHECK_UNKNOWN : 1;
	}
	if (kcond_table_init(&t, 0, NULL, NULL) < 0)
		return check ? CHECK_UNKNOWN : 1;
	rc = kcond_file_decode(buf, len, &t, &m, &line, &why);
	if (rc < 0) {
		if (check)
			printf("CONDITIONS UNKNOWN - %s: not a condition table\n", path);
		else if (line)
			ctl_print(stderr, "keventctl: %s:%u: %s", path, line, why);
		else
			ctl_print(stderr, "keventctl: %s: %s", path, why ? why : strerror(-rc));
		kcond_table_release(&t);
		return check ? CHECK_UNKNOWN : 1;
	}
	_cleanup_free_ struct kcond_row **rows = kcond_table_sorted(&t);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int status = 0;
	if (!rows) {
		kcond_table_release(&t);
		return check ? CHECK_UNKNOWN : 1;
	}
	if (check) {
		status = kcond_render_check(&sb, rows, t.n, names);
	} else {
		struct kcond_counts c = {0};
		if (!json)
			kcond_render_text_head(&sb);
		for (size_t i = 0; i < t.n; i++) {
			if (!kcond_row_listed(rows[i], all))
				continue;
			if (json)
				kcond_render_json(&sb, rows[i]);
			else
				kcond_render_text(&sb, rows[i]);
			kcond_count(&c, rows[i]);
		}
		if (!json)
			kcond_render_text_foot(&sb, &c);
	}
	fputs(strbuf_str(&sb), stdout);
	kcond_table_release(&t);
	return status;
}

/* --check: one line on stdout whatever happens, and the plugin's status. */
static int check(struct ctl *c, const char *names)
{
	int fd = ctl_connect(c);
	if (fd < 0) {
		printf("CONDITIONS UNKNOWN - cannot connect to keventd at %s: %s\n", c->control,
		       strerror(-fd));
		return CHECK_UNKNOWN;
	}
	const char *f[] = {"conditions", "check", "holding", names};
	char *ok = NULL;
	int status = ctl_request(fd, f, 4) < 0 ? 1 : ctl_replies(fd, ctl_put_text, NULL, &ok);
	close(fd);
	int64_t v = CHECK_UNKNOWN;
	if (status != 0 || !ok || parse_int64(ok, &v) < 0 || v < 0 || v > CHECK_UNKNOWN) {
		printf("CONDITIONS UNKNOWN - keventd did not answer the check\n");
		v = CHECK_UNKNOWN;
	}
	free(ok);
	return (int)v;
}

int ctl_conditions(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},  {"all", no_argument, NULL, 'a'},
		{"check", no_argument, NULL, 'c'}, {"file", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},  {0},
	};
	bool json = false, all = false, chk = false;
	const char *file = NULL;
	int o;
	while ((o = getopt_long(argc, argv, "hjac", opts, NULL)) != -1) {
		switch (o) {
		case 'h':
			printf("Usage: keventctl conditions [--json] [--all] [--file PATH]\n"
			       "       keventctl conditions --check [NAME...] [--file PATH]\n"
			       "Prints the conditions that hold (--all: also those cleared in the\n"
			       "last day), or, with --check, one line and the exit status of a\n"
			       "monitoring plugin: 0 none holds, 1 a warning, 2 a critical one,\n"
			       "3 keventd unreachable.  --file reads a table file (keventd's is\n"
			       "/var/lib/keventd/conditions) instead of asking keventd.\n");
			return 0;
		case 'j':
			json = true;
			break;
		case 'a':
			all = true;
			break;
		case 'c':
			chk = true;
			break;
		case 'f':
			file = optarg;
			break;
		default:
			if (chk)
				return CHECK_UNKNOWN;
			return ctl_option_error("conditions");
		}
	}
	_cleanup_strbuf_ struct strbuf names = STRBUF_INIT;
	for (int i = optind; i < argc; i++) {
		if (!chk)
			return ctl_usage_error("conditions takes names only with --check");
		if (!*argv[i] || strchr(argv[i], ',')) {
			printf("CONDITIONS UNKNOWN - bad condition name '%s'\n", argv[i]);
			return CHECK_UNKNOWN;
		}
		if (names.len)
			strbuf_putc(&names, ',');
		strbuf_puts(&names, argv[i]);
	}
	if (chk && (json || all)) {
		printf("CONDITIONS UNKNOWN - --check takes neither --json nor --all\n");
		return CHECK_UNKNOWN;
	}
	if (file)
		return from_file(file, json, all, chk, strbuf_str(&names));
	if (chk)
		return check(c, strbuf_str(&names));
	const char *f[] = {"conditions", json ? "json" : "text", all ? "all" : "holding"};
	ctl_large_output();
	if (!json)
		ctl_pager(c);
	return ctl_call(c, f, 3, ctl_put_text, NULL, NULL);
}

int ctl_ack(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"note", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *note = "";
	int o;
	while ((o = getopt_long(argc, argv, "hn:", opts, NULL)) != -1) {
		if (o == 'h') {
			printf("Usage: keventctl ack NAME [OBJECT] [--note TEXT]\n"
			       "Acknowledges condition NAME for OBJECT (or for every object it\n"
			       "holds for): no reminder until it clears and is set again.  A\n"
			       "condition with no clear ends with it.  Prints how many rows were\n"
			       "acknowledged.\n");
			return 0;
		}
		if (o != 'n')
			return ctl_option_error("ack");
		note = optarg;
	}
	if (argc - optind < 1 || argc - optind > 2)
		return ctl_usage_error("ack needs NAME [OBJECT]");
	if (strlen(note) > KCOND_NOTE_MAX || str_has_control(note))
		return ctl_usage_error("--note is one line of printable text, at most %d bytes",
				       KCOND_NOTE_MAX);
	const char *f[] = {"ack", argv[optind], argc - optind > 1 ? argv[optind + 1] : "", note};
	char *ok = NULL;
	int status = ctl_call(c, f, 4, ctl_put_text, NULL, &ok);
	if (status == 0)
		printf("%s row%s acknowledged\n", ok ? ok : "0",
		       ok && strcmp(ok, "1") == 0 ? "" : "s");
	free(ok);
	return status;
}
