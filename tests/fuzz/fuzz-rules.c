// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The rule loader, YAML bytes in: krules_parse(), or, for an input with
 * lines "#--" in it, kdropin_parse() of the part before the first as the
 * rule file and of each part after one as a drop-in of it (a "#--" line is a
 * YAML comment, so a drop-in seed is a rule file too).  Then for a file that
 * parsed, a ruleset, a few events matched through its index (checked
 * against matching every rule in turn), and the handler plan of each match.
 * The events are made of the rules' own values, literal or the literal
 * start of a glob, so that every kind of index key is reached.
 */
#include <errno.h>
#include <string.h>

#include "dropin.h"
#include "fuzz.h"
#include "plan.h"
#include "ruleset.h"
#include "table.h"

#define MAX_INPUT   (64 * 1024) /* rule files are small; as systemd's fuzz-udev-rules */
#define MAX_EVENTS  8
#define MAX_DROPINS 4
#define SEPARATOR   "\n#--\n"

static const char *const dropin_paths[MAX_DROPINS] = {
	"/etc/keventd/rules.d/50-fuzz.yaml.d/10-a.yaml",
	"/run/keventd/rules.d/50-fuzz.yaml.d/20-b.yaml",
	"/usr/lib/keventd/rules.d/50-fuzz.yaml.d/30-c.yaml",
	"/etc/keventd/rules.d/50-fuzz.yaml.d/40-d.yaml",
};

/* Splits the input at SEPARATOR: the rule file, then its drop-ins. */
static size_t split(const char *buf, size_t len, struct ksrc *src)
{
	size_t n = 0, sl = strlen(SEPARATOR);
	src[0] = (struct ksrc){"/usr/lib/keventd/rules.d/50-fuzz.yaml", buf, len};
	for (;;) {
		const char *at = memmem(src[n].buf, src[n].len, SEPARATOR, sl);
		if (!at || n == MAX_DROPINS)
			return n;
		const char *next = at + sl;
		size_t rest = src[n].len - (size_t)(next - src[n].buf);
		src[n].len = (size_t)(at - src[n].buf) + 1;
		n++;
		src[n] = (struct ksrc){dropin_paths[n - 1], next, rest};
	}
}

/* A diag names one of the files it was given. */
static bool known_file(const char *file, const struct ksrc *src, size_t n)
{
	for (size_t i = 0; i <= n; i++)
		if (strcmp(file, src[i].path) == 0)
			return true;
	return false;
}

struct hits {
	const struct krule *v[64];
	size_t n;
	bool truncated;
};

static bool collect(const struct krule *r, void *userdata)
{
	struct hits *h = userdata;
	if (h->n == ARRAY_SIZE(h->v)) {
		h->truncated = true;
		return false;
	}
	h->v[h->n++] = r;
	return true;
}

/* The plan of a matched rule: the program is the rule's literal one, and the
 * environment has exactly one PATH and nothing a handler must not get. */
static void check_plan(const struct krule *r, const struct kevent *ev)
{
	struct kplan plan;
	int rc = kplan_build(r, ev, &plan);
	if (!krule_runs_something(r)) {
		FUZZ_CHECK(rc == -EINVAL);
		return;
	}
	if (rc == -ENOMEM)
		return;
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(plan.argc >= 1 && plan.argv[plan.argc] == NULL);
	if (r->shell)
		FUZZ_CHECK(strcmp(plan.argv[2], r->shell) == 0);
	else
		FUZZ_CHECK(strcmp(plan.argv[0], r->run[0]) == 0);
	size_t paths = 0;
	for (size_t i = 0; i < plan.n_env; i++) {
		const char *e = plan.envp[i];
		FUZZ_CHECK(e && strchr(e, '='));
		paths += strncmp(e, "PATH=", 5) == 0;
		FUZZ_CHECK(strncmp(e, "LD_", 3) != 0 && strncmp(e, "IFS=", 4) != 0 &&
			   strncmp(e, "HOME=", 5) != 0 && strncmp(e, "BASH_ENV=", 9) != 0);
	}
	FUZZ_CHECK(paths == 1);
	FUZZ_CHECK(plan.envp[plan.n_env] == NULL);
	kplan_release(&plan);
}

static void match_one(const struct kruleset *rs, const struct kevent *ev)
{
	struct hits h = {.n = 0};
	size_t n = kruleset_match(rs, ev, collect, &h);
	FUZZ_CHECK(n == h.n + h.truncated);

	/* The index must find exactly what trying every rule in order finds. */
	size_t k = 0;
	for (size_t i = 0; i < rs->n_rules; i++) {
		const struct krule *r = rs->rules[i];
		struct strbuf why = STRBUF_INIT;
		bool m = krule_match(r, ev, &why);
		FUZZ_CHECK(m == krule_match(r, ev, NULL));
		FUZZ_CHECK(m || why.len > 0 || why.oom);
		strbuf_release(&why);
		if (!m)
			continue;
		if (k == h.n) {
			FUZZ_CHECK(h.truncated); /* else the index missed a rule */
			break;
		}
		FUZZ_CHECK(h.v[k] == r);
		k++;
		if (r->last)
			break;
	}
	FUZZ_CHECK(k == h.n);
	for (size_t i = 0; i < h.n; i++)
		check_plan(h.v[i], ev);
}

static bool weigh(const struct krule *r, void *userdata)
{
	struct kcond_table *t = userdata;
	const struct kcond_def *def = kcond_def_of(r);
	FUZZ_CHECK(def && (r == &def->set || (def->has_clear && r == &def->clear)));
	int rc = kcond_table_event(t, def, ((struct kevent **)t->userdata)[0], r == &def->set,
				   1700000000ull * 1000000000);
	FUZZ_CHECK(rc == 0 || rc == 1 || rc == -ENOMEM);
	return true;
}

/* The conditions' matchers, by their own index and against every one in
 * turn, and what they make of a table. */
static void cond_one(const struct kruleset *rs, const struct kevent *ev)
{
	match_one(rs->conds, ev);
	struct kcond_table t;
	const struct kevent *evp[1] = {ev};
	if (kcond_table_init(&t, 0, NULL, evp) < 0)
		return;
	kruleset_match(rs->conds, ev, weigh, &t);
	FUZZ_CHECK(t.holding <= t.n);
	kcond_table_release(&t);
}

static void add_event(struct kevent **evs, size_t *n, int type, const char *object,
		      const char *signal, const char *payload, enum kevent_source source,
		      char *const *env, size_t n_env)
{
	const char *why;
	if (*n < MAX_EVENTS && kevent_new(type, object, signal, payload, source, 7, 1700000000, env,
					  n_env, &evs[*n], &why) == 0)
		(*n)++;
}

/* The first literal value of a list, if any. */
static const char *literal(const struct kpattern_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (!l->v[i].negate && !l->v[i].glob)
			return l->v[i].text;
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kfile *f = NULL;
	struct kdiags diags = {0};

	if (fuzz_outside_size(size, 0, MAX_INPUT))
		return 0;
	struct ksrc in[MAX_DROPINS + 1];
	size_t n_dropins = split((const char *)data, size, in);
	int rc;
	if (n_dropins) {
		rc = kdropin_parse(&in[0], in + 1, n_dropins, &f, &diags);
		/* the tree alone: no tree exactly when the merge fails */
		struct kdiags d2 = {0};
		struct ynode *tree = NULL;
		int mrc = kdropin_merge(&in[0], in + 1, n_dropins, &tree, &d2);
		FUZZ_CHECK(mrc == 0 || mrc == -EINVAL || mrc == -ENOMEM);
		FUZZ_CHECK(mrc == 0 || tree == NULL);
		FUZZ_CHECK((mrc == 0) == (d2.n == 0) || mrc == -ENOMEM);
		/* a file whose drop-ins do not apply does not load */
		FUZZ_CHECK(rc != 0 || mrc == 0 || mrc == -ENOMEM);
		FUZZ_CHECK(mrc != -EINVAL || rc == -EINVAL || rc == -ENOMEM);
		ynode_free(tree);
		kdiags_free(&d2);
	} else {
		rc = krules_parse((const char *)data, size, in[0].path, &f, &diags);
	}
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
	FUZZ_CHECK((rc == 0) == (f != NULL));
	FUZZ_CHECK(rc != -EINVAL || diags.n > 0);
	for (size_t i = 0; i < diags.n; i++) {
		struct strbuf sb = STRBUF_INIT;
		/* a position, or none for the file as a whole: never half of one */
		FUZZ_CHECK((diags.v[i].line >= 1 && diags.v[i].col >= 1) ||
			   (diags.v[i].line == 0 && diags.v[i].col == 0));
		FUZZ_CHECK(known_file(diags.v[i].file, in, n_dropins));
		kdiag_format(&diags.v[i], &sb);
		FUZZ_CHECK(sb.oom || strstr(strbuf_str(&sb), ": error: "));
		strbuf_release(&sb);
	}
	kdiags_free(&diags);
	if (rc < 0)
		return 0;

	struct kruleset *rs = NULL;
	rc = kruleset_from_files(&f, 1, &rs);
	FUZZ_CHECK(rc == 0 || rc == -ENOMEM);
	if (rc == 0) {
		struct kevent *evs[MAX_EVENTS];
		size_t n = 0;
		char *env[] = {"ACTION=add", "DEVPATH=/block/sda", "SUBSYSTEM=block",
			       "PATH=/tmp",  "LD_PRELOAD=/x.so",   "DEVNAME=/dev/sda"};
		add_event(evs, &n, KEVENT_POWER, "/org/kernel/devices/system/cpu/temperature",
			  "high", "Cpu: 0\nTemperature: 95000\nZone: x86_pkg_temp\n",
			  KEVENT_SOURCE_KERNEL, NULL, 0);
		add_event(evs, &n, KEVENT_STORAGE, "/org/kernel/block/sda", "add",
			  "ACTION: add\nDEVPATH: /block/sda\n", KEVENT_SOURCE_UDEV, env,
			  ARRAY_SIZE(env));
		add_event(evs, &n, KEVENT_GENERAL, "/", "x", "", KEVENT_SOURCE_SOCKET, NULL, 0);
		/* Events made of the first rules' own literal values, so the
		 * indexed paths are reached too. */
		for (size_t i = 0; i < f->n_rules && n < MAX_EVENTS; i++) {
			const struct krule *r = &f->rules[i];
			const char *obj = literal(&r->object), *sig = literal(&r->signal);
			/* or the literal start of an object glob, and a tail, which
			 * reaches the prefix keys */
			char globbed[KEVENT_OBJECT_MAX + 1];
			if (!obj && r->object.n && !r->object.v[0].negate) {
				size_t len = r->object.v[0].prefix;
				if (len > KEVENT_OBJECT_MAX - 3)
					len = KEVENT_OBJECT_MAX - 3;
				snprintf(globbed, sizeof(globbed), "%.*s%s", (int)len,
					 r->object.v[0].text, i % 2 ? "/x" : "x");
				obj = globbed;
			}
			const char *src = literal(&r->source), *typ = literal(&r->type);
			int t = typ ? kevent_type_from_name(typ) : KEVENT_HOTPLUG;
			int s = src ? kevent_source_from_name(src) : KEVENT_SOURCE_SOCKET;
			struct strbuf payload = STRBUF_INIT;
			for (size_t j = 0; j < r->n_payload; j++) {
				const struct kpayload_test *pt = &r->payload[j];
				const char *v = pt->kind == KPT_GLOB ? literal(&pt->globs) : NULL;
				char num[24];
				if (pt->kind != KPT_GLOB) {
					snprintf(num, sizeof(num), "%lld", (long long)pt->a);
					v = num;
				}
				if (v)
					strbuf_printf(&payload, "%s: %s\n", pt->key, v);
			}
			add_event(evs, &n, t < 0 ? KEVENT_HOTPLUG : t, obj ? obj : "/a",
				  sig ? sig : "add", strbuf_str(&payload),
				  s < 0 ? KEVENT_SOURCE_SOCKET : (enum kevent_source)s, NULL, 0);
			strbuf_release(&payload);
		}
		/* and of the conditions' sets, for their own index */
		for (size_t i = 0; i < f->n_conds && n < MAX_EVENTS; i++) {
			const struct krule *r = &f->conds[i].set;
			const char *obj = literal(&r->object), *sig = literal(&r->signal);
			const char *src = literal(&r->source);
			int s = src ? kevent_source_from_name(src) : KEVENT_SOURCE_SOCKET;
			add_event(evs, &n, KEVENT_STORAGE, obj ? obj : "/a", sig ? sig : "add", "",
				  s < 0 ? KEVENT_SOURCE_SOCKET : (enum kevent_source)s, NULL, 0);
		}
		for (size_t i = 0; i < n; i++) {
			match_one(rs, evs[i]);
			if (rs->conds)
				cond_one(rs, evs[i]);
			kevent_free(evs[i]);
		}
		kruleset_free(rs);
	}
	kfile_unref(f);
	return 0;
}
