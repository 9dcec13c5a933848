// SPDX-License-Identifier: GPL-2.0-or-later
/* The rule file parser: YAML tree -> struct kfile, with a strict schema. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "duration.h"
#include "rules.h"
#include "rules-parse.h"
#include "shared.h"
#include "suggest.h"
#include "template.h"
#include "unitprops.h"
#include "util.h"
#include "yamltree.h"

static void err(struct krules_parser *p, const struct ynode *n, const char *fmt, ...)
	_printf_(3, 4);
static void err(struct krules_parser *p, const struct ynode *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	kdiags_vadd(p->diags, n->file ? n->file : p->path, n->line, n->col, fmt, ap);
	va_end(ap);
	p->errors++;
}

static char *pdup(struct krules_parser *p, const char *s)
{
	char *d = strdup(s);
	if (!d)
		p->oom = true;
	return d;
}

static void note_rc(struct krules_parser *p, int rc)
{
	if (rc == -ENOMEM)
		p->oom = true;
}

static void parse_run(struct krules_parser *p, const struct ynode *n, struct krule *r)
{
	const struct ynode *const *items = (const struct ynode *const *)&n;
	size_t count = 1;
	if (n->kind == YNODE_SEQ) {
		items = (const struct ynode *const *)n->kids;
		count = n->n_kids;
	} else if (n->kind != YNODE_SCALAR || ynode_is_null(n)) {
		err(p, n, "'run' must be a list: [program, arguments...]");
		return;
	}
	if (count == 0) {
		err(p, n, "'run' must name a program");
		return;
	}
	/* one string is one program: "run: /usr/bin/logger hello" runs no
	 * program named so, and meant a list */
	if (n->kind == YNODE_SCALAR && strpbrk(n->value, " \t") && access(n->value, F_OK) < 0) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		const char *w = n->value;
		while (*w) {
			size_t sp = strspn(w, " \t"), len;
			w += sp;
			if (!*w)
				break;
			len = strcspn(w, " \t");
			strbuf_puts(&sb, sb.len ? ", " : "[");
			strbuf_add(&sb, w, len);
			w += len;
		}
		strbuf_putc(&sb, ']');
		if (sb.oom)
			p->oom = true;
		else
			err(p, n, "'run' takes a list: did you mean %s?", strbuf_str(&sb));
		return;
	}
	char **argv = calloc(count + 1, sizeof(char *));
	if (!argv) {
		p->oom = true;
		return;
	}
	bool bad = false;
	for (size_t i = 0; i < count; i++) {
		const struct ynode *it = items[i];
		const char *why = NULL;
		if (it->kind != YNODE_SCALAR) {
			err(p, it, "'run' arguments must be values, not %s", ynode_kind_name(it));
			bad = true;
		} else if (i == 0 && !it->value[0]) {
			err(p, it, "'run' must name a program");
			bad = true;
		} else if (i == 0 && strchr(it->value, '$')) {
			err(p, it,
			    "the program of 'run' must be literal: no '$' in it, so that "
			    "an event can never choose what runs");
			bad = true;
		} else if (ktemplate_check(it->value, &why) < 0) {
			err(p, it, "bad argument \"%s\": %s", it->value, why);
			bad = true;
		} else if (!(argv[i] = strdup(it->value))) {
			p->oom = true;
			bad = true;
		}
		if (bad)
			break;
	}
	if (bad) {
		for (size_t i = 0; i < count; i++)
			free(argv[i]);
		free(argv);
		return;
	}
	r->run = argv;
}

/* A name is an identifier that logs, status and monitor lines show: no
 * control character of any kind (str_has_control()). */
static bool name_valid(const char *s)
{
	size_t n = strlen(s);
	return n > 0 && n <= KRULE_NAME_MAX && !str_has_control(s);
}

/*
 * The user's ids and groups, looked up now, at load, so that starting a
 * handler never waits on the user database.  NULL with *oom false when
 * there is no such user.  Membership changes reach handlers at the next
 * reload.
 */
static struct kuser_ids *resolve_user(const char *u, bool *oom)
{
	struct kuser_ids *ids = NULL;
	int64_t id;
	*oom = false;
	struct passwd *pw = NULL;
	bool numeric = parse_int64(u, &id) == 0;
	if (numeric && (id < 0 || id >= 0xffffffffll))
		return NULL;
	pw = numeric ? getpwuid((uid_t)id) : getpwnam(u);
	if (!pw) {
		if (!numeric)
			return NULL;
		ids = calloc(1, sizeof(*ids));
		if (!ids)
			*oom = true;
		else
			*ids = (struct kuser_ids){.uid = (uid_t)id, .gid = (gid_t)id};
		return ids;
	}
	uid_t uid = pw->pw_uid;
	gid_t gid = pw->pw_gid;
	_cleanup_free_ char *name = strdup(pw->pw_name);
	if (!name) {
		*oom = true;
		return NULL;
	}
	for (int n = 32;;) {
		struct kuser_ids *g = realloc(ids, sizeof(*ids) + (size_t)n * sizeof(gid_t));
		if (!g) {
			free(ids);
			*oom = true;
			return NULL;
		}
		ids = g;
		int want = n;
		if (getgrouplist(name, gid, ids->groups, &want) >= 0) {
			ids->uid = uid;
			ids->gid = gid;
			ids->n_groups = (size_t)want;
			return ids;
		}
		if (want <= n) { /* no count offered: the primary group alone */
			ids->uid = uid;
			ids->gid = gid;
			ids->groups[0] = gid;
			ids->n_groups = 1;
			return ids;
		}
		n = want;
	}
}

enum rule_key {
	K_NAME,
	K_MATCH,
	K_RUN,
	K_SHELL,
	K_TIMEOUT,
	K_USER,
	K_RATELIMIT,
	K_LAST,
	K_NNP,
	K_LIMITS,
	K_MEMORY_MAX,
	K_TASKS_MAX,
	K_CPU_WEIGHT,
	K_TRANSIENT,
	K_UNIT_PROPS,
	K_SESSION,
	K_NOTIFY,
	K_TITLE,
	K_MESSAGE,
	K_SHARE,
	K_MAX
};
static const char *const rule_keys[K_MAX] = {
	"name",	      "match",	   "run",	 "shell",	 "timeout",
	"user",	      "ratelimit", "last",	 "no_new_privs", "limits",
	"memory_max", "tasks_max", "cpu_weight", "transient",	 "unit_properties",
	"session",    "notify",	   "title",	 "message",	 "share",
};

/* The key of a rule nearest to a misspelt one, of rule_keys and the keys
 * of parse_run_policy_key(); NULL when none is near. */
static const char *suggest_rule_key(const char *key)
{
	static const char *const policy[] = {"enabled", "key", "debounce"};
	const char *near = suggest_word(key, rule_keys, K_MAX);
	return near ? near : suggest_word(key, policy, ARRAY_SIZE(policy));
}

static void parse_limits(struct krules_parser *p, const struct ynode *n, struct krule_extra *x)
{
	if (n->kind != YNODE_MAP) {
		err(p, n, "'limits' must be a mapping of limit names to values, not %s",
		    ynode_kind_name(n));
		return;
	}
	for (size_t i = 0; i + 1 < n->n_kids; i += 2) {
		const struct ynode *k = n->kids[i], *v = n->kids[i + 1];
		const char *why = NULL;
		struct krlimit l;
		if (k->kind != YNODE_SCALAR || !krules_want_scalar(p, v, k->value))
			continue;
		if (krlimit_parse(k->value, v->value, &l, &why) < 0) {
			err(p, k->kind == YNODE_SCALAR && strstr(why, "unknown") ? k : v,
			    "bad limit %s \"%s\": %s", k->value, v->value, why);
			continue;
		}
		bool dup = false;
		for (size_t j = 0; j < x->n_limits && !dup; j++)
			dup = x->limits[j].resource == l.resource;
		if (dup) {
			err(p, k, "limit '%s' given twice", k->value);
			continue;
		}
		if (!x->limits)
			x->limits = calloc(KRLIMITS_MAX, sizeof(*x->limits));
		if (!x->limits) {
			p->oom = true;
			return;
		}
		x->limits[x->n_limits++] = l;
	}
}

/* memory_max, tasks_max and cpu_weight: the limits of a run's own cgroup. */
static void parse_cg_limits(struct krules_parser *p, const struct ynode *const *at,
			    struct krule_extra *x)
{
	struct kcg_limits lim = {0};
	const char *s, *why = NULL;
	int64_t n;
	if (at[K_MEMORY_MAX] && (s = krules_want_scalar(p, at[K_MEMORY_MAX], "memory_max")) &&
	    kunitprop_parse_size(s, &lim.memory_max, &why) < 0)
		err(p, at[K_MEMORY_MAX], "bad memory_max \"%s\": %s", s, why);
	if (at[K_TASKS_MAX] && (s = krules_want_scalar(p, at[K_TASKS_MAX], "tasks_max"))) {
		if (strcmp(s, "infinity") == 0)
			lim.tasks_max = KCG_INFINITY;
		else if (parse_int64(s, &n) == 0 && n >= 1)
			lim.tasks_max = (uint64_t)n;
		else
			err(p, at[K_TASKS_MAX],
			    "bad tasks_max \"%s\": a number of tasks, 1 or more, or infinity", s);
	}
	if (at[K_CPU_WEIGHT] && (s = krules_want_scalar(p, at[K_CPU_WEIGHT], "cpu_weight"))) {
		if (parse_int64(s, &n) == 0 && n >= 1 && n <= 10000)
			lim.cpu_weight = (uint32_t)n;
		else
			err(p, at[K_CPU_WEIGHT], "bad cpu_weight \"%s\": a weight from 1 to 10000",
			    s);
	}
	if (!lim.memory_max && !lim.tasks_max && !lim.cpu_weight)
		return;
	x->cg_limits = malloc(sizeof(*x->cg_limits));
	if (!x->cg_limits)
		p->oom = true;
	else
		*x->cg_limits = lim;
}

/* unit_properties: a mapping of systemd property names to values, each
 * checked now (unitprops.h), so that a unit systemd would refuse for a
 * property keventd knows is an error at load, not at the event. */
static void parse_unit_props(struct krules_parser *p, const struct ynode *n, struct krule_extra *x)
{
	if (n->kind != YNODE_MAP) {
		err(p, n,
		    "'unit_properties' must be a mapping of systemd properties to values, not %s",
		    ynode_kind_name(n));
		return;
	}
	x->unit_props = calloc(n->n_kids / 2 + 1, sizeof(*x->unit_props));
	if (!x->unit_props) {
		p->oom = true;
		return;
	}
	for (size_t i = 0; i + 1 < n->n_kids; i += 2) {
		const struct ynode *k = n->kids[i], *v = n->kids[i + 1];
		const char *why = NULL;
		struct kunitprop u;
		if (k->kind != YNODE_SCALAR) {
			err(p, k, "a unit property's name must be a value, not %s",
			    ynode_kind_name(k));
			continue;
		}
		if (!krules_want_scalar(p, v, k->value))
			continue;
		int rc = kunitprop_parse(k->value, v->value, &u, &why);
		if (rc == -ENOENT) {
			err(p, k, "unit property '%s' cannot be set: %s", k->value, why);
			continue;
		}
		if (rc == -ENOMEM) {
			p->oom = true;
			return;
		}
		if (rc < 0) {
			err(p, v, "bad unit property %s \"%s\": %s", k->value, v->value, why);
			continue;
		}
		bool dup = false;
		for (size_t j = 0; j < x->n_unit_props && !dup; j++)
			dup = strcmp(x->unit_props[j].name, u.name) == 0;
		if (dup) {
			err(p, k, "unit property '%s' given twice", k->value);
			kunitprop_release(&u);
			continue;
		}
		x->unit_props[x->n_unit_props++] = u;
	}
}

/* transient: true, and what goes with it: a handler to run, and none of
 * the keys that keventd's own runs take instead of the unit's properties. */
static void parse_transient(struct krules_parser *p, const struct ynode *const *at, struct krule *r,
			    struct krule_extra *x)
{
	static const struct {
		enum rule_key key;
		const char *instead;
	} own[] = {
		/* clang-format off */
		{K_MEMORY_MAX, "a transient unit takes MemoryMax in unit_properties"},
		{K_TASKS_MAX, "a transient unit takes TasksMax in unit_properties"},
		{K_CPU_WEIGHT, "a transient unit takes CPUWeight in unit_properties"},
		{K_NNP, "a transient unit takes NoNewPrivileges in unit_properties"},
		{K_LIMITS, "a transient unit has the resource limits systemd gives it"},
		/* clang-format on */
	};
	const char *s;
	bool on = false;
	if (at[K_TRANSIENT] && (s = krules_want_scalar(p, at[K_TRANSIENT], "transient"))) {
		if (krules_parse_bool(s, &on) < 0)
			err(p, at[K_TRANSIENT], "'transient' must be true or false, not \"%s\"", s);
		else
			r->transient = on;
	}
	/* session: active is a transient unit for the person at the screen */
	if (at[K_SESSION] && (s = krules_want_scalar(p, at[K_SESSION], "session"))) {
		if (strcmp(s, "active") != 0)
			err(p, at[K_SESSION], "'session' must be active, not \"%s\"", s);
		else if (at[K_TRANSIENT] && !r->transient)
			err(p, at[K_TRANSIENT],
			    "'session: active' runs a transient unit: 'transient' cannot be false");
		else
			r->session = r->transient = true;
	}
	if (r->session && at[K_USER])
		err(p, at[K_USER], "'session: active' runs as the session's user: no 'user'");
	if (r->transient && !at[K_RUN] && !at[K_SHELL])
		err(p, at[K_TRANSIENT] ? at[K_TRANSIENT] : at[K_SESSION],
		    "'%s' needs a 'run' or 'shell' to run",
		    at[K_TRANSIENT] ? "transient: true" : "session: active");
	for (size_t i = 0; r->transient && i < ARRAY_SIZE(own); i++)
		if (at[own[i].key])
			err(p, at[own[i].key], "'%s' is for keventd's own runs: %s",
			    rule_keys[own[i].key], own[i].instead);
	if (at[K_UNIT_PROPS] && !r->transient)
		err(p, at[K_UNIT_PROPS],
		    "'unit_properties' are a transient unit's: the rule needs 'transient: true' "
		    "or 'session: active'");
	else if (at[K_UNIT_PROPS])
		parse_unit_props(p, at[K_UNIT_PROPS], x);
}

/* title: or message: of a rule that notifies: a template, as run's
 * arguments are (template.h). */
static char *notify_text(struct krules_parser *p, const struct ynode *n, const char *key)
{
	const char *s = krules_want_scalar(p, n, key), *why = NULL;
	if (!s)
		return NULL;
	if (strlen(s) > KRULE_NOTIFY_TEXT_MAX) {
		err(p, n, "'%s' is at most %d bytes", key, KRULE_NOTIFY_TEXT_MAX);
		return NULL;
	}
	if (ktemplate_check(s, &why) < 0) {
		err(p, n, "bad '%s' template: %s", key, why);
		return NULL;
	}
	return pdup(p, s);
}

/* notify: [NAME...] (or one NAME), and its title: and message:. */
static void parse_notify(struct krules_parser *p, const struct ynode *const *at,
			 struct krule_extra *x)
{
	const struct ynode *n = at[K_NOTIFY];
	if (!n) {
		if (at[K_TITLE] || at[K_MESSAGE])
			err(p, at[K_TITLE] ? at[K_TITLE] : at[K_MESSAGE],
			    "'%s' is a notification's: the rule needs 'notify'",
			    at[K_TITLE] ? "title" : "message");
		return;
	}
	const struct ynode *const *items = (const struct ynode *const *)&n;
	size_t count = 1;
	if (n->kind == YNODE_SEQ) {
		items = (const struct ynode *const *)n->kids;
		count = n->n_kids;
	}
	if (!count || count > KRULE_NOTIFY_MAX) {
		err(p, n,
		    "'notify' names 1 to %d targets of keventd.yaml's notify:", KRULE_NOTIFY_MAX);
		return;
	}
	x->notify = calloc(count + 1, sizeof(*x->notify));
	if (!x->notify) {
		p->oom = true;
		return;
	}
	for (size_t i = 0, k = 0; i < count; i++) {
		const char *s = krules_want_scalar(p, items[i], "notify");
		if (!s)
			continue;
		if (!str_is_name(s, KRULE_NOTIFY_NAME_MAX)) {
			err(p, items[i],
			    "'notify': \"%s\" is not a target's name (1 to %d of "
			    "[A-Za-z0-9_.-])",
			    s, KRULE_NOTIFY_NAME_MAX);
			continue;
		}
		bool twice = false;
		for (size_t j = 0; j < k && !twice; j++)
			twice = strcmp(x->notify[j], s) == 0;
		if (twice)
			err(p, items[i], "'notify': target '%s' given twice", s);
		else if ((x->notify[k] = pdup(p, s)))
			k++;
	}
	if (at[K_TITLE])
		x->notify_title = notify_text(p, at[K_TITLE], "title");
	if (at[K_MESSAGE])
		x->notify_message = notify_text(p, at[K_MESSAGE], "message");
}

/* The keys of the second edition that are about when a rule runs:
 * enabled, key, debounce.  Returns whether k is one of them (handled, or reported
 * when given twice). */
enum { KX_ENABLED, KX_KEY, KX_DEBOUNCE, KX_MAX };
static bool parse_run_policy_key(struct krules_parser *p, const struct ynode *k,
				 const struct ynode *v, struct krule *r, struct krule_extra *x,
				 const struct ynode *seen[KX_MAX])
{
	static const char *const names[KX_MAX] = {"enabled", "key", "debounce"};
	size_t which = KX_MAX;
	for (size_t j = 0; j < KX_MAX && k->kind == YNODE_SCALAR; j++)
		if (strcmp(k->value, names[j]) == 0)
			which = j;
	if (which == KX_MAX)
		return false;
	if (seen[which]) {
		err(p, k, "key '%s' given twice", names[which]);
		return true;
	}
	seen[which] = v;
	const char *s = krules_want_scalar(p, v, names[which]);
	bool on;
	if (!s)
		return true;
	if (which == KX_DEBOUNCE) {
		const char *why = NULL;
		if (duration_parse(s, &r->debounce_ms, &why) < 0)
			err(p, v, "bad debounce \"%s\": %s", s, why);
	} else if (which == KX_ENABLED) {
		if (krules_parse_bool(s, &on) < 0)
			err(p, v, "'enabled' must be true or false, not \"%s\"", s);
		else
			r->disabled = !on;
	} else if (strcmp(s, "object") == 0) {
		x->key = KRULE_KEY_OBJECT;
	} else if (strcmp(s, "rule") == 0) {
		x->key = KRULE_KEY_RULE;
	} else if (strncmp(s, "payload.", 8) == 0 && kevent_prop_key_valid(s + 8)) {
		x->key = KRULE_KEY_PAYLOAD;
		x->key_prop = pdup(p, s + 8);
	} else {
		err(p, v, "'key' must be object, rule or payload.NAME, not \"%s\"", s);
	}
	return true;
}

/* The rule's rare keys, out of line when it has any (rules.h). */
static void keep_extra(struct krules_parser *p, struct krule *r, struct krule_extra *x)
{
	if (x->timeout_ms == KRULE_DEFAULT_TIMEOUT_MS && !x->user && !x->ids && !x->limits &&
	    !x->cg_limits && !x->rl_count && !x->rl_period_ms && x->key == KRULE_KEY_OBJECT &&
	    !x->key_prop && !x->unit_props && !x->notify && !x->notify_title &&
	    !x->notify_message && !x->share_users && !x->share)
		return;
	r->extra = malloc(sizeof(*r->extra));
	if (r->extra) {
		*r->extra = *x;
		return;
	}
	p->oom = true;
	krule_extra_release(x);
}

static void share_list(struct krules_parser *p, struct krule *r, struct kpattern_list *l,
		       uint8_t bit)
{
	struct kpattern *v;
	if (!l->n)
		return;
	int rc = kshared_list(&p->shared, l, &v);
	note_rc(p, rc);
	if (rc <= 0)
		return;
	size_t n = l->n;
	kpattern_list_free(l);
	l->v = v;
	l->n = n;
	r->shared |= bit;
}

/* The rule's type, object, signal and source lists and its run: the same
 * memory as an earlier rule of the file that has the same (shared.h). */
static void share_lists(struct krules_parser *p, struct krule *r)
{
	char **argv;
	if (p->oom)
		return;
	share_list(p, r, &r->type, KRULE_SHARED_TYPE);
	share_list(p, r, &r->object, KRULE_SHARED_OBJECT);
	share_list(p, r, &r->signal, KRULE_SHARED_SIGNAL);
	share_list(p, r, &r->source, KRULE_SHARED_SOURCE);
	if (!r->run || p->oom)
		return;
	int rc = kshared_argv(&p->shared, r->run, &argv);
	note_rc(p, rc);
	if (rc > 0) {
		strv_free(r->run);
		r->run = argv;
		r->shared |= KRULE_SHARED_RUN;
	}
}

static void parse_rule(struct krules_parser *p, const struct ynode *n, struct kfile *f,
		       struct krule *r)
{
	const struct ynode *seen_x[KX_MAX] = {NULL};
	const struct ynode *at[K_MAX] = {NULL};
	struct krule_extra x = krule_extra_default;

	*r = (struct krule){
		.file = f,
		.line = n->line,
		.col = n->col,
		.index = (unsigned)f->n_rules,
		.type_mask = (1u << KEVENT_NTYPES) - 1,
	};
	if (n->kind != YNODE_MAP) {
		err(p, n, "a rule must be a mapping with 'match' and 'run', not %s",
		    ynode_kind_name(n));
		return;
	}
	for (size_t i = 0; i + 1 < n->n_kids; i += 2) {
		const struct ynode *k = n->kids[i];
		size_t which = K_MAX;
		if (parse_run_policy_key(p, k, n->kids[i + 1], r, &x, seen_x))
			continue;
		if (k->kind == YNODE_SCALAR)
			for (size_t j = 0; j < K_MAX; j++)
				if (strcmp(k->value, rule_keys[j]) == 0)
					which = j;
		const char *near;
		if (which == K_MAX && k->kind == YNODE_SCALAR &&
		    (near = suggest_rule_key(k->value))) {
			err(p, k, "unknown key '%s' in rule: did you mean %s?", k->value, near);
			continue;
		}
		if (which == K_MAX) {
			err(p, k,
			    "unknown key '%s' in rule (expected name, match, run, shell, timeout, "
			    "user, ratelimit, debounce, key, enabled, last, no_new_privs, limits, "
			    "memory_max, tasks_max, cpu_weight, transient, unit_properties, "
			    "session, notify, title, message or share)",
			    k->kind == YNODE_SCALAR ? k->value : "?");
			continue;
		}
		if (at[which]) {
			err(p, k, "key '%s' given twice", rule_keys[which]);
			continue;
		}
		at[which] = n->kids[i + 1];
	}

	const char *s, *why = NULL;
	if (at[K_NAME] && (s = krules_want_scalar(p, at[K_NAME], "name"))) {
		if (!name_valid(s))
			err(p, at[K_NAME], "a rule name is 1-%d printable characters",
			    KRULE_NAME_MAX);
		else
			r->name = pdup(p, s);
	}
	if (at[K_MATCH])
		krules_parse_match(p, at[K_MATCH], r);
	if (at[K_RUN] && at[K_SHELL])
		err(p, at[K_SHELL], "a rule has either 'run' or 'shell', not both");
	else if (at[K_RUN])
		parse_run(p, at[K_RUN], r);
	else if (at[K_SHELL] && (s = krules_want_scalar(p, at[K_SHELL], "shell")))
		r->shell = pdup(p, s);
	if (at[K_TIMEOUT] && (s = krules_want_scalar(p, at[K_TIMEOUT], "timeout")) &&
	    duration_parse(s, &x.timeout_ms, &why) < 0)
		err(p, at[K_TIMEOUT], "bad timeout \"%s\": %s", s, why);
	if (at[K_USER] && (s = krules_want_scalar(p, at[K_USER], "user"))) {
		bool oom;
		x.ids = resolve_user(s, &oom);
		if (oom)
			p->oom = true;
		else if (!x.ids)
			err(p, at[K_USER], "unknown user \"%s\"", s);
		else
			x.user = pdup(p, s);
	}
	if (at[K_RATELIMIT] && (s = krules_want_scalar(p, at[K_RATELIMIT], "ratelimit")) &&
	    rate_parse(s, &x.rl_count, &x.rl_period_ms, &why) < 0)
		err(p, at[K_RATELIMIT], "bad ratelimit \"%s\": %s", s, why);
	bool on;
	if (at[K_LAST] && (s = krules_want_scalar(p, at[K_LAST], "last"))) {
		if (krules_parse_bool(s, &on) < 0)
			err(p, at[K_LAST], "'last' must be true or false, not \"%s\"", s);
		else
			r->last = on;
	}
	parse_cg_limits(p, at, &x);
	if (at[K_NNP] && (s = krules_want_scalar(p, at[K_NNP], "no_new_privs"))) {
		if (krules_parse_bool(s, &on) < 0)
			err(p, at[K_NNP], "'no_new_privs' must be true or false, not \"%s\"", s);
		else
			r->no_new_privs = on;
	}
	if (at[K_LIMITS])
		parse_limits(p, at[K_LIMITS], &x);
	parse_transient(p, at, r, &x);
	parse_notify(p, at, &x);
	if (at[K_SHARE])
		krules_parse_share(p, at[K_SHARE], &x);
	keep_extra(p, r, &x);
	share_lists(p, r);

	/* The types a rule can match, so the matcher never tries it for others. */
	r->type_mask = r->type.n ? 0 : (uint8_t)((1u << KEVENT_NTYPES) - 1);
	for (int t = 0; t < KEVENT_NTYPES && r->type.n; t++)
		if (kpattern_list_match(&r->type, kevent_type_name((enum kevent_type)t)))
			r->type_mask |= (uint8_t)(1u << t);
	if (!r->name && asprintf(&r->name, "%s:%u", f->name, r->index) < 0)
		r->name = NULL;
	if (!r->name)
		p->oom = true;
}

/* The node of a rule's name, for pointing at duplicates. */
static const struct ynode *rule_name_node(const struct ynode *rule)
{
	for (size_t i = 0; rule->kind == YNODE_MAP && i + 1 < rule->n_kids; i += 2)
		if (rule->kids[i]->kind == YNODE_SCALAR &&
		    strcmp(rule->kids[i]->value, "name") == 0)
			return rule->kids[i + 1];
	return rule;
}

static char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return strdup(s ? s + 1 : path);
}

int krules_read_tree(const char *buf, size_t len, const char *path, struct ynode **root,
		     struct kdiags *diags)
{
	unsigned line, col;
	_cleanup_free_ char *msg = NULL;

	*root = NULL;
	if (len > KRULE_FILE_MAX_BYTES) {
		kdiags_add(diags, path, 0, 0, "rule file larger than %d bytes",
			   KRULE_FILE_MAX_BYTES);
		return -EINVAL;
	}
	if (memchr(buf, '\0', len)) {
		kdiags_add(diags, path, 0, 0, "rule file contains a NUL byte");
		return -EINVAL;
	}
	int rc = ytree_parse(buf, len, root, &line, &col, &msg);
	if (rc == -EINVAL)
		kdiags_add(diags, path, line, col, "%s", msg);
	return rc;
}

int krules_parse(const char *buf, size_t len, const char *path, struct kfile **out,
		 struct kdiags *diags)
{
	struct ynode *root = NULL;

	*out = NULL;
	int rc = krules_read_tree(buf, len, path, &root, diags);
	if (rc < 0)
		return rc;
	rc = krules_from_tree(root, path, out, diags);
	ynode_free(root);
	return rc;
}

int krules_from_tree(const struct ynode *root, const char *path, struct kfile **out,
		     struct kdiags *diags)
{
	struct krules_parser p = {.path = path, .diags = diags};

	*out = NULL;
	struct kfile *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->refs = 1;
	f->path = strdup(path);
	f->name = base_name(path);
	if (!f->path || !f->name)
		p.oom = true;

	const struct ynode *rules = NULL, *conds = NULL;
	if (root && !ynode_is_null(root)) {
		if (root->kind != YNODE_MAP) {
			err(&p, root, "a rule file is a mapping with the key 'rules', not %s",
			    ynode_kind_name(root));
		} else {
			for (size_t i = 0; i + 1 < root->n_kids; i += 2) {
				const struct ynode *k = root->kids[i];
				bool is_rules =
					k->kind == YNODE_SCALAR && strcmp(k->value, "rules") == 0;
				bool is_conds = k->kind == YNODE_SCALAR &&
						strcmp(k->value, "conditions") == 0;
				const struct ynode **slot = is_rules   ? &rules
							    : is_conds ? &conds
								       : NULL;
				if (slot && !*slot)
					*slot = root->kids[i + 1];
				else if (slot)
					err(&p, k, "key '%s' given twice", k->value);
				else
					err(&p, k,
					    "unknown top-level key '%s' (expected 'rules' or "
					    "'conditions')",
					    k->kind == YNODE_SCALAR ? k->value : "?");
			}
		}
	}
	if (conds && !p.oom)
		krules_parse_conditions(&p, conds, f);
	if (rules && !ynode_is_null(rules) && rules->kind != YNODE_SEQ) {
		err(&p, rules, "'rules' must be a list of rules, not %s", ynode_kind_name(rules));
		rules = NULL;
	}
	if (rules && rules->kind == YNODE_SEQ && rules->n_kids) {
		f->rules = calloc(rules->n_kids, sizeof(struct krule));
		if (!f->rules)
			p.oom = true;
		for (size_t i = 0; f->rules && i < rules->n_kids && !p.oom; i++) {
			struct krule *r = &f->rules[f->n_rules];
			parse_rule(&p, rules->kids[i], f, r);
			f->n_rules++;
			for (size_t j = 0; j + 1 < f->n_rules; j++) {
				if (r->name && f->rules[j].name &&
				    strcmp(f->rules[j].name, r->name) == 0) {
					err(&p, rule_name_node(rules->kids[i]),
					    "duplicate rule name \"%s\" (first used at line %u)",
					    r->name, f->rules[j].line);
					break;
				}
			}
		}
	}
	kshared_release(&p.shared);
	if (p.oom) {
		kfile_unref(f);
		return -ENOMEM;
	}
	if (p.errors) {
		kfile_unref(f);
		return -EINVAL;
	}
	*out = f;
	return 0;
}
