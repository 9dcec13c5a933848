// SPDX-License-Identifier: GPL-2.0-or-later
/* The section "alertmanager:" (am-config.h). */
#include "am-config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "duration.h"
#include "notify-config.h"
#include "util.h"

static const char *const reserved[] = {"alertname", "instance", "object", "severity"};

void kam_config_init(struct kam_config *c)
{
	*c = (struct kam_config){.resend_ms = KAM_DEFAULT_RESEND_MS,
				 .timeout_ms = KAM_DEFAULT_TIMEOUT_MS};
}

void kam_config_release(struct kam_config *c)
{
	free(c->url);
	free(c->post_url);
	for (size_t i = 0; i < 2 * c->n_labels; i++)
		free(c->labels[i]);
	free(c->labels);
	free(c->username);
	free(c->password_file);
	free(c->ca_file);
	kam_config_init(c);
}

bool kam_label_name_valid(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > KAM_LABEL_NAME_MAX || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

bool kam_label_reserved(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(reserved); i++)
		if (strcmp(name, reserved[i]) == 0)
			return true;
	return false;
}

/* A scalar's text, or a diagnostic and NULL. */
static const char *scalar(struct kdiag_file *p, const char *key, const struct ynode *v)
{
	if (v->kind != YNODE_SCALAR || ynode_is_null(v) || !v->value[0]) {
		kdiag_at(p, v, "'%s' wants a value, not %s", key,
			 v->kind == YNODE_SCALAR && !v->value[0] && !v->plain ? "an empty string"
									      : ynode_kind_name(v));
		return NULL;
	}
	return v->value;
}

/* Whether host (len bytes) is the machine itself. */
static bool host_local(const char *host, size_t len)
{
	static const char *const names[] = {"localhost", "[::1]", "localhost.localdomain"};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i]) == len && strncasecmp(host, names[i], len) == 0)
			return true;
	return len > 4 && strncmp(host, "127.", 4) == 0 && strspn(host, "0123456789.") == len;
}

/* url: http[s]://HOST[:PORT][/PREFIX], to which KAM_PATH is appended. */
static void url(struct kdiag_file *p, const struct ynode *v, struct kam_config *c, bool *tls)
{
	const char *s = scalar(p, "url", v), *rest;
	if (!s)
		return;
	if (strncasecmp(s, "https://", 8) == 0) {
		*tls = true;
		rest = s + 8;
	} else if (strncasecmp(s, "http://", 7) == 0) {
		*tls = false;
		rest = s + 7;
	} else {
		kdiag_at(p, v, "url \"%s\" is neither https://HOST nor http://HOST", s);
		return;
	}
	if (strlen(s) > KAM_URL_MAX || !str_is_token(s)) {
		kdiag_at(p, v, "url: at most %d printable characters, no spaces", KAM_URL_MAX);
		return;
	}
	if (strpbrk(s, "?#")) {
		kdiag_at(p, v, "url \"%s\": no query nor fragment (%s is appended to it)", s,
			 KAM_PATH);
		return;
	}
	if (memchr(rest, '@', strcspn(rest, "/"))) {
		kdiag_at(p, v,
			 "url \"%s\": a user goes in username and password_file, not in the URL",
			 s);
		return;
	}
	const char *host = rest, *end;
	if (*host == '[') {
		end = strchr(host, ']');
		if (!end) {
			kdiag_at(p, v, "url \"%s\": no ']' after the IPv6 address", s);
			return;
		}
		end++;
	} else {
		end = host + strcspn(host, ":/");
	}
	if (end == host) {
		kdiag_at(p, v, "url \"%s\" names no host", s);
		return;
	}
	if (*end == ':') {
		size_t digits = strspn(end + 1, "0123456789");
		long port = digits && digits <= 5 ? strtol(end + 1, NULL, 10) : 0;
		if (port < 1 || port > 65535 || (end[1 + digits] && end[1 + digits] != '/')) {
			kdiag_at(p, v, "url \"%s\": a port is 1 to 65535", s);
			return;
		}
	}
	c->local = host_local(host, (size_t)(end - host));
	size_t n = strlen(s);
	while (n && s[n - 1] == '/')
		n--;
	c->url = strndup(s, n);
	if (!c->url || asprintf(&c->post_url, "%s%s", c->url, KAM_PATH) < 0) {
		c->post_url = NULL;
		p->oom = true;
	}
}

static void labels(struct kdiag_file *p, const struct ynode *v, struct kam_config *c)
{
	if (v->kind != YNODE_MAP) {
		kdiag_at(p, v, "labels: a mapping of label names to values, not %s",
			 ynode_kind_name(v));
		return;
	}
	size_t n = v->n_kids / 2;
	if (n > KAM_MAX_LABELS) {
		kdiag_at(p, v, "labels: at most %d", KAM_MAX_LABELS);
		return;
	}
	c->labels = calloc(2 * n + 1, sizeof(*c->labels));
	if (!c->labels) {
		p->oom = true;
		return;
	}
	for (size_t i = 0; i + 1 < v->n_kids; i += 2) {
		const struct ynode *k = v->kids[i], *val = v->kids[i + 1];
		const char *name = k->kind == YNODE_SCALAR ? k->value : "";
		if (!kam_label_name_valid(name)) {
			kdiag_at(p, k,
				 "labels: \"%s\" is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)",
				 name);
			continue;
		}
		if (kam_label_reserved(name)) {
			kdiag_at(p, k,
				 "labels: '%s' is keventd's own (alertname, instance, object, "
				 "severity): it may not be overridden",
				 name);
			continue;
		}
		bool twice = false;
		for (size_t j = 0; j < c->n_labels && !twice; j++)
			twice = strcmp(c->labels[2 * j], name) == 0;
		if (twice) {
			kdiag_at(p, k, "labels: '%s' given twice", name);
			continue;
		}
		const char *s =
			val->kind == YNODE_SCALAR && !ynode_is_null(val) ? val->value : NULL;
		if (!s || !*s || strlen(s) > KAM_LABEL_VALUE_MAX || str_has_control(s)) {
			kdiag_at(p, val,
				 "labels: %s: a value of 1 to %d characters, no control characters",
				 name, KAM_LABEL_VALUE_MAX);
			continue;
		}
		char *kn = kdiag_dup(p, name), *kv = kdiag_dup(p, s);
		if (!kn || !kv) {
			free(kn);
			free(kv);
			return;
		}
		c->labels[2 * c->n_labels] = kn;
		c->labels[2 * c->n_labels + 1] = kv;
		c->n_labels++;
	}
}

static void duration(struct kdiag_file *p, const char *key, const struct ynode *v, uint64_t min,
		     uint64_t max, uint64_t *out)
{
	const char *s = scalar(p, key, v), *why = NULL;
	uint64_t ms;
	if (!s)
		return;
	if (duration_parse(s, &ms, &why) < 0 || ms < min || ms > max) {
		kdiag_at(p, v, "bad %s \"%s\": %s", key, s, why ? why : "out of range");
		return;
	}
	*out = ms;
}

static const char keys[] = "url, resend, labels, username, password_file, ca_file, timeout";

int kam_config_parse(struct kam_config *c, const struct ynode *n, const char *path,
		     struct kdiags *diags)
{
	struct kdiag_file p = {.path = path, .diags = diags, .prefix = "alertmanager: "};
	struct kam_config nc;
	kam_config_init(&nc);
	nc.line = n->line;
	nc.col = n->col;
	if (n->kind != YNODE_MAP) {
		kdiag_at(&p, n, "a mapping (%s), not %s", keys, ynode_kind_name(n));
		return p.oom ? -ENOMEM : -EINVAL;
	}
	bool tls = false;
	const struct ynode *at_url = NULL;
	for (size_t i = 0; i + 1 < n->n_kids && !p.oom; i += 2) {
		const struct ynode *k = n->kids[i], *v = n->kids[i + 1];
		const char *key = k->kind == YNODE_SCALAR ? k->value : "", *s;
		bool twice = false;
		for (size_t j = 0; j < i && !twice; j += 2)
			twice = n->kids[j]->kind == YNODE_SCALAR &&
				strcmp(n->kids[j]->value, key) == 0;
		if (twice) {
			kdiag_at(&p, k, "'%s' given twice", key);
		} else if (strcmp(key, "url") == 0) {
			at_url = v;
			url(&p, v, &nc, &tls);
		} else if (strcmp(key, "resend") == 0) {
			duration(&p, key, v, KAM_RESEND_MIN_MS, KAM_RESEND_MAX_MS, &nc.resend_ms);
		} else if (strcmp(key, "timeout") == 0) {
			duration(&p, key, v, 100, 5 * 60 * 1000, &nc.timeout_ms);
		} else if (strcmp(key, "labels") == 0) {
			labels(&p, v, &nc);
		} else if (strcmp(key, "username") == 0) {
			if ((s = scalar(&p, key, v)) && (!str_is_token(s) || strchr(s, ':')))
				kdiag_at(&p, v,
					 "a username has no spaces, control characters or ':'");
			else if (s)
				nc.username = kdiag_dup(&p, s);
		} else if (strcmp(key, "password_file") == 0 || strcmp(key, "ca_file") == 0) {
			if ((s = scalar(&p, key, v)) && s[0] != '/')
				kdiag_at(&p, v, "'%s' is an absolute path, not \"%s\"", key, s);
			else if (s && key[0] == 'p')
				nc.password_file = kdiag_dup(&p, s);
			else if (s)
				nc.ca_file = kdiag_dup(&p, s);
			if (key[0] == 'p') {
				nc.password_line = v->line;
				nc.password_col = v->col;
			}
		} else {
			kdiag_at(&p, k, "unknown key '%s' (%s)", key, keys);
		}
	}
	if (!at_url && !p.oom)
		kdiag_at(&p, n, "says no url (http://HOST:9093)");
	if (!p.errors && !p.oom) {
		if (nc.password_file && !nc.username)
			kdiag_at(&p, n, "password_file needs a username");
		else if (nc.username && !nc.password_file)
			kdiag_at(&p, n, "username needs a password_file");
		else if (nc.username && !tls && !nc.local)
			kdiag_at(&p, at_url,
				 "\"%s\" would send the password in clear text: https://, or "
				 "http:// to localhost only",
				 nc.url);
	}
	if (p.oom || p.errors) {
		kam_config_release(&nc);
		return p.oom ? -ENOMEM : -EINVAL;
	}
	nc.enabled = true;
	kam_config_release(c);
	*c = nc;
	return 0;
}

void kam_config_check_files(const struct kam_config *c, const char *path, struct kdiags *diags)
{
	char buf[128];
	const char *why;
	if (c->enabled && c->password_file &&
	    (why = knotify_secret_file_problem(c->password_file, buf, sizeof(buf))))
		kdiags_add(diags, path, c->password_line, c->password_col,
			   "alertmanager: password_file %s%s%s", c->password_file,
			   why == buf ? ": " : " ", why);
}
