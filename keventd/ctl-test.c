// SPDX-License-Identifier: GPL-2.0-or-later
/* keventctl test: an offline dry run of one event against the rules. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "duration.h"
#include "event-json.h"
#include "table.h"
#include "plan.h"
#include "ruleset.h"
#include "transient.h"

#define MAX_DIRS 64

/* A transient rule's unit and its properties, as StartTransientUnit gets
 * them (the D-Bus names: CPUQuota is CPUQuotaPerSecUSec). */
static void print_transient(const struct krule *r)
{
	_cleanup_free_ char *unit = NULL;
	const struct krule_extra *x = krule_extra(r);
	if (!r->transient)
		return;
	if (ktransient_unit_name(r->name, 0, 0, &unit) < 0) {
		printf("  (out of memory naming the unit)\n");
		return;
	}
	ctl_print(stdout, "  transient: %s", unit);
	if (r->session)
		printf("  session: active (the unit runs as the user of seat0's active session, "
		       "with its variables)\n");
	for (size_t i = 0; i < x->n_unit_props; i++) {
		const struct kunitprop *p = &x->unit_props[i];
		if (p->type == 's')
			ctl_print(stdout, "  unit property: %s=%s", p->name, p->s);
		else if (p->type == 'b')
			printf("  unit property: %s=%s\n", p->name, p->b ? "yes" : "no");
		else if (p->type == 't' && p->u == UINT64_MAX)
			printf("  unit property: %s=infinity\n", p->name);
		else if (p->type == 't')
			printf("  unit property: %s=%" PRIu64 "\n", p->name, p->u);
		else
			printf("  unit property: %s=%" PRId64 "\n", p->name, p->i);
	}
}

static void print_plan(const struct krule *r, const struct kevent *ev)
{
	struct kplan plan;
	const struct krule_extra *x = krule_extra(r);
	if (kplan_build(r, ev, &plan) < 0) {
		printf("  (out of memory building the plan)\n");
		return;
	}
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < plan.argc; i++) {
		strbuf_putc(&sb, ' ');
		strbuf_quote(&sb, plan.argv[i]);
	}
	printf("  argv:%s\n", strbuf_str(&sb));
	char t[32];
	duration_format(x->timeout_ms, t, sizeof(t));
	printf("  timeout: %s\n", t);
	if (x->user)
		ctl_print(stdout, "  user: %s", x->user);
	if (r->no_new_privs)
		printf("  no_new_privs: true\n");
	print_transient(r);
	for (size_t i = 0; i < x->n_limits; i++) {
		if (x->limits[i].value == UINT64_MAX)
			printf("  limit: %s infinity\n", krlimit_name(x->limits[i].resource));
		else
			printf("  limit: %s %" PRIu64 "\n", krlimit_name(x->limits[i].resource),
			       x->limits[i].value);
	}
	if (x->rl_period_ms) {
		duration_format(x->rl_period_ms, t, sizeof(t));
		if (x->key == KRULE_KEY_RULE)
			printf("  ratelimit: %" PRIu32 "/%s for the whole rule (key: rule)\n",
			       x->rl_count, t);
		else if (x->key == KRULE_KEY_PAYLOAD)
			ctl_print(stdout,
				  "  ratelimit: %" PRIu32 "/%s per value of %s (key: payload.%s)",
				  x->rl_count, t, x->key_prop, x->key_prop);
		else
			printf("  ratelimit: %" PRIu32 "/%s per object\n", x->rl_count, t);
	}
	for (size_t i = 0; i < plan.n_env; i++) {
		const char *e = plan.envp[i];
		size_t n = strcspn(e, "=");
		strbuf_reset(&sb);
		strbuf_quote(&sb, e + n + 1);
		printf("  env: %.*s=%s\n", (int)n, e, strbuf_str(&sb));
	}
	strbuf_release(&sb);
	kplan_release(&plan);
}

/*
 * The rule file that an error skips: the file itself, or for an error in
 * a drop-in (DIR/NAME.yaml.d/FILE) the NAME.yaml it changes.  The length
 * of the name at *name, 0 for the file itself.
 */
static size_t skipped_file(const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return 0;
	const char *dir = slash;
	while (dir > path && dir[-1] != '/')
		dir--;
	size_t len = (size_t)(slash - dir);
	if (len <= strlen(".yaml.d") || memcmp(slash - strlen(".yaml.d"), ".yaml.d", 7) != 0)
		return 0;
	*name = dir;
	return len - strlen(".d");
}

int ctl_test_load(const char **dirs, size_t n_dirs, struct kruleset **out)
{
	struct kdiags d = {0};
	struct kruleset *rs = NULL;
	int rc = kruleset_load(dirs, n_dirs, ctl_trust(), NULL, &rs, &d, NULL);
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < d.n; i++) {
		strbuf_reset(&sb);
		kdiag_format(&d.v[i], &sb);
		const char *name = NULL;
		size_t len = skipped_file(d.v[i].file ? d.v[i].file : "", &name);
		if (len)
			fprintf(stderr, "%s (%.*s skipped)\n", strbuf_str(&sb), (int)len, name);
		else
			fprintf(stderr, "%s (file skipped)\n", strbuf_str(&sb));
	}
	kdiags_free(&d);
	if (rc < 0) {
		strbuf_release(&sb);
		fprintf(stderr, "keventctl: %s\n", strerror(-rc));
		return rc;
	}
	strbuf_release(&sb);
	*out = rs;
	return 0;
}

/* The next of the conditions test shows, from *i on: those whose set
 * (*set) or clear matches the event (keventd.rules(5), CONDITIONS), since
 * a condition's matchers are many; NULL after the last. */
static const struct kcond_def *next_cond(const struct kruleset *rs, const struct kevent *ev,
					 size_t *i, bool *set)
{
	while (*i < rs->n_cond_defs) {
		const struct kcond_def *c = rs->cond_defs[(*i)++];
		*set = krule_match(&c->set, ev, NULL);
		if (*set || (c->has_clear && krule_match(&c->clear, ev, NULL)))
			return c;
	}
	return NULL;
}

/* What a matched rule would run, as JSON keys: the same as the text's
 * "argv:", "timeout:", ... lines. */
static void json_plan(struct strbuf *sb, const struct krule *r, const struct kevent *ev)
{
	struct kplan plan;
	const struct krule_extra *x = krule_extra(r);
	if (kplan_build(r, ev, &plan) < 0) {
		sb->oom = true;
		return;
	}
	strbuf_puts(sb, ",\"argv\":[");
	for (size_t i = 0; i < plan.argc; i++) {
		strbuf_puts(sb, i ? "," : "");
		strbuf_json(sb, plan.argv[i]);
	}
	strbuf_printf(sb, "],\"timeout_ms\":%" PRIu64, x->timeout_ms);
	if (x->user) {
		strbuf_puts(sb, ",\"user\":");
		strbuf_json(sb, x->user);
	}
	if (r->no_new_privs)
		strbuf_puts(sb, ",\"no_new_privs\":true");
	_cleanup_free_ char *unit = NULL;
	if (r->transient && ktransient_unit_name(r->name, 0, 0, &unit) == 0) {
		strbuf_puts(sb, ",\"transient\":");
		strbuf_json(sb, unit);
	}
	if (x->n_limits)
		strbuf_puts(sb, ",\"limits\":{");
	for (size_t i = 0; i < x->n_limits; i++) {
		strbuf_printf(sb, "%s\"%s\":", i ? "," : "", krlimit_name(x->limits[i].resource));
		if (x->limits[i].value == UINT64_MAX)
			strbuf_puts(sb, "\"infinity\"");
		else
			strbuf_printf(sb, "%" PRIu64, x->limits[i].value);
	}
	if (x->n_limits)
		strbuf_putc(sb, '}');
	if (x->rl_period_ms) {
		strbuf_printf(sb, ",\"ratelimit\":{\"count\":%" PRIu32 ",\"period_ms\":%" PRIu64,
			      x->rl_count, x->rl_period_ms);
		if (x->key == KRULE_KEY_PAYLOAD) {
			_cleanup_free_ char *key = NULL;
			if (asprintf(&key, "payload.%s", x->key_prop) < 0)
				sb->oom = true;
			strbuf_puts(sb, ",\"key\":");
			strbuf_json(sb, key ? key : "");
			strbuf_putc(sb, '}');
		} else {
			strbuf_printf(sb, ",\"key\":\"%s\"}",
				      x->key == KRULE_KEY_RULE ? "rule" : "object");
		}
	}
	strbuf_puts(sb, ",\"env\":{");
	for (size_t i = 0; i < plan.n_env; i++) {
		const char *e = plan.envp[i];
		size_t n = strcspn(e, "=");
		_cleanup_free_ char *name = strndup(e, n);
		strbuf_puts(sb, i ? "," : "");
		strbuf_json(sb, name ? name : "");
		strbuf_putc(sb, ':');
		strbuf_json(sb, e + n + 1);
	}
	strbuf_putc(sb, '}');
	kplan_release(&plan);
}

/* test --json, replay --dry-run --json: one object, on one line (line:
 * the record's line, 0 for none).  The event as keventctl monitor --json
 * shows it, each rule's answer with explain --json's keys, and what it
 * would run. */
static void print_json(const struct kruleset *rs, const struct kevent *ev, unsigned long line)
{
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	if (line)
		strbuf_printf(&sb, "{\"line\":%lu,\"event\":", line);
	else
		strbuf_puts(&sb, "{\"event\":");
	kevent_json_open(&sb, ev, ev->payload, false);
	strbuf_printf(&sb, "},\"rule_files\":%zu,\"rules\":[", rs->n_files);
	const struct krule *stopper = NULL;
	size_t matched = 0;
	for (size_t i = 0; i < rs->n_rules; i++) {
		const struct krule *r = rs->rules[i];
		strbuf_puts(&sb, i ? ",{\"name\":" : "{\"name\":");
		strbuf_json(&sb, r->name);
		strbuf_puts(&sb, ",\"file\":");
		strbuf_json(&sb, r->file->path);
		strbuf_printf(&sb, ",\"line\":%u,\"column\":%u", r->line, r->col);
		strbuf_reset(&why);
		if (stopper) {
			strbuf_puts(&sb, ",\"result\":\"not tried\",\"why\":");
			strbuf_json(&sb, stopper->name);
		} else if (!krule_match(r, ev, &why)) {
			strbuf_puts(&sb, ",\"result\":\"no match\",\"why\":");
			strbuf_json(&sb, strbuf_str(&why));
		} else {
			matched++;
			strbuf_printf(&sb, ",\"result\":\"matched\",\"runs\":%s,\"last\":%s",
				      krule_runs_something(r) ? "true" : "false",
				      r->last ? "true" : "false");
			if (krule_runs_something(r))
				json_plan(&sb, r, ev);
			if (r->last)
				stopper = r;
		}
		strbuf_putc(&sb, '}');
	}
	strbuf_printf(&sb, "],\"matched\":%zu,\"conditions\":[", matched);
	size_t shown = 0;
	const struct kcond_def *c;
	bool set;
	for (size_t i = 0; (c = next_cond(rs, ev, &i, &set));) {
		const char *key = kcond_key_of(c, ev);
		strbuf_puts(&sb, shown++ ? ",{\"name\":" : "{\"name\":");
		strbuf_json(&sb, c->name);
		strbuf_puts(&sb, ",\"file\":");
		strbuf_json(&sb, c->file->path);
		strbuf_printf(&sb, ",\"line\":%u,\"column\":%u,\"action\":\"%s\",\"key\":", c->line,
			      c->col, set ? "set" : "clear");
		if (key)
			strbuf_json(&sb, key);
		else
			strbuf_puts(&sb, "null");
		if (set)
			strbuf_printf(&sb, ",\"severity\":\"%s\"",
				      kcond_severity_name(c->severity));
		strbuf_putc(&sb, '}');
	}
	strbuf_puts(&sb, "]}");
	puts(sb.oom ? "{}" : strbuf_str(&sb));
	strbuf_release(&sb);
	strbuf_release(&why);
}

void ctl_test_print(const struct kruleset *rs, const struct kevent *ev, bool json,
		    unsigned long line)
{
	if (json) {
		print_json(rs, ev, line);
		return;
	}
	if (line)
		printf("line %lu: seqnum=%llu\n", line, (unsigned long long)ev->seqnum);
	struct strbuf sb = STRBUF_INIT;
	strbuf_quote(&sb, ev->payload);
	printf("event: type=%s object=%s signal=%s source=%s payload=%s\n",
	       kevent_type_name(ev->type), ev->object, ev->signal, kevent_source_name(ev->source),
	       strbuf_str(&sb));
	printf("rules: %zu in %zu file%s\n\n", rs->n_rules, rs->n_files,
	       rs->n_files == 1 ? "" : "s");

	const struct krule *stopper = NULL;
	size_t matched = 0;
	for (size_t i = 0; i < rs->n_rules; i++) {
		const struct krule *r = rs->rules[i];
		/* names, paths, patterns and property values: text from outside */
		char at[64];
		snprintf(at, sizeof(at), "%u:%u", r->line, r->col);
		if (stopper) {
			ctl_print(
				stdout,
				"rule %s (%s:%s): not tried: rule %s matched first with last: true",
				r->name, r->file->path, at, stopper->name);
			continue;
		}
		strbuf_reset(&sb);
		if (!krule_match(r, ev, &sb)) {
			ctl_print(stdout, "rule %s (%s:%s): no match: %s", r->name, r->file->path,
				  at, strbuf_str(&sb));
			continue;
		}
		matched++;
		char **notify = krule_extra(r)->notify;
		ctl_print(stdout, "rule %s (%s:%s): matched%s%s", r->name, r->file->path, at,
			  krule_runs_something(r) || notify ? "" : ", runs nothing",
			  r->last ? "; last: later rules do not see the event" : "");
		if (notify) {
			strbuf_reset(&sb);
			for (size_t k = 0; notify[k]; k++)
				strbuf_printf(&sb, "%s%s", k ? ", " : "", notify[k]);
			ctl_print(stdout, "  notifies: %s", strbuf_str(&sb));
		}
		if (krule_runs_something(r))
			print_plan(r, ev);
		if (r->last)
			stopper = r;
	}
	strbuf_release(&sb);
	printf("\n%zu of %zu rules matched\n", matched, rs->n_rules);
	/* the conditions it would set or clear (keventd.rules(5), CONDITIONS):
	 * only those that match, since a condition's matchers are many */
	const struct kcond_def *c;
	bool set;
	for (size_t i = 0; (c = next_cond(rs, ev, &i, &set));) {
		const char *key = kcond_key_of(c, ev);
		ctl_print(stdout, "condition %s (%s:%u:%u): %s it for %s%s%s", c->name,
			  c->file->path, c->line, c->col, set ? "sets" : "clears",
			  key ? key : "(no key: the event lacks it)", set ? ", " : "",
			  set ? kcond_severity_name(c->severity) : "");
	}
}

static int run_test(int argc, char **argv, const char **dirs, size_t n_dirs, int source,
		    int64_t seqnum, int64_t timestamp, bool json);

/* TYPE OBJECT SIGNAL [PAYLOAD] at optind, for both halves: the type's
 * number in *type, the payload (read into *buf for "-").  0, or
 * EXIT_USAGE (said). */
static int event_args(int argc, char **argv, int *type, char **buf, const char **payload)
{
	*type = kevent_type_from_name(argv[optind]);
	if (*type < 0)
		return ctl_usage_error("unknown type '%s' (general, storage, power, fs, hotplug)",
				       argv[optind]);
	return ctl_payload_arg(argc - optind == 4 ? argv[optind + 3] : "", buf, payload);
}

/* test --run: the event through keventd, its handlers run once with
 * KEVENT_TEST=1, each rule's outcome printed as send --wait does. */
static int run_live(struct ctl *c, int argc, char **argv, int source, uint64_t timeout_ms,
		    const char *timeout_text, bool json)
{
	_cleanup_free_ char *stdin_payload = NULL;
	const char *payload;
	int type, prc = event_args(argc, argv, &type, &stdin_payload, &payload);
	if (prc)
		return prc;
	const char *f[] = {"test-run",	     kevent_source_name((enum kevent_source)source),
			   argv[optind],     argv[optind + 1],
			   argv[optind + 2], payload};
	int fd = ctl_open(c, f, 6);
	if (fd < 0)
		return 1;
	int status = ctl_wait_replies(fd, timeout_ms, timeout_text, json);
	close(fd);
	return status;
}

int ctl_test(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"rules-dir", required_argument, NULL, 'd'},
		{"source", required_argument, NULL, 's'},
		{"seqnum", required_argument, NULL, 'n'},
		{"timestamp", required_argument, NULL, 't'},
		{"run", no_argument, NULL, 'r'},
		{"timeout", required_argument, NULL, 'T'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *dirs[MAX_DIRS];
	size_t n_dirs = 0;
	int source = KEVENT_SOURCE_SOCKET;
	int64_t seqnum = 1, timestamp = (int64_t)now_realtime_ns();
	bool live = false, fixed = false, json = false;
	uint64_t timeout_ms = 0;
	const char *timeout = NULL;
	int o;
	while ((o = getopt_long(argc, argv, "hd:s:n:t:", opts, NULL)) != -1) {
		switch (o) {
		case 'r':
			live = true;
			break;
		case 'j':
			json = true;
			break;
		case 'T':
			timeout = optarg;
			if (ctl_timeout_arg("--timeout", optarg, &timeout_ms))
				return EXIT_USAGE;
			break;
		case 'd':
			if (n_dirs == MAX_DIRS)
				return ctl_usage_error("too many --rules-dir");
			dirs[n_dirs++] = optarg;
			fixed = true;
			break;
		case 's':
			source = kevent_source_from_name(optarg);
			if (source < 0)
				return ctl_usage_error("unknown source '%s' (%s)", optarg,
						       kevent_source_names());
			break;
		case 'n':
		case 't':
			fixed = true;
			if (parse_int64(optarg, o == 'n' ? &seqnum : &timestamp) < 0 ||
			    (o == 'n' ? seqnum : timestamp) < 0)
				return ctl_usage_error("bad number '%s'", optarg);
			break;
		case 'h':
			printf("Usage: keventctl test [--json] [--rules-dir DIR]... [--source SRC] "
			       "[--seqnum N] "
			       "[--timestamp NS] TYPE OBJECT SIGNAL [PAYLOAD|-]\n"
			       "       keventctl test --run [--json] [--source SRC] [--timeout "
			       "DURATION] "
			       "TYPE OBJECT SIGNAL [PAYLOAD|-]\n"
			       "The first is a dry run, offline: which rules match and what they "
			       "would run.\n"
			       "--run has keventd run the handlers the event would run, once, with "
			       "KEVENT_TEST=1,\n"
			       "and prints each rule's outcome: exit 0 if all exited 0, else 1.\n"
			       "--json: the same as one JSON object.\n");
			return 0;
		default:
			return ctl_option_error("test");
		}
	}
	if (argc - optind < 3 || argc - optind > 4)
		return ctl_usage_error("test needs TYPE OBJECT SIGNAL [PAYLOAD]");
	if (live && fixed)
		return ctl_usage_error("test --run takes the rules keventd has, and gives the "
				       "event keventd's number and time: no --rules-dir, "
				       "--seqnum or --timestamp");
	if (timeout && !live)
		return ctl_usage_error("--timeout goes with --run");
	if (live) {
		char t[32];
		duration_format(timeout_ms, t, sizeof(t));
		return run_live(c, argc, argv, source, timeout_ms, timeout ? t : "", json);
	}
	if (!n_dirs)
		n_dirs = ctl_default_dirs(c, dirs);
	/* absolute, as keventd makes them: KEVENT_RULE_FILE is what a handler gets */
	char *abs[MAX_DIRS] = {NULL};
	for (size_t i = 0; i < n_dirs; i++) {
		abs[i] = path_absolute(dirs[i]);
		if (!abs[i]) {
			for (size_t j = 0; j < i; j++)
				free(abs[j]);
			return ctl_usage_error("%s: %s", dirs[i], strerror(errno));
		}
		dirs[i] = abs[i];
	}
	int status = run_test(argc, argv, dirs, n_dirs, source, seqnum, timestamp, json);
	for (size_t i = 0; i < n_dirs; i++)
		free(abs[i]);
	return status;
}

static int run_test(int argc, char **argv, const char **dirs, size_t n_dirs, int source,
		    int64_t seqnum, int64_t timestamp, bool json)
{

	_cleanup_free_ char *stdin_payload = NULL;
	const char *payload;
	int type, prc = event_args(argc, argv, &type, &stdin_payload, &payload);
	if (prc)
		return prc;
	const char *why = NULL;
	_cleanup_(kevent_freep) struct kevent *ev = NULL;
	int rc = kevent_new(type, argv[optind + 1], argv[optind + 2], payload,
			    (enum kevent_source)source, (uint64_t)seqnum, (uint64_t)timestamp, NULL,
			    0, &ev, &why);
	if (rc == -EINVAL)
		return ctl_usage_error("invalid event: %s", why);
	if (rc < 0)
		return ctl_usage_error("%s", strerror(-rc));

	_cleanup_(kruleset_freep) struct kruleset *rs = NULL;
	if (ctl_test_load(dirs, n_dirs, &rs) < 0)
		return 1;
	ctl_test_print(rs, ev, json, 0);
	return 0;
}
