// SPDX-License-Identifier: GPL-2.0-or-later
/* keventctl notify test NAME: a test message to a target of keventd.yaml's
 * notify:, sent from here as keventd would send it, and the server's
 * answer. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "curl-dl.h"
#include "notify-send.h"
#include "options.h"

static int usage(FILE *f, int status)
{
	fputs("Usage: keventctl notify test NAME [--config FILE]\n"
	      "Sends a test message to the target NAME of keventd.yaml's notify: "
	      "(default\n" KEVENT_DEFAULT_CONFIG
	      ") and prints the server's answer: exit status 0 when\n"
	      "the server took it.  Reads the target's secret files: run it as keventd's user.\n",
	      f);
	return status;
}

int ctl_notify(struct ctl *c, int argc, char **argv)
{
	enum { O_CONFIG = 256 };
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
					     {"config", required_argument, NULL, O_CONFIG},
					     {0}};
	const char *config = ctl_default_config(c);
	int o;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (o == 'h')
			return usage(stdout, 0);
		if (o == O_CONFIG)
			config = optarg;
		else
			return usage(stderr, EXIT_USAGE);
	}
	if (argc - optind != 2 || strcmp(argv[optind], "test") != 0)
		return ctl_usage_error("notify: test NAME");
	const char *name = argv[optind + 1];
	_cleanup_(koptions_release) struct koptions ko;
	koptions_init(&ko);
	struct kdiags d = {0};
	int rc = koptions_load_file(&ko, config, ctl_trust(), &d);
	if (rc < 0 || d.n) {
		struct strbuf sb = STRBUF_INIT;
		if (rc < 0)
			fprintf(stderr, "keventctl: %s: %s\n", config, strerror(-rc));
		for (size_t i = 0; i < d.n; i++) {
			strbuf_reset(&sb);
			kdiag_format(&d.v[i], &sb);
			fprintf(stderr, "keventctl: %s\n", strbuf_str(&sb));
		}
		strbuf_release(&sb);
		kdiags_free(&d);
		return 1;
	}
	const struct knotify_target *t = knotify_config_find(&ko.notify, name);
	if (!t) {
		ctl_print(stderr, "keventctl: notify: no target '%s' in %s", name, config);
		return 1;
	}
	const char *why = NULL, *file = NULL;
	if ((rc = kcurl_load(&why)) < 0) {
		ctl_print(stderr, "keventctl: notify: cannot load %s: %s", KCURL_SONAME,
			  why ? why : strerror(-rc));
		return 1;
	}
	struct knotify_secrets s;
	if ((rc = knotify_secrets_load(t, &s, &why, &file)) < 0) {
		ctl_print(stderr, "keventctl: notify %s: %s %s: %s", name, why, file,
			  strerror(-rc));
		return 1;
	}
	char host[256] = "localhost";
	if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
		strcpy(host, "localhost");
	uint64_t now = now_realtime_ns();
	uint64_t pid = (uint64_t)getpid();
	_cleanup_free_ char *title = NULL, *message = NULL, *json = NULL;
	if (asprintf(&title, "%s: keventctl notify test %s", host, name) < 0 ||
	    asprintf(&message,
		     "A test message from keventd on %s, sent by keventctl notify test.\n"
		     "It arrived: the target %s works.\n",
		     host, name) < 0 ||
	    asprintf(&json, "{\"host\":\"%s\",\"test\":true}", host) < 0) {
		knotify_secrets_release(&s);
		return 1;
	}
	struct knotify_rec rec = {
		.id = knotify_fnv(knotify_fnv(KNOTIFY_FNV_INIT, &now, sizeof(now)), &pid,
				  sizeof(pid)),
		.created = now / 1000000000ull,
		.test = true,
		.severity = KNOTIFY_SEV_INFO,
		.target = (char *)name,
		.rule = (char *)"keventctl notify test",
		.title = title,
		.message = message,
		.json = json,
	};
	_cleanup_strbuf_ struct strbuf answer = STRBUF_INIT;
	enum knotify_outcome out = knotify_send_now(t, &s, &rec, host, &answer);
	knotify_secrets_release(&s);
	bool ok = out == KNOTIFY_SENT;
	ctl_print(ok ? stdout : stderr, "%s: %s: %s", name, ok ? "sent" : "failed",
		  strbuf_str(&answer));
	return ok ? 0 : 1;
}
