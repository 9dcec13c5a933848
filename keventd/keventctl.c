// SPDX-License-Identifier: GPL-2.0-or-later
/* keventctl: the admin's tool for keventd. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "ctl.h"
#include "daemon.h" /* KEVENT_DEFAULT_CONFIG */
#include "event.h"
#include "ruledirs.h"
#include "statedir.h"
#include "userdirs.h"
#include "util.h"

static const struct {
	const char *name;
	int (*fn)(struct ctl *c, int argc, char **argv);
} commands[] = {
	{"send", ctl_send},
	{"monitor", ctl_monitor},
	{"test", ctl_test},
	{"verify", ctl_verify},
	{"reload", ctl_reload},
	{"status", ctl_status},
	{"events", ctl_events},
	{"explain", ctl_explain},
	{"record", ctl_record},
	{"replay", ctl_replay},
	{"trigger", ctl_trigger},
	{"cat", ctl_cat},
	{"conditions", ctl_conditions},
	{"ack", ctl_ack},
	{"notify", ctl_notify},
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: keventctl [--user] [--control PATH] COMMAND [ARGS]\n"
		"\n"
		"Commands:\n"
		"  send TYPE OBJECT SIGNAL [PAYLOAD|-]    inject an event into keventd\n"
		"  monitor [--json] [-c N] [-t SECONDS] [--source SRC] [--type TYPE] [--rule "
		"NAME]\n"
		"                                         print events as keventd receives them\n"
		"  reload                                 make keventd reload its rules now\n"
		"  status [--all] [--json|--prometheus]   keventd's verdict, then its counters\n"
		"  events [--json] [-n N] [--source SRC] [--type TYPE] [--rule NAME] [--failed]\n"
		"                                         the last events keventd handled, and\n"
		"                                         what became of each rule they matched\n"
		"  explain SEQ|last [--source SRC] [--json]\n"
		"                                         why a past event matched what it did\n"
		"  record [-o FILE]                       write every event as a JSON line\n"
		"  replay FILE [--dry-run [--json]] [--rules-dir DIR]... [--strict]\n"
		"                                         feed recorded events through the rules\n"
		"  trigger [--subsystem S]... [--action add|change]\n"
		"                                         report the devices present as udev\n"
		"                                         events, for keventd's rules alone\n"
		"  conditions [--json] [--all]            the conditions that hold now\n"
		"  conditions --check [NAME]...           a monitoring plugin's line and status\n"
		"  ack NAME [OBJECT] [--note TEXT]        acknowledge a condition: no reminders\n"
		"  verify [PATH]...                       check rule files or directories\n"
		"  cat [--json] NAME.yaml [--rules-dir DIR]...\n"
		"                                         a rule file with its drop-ins applied\n"
		"  test [--json] [--rules-dir DIR]... [--source SRC] TYPE OBJECT SIGNAL [PAYLOAD]\n"
		"                                         show which rules an event matches\n"
		"  test --run [--json] [--source SRC] TYPE OBJECT SIGNAL [PAYLOAD]\n"
		"                                         run its handlers once, through keventd,\n"
		"                                         with KEVENT_TEST=1\n"
		"  notify test NAME [--config FILE]       send a test message to a notification\n"
		"                                         target and print the server's answer\n"
		"\n"
		"Options:\n"
		"  --user           the user instance (keventd --user): its control socket,\n"
		"                   $XDG_RUNTIME_DIR/keventd/control, and the user's rule\n"
		"                   directories for verify, test, cat and replay --dry-run\n"
		"  --control PATH   keventd's control socket (default %s);\n"
		"                   before or after the command\n"
		"  --no-pager       status, events, explain, conditions and cat write to\n"
		"                   the terminal directly, not through $KEVENTCTL_PAGER,\n"
		"                   $PAGER or less\n"
		"  -h, --help       show this help\n"
		"  --version        show the version\n"
		"\n"
		"See keventctl(8) and keventd.rules(5).\n",
		KEVENT_DEFAULT_CONTROL);
}

int ctl_usage_error(const char *fmt, ...)
{
	va_list ap;
	fputs("keventctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'keventctl --help'.\n", stderr);
	return EXIT_USAGE;
}

void ctl_print(FILE *f, const char *fmt, ...)
{
	struct strbuf text = STRBUF_INIT, line = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vprintf(&text, fmt, ap);
	va_end(ap);
	strbuf_add_escaped(&line, strbuf_str(&text), text.len);
	strbuf_putc(&line, '\n');
	fputs(line.oom ? "keventctl: out of memory\n" : strbuf_str(&line), f);
	strbuf_release(&text);
	strbuf_release(&line);
}

int ctl_payload_arg(const char *arg, char **buf, const char **payload)
{
	*payload = arg;
	if (strcmp(arg, "-") != 0)
		return 0;
	size_t len;
	int rc = read_fd(0, KEVENT_PAYLOAD_MAX + 1, buf, &len);
	if (rc < 0)
		return ctl_usage_error("cannot read the payload: %s",
				       rc == -EFBIG ? "longer than 4000 bytes" : strerror(-rc));
	*payload = *buf;
	return 0;
}

int ctl_option_error(const char *command)
{
	fprintf(stderr, "Try 'keventctl %s --help'.\n", command);
	return EXIT_USAGE;
}

/* --user, for ctl_trust(), which has no ctl to ask */
static bool user_instance;

bool ctl_trust(void)
{
	return geteuid() == 0 || user_instance;
}

size_t ctl_default_dirs(const struct ctl *c, const char **dirs)
{
	size_t n = 0;
	if (c->user)
		for (size_t i = 0; i < c->user->n_rule_dirs; i++)
			dirs[n++] = c->user->rule_dirs[i];
	else
		for (size_t i = 0; i < ARRAY_SIZE(kevent_default_rule_dirs); i++)
			dirs[n++] = kevent_default_rule_dirs[i];
	return n;
}

const char *ctl_default_config(const struct ctl *c)
{
	return c->user ? c->user->config : KEVENT_DEFAULT_CONFIG;
}

/* --control and --no-pager after the command as before it ("keventctl
 * status --control PATH"), up to a "--": taken out of argv[1..argc), the
 * new argc. */
static int take_control(struct ctl *c, int argc, char **argv)
{
	int n = 1;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < argc)
				argv[n++] = argv[i++];
			break;
		}
		if (strcmp(argv[i], "--no-pager") == 0)
			c->no_pager = true;
		else if (strncmp(argv[i], "--control=", 10) == 0)
			c->control = argv[i] + 10;
		else if (strcmp(argv[i], "--control") == 0 && i + 1 < argc)
			c->control = argv[++i];
		else
			argv[n++] = argv[i];
	}
	argv[n] = NULL;
	return n;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"control", required_argument, NULL, 'c'}, {"user", no_argument, NULL, 'u'},
		{"no-pager", no_argument, NULL, 'P'},	   {"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},	   {0},
	};
	struct ctl c = {.control = KEVENT_DEFAULT_CONTROL};
	_cleanup_(kuserdirs_release) struct kuserdirs u = {0};
	const char *control = NULL;
	int o;
	while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (o) {
		case 'c':
			control = optarg;
			break;
		case 'u':
			user_instance = true;
			break;
		case 'P':
			c.no_pager = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("keventctl %s\n", KEVENT_VERSION);
			return 0;
		default:
			fputs("Try 'keventctl --help'.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return ctl_usage_error("missing command");
	if (user_instance) {
		const char *why = NULL;
		int rc = kuserdirs_get(&u, &why);
		if (rc < 0) {
			fprintf(stderr, "keventctl: --user: %s\n", why ? why : strerror(-rc));
			return 1;
		}
		c.user = &u;
		c.control = u.control;
	}
	if (control)
		c.control = control;
	const char *cmd = argv[optind];
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(cmd, commands[i].name) != 0)
			continue;
		argc -= optind;
		argv += optind;
		argc = take_control(&c, argc, argv);
		optind = 0; /* restart getopt for the command's own options */
		return commands[i].fn(&c, argc, argv);
	}
	return ctl_usage_error("unknown command '%s'", cmd);
}
