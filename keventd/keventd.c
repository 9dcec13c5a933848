// SPDX-License-Identifier: GPL-2.0-or-later
/* keventd: receives events, matches them against rules, runs handlers. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "diag.h"
#include "fault.h"
#include "log.h"
#include "userdirs.h"
#include "util.h"

#define EXIT_USAGE 2

/* The sources' names, wrapped to 80 columns under the options' texts:
 * from the sources' list (event.h), so that none is left out. */
static void put_source_lines(struct strbuf *sb)
{
	static const char indent[] = "                         ";
	size_t col = 0;
	for (const char *w = kevent_source_names(); *w;) {
		size_t n = strcspn(w, " ");
		if (!col || col + 1 + n > 79) {
			strbuf_printf(sb, "%s%s", col ? "\n" : "", indent);
			col = sizeof(indent) - 1;
		} else {
			strbuf_puts(sb, " ");
			col++;
		}
		strbuf_printf(sb, "%.*s", (int)n, w);
		col += n;
		w += n + (w[n] == ' ');
	}
	strbuf_puts(sb, "\n");
}

static void usage(FILE *f)
{
	_cleanup_strbuf_ struct strbuf sources = STRBUF_INIT;
	put_source_lines(&sources);
	fprintf(f,
		"Usage: keventd [OPTION]...\n"
		"Receives kernel events, matches them against rules, runs their handlers.\n"
		"\n"
		"  --user                 the user instance: the user's own rules, run as the\n"
		"                         user; the defaults below become the user's (see\n"
		"                         USER INSTANCE in keventd(8))\n"
		"  --config PATH          configuration file (default %s,\n"
		"                         read when it exists)\n"
		"  --rules-dir DIR        rule directory, highest precedence first (repeatable;\n"
		"                         default %s, %s, %s)\n"
		"  --control PATH         control socket (default %s)\n"
		"  --control-group GROUP  also admit this group's members on the control socket\n"
		"  --sources LIST         comma-separated, of the sources (default: all; trace\n"
		"                         only with trace: entries in the configuration file):\n"
		"%s"
		"  --udev-monitor MODE    auto, udev or kernel: where uevents come from\n"
		"                         (default auto: udevd when it runs)\n"
		"  --max-children N       handlers running at once (default 2 x CPUs + 4)\n"
		"  --queue-size N         events queued before the sources pause (default %d)\n"
		"  --history N            events kept for 'keventctl events' (default %d; 0: "
		"none)\n"
		"  --history-bytes SIZE   and the bytes of their text at most (K, M, G; default\n"
		"                         2K per event kept)\n"
		"  --state-dir DIR        the journal and the positions (default %s)\n"
		"  --lib-dir DIR          what outlives a reboot: the condition table and the\n"
		"                         notifications' queue (default %s; none: nothing\n"
		"                         kept, no conditions)\n"
		"  --users-socket PATH    where the user instances get the system's events:\n"
		"                         the system instance listens (default: 'users'\n"
		"                         beside --control), a user instance connects\n"
		"                         (default " KEVENT_DEFAULT_USERS "); none: neither\n"
		"  --journal-size SIZE    the journal's bytes before intake pauses (K, M, G;\n"
		"                         default 4M)\n"
		"  --log-level LEVEL      err, warning, notice, info or debug (default info)\n"
		"  --log-format FORMAT    text or json (default text)\n"
		"  --dry-run              log what would run instead of running it\n"
		"  --dbus                 also send each event as a D-Bus signal on the system\n"
		"                         bus (org.kernel.Event)%s\n"
		"  -h, --help             show this help\n"
		"  --version              show the version\n"
		"\n"
		"See keventd(8), keventd.yaml(5), keventd.rules(5) and keventctl(8).\n",
		KEVENT_DEFAULT_CONFIG, KEVENT_RULES_DIR_ETC, KEVENT_RULES_DIR_RUN,
		KEVENT_RULES_DIR_LIB, KEVENT_DEFAULT_CONTROL, strbuf_str(&sources),
		KEVENT_DEFAULT_QUEUE_SIZE, KEVENT_DEFAULT_HISTORY, KEVENT_DEFAULT_STATE_DIR,
		KEVENT_DEFAULT_LIB_DIR, kdaemon_dbus_available() ? "" : "; not in this build");
}

static int usage_error(const char *fmt, ...) _printf_(1, 2);
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	fputs("keventd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'keventd --help'.\n", stderr);
	return EXIT_USAGE;
}

/* Prints the configuration file's mistakes and frees them: EXIT_USAGE. */
static int report_diags(struct kdiags *diags)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < diags->n; i++) {
		strbuf_reset(&sb);
		kdiag_format(&diags->v[i], &sb);
		fprintf(stderr, "keventd: %s\n", strbuf_str(&sb));
	}
	strbuf_release(&sb);
	kdiags_free(diags);
	return EXIT_USAGE;
}

/* The command line, then the options it and the configuration file give
 * (kdaemon_options_read()): 0 with *o, -1 when it only asked for help or
 * the version, or the exit status. */
static int parse_args(int argc, char **argv, struct koptions **o)
{
	enum { O_OPTION = 256, O_CONFIG, O_VERSION, O_USER };
	static const struct option opts[] = {
		{"rules-dir", required_argument, NULL, O_OPTION},
		{"control", required_argument, NULL, O_OPTION},
		{"control-group", required_argument, NULL, O_OPTION},
		{"sources", required_argument, NULL, O_OPTION},
		{"udev-monitor", required_argument, NULL, O_OPTION},
		{"max-children", required_argument, NULL, O_OPTION},
		{"queue-size", required_argument, NULL, O_OPTION},
		{"history", required_argument, NULL, O_OPTION},
		{"history-bytes", required_argument, NULL, O_OPTION},
		{"state-dir", required_argument, NULL, O_OPTION},
		{"lib-dir", required_argument, NULL, O_OPTION},
		{"users-socket", required_argument, NULL, O_OPTION},
		{"journal-size", required_argument, NULL, O_OPTION},
		{"log-level", required_argument, NULL, O_OPTION},
		{"log-format", required_argument, NULL, O_OPTION},
		{"dry-run", no_argument, NULL, O_OPTION},
		{"dbus", no_argument, NULL, O_OPTION},
		{"config", required_argument, NULL, O_CONFIG},
		{"user", no_argument, NULL, O_USER},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, O_VERSION},
		{0},
	};
	_cleanup_free_ struct kdaemon_arg *args = calloc((size_t)argc + 1, sizeof(*args));
	size_t n_args = 0;
	const char *config = NULL;
	bool user = false;
	int c, index;
	if (!args)
		return usage_error("%s", strerror(ENOMEM));
	while ((c = getopt_long(argc, argv, "h", opts, &index)) != -1) {
		switch (c) {
		case O_OPTION:
			args[n_args++] = (struct kdaemon_arg){opts[index].name, optarg};
			break;
		case O_CONFIG:
			config = optarg;
			break;
		case O_USER:
			user = true;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case O_VERSION:
			printf("keventd %s\n", KEVENT_VERSION);
			return -1;
		default:
			fputs("Try 'keventd --help'.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);

	/* the user instance's places, from its environment (userdirs.h) */
	_cleanup_(kuserdirs_release) struct kuserdirs u = {0};
	if (user) {
		const char *bad = NULL;
		int rc = kuserdirs_get(&u, &bad);
		if (rc < 0) {
			fprintf(stderr, "keventd: --user: %s\n", bad ? bad : strerror(-rc));
			return 1;
		}
		/* $XDG_STATE_HOME, for --lib-dir's default */
		if ((rc = kuserdirs_make_lib_parents(&u)) < 0)
			fprintf(stderr,
				"keventd: --user: cannot make the directories above %s: %s\n",
				u.lib_dir, strerror(-rc));
	}

	/* the options of the command line, in their order, applied once the
	 * configuration file has been: the command line wins */
	struct kdiags diags = {0};
	_cleanup_strbuf_ struct strbuf why = STRBUF_INIT;
	int rc = kdaemon_options_read(config, user ? &u : NULL, args, n_args, o, &diags, &why);
	if (rc == -EINVAL && diags.n)
		return report_diags(&diags);
	kdiags_free(&diags);
	if (rc == -EINVAL)
		return usage_error("%s", strbuf_str(&why));
	if (rc < 0) {
		fprintf(stderr, "keventd: %s\n", strbuf_str(&why));
		return 1;
	}
	return 0;
}

/* Descriptors 0, 1 and 2 open before anything else is: started with one
 * closed, the first file or socket keventd opened would become "stdout"
 * and take whatever is written there (a log line into the control
 * socket).  Each closed one gets /dev/null; without /dev/null, give up. */
static int ensure_std_fds(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (n < 0)
			return -errno;
		if (n != fd) { /* a lower one was open after all: put it in place */
			int d = dup2(n, fd);
			close(n);
			if (d < 0)
				return -errno;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (ensure_std_fds() < 0)
		return 1;
	_cleanup_(kdaemon_options_freep) struct koptions *o = NULL;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	kdaemon_options_log(o);
	if (kfault_init() < 0)
		log_warning(
			"KEVENTD_FAULT is neither POINT:N[:segv] nor none; no fault point armed");
	umask(022); /* handlers inherit it */

	_cleanup_(kdaemon_freep) struct kdaemon *d = NULL;
	struct kdaemon_config *cfg = kdaemon_options_config(o);
	cfg->thermal_sysfs = getenv("KEVENTD_THERMAL_SYSFS");
	cfg->cgroup_root = getenv("KEVENTD_CGROUP_ROOT"); /* for tests: keventd(8) */
	const char *journal = getenv("KEVENTD_JOURNAL");  /* for benchmarks: keventd(8) */
	cfg->no_journal = journal && strcmp(journal, "off") == 0;
	rc = kdaemon_new(cfg, &d);
	if (rc == 0)
		rc = kdaemon_start(d);
	if (rc == 0)
		rc = kdaemon_run(d);
	else
		log_error("cannot start: %s", strerror(-rc));
	kdaemon_free(TAKE_PTR(d));
	return rc < 0 ? 1 : 0;
}
