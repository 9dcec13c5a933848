// SPDX-License-Identifier: GPL-2.0-or-later
#include "mqtt-config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void kmqtt_config_init(struct kmqtt_config *c)
{
	*c = (struct kmqtt_config){
		.publish = KMQTT_PUBLISH_ALL,
		.qos = 1,
		.spool_max_mb = KMQTT_DEFAULT_SPOOL_MAX_MB,
	};
}

void kmqtt_config_release(struct kmqtt_config *c)
{
	free(c->host);
	free(c->client_id);
	free(c->topic_prefix);
	free(c->username);
	free(c->password_file);
	free(c->ca_file);
	free(c->cert_file);
	free(c->key_file);
	free(c->spool_dir);
	for (size_t i = 0; i < c->n_subscribe; i++)
		free(c->subscribe[i]);
	free(c->subscribe);
	free(c->host_level);
	kmqtt_config_init(c);
}

const char *kmqtt_filter_problem(const char *s)
{
	size_t len = strlen(s);
	if (!len)
		return "a topic filter is not empty";
	if (len > KMQTT_TOPIC_MAX)
		return "a topic filter is at most 65535 bytes";
	for (const char *p = s; *p; p++) {
		bool starts = p == s || p[-1] == '/';
		bool ends = !p[1] || p[1] == '/';
		if (*p == '+' && !(starts && ends))
			return "'+' stands for a whole level: \"a/+/b\", not \"a+\"";
		if (*p == '#' && !(starts && !p[1]))
			return "'#' stands for the last levels: \"a/#\", and only at the end";
	}
	return NULL;
}

const char *kmqtt_filter_topics(const char *s)
{
	if (strncmp(s, "$share/", 7) != 0)
		return s;
	const char *slash = strchr(s + 7, '/');
	return slash ? slash + 1 : s + strlen(s);
}

/* The number of levels of the filter s, and whether the last is "#". */
static unsigned levels(const char *s, bool *hash)
{
	unsigned n = 1;
	for (const char *p = s; *p; p++)
		n += *p == '/';
	size_t len = strlen(s);
	*hash = len && s[len - 1] == '#';
	return n;
}

unsigned kmqtt_filter_first_plus(const char *s)
{
	unsigned level = 1;
	for (const char *p = s; *p; p++) {
		if (*p == '/')
			level++;
		else if (*p == '+')
			return level;
	}
	return 0;
}

const char *kmqtt_config_warning(const struct kmqtt_config *c)
{
	if (c->enabled && c->password_file && !c->tls)
		return "the broker's password is sent over mqtt://, in clear text, for anyone on "
		       "the way to read: use mqtts://";
	return NULL;
}

/* A scalar value of key: copied into *out, or a diagnostic. */
static void scalar(struct kdiag_file *p, const char *key, const struct ynode *v, char **out)
{
	if (v->kind != YNODE_SCALAR || ynode_is_null(v) || !v->value[0]) {
		kdiag_at(p, v, "mqtt: '%s' wants a value, not %s", key,
			 v->kind == YNODE_SCALAR && !v->value[0] && !v->plain ? "an empty string"
									      : ynode_kind_name(v));
		return;
	}
	char *s = strdup(v->value);
	if (!s) {
		p->oom = true;
		return;
	}
	free(*out);
	*out = s;
}

static bool number(struct kdiag_file *p, const char *key, const struct ynode *v, int64_t lo,
		   int64_t hi, int64_t *out)
{
	if (v->kind != YNODE_SCALAR || parse_int64(v->value, out) < 0 || *out < lo || *out > hi) {
		kdiag_at(p, v,
			 "mqtt: %s wants a number from %" PRId64 " to %" PRId64 ", not %s%s%s", key,
			 lo, hi, v->kind == YNODE_SCALAR ? "'" : "",
			 v->kind == YNODE_SCALAR ? v->value : ynode_kind_name(v),
			 v->kind == YNODE_SCALAR ? "'" : "");
		return false;
	}
	return true;
}

/* mqtt://HOST[:PORT] or mqtts://HOST[:PORT]; HOST may be [an IPv6 address]. */
static void url(struct kdiag_file *p, const struct ynode *v, struct kmqtt_config *c)
{
	if (v->kind != YNODE_SCALAR || ynode_is_null(v)) {
		kdiag_at(p, v, "mqtt: 'url' wants mqtt://HOST:PORT or mqtts://HOST:PORT, not %s",
			 ynode_kind_name(v));
		return;
	}
	const char *s = v->value, *rest;
	bool tls;
	if (strncmp(s, "mqtt://", 7) == 0) {
		tls = false;
		rest = s + 7;
	} else if (strncmp(s, "mqtts://", 8) == 0) {
		tls = true;
		rest = s + 8;
	} else {
		kdiag_at(p, v, "mqtt: url \"%s\" is neither mqtt://HOST:PORT nor mqtts://HOST:PORT",
			 s);
		return;
	}
	const char *host = rest, *end;
	if (*rest == '[') {
		host = rest + 1;
		end = strchr(host, ']');
		if (!end) {
			kdiag_at(p, v, "mqtt: url \"%s\": no ']' after the IPv6 address", s);
			return;
		}
		rest = end + 1;
	} else {
		end = host + strcspn(host, ":/");
		rest = end;
	}
	if (end == host) {
		kdiag_at(p, v, "mqtt: url \"%s\" names no host", s);
		return;
	}
	for (const char *h = host; h < end; h++)
		if ((unsigned char)*h <= ' ' || *h == '@' || *h == '?' || *h == '#' ||
		    (unsigned char)*h >= 0x7f) {
			kdiag_at(p, v, "mqtt: url \"%s\": a host name has no '%c'", s, *h);
			return;
		}
	int64_t port = tls ? 8883 : 1883;
	if (*rest == ':') {
		rest++;
		size_t digits = strspn(rest, "0123456789");
		_cleanup_free_ char *num = strndup(rest, digits);
		if (!num) {
			p->oom = true;
			return;
		}
		if (!digits || parse_int64(num, &port) < 0 || port < 1 || port > 65535) {
			kdiag_at(p, v, "mqtt: url \"%s\": the port is a number from 1 to 65535", s);
			return;
		}
		rest += digits;
	}
	if (*rest && strcmp(rest, "/") != 0) {
		kdiag_at(p, v, "mqtt: url \"%s\": nothing may follow HOST:PORT", s);
		return;
	}
	char *h = strndup(host, (size_t)(end - host));
	if (!h) {
		p->oom = true;
		return;
	}
	free(c->host);
	c->host = h;
	c->port = (unsigned)port;
	c->tls = tls;
}

static void spool(struct kdiag_file *p, const struct ynode *v, struct kmqtt_config *c)
{
	if (v->kind != YNODE_MAP) {
		kdiag_at(p, v, "mqtt: 'spool' is a mapping with 'dir' and 'max_mb', not %s",
			 ynode_kind_name(v));
		return;
	}
	for (size_t i = 0; i + 1 < v->n_kids; i += 2) {
		const struct ynode *k = v->kids[i], *val = v->kids[i + 1];
		const char *key = k->kind == YNODE_SCALAR ? k->value : "";
		int64_t n;
		if (strcmp(key, "dir") == 0) {
			scalar(p, "spool: dir", val, &c->spool_dir);
			if (c->spool_dir && c->spool_dir[0] != '/') {
				kdiag_at(p, val,
					 "mqtt: spool: 'dir' is an absolute path, not \"%s\"",
					 c->spool_dir);
			}
		} else if (strcmp(key, "max_mb") == 0) {
			if (number(p, "spool: 'max_mb'", val, 1, KMQTT_SPOOL_MAX_MB_MAX, &n))
				c->spool_max_mb = (unsigned)n;
		} else {
			kdiag_at(p, k, "mqtt: spool: unknown key '%s' (dir, max_mb)", key);
		}
	}
}

/* One item of 'subscribe': a filter, or {filter: F, host_level: N}.
 * Adds it to c, or a diagnostic. */
static void subscription(struct kdiag_file *p, const struct ynode *f, struct kmqtt_config *c)
{
	const struct ynode *filter = f, *level = NULL;
	if (f->kind == YNODE_MAP) {
		filter = NULL;
		for (size_t i = 0; i + 1 < f->n_kids; i += 2) {
			const struct ynode *k = f->kids[i], *v = f->kids[i + 1];
			const char *key = k->kind == YNODE_SCALAR ? k->value : "";
			if (strcmp(key, "filter") == 0 && !filter) {
				filter = v;
			} else if (strcmp(key, "host_level") == 0 && !level) {
				level = v;
			} else {
				kdiag_at(p, k,
					 "mqtt: subscribe: unknown or repeated key '%s' (filter, "
					 "host_level)",
					 key);
				return;
			}
		}
		if (!filter) {
			kdiag_at(p, f, "mqtt: subscribe: a mapping needs 'filter'");
			return;
		}
	}
	if (filter->kind != YNODE_SCALAR || ynode_is_null(filter)) {
		kdiag_at(p, filter,
			 "mqtt: a topic filter of 'subscribe' is a value or {filter: F, "
			 "host_level: N}, "
			 "not %s",
			 ynode_kind_name(filter));
		return;
	}
	const char *why = kmqtt_filter_problem(filter->value);
	if (why) {
		kdiag_at(p, filter, "mqtt: bad topic filter \"%s\": %s", filter->value, why);
		return;
	}
	const char *topics = kmqtt_filter_topics(filter->value);
	bool hash = false;
	unsigned n = levels(topics, &hash), host = kmqtt_filter_first_plus(topics);
	if (level) {
		int64_t v;
		if (!number(p, "subscribe: 'host_level'", level, 1, KMQTT_HOST_LEVEL_MAX, &v))
			return;
		/* a level past the filter's only under its '#' (a topic without
		 * it is refused when it comes) */
		if ((unsigned)v > n && !hash) {
			kdiag_at(p, level, "mqtt: host_level %u: the filter \"%s\" has %u levels",
				 (unsigned)v, filter->value, n);
			return;
		}
		host = (unsigned)v;
	} else if (!host) {
		/* the host would be the message's own word: any sender could name any */
		kdiag_at(p, filter,
			 "mqtt: topic filter \"%s\" names no host: the level of its first '+' is "
			 "the "
			 "host, or say which level is with {filter: \"%s\", host_level: N}",
			 filter->value, filter->value);
		return;
	}
	char *dup = strdup(filter->value);
	if (!dup) {
		p->oom = true;
		return;
	}
	c->subscribe[c->n_subscribe] = dup;
	c->host_level[c->n_subscribe] = host;
	c->n_subscribe++;
}

static void subscribe(struct kdiag_file *p, const struct ynode *v, struct kmqtt_config *c)
{
	if (v->kind != YNODE_SEQ) {
		kdiag_at(p, v, "mqtt: 'subscribe' is a list of topic filters, not %s",
			 ynode_kind_name(v));
		return;
	}
	if (v->n_kids > KMQTT_MAX_SUBSCRIBE) {
		kdiag_at(p, v, "mqtt: at most %d topic filters in 'subscribe'",
			 KMQTT_MAX_SUBSCRIBE);
		return;
	}
	for (size_t i = 0; i < c->n_subscribe; i++)
		free(c->subscribe[i]);
	free(c->subscribe);
	free(c->host_level);
	c->n_subscribe = 0;
	c->subscribe = calloc(v->n_kids + 1, sizeof(*c->subscribe));
	c->host_level = calloc(v->n_kids + 1, sizeof(*c->host_level));
	if (!c->subscribe || !c->host_level) {
		p->oom = true;
		return;
	}
	for (size_t i = 0; i < v->n_kids; i++)
		subscription(p, v->kids[i], c);
}

static void topic_prefix(struct kdiag_file *p, const struct ynode *v, struct kmqtt_config *c)
{
	scalar(p, "topic_prefix", v, &c->topic_prefix);
	const char *s = c->topic_prefix;
	if (!s)
		return;
	if (strpbrk(s, "+#"))
		kdiag_at(p, v, "mqtt: topic_prefix \"%s\" has a wildcard ('+' or '#')", s);
	else if (s[strlen(s) - 1] == '/')
		kdiag_at(p, v, "mqtt: topic_prefix \"%s\" ends with '/'", s);
	else if (strlen(s) > 1024)
		kdiag_at(p, v, "mqtt: topic_prefix is at most 1024 bytes");
}

/* clang-format off */
static const char *const keys =
	"url, client_id, username, password_file, ca_file, cert_file, key_file, "
	"topic_prefix, publish, qos, spool, subscribe";
/* clang-format on */

static void section(struct kdiag_file *p, const struct ynode *n, struct kmqtt_config *c)
{
	const struct ynode *url_node = NULL;
	for (size_t i = 0; i + 1 < n->n_kids; i += 2) {
		const struct ynode *k = n->kids[i], *v = n->kids[i + 1];
		if (k->kind != YNODE_SCALAR) {
			kdiag_at(p, k, "mqtt: a key is a name, not %s", ynode_kind_name(k));
			continue;
		}
		const char *key = k->value;
		for (size_t j = 0; j < i; j += 2)
			if (n->kids[j]->kind == YNODE_SCALAR &&
			    strcmp(n->kids[j]->value, key) == 0) {
				kdiag_at(p, k, "mqtt: '%s' given twice", key);
				key = NULL;
				break;
			}
		if (!key)
			continue;
		int64_t num;
		if (strcmp(key, "url") == 0) {
			url_node = v;
			url(p, v, c);
			c->url_line = v->line;
			c->url_col = v->col;
		} else if (strcmp(key, "client_id") == 0) {
			scalar(p, key, v, &c->client_id);
			if (c->client_id && strlen(c->client_id) > 65535)
				kdiag_at(p, v, "mqtt: client_id is at most 65535 bytes");
		} else if (strcmp(key, "username") == 0) {
			scalar(p, key, v, &c->username);
		} else if (strcmp(key, "password_file") == 0) {
			scalar(p, key, v, &c->password_file);
		} else if (strcmp(key, "ca_file") == 0) {
			scalar(p, key, v, &c->ca_file);
		} else if (strcmp(key, "cert_file") == 0) {
			scalar(p, key, v, &c->cert_file);
		} else if (strcmp(key, "key_file") == 0) {
			scalar(p, key, v, &c->key_file);
		} else if (strcmp(key, "topic_prefix") == 0) {
			topic_prefix(p, v, c);
		} else if (strcmp(key, "publish") == 0) {
			const char *s = v->kind == YNODE_SCALAR ? v->value : "";
			if (strcmp(s, "all") == 0)
				c->publish = KMQTT_PUBLISH_ALL;
			else if (strcmp(s, "matched") == 0)
				c->publish = KMQTT_PUBLISH_MATCHED;
			else if (strcmp(s, "none") == 0)
				c->publish = KMQTT_PUBLISH_NONE;
			else
				kdiag_at(p, v,
					 "mqtt: 'publish' is all, matched or none, not %s%s%s",
					 v->kind == YNODE_SCALAR ? "'" : "",
					 v->kind == YNODE_SCALAR ? s : ynode_kind_name(v),
					 v->kind == YNODE_SCALAR ? "'" : "");
		} else if (strcmp(key, "qos") == 0) {
			if (number(p, "'qos'", v, 0, 1, &num))
				c->qos = (int)num;
		} else if (strcmp(key, "spool") == 0) {
			spool(p, v, c);
		} else if (strcmp(key, "subscribe") == 0) {
			subscribe(p, v, c);
		} else {
			kdiag_at(p, k, "mqtt: unknown key '%s' (%s)", key, keys);
		}
	}
	if (!url_node) {
		kdiag_at(p, n, "mqtt: 'url' is missing (mqtt://HOST:PORT or mqtts://HOST:PORT)");
		return;
	}
	if (p->errors)
		return;
	if (!c->tls && (c->ca_file || c->cert_file || c->key_file))
		kdiag_at(p, url_node, "mqtt: ca_file, cert_file and key_file need an mqtts:// url");
	if (!c->cert_file != !c->key_file)
		kdiag_at(p, n, "mqtt: cert_file and key_file go together");
	if (c->password_file && !c->username)
		kdiag_at(p, n, "mqtt: password_file needs a username");
}

int kmqtt_config_parse(struct kmqtt_config *c, const struct ynode *n, const char *path,
		       struct kdiags *diags)
{
	struct kdiag_file p = {.path = path, .diags = diags};
	if (n->kind != YNODE_MAP) {
		kdiag_at(&p, n, "mqtt: a mapping of keys (%s), not %s", keys, ynode_kind_name(n));
		return p.oom ? -ENOMEM : -EINVAL;
	}
	struct kmqtt_config nc;
	kmqtt_config_init(&nc);
	nc.enabled = true;
	section(&p, n, &nc);
	if (p.oom || p.errors) {
		kmqtt_config_release(&nc);
		return p.oom ? -ENOMEM : -EINVAL;
	}
	kmqtt_config_release(c);
	*c = nc;
	return 0;
}
