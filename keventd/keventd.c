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
#include "dbus.h"
#include "history.h"
#include "log.h"

#define EXIT_USAGE	 2
#define MAX_DIRS	 64
#define MAX_CHILDREN_MAX 65536
#define QUEUE_SIZE_MAX	 10000000

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: keventd [OPTION]...\n"
		"Receives kernel events, matches them against rules, runs their handlers.\n"
		"\n"
		"  --rules-dir DIR        rule directory, highest precedence first (repeatable;\n"
		"                         default %s, %s, %s)\n"
		"  --control PATH         control socket (default %s)\n"
		"  --control-group GROUP  also admit this group's members on the control socket\n"
		"  --sources LIST         comma-separated: kernel, udev, thermal, socket, acpi,\n"
		"                         input (default: all)\n"
		"  --udev-monitor MODE    auto, udev or kernel: where uevents come from\n"
		"                         (default auto: udevd when it runs)\n"
		"  --max-children N       handlers running at once (default 2 x CPUs + 4)\n"
		"  --queue-size N         events queued before the sources pause (default %d)\n"
		"  --history N            events kept for 'keventctl events' (default %d; 0: "
		"none)\n"
		"  --log-level LEVEL      err, warning, notice, info or debug (default info)\n"
		"  --log-format FORMAT    text or json (default text)\n"
		"  --dry-run              log what would run instead of running it\n"
		"  --dbus                 also send each event as a D-Bus signal on the system\n"
		"                         bus (org.kernel.Event)%s\n"
		"  -h, --help             show this help\n"
		"  --version              show the version\n"
		"\n"
		"See keventd(8), keventd.rules(5) and keventctl(8).\n",
		KEVENT_RULES_DIR_ETC, KEVENT_RULES_DIR_RUN, KEVENT_RULES_DIR_LIB,
		KEVENT_DEFAULT_CONTROL, KEVENT_DEFAULT_QUEUE_SIZE, KHISTORY_DEFAULT,
		kdbus_available() ? "" : "; not in this build");
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

static int parse_size(const char *s, size_t min, size_t max, size_t *out)
{
	int64_t v;
	if (parse_int64(s, &v) < 0 || v < (int64_t)min || (uint64_t)v > max)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

/* Turns the --sources list into a bit set; -EINVAL on an unknown name. */
static int parse_sources(const char *list, unsigned *out)
{
	_cleanup_free_ char *copy = strdup(list);
	unsigned set = 0;
	if (!copy)
		return -ENOMEM;
	for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int s = kevent_source_from_name(tok);
		if (s < 0)
			return -EINVAL;
		set |= 1u << s;
	}
	*out = set;
	return 0;
}

struct options {
	struct kdaemon_config cfg;
	const char *dirs[MAX_DIRS];
	int log_level;
	enum klog_format log_format;
};

static int parse_args(int argc, char **argv, struct options *o)
{
	enum {
		O_RULES = 256,
		O_CONTROL,
		O_GROUP,
		O_SOURCES,
		O_UDEV,
		O_MAXCH,
		O_QUEUE,
		O_HISTORY,
		O_LEVEL,
		O_FORMAT,
		O_DRY,
		O_DBUS,
		O_VERSION
	};
	static const struct option opts[] = {
		{"rules-dir", required_argument, NULL, O_RULES},
		{"control", required_argument, NULL, O_CONTROL},
		{"control-group", required_argument, NULL, O_GROUP},
		{"sources", required_argument, NULL, O_SOURCES},
		{"udev-monitor", required_argument, NULL, O_UDEV},
		{"max-children", required_argument, NULL, O_MAXCH},
		{"queue-size", required_argument, NULL, O_QUEUE},
		{"history", required_argument, NULL, O_HISTORY},
		{"log-level", required_argument, NULL, O_LEVEL},
		{"log-format", required_argument, NULL, O_FORMAT},
		{"dry-run", no_argument, NULL, O_DRY},
		{"dbus", no_argument, NULL, O_DBUS},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, O_VERSION},
		{0},
	};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	o->cfg = (struct kdaemon_config){
		.control_path = KEVENT_DEFAULT_CONTROL,
		.control_gid = (gid_t)-1,
		.sources = (1u << KEVENT_SOURCE_MAX) - 1,
		.udev_monitor = KUDEV_AUTO,
		.max_children = (size_t)(2 * (cpus > 0 ? cpus : 1) + 4),
		.queue_size = KEVENT_DEFAULT_QUEUE_SIZE,
		.history = KHISTORY_DEFAULT,
		.trust = geteuid() == 0,
	};
	o->log_level = LOG_INFO;
	o->log_format = KLOG_TEXT;
	size_t n_dirs = 0;
	int c;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_RULES:
			if (n_dirs == MAX_DIRS)
				return usage_error("too many --rules-dir");
			o->dirs[n_dirs++] = optarg;
			break;
		case O_CONTROL:
			o->cfg.control_path = optarg;
			break;
		case O_GROUP: {
			struct group *g = getgrnam(optarg);
			int64_t gid;
			if (g)
				o->cfg.control_gid = g->gr_gid;
			else if (parse_int64(optarg, &gid) == 0 && gid >= 0)
				o->cfg.control_gid = (gid_t)gid;
			else
				return usage_error("unknown group '%s'", optarg);
			break;
		}
		case O_SOURCES:
			if (parse_sources(optarg, &o->cfg.sources) < 0)
				return usage_error("unknown source in '%s' (kernel, udev, thermal, "
						   "socket, acpi, input)",
						   optarg);
			break;
		case O_UDEV:
			if (strcmp(optarg, "auto") == 0)
				o->cfg.udev_monitor = KUDEV_AUTO;
			else if (strcmp(optarg, "udev") == 0)
				o->cfg.udev_monitor = KUDEV_UDEV;
			else if (strcmp(optarg, "kernel") == 0)
				o->cfg.udev_monitor = KUDEV_KERNEL;
			else
				return usage_error(
					"--udev-monitor wants auto, udev or kernel, not '%s'",
					optarg);
			break;
		case O_MAXCH:
			if (parse_size(optarg, 1, MAX_CHILDREN_MAX, &o->cfg.max_children) < 0)
				return usage_error("--max-children wants 1..%d, not '%s'",
						   MAX_CHILDREN_MAX, optarg);
			break;
		case O_QUEUE:
			if (parse_size(optarg, 1, QUEUE_SIZE_MAX, &o->cfg.queue_size) < 0)
				return usage_error("--queue-size wants 1..%d, not '%s'",
						   QUEUE_SIZE_MAX, optarg);
			break;
		case O_HISTORY:
			if (parse_size(optarg, 0, KHISTORY_MAX, &o->cfg.history) < 0)
				return usage_error("--history wants 0..%d, not '%s'", KHISTORY_MAX,
						   optarg);
			break;
		case O_LEVEL:
			o->log_level = klog_level_from_name(optarg);
			if (o->log_level < 0)
				return usage_error("unknown log level '%s'", optarg);
			break;
		case O_FORMAT:
			if (strcmp(optarg, "text") == 0)
				o->log_format = KLOG_TEXT;
			else if (strcmp(optarg, "json") == 0)
				o->log_format = KLOG_JSON;
			else
				return usage_error("unknown log format '%s' (text, json)", optarg);
			break;
		case O_DRY:
			o->cfg.dry_run = true;
			break;
		case O_DBUS:
			if (!kdbus_available())
				return usage_error("--dbus: this keventd was built without D-Bus");
			o->cfg.dbus = true;
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
	if (!n_dirs)
		for (size_t i = 0; i < ARRAY_SIZE(kevent_default_rule_dirs); i++)
			o->dirs[n_dirs++] = kevent_default_rule_dirs[i];
	o->cfg.n_rule_dirs = n_dirs;
	return 0;
}

/* Rule directories as absolute paths, so KEVENT_RULE_FILE means the same
 * thing to a handler that runs in "/". */
static int absolute_dirs(struct options *o, char **store)
{
	for (size_t i = 0; i < o->cfg.n_rule_dirs; i++) {
		store[i] = path_absolute(o->dirs[i]);
		if (!store[i])
			return -errno;
		o->dirs[i] = store[i];
	}
	o->cfg.rule_dirs = o->dirs;
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
	struct options o;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	klog_setup(o.log_level, o.log_format);
	umask(022); /* handlers inherit it */

	char *dirs[MAX_DIRS] = {NULL};
	_cleanup_(kdaemon_freep) struct kdaemon *d = NULL;
	rc = absolute_dirs(&o, dirs);
	o.cfg.thermal_sysfs = getenv("KEVENTD_THERMAL_SYSFS");
	o.cfg.cgroup_root = getenv("KEVENTD_CGROUP_ROOT"); /* for tests: keventd(8) */
	if (rc == 0)
		rc = kdaemon_new(&o.cfg, &d);
	if (rc == 0)
		rc = kdaemon_start(d);
	if (rc == 0)
		rc = kdaemon_run(d);
	else
		log_error("cannot start: %s", strerror(-rc));
	kdaemon_free(TAKE_PTR(d));
	for (size_t i = 0; i < MAX_DIRS; i++)
		free(dirs[i]);
	return rc < 0 ? 1 : 0;
}
