// SPDX-License-Identifier: GPL-2.0-or-later
/* A system rule's share: key, the users its events are forwarded to
 * (keventd.rules(5), SHARE). */
#include <string.h>

#include "rules.h"
#include "rules-parse.h"
#include "util.h"

bool krule_share_name_valid(const char *s)
{
	const char *name = s[0] == '@' ? s + 1 : s;
	size_t n = strlen(name);
	if (!n || n > KRULE_SHARE_NAME_MAX || name[0] == '-' || name[0] == '.')
		return false;
	if (name[n - 1] == '$')
		n--;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return n > 0;
}

void krules_parse_share(struct krules_parser *p, const struct ynode *n, struct krule_extra *x)
{
	if (n->kind == YNODE_SCALAR && !ynode_is_null(n)) {
		if (strcmp(n->value, "users") == 0)
			x->share_users = true;
		else if (krule_share_name_valid(n->value))
			/* "@" cannot start a plain YAML value: the hint quotes it */
			krules_perr(p, n,
				    "'share' is users or a list of names: did you mean [%s%s%s]?",
				    n->value[0] == '@' ? "\"" : "", n->value,
				    n->value[0] == '@' ? "\"" : "");
		else
			krules_perr(p, n, "'share' is users or a list of names, not \"%s\"",
				    n->value);
		return;
	}
	if (n->kind != YNODE_SEQ) {
		krules_perr(p, n,
			    "'share' must be users or a list of user names and \"@group\" names, "
			    "not %s",
			    ynode_kind_name(n));
		return;
	}
	if (!n->n_kids || n->n_kids > KRULE_SHARE_MAX) {
		krules_perr(p, n, "'share' names 1 to %d users or \"@group\"s", KRULE_SHARE_MAX);
		return;
	}
	char **v = calloc(n->n_kids + 1, sizeof(*v));
	if (!v) {
		p->oom = true;
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < n->n_kids; i++) {
		const struct ynode *it = n->kids[i];
		const char *s = krules_want_scalar(p, it, "share");
		if (!s)
			continue;
		if (!krule_share_name_valid(s)) {
			krules_perr(p, it,
				    "'share': \"%s\" is not a user's name nor \"@\" and a group's "
				    "(1 to %d of [A-Za-z0-9._-], not starting with '-' or '.', "
				    "a last '$' allowed)",
				    s, KRULE_SHARE_NAME_MAX);
			continue;
		}
		bool twice = false;
		for (size_t j = 0; j < k && !twice; j++)
			twice = strcmp(v[j], s) == 0;
		if (twice) {
			krules_perr(p, it, "'share': '%s' given twice", s);
			continue;
		}
		if (!(v[k] = strdup(s))) {
			p->oom = true;
			break;
		}
		k++;
	}
	x->share = v;
}
