// SPDX-License-Identifier: GPL-2.0-or-later
#include "notify-config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "desktop.h"
#include "duration.h"
#include "util.h"

static const char *const kinds[] = {
	[KNOTIFY_SMTP] = "smtp",
	[KNOTIFY_WEBHOOK] = "webhook",
	[KNOTIFY_NTFY] = "ntfy",
	[KNOTIFY_GOTIFY] = "gotify",
};

static const char *const secret_keys[KNOTIFY_NSECRETS] = {
	[KNOTIFY_PASSWORD] = "password_file",
	[KNOTIFY_SECRET] = "secret_file",
	[KNOTIFY_TOKEN] = "token_file",
};

const char *knotify_kind_name(enum knotify_kind k)
{
	return kinds[k];
}

const char *knotify_secret_key(enum knotify_secret s)
{
	return secret_keys[s];
}

void knotify_config_init(struct knotify_config *c)
{
	*c = (struct knotify_config){0};
}

static void target_release(struct knotify_target *t)
{
	free(t->name);
	free(t->url);
	free(t->from);
	for (size_t i = 0; i < t->n_to; i++)
		free(t->to[i]);
	free(t->to);
	free(t->username);
	for (int i = 0; i < KNOTIFY_NSECRETS; i++)
		free(t->files[i]);
	free(t->ca_file);
}

void knotify_config_release(struct knotify_config *c)
{
	for (size_t i = 0; i < c->n; i++)
		target_release(&c->v[i]);
	free(c->v);
	knotify_config_init(c);
}

const struct knotify_target *knotify_config_find(const struct knotify_config *c, const char *name)
{
	for (size_t i = 0; c && i < c->n; i++)
		if (strcmp(c->v[i].name, name) == 0)
			return &c->v[i];
	return NULL;
}

bool knotify_name_valid(const char *s)
{
	return str_is_name(s, KNOTIFY_NAME_MAX);
}

/* A scalar of target name's key: its text, or a diagnostic and NULL. */
static const char *scalar(struct kdiag_file *p, const char *name, const char *key,
			  const struct ynode *v)
{
	if (v->kind != YNODE_SCALAR || ynode_is_null(v) || !v->value[0]) {
		kdiag_at(p, v, "notify: %s: '%s' wants a value, not %s", name, key,
			 v->kind == YNODE_SCALAR && !v->value[0] && !v->plain ? "an empty string"
									      : ynode_kind_name(v));
		return NULL;
	}
	return v->value;
}

/* A mail address of from: or to:: local@domain, printable, no spaces nor
 * the characters that would end it in a header (<>,;"). */
static bool address_valid(const char *s)
{
	const char *at = strchr(s, '@');
	return at && at != s && at[1] && !strchr(at + 1, '@') && strlen(s) <= 254 &&
	       str_is_token(s) && !strpbrk(s, "<>,;\"()[]\\");
}

/* Whether host (len bytes) is the machine itself. */
static bool host_local(const char *host, size_t len)
{
	static const char *const names[] = {"localhost", "::1", "[::1]", "localhost.localdomain"};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i]) == len && strncasecmp(host, names[i], len) == 0)
			return true;
	return len > 4 && strncmp(host, "127.", 4) == 0 && strspn(host, "0123456789.") == len;
}

/* The url of target t of kind t->kind: the scheme, a host, the rest. */
static void url(struct kdiag_file *p, const struct ynode *v, struct knotify_target *t)
{
	const char *s = scalar(p, t->name, kinds[t->kind], v);
	if (!s)
		return;
	const char *plain = t->kind == KNOTIFY_SMTP ? "smtp://" : "http://";
	const char *secure = t->kind == KNOTIFY_SMTP ? "smtps://" : "https://";
	const char *rest;
	if (strncasecmp(s, secure, strlen(secure)) == 0) {
		t->tls = true;
		rest = s + strlen(secure);
	} else if (strncasecmp(s, plain, strlen(plain)) == 0) {
		t->tls = false;
		rest = s + strlen(plain);
	} else {
		kdiag_at(p, v, "notify: %s: %s \"%s\" is neither %sHOST nor %sHOST", t->name,
			 kinds[t->kind], s, secure, plain);
		return;
	}
	if (strlen(s) > KNOTIFY_URL_MAX || !str_is_token(s)) {
		kdiag_at(p, v,
			 "notify: %s: %s: a URL of at most %d printable characters, no spaces",
			 t->name, kinds[t->kind], KNOTIFY_URL_MAX);
		return;
	}
	if (memchr(rest, '@', strcspn(rest, "/?#"))) {
		kdiag_at(p, v, "notify: %s: \"%s\": a user goes in username and %s, not in the URL",
			 t->name, s, "password_file");
		return;
	}
	const char *host = rest, *end;
	if (*host == '[') {
		end = strchr(host, ']');
		if (!end) {
			kdiag_at(p, v, "notify: %s: \"%s\": no ']' after the IPv6 address", t->name,
				 s);
			return;
		}
		end++;
	} else {
		end = host + strcspn(host, ":/?#");
	}
	if (end == host) {
		kdiag_at(p, v, "notify: %s: \"%s\" names no host", t->name, s);
		return;
	}
	const char *path = end + strcspn(end, "/?#");
	if (t->kind == KNOTIFY_SMTP && *path && strcmp(path, "/") != 0) {
		kdiag_at(p, v, "notify: %s: smtp \"%s\": nothing may follow HOST:PORT", t->name, s);
		return;
	}
	if (t->kind == KNOTIFY_NTFY && (!*path || !path[1])) {
		kdiag_at(p, v, "notify: %s: ntfy \"%s\" names no topic: https://HOST/TOPIC",
			 t->name, s);
		return;
	}
	t->local = host_local(host, (size_t)(end - host));
	if (!t->tls && !t->local && t->kind != KNOTIFY_SMTP) {
		kdiag_at(p, v,
			 "notify: %s: \"%s\" would send in clear text: https://, or http:// to "
			 "localhost only",
			 t->name, s);
		return;
	}
	t->url = kdiag_dup(p, s);
}

/* to: an address or a list of them. */
static void recipients(struct kdiag_file *p, const struct ynode *v, struct knotify_target *t)
{
	const struct ynode *const *items = (const struct ynode *const *)&v;
	size_t n = 1;
	if (v->kind == YNODE_SEQ) {
		items = (const struct ynode *const *)v->kids;
		n = v->n_kids;
	}
	if (!n || n > KNOTIFY_MAX_TO) {
		kdiag_at(p, v, "notify: %s: 'to' is 1 to %d addresses", t->name, KNOTIFY_MAX_TO);
		return;
	}
	t->to = calloc(n, sizeof(*t->to));
	if (!t->to) {
		p->oom = true;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const char *s = scalar(p, t->name, "to", items[i]);
		if (s && !address_valid(s))
			kdiag_at(p, items[i], "notify: %s: to: \"%s\" is not a mail address",
				 t->name, s);
		else if (s && (t->to[t->n_to] = kdiag_dup(p, s)))
			t->n_to++;
	}
}

/* clang-format off */
static const char *const keys =
	"smtp, webhook, ntfy, gotify, from, to, username, password_file, secret_file, "
	"token_file, ca_file, max_age";
/* clang-format on */

static void target(struct kdiag_file *p, const struct ynode *k, const struct ynode *n,
		   struct knotify_target *t)
{
	t->line = k->line;
	t->col = k->col;
	t->max_age_ms = KNOTIFY_DEFAULT_MAX_AGE_MS;
	if (n->kind != YNODE_MAP) {
		kdiag_at(p, n, "notify: %s: a mapping (%s), not %s", t->name, keys,
			 ynode_kind_name(n));
		return;
	}
	const struct ynode *kind_node = NULL, *at_from = NULL, *at_to = NULL;
	for (size_t i = 0; i + 1 < n->n_kids; i += 2) {
		const struct ynode *kk = n->kids[i], *v = n->kids[i + 1];
		const char *key = kk->kind == YNODE_SCALAR ? kk->value : "";
		bool twice = false;
		for (size_t j = 0; j < i && !twice; j += 2)
			twice = n->kids[j]->kind == YNODE_SCALAR &&
				strcmp(n->kids[j]->value, key) == 0;
		if (twice) {
			kdiag_at(p, kk, "notify: %s: '%s' given twice", t->name, key);
			continue;
		}
		int kind = -1, secret = -1;
		for (size_t j = 0; j < ARRAY_SIZE(kinds); j++)
			if (strcmp(key, kinds[j]) == 0)
				kind = (int)j;
		for (size_t j = 0; j < ARRAY_SIZE(secret_keys); j++)
			if (strcmp(key, secret_keys[j]) == 0)
				secret = (int)j;
		const char *s;
		if (kind >= 0) {
			if (kind_node) {
				kdiag_at(p, kk,
					 "notify: %s: one of smtp, webhook, ntfy or gotify, not "
					 "both "
					 "%s and %s",
					 t->name, kinds[t->kind], key);
				continue;
			}
			kind_node = v;
			t->kind = (enum knotify_kind)kind;
			url(p, v, t);
		} else if (secret >= 0) {
			if ((s = scalar(p, t->name, key, v)) && s[0] != '/')
				kdiag_at(p, v, "notify: %s: '%s' is an absolute path, not \"%s\"",
					 t->name, key, s);
			else if (s)
				t->files[secret] = kdiag_dup(p, s);
			t->file_line[secret] = v->line;
			t->file_col[secret] = v->col;
		} else if (strcmp(key, "ca_file") == 0) {
			if ((s = scalar(p, t->name, key, v)) && s[0] != '/')
				kdiag_at(p, v,
					 "notify: %s: 'ca_file' is an absolute path, not \"%s\"",
					 t->name, s);
			else if (s)
				t->ca_file = kdiag_dup(p, s);
		} else if (strcmp(key, "from") == 0) {
			at_from = v;
			if ((s = scalar(p, t->name, key, v)) && !address_valid(s))
				kdiag_at(p, v, "notify: %s: from: \"%s\" is not a mail address",
					 t->name, s);
			else if (s)
				t->from = kdiag_dup(p, s);
		} else if (strcmp(key, "to") == 0) {
			at_to = v;
			recipients(p, v, t);
		} else if (strcmp(key, "username") == 0) {
			if ((s = scalar(p, t->name, key, v)) &&
			    (!str_is_token(s) || strchr(s, ':')))
				kdiag_at(p, v,
					 "notify: %s: a username has no spaces, control characters "
					 "or ':'",
					 t->name);
			else if (s)
				t->username = kdiag_dup(p, s);
		} else if (strcmp(key, "max_age") == 0) {
			const char *why = NULL;
			if ((s = scalar(p, t->name, key, v)) &&
			    (duration_parse(s, &t->max_age_ms, &why) < 0 ||
			     t->max_age_ms < KNOTIFY_MAX_AGE_MIN_MS))
				kdiag_at(p, v, "notify: %s: bad max_age \"%s\": %s", t->name, s,
					 why ? why : "at least 1s");
		} else {
			kdiag_at(p, kk, "notify: %s: unknown key '%s' (%s)", t->name, key, keys);
		}
	}
	if (!kind_node) {
		kdiag_at(p, n, "notify: %s: says none of smtp, webhook, ntfy or gotify", t->name);
		return;
	}
	if (p->errors)
		return;
	bool smtp = t->kind == KNOTIFY_SMTP;
	if (smtp && (!t->from || !t->n_to))
		kdiag_at(p, n, "notify: %s: mail needs 'from' and 'to'", t->name);
	if (!smtp && (at_from || at_to))
		kdiag_at(p, at_from ? at_from : at_to, "notify: %s: 'from' and 'to' are for smtp",
			 t->name);
	if (smtp && (t->files[KNOTIFY_SECRET] || t->files[KNOTIFY_TOKEN]))
		kdiag_at(p, n, "notify: %s: smtp takes username and password_file, not %s", t->name,
			 t->files[KNOTIFY_SECRET] ? "secret_file" : "token_file");
	if (t->files[KNOTIFY_SECRET] && t->kind != KNOTIFY_WEBHOOK)
		kdiag_at(p, n, "notify: %s: secret_file is for webhook (its signature)", t->name);
	if (t->files[KNOTIFY_PASSWORD] && !t->username)
		kdiag_at(p, n, "notify: %s: password_file needs a username", t->name);
	if (t->username && !t->files[KNOTIFY_PASSWORD])
		kdiag_at(p, n, "notify: %s: username needs a password_file", t->name);
	if (t->files[KNOTIFY_PASSWORD] && t->files[KNOTIFY_TOKEN])
		kdiag_at(p, n, "notify: %s: a password_file or a token_file, not both", t->name);
	if (t->kind == KNOTIFY_GOTIFY && !t->files[KNOTIFY_TOKEN])
		kdiag_at(p, n, "notify: %s: gotify needs the application's token_file", t->name);
}

int knotify_config_parse(struct knotify_config *c, const struct ynode *n, const char *path,
			 struct kdiags *diags)
{
	struct kdiag_file p = {.path = path, .diags = diags};
	if (n->kind != YNODE_MAP) {
		kdiag_at(&p, n, "notify: a mapping of target names to targets, not %s",
			 ynode_kind_name(n));
		return p.oom ? -ENOMEM : -EINVAL;
	}
	size_t count = n->n_kids / 2;
	if (count > KNOTIFY_MAX_TARGETS) {
		kdiag_at(&p, n, "notify: at most %d targets", KNOTIFY_MAX_TARGETS);
		return -EINVAL;
	}
	struct knotify_config nc = {.v = calloc(count + 1, sizeof(*nc.v))};
	if (!nc.v)
		return -ENOMEM;
	for (size_t i = 0; i + 1 < n->n_kids && !p.oom; i += 2) {
		const struct ynode *k = n->kids[i], *v = n->kids[i + 1];
		if (k->kind != YNODE_SCALAR || !knotify_name_valid(k->value)) {
			kdiag_at(&p, k, "notify: a target's name is 1 to %d of [A-Za-z0-9_.-]",
				 KNOTIFY_NAME_MAX);
			continue;
		}
		if (strcmp(k->value, KDESKTOP_TARGET) == 0) {
			kdiag_at(&p, k,
				 "notify: 'desktop' is the user instance's own target (the "
				 "session's notifications, keventd.rules(5)): name this one "
				 "otherwise");
			continue;
		}
		if (knotify_config_find(&nc, k->value)) {
			kdiag_at(&p, k, "notify: target '%s' given twice", k->value);
			continue;
		}
		struct knotify_target *t = &nc.v[nc.n++];
		t->name = kdiag_dup(&p, k->value);
		if (t->name)
			target(&p, k, v, t);
	}
	if (p.oom || p.errors) {
		knotify_config_release(&nc);
		return p.oom ? -ENOMEM : -EINVAL;
	}
	knotify_config_release(c);
	*c = nc;
	return 0;
}

const char *knotify_secret_file_problem(const char *f, char *buf, size_t size)
{
	struct stat st;
	if (stat(f, &st) < 0) {
		snprintf(buf, size, "%s", strerror(errno));
		return buf;
	}
	if (!S_ISREG(st.st_mode))
		return "is not a regular file";
	if (st.st_mode & (S_IRWXG | S_IRWXO))
		return "may be read by group or others (chmod 600 it): keventd refuses it";
	return NULL;
}

void knotify_config_check_files(const struct knotify_config *c, const char *path,
				struct kdiags *diags)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct knotify_target *t = &c->v[i];
		for (int s = 0; s < KNOTIFY_NSECRETS; s++) {
			char buf[128];
			const char *f = t->files[s], *why;
			if (f && (why = knotify_secret_file_problem(f, buf, sizeof(buf))))
				kdiags_add(diags, path, t->file_line[s], t->file_col[s],
					   "notify: %s: %s %s%s%s", t->name, secret_keys[s], f,
					   why == buf ? ": " : " ", why);
		}
	}
}
