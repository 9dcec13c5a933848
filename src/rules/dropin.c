// SPDX-License-Identifier: GPL-2.0-or-later
/* Drop-ins: named rules changed key by key, on the YAML trees (dropin.h). */
#include "dropin.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

struct merger {
	struct kdiags *diags;
	const char *path; /* of the drop-in being applied */
	unsigned errors;
	bool oom;
};

static void err(struct merger *m, const struct ynode *n, const char *fmt, ...) _printf_(3, 4);
static void err(struct merger *m, const struct ynode *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	kdiags_vadd(m->diags, m->path, n->line, n->col, fmt, ap);
	va_end(ap);
	m->errors++;
}

static bool is_key(const struct ynode *k, const char *name)
{
	return k && k->kind == YNODE_SCALAR && strcmp(k->value, name) == 0;
}

/* The value of key in map, or NULL. */
static struct ynode *map_get(const struct ynode *map, const char *key)
{
	for (size_t i = 0; map && map->kind == YNODE_MAP && i + 1 < map->n_kids; i += 2)
		if (is_key(map->kids[i], key))
			return map->kids[i + 1];
	return NULL;
}

/* A rule file's list of rules (key "rules") or of conditions (key
 * "conditions"), or NULL (the schema check says why). */
static struct ynode *list_of(const struct ynode *root, const char *key)
{
	struct ynode *l = root ? map_get(root, key) : NULL;
	return l && l->kind == YNODE_SEQ ? l : NULL;
}

/* The condition of conds named name. */
static struct ynode *find_cond(const struct ynode *conds, const char *name)
{
	for (size_t i = 0; conds && i < conds->n_kids; i++) {
		const struct ynode *n = map_get(conds->kids[i], "name");
		if (n && n->kind == YNODE_SCALAR && strcmp(n->value, name) == 0)
			return conds->kids[i];
	}
	return NULL;
}

/* The rule of rules named name: its own name:, or the default
 * "<file>:<index>" of a rule without one (keventd.rules(5)). */
static struct ynode *find_rule(const struct ynode *rules, const char *file, const char *name)
{
	for (size_t i = 0; rules && i < rules->n_kids; i++) {
		struct ynode *r = rules->kids[i];
		const struct ynode *n = map_get(r, "name");
		if (n) {
			if (n->kind == YNODE_SCALAR && strcmp(n->value, name) == 0)
				return r;
			continue;
		}
		char dflt[KRULE_NAME_MAX + 32];
		snprintf(dflt, sizeof(dflt), "%s:%zu", file, i);
		if (strcmp(dflt, name) == 0)
			return r;
	}
	return NULL;
}

static void set_file(struct ynode *n, const char *file)
{
	n->file = file;
	for (size_t i = 0; i < n->n_kids; i++)
		set_file(n->kids[i], file);
}

static void drop_key(struct ynode *rule, const char *key)
{
	for (size_t i = 0; rule->kind == YNODE_MAP && i + 1 < rule->n_kids; i += 2) {
		if (!is_key(rule->kids[i], key))
			continue;
		ynode_free(rule->kids[i]);
		ynode_free(rule->kids[i + 1]);
		memmove(&rule->kids[i], &rule->kids[i + 2],
			(rule->n_kids - i - 2) * sizeof(*rule->kids));
		rule->n_kids -= 2;
		return;
	}
}

/* Puts k: v (taken) into rule, in place of the same key or at its end. */
static int put_key(struct ynode *rule, struct ynode *k, struct ynode *v)
{
	for (size_t i = 0; k->kind == YNODE_SCALAR && i + 1 < rule->n_kids; i += 2) {
		if (!is_key(rule->kids[i], k->value))
			continue;
		ynode_free(rule->kids[i]);
		ynode_free(rule->kids[i + 1]);
		rule->kids[i] = k;
		rule->kids[i + 1] = v;
		return 0;
	}
	struct ynode **kids = realloc(rule->kids, (rule->n_kids + 2) * sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	rule->kids = kids;
	kids[rule->n_kids++] = k;
	kids[rule->n_kids++] = v;
	return 0;
}

/* One entry of a drop-in's rules: a name, and the keys it changes. */
static void apply_rule(struct merger *m, struct ynode *item, const struct ynode *rules,
		       const char *file, bool cond)
{
	const char *what = cond ? "condition" : "rule";
	if (item->kind != YNODE_MAP) {
		err(m, item,
		    "a drop-in %s is a mapping with 'name' and the keys it changes, not %s", what,
		    ynode_kind_name(item));
		return;
	}
	const struct ynode *name = NULL;
	bool dup = false;
	for (size_t i = 0; i + 1 < item->n_kids; i += 2) {
		const struct ynode *k = item->kids[i];
		for (size_t j = 0; j < i && !dup; j += 2)
			if (k->kind == YNODE_SCALAR && is_key(item->kids[j], k->value)) {
				err(m, k, "key '%s' given twice", k->value);
				dup = true;
			}
		if (is_key(k, "name") && !name)
			name = item->kids[i + 1];
	}
	if (!name) {
		err(m, item, "a drop-in %s needs 'name': the %s of %s that it changes", what, what,
		    file);
		return;
	}
	if (name->kind != YNODE_SCALAR || ynode_is_null(name)) {
		err(m, name, "'name' must be a value, not %s", ynode_kind_name(name));
		return;
	}
	struct ynode *rule =
		cond ? find_cond(rules, name->value) : find_rule(rules, file, name->value);
	if (!rule) {
		err(m, name, "no %s named \"%s\" in %s", what, name->value, file);
		return;
	}
	if (dup || rule->kind != YNODE_MAP)
		return; /* the schema check reports a rule that is not a mapping */
	for (size_t i = 0; i + 1 < item->n_kids; i += 2) {
		struct ynode *k = item->kids[i], *v = item->kids[i + 1];
		if (is_key(k, "name"))
			continue;
		/* a rule has run or shell: giving one replaces the other */
		if (is_key(k, "run"))
			drop_key(rule, "shell");
		else if (is_key(k, "shell"))
			drop_key(rule, "run");
		set_file(k, m->path);
		set_file(v, m->path);
		if (put_key(rule, k, v) < 0) {
			m->oom = true;
			return;
		}
		item->kids[i] = item->kids[i + 1] = NULL; /* now the rule's */
	}
}

static void apply(struct merger *m, struct ynode *droot, const struct ynode *rules,
		  const struct ynode *conds, const char *file)
{
	if (!droot || ynode_is_null(droot))
		return;
	if (droot->kind != YNODE_MAP) {
		err(m, droot, "a drop-in is a mapping with the key 'rules', not %s",
		    ynode_kind_name(droot));
		return;
	}
	struct ynode *lists[2] = {NULL, NULL}; /* rules, conditions */
	static const char *const keys[2] = {"rules", "conditions"};
	for (size_t i = 0; i + 1 < droot->n_kids; i += 2) {
		const struct ynode *k = droot->kids[i];
		size_t w = is_key(k, "rules") ? 0 : is_key(k, "conditions") ? 1 : 2;
		if (w < 2 && !lists[w])
			lists[w] = droot->kids[i + 1];
		else if (w < 2)
			err(m, k, "key '%s' given twice", keys[w]);
		else
			err(m, k, "unknown top-level key '%s' (expected 'rules' or 'conditions')",
			    k->kind == YNODE_SCALAR ? k->value : "?");
	}
	for (size_t w = 0; w < 2; w++) {
		struct ynode *list = lists[w];
		if (!list || ynode_is_null(list))
			continue;
		if (list->kind != YNODE_SEQ) {
			err(m, list, "'%s' must be a list of %s, not %s", keys[w], keys[w],
			    ynode_kind_name(list));
			continue;
		}
		for (size_t i = 0; i < list->n_kids && !m->oom; i++)
			apply_rule(m, list->kids[i], w ? conds : rules, file, w == 1);
	}
}

/* The merged tree, also when there were errors (*errors says how many):
 * kdropin_parse() then checks the schema too, so that one run reports
 * everything. */
static int merge(const struct ksrc *base, const struct ksrc *dropins, size_t n, struct ynode **tree,
		 unsigned *errors, struct kdiags *diags)
{
	struct merger m = {.diags = diags};
	struct ynode *root = NULL;
	const char *slash = strrchr(base->path, '/');
	const char *file = slash ? slash + 1 : base->path;
	int rc = 0;

	*tree = NULL;
	*errors = 0;
	int brc = krules_read_tree(base->buf, base->len, base->path, &root, diags);
	if (brc == -ENOMEM)
		return brc;
	const struct ynode *rules = list_of(root, "rules"), *conds = list_of(root, "conditions");
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct ynode *droot = NULL;
		rc = krules_read_tree(dropins[i].buf, dropins[i].len, dropins[i].path, &droot,
				      diags);
		if (rc == -EINVAL) {
			m.errors++;
			rc = 0;
			continue;
		}
		if (rc < 0)
			break;
		m.path = dropins[i].path;
		if (brc == 0)
			apply(&m, droot, rules, conds, file);
		ynode_free(droot);
		if (m.oom)
			rc = -ENOMEM;
	}
	if (rc < 0 || brc < 0) {
		ynode_free(root);
		return rc < 0 ? rc : brc;
	}
	*tree = root;
	*errors = m.errors;
	return 0;
}

int kdropin_merge(const struct ksrc *base, const struct ksrc *dropins, size_t n,
		  struct ynode **tree, struct kdiags *diags)
{
	unsigned errors;
	int rc = merge(base, dropins, n, tree, &errors, diags);
	if (rc == 0 && errors) {
		ynode_free(*tree);
		*tree = NULL;
		rc = -EINVAL;
	}
	return rc;
}

int kdropin_parse(const struct ksrc *base, const struct ksrc *dropins, size_t n, struct kfile **out,
		  struct kdiags *diags)
{
	struct ynode *tree = NULL;
	unsigned errors;

	*out = NULL;
	int rc = merge(base, dropins, n, &tree, &errors, diags);
	if (rc < 0)
		return rc;
	rc = krules_from_tree(tree, base->path, out, diags);
	ynode_free(tree);
	if (rc == 0 && errors) {
		kfile_unref(*out);
		*out = NULL;
		rc = -EINVAL;
	}
	return rc;
}
