// SPDX-License-Identifier: GPL-2.0-or-later
#include "event.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

static const char *const type_names[KEVENT_NTYPES] = {
	[KEVENT_GENERAL] = "general", [KEVENT_STORAGE] = "storage", [KEVENT_POWER] = "power",
	[KEVENT_FS] = "fs",	      [KEVENT_HOTPLUG] = "hotplug",
};

static const char *const source_names[KEVENT_SOURCE_MAX] = {
#define SOURCE_NAME(id, name) [KEVENT_SOURCE_##id] = name,
	KEVENT_SOURCE_LIST(SOURCE_NAME)
#undef SOURCE_NAME
};

const char *kevent_type_name(enum kevent_type t)
{
	return (unsigned)t < KEVENT_NTYPES ? type_names[t] : "unknown";
}

int kevent_type_from_name(const char *s)
{
	for (int i = 0; i < KEVENT_NTYPES; i++)
		if (strcmp(s, type_names[i]) == 0)
			return i;
	if (s[0] >= '0' && s[0] <= '0' + KEVENT_TYPE_MAX && s[1] == '\0')
		return s[0] - '0';
	return -1;
}

const char *kevent_source_names(void)
{
#define SOURCE_WORD(id, name) ", " name
	static const char names[] = KEVENT_SOURCE_LIST(SOURCE_WORD);
#undef SOURCE_WORD
	return names + 2; /* past the first ", " */
}

const char *kevent_source_name(enum kevent_source s)
{
	return (unsigned)s < KEVENT_SOURCE_MAX ? source_names[s] : "unknown";
}

int kevent_source_from_name(const char *s)
{
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++)
		if (strcmp(s, source_names[i]) == 0)
			return i;
	return -1;
}

bool kevent_signal_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == ':' || c == '-';
}

bool kevent_signal_valid(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (n >= KEVENT_SIGNAL_MAX || !kevent_signal_char(s[n]))
			return false;
	return n > 0;
}

int kevent_check(int type, const char *object, const char *signal, const char *payload,
		 const char **why)
{
	if (type < 0 || type > KEVENT_TYPE_MAX) {
		*why = "unknown event type";
		return -EINVAL;
	}
	if (!object || object[0] != '/') {
		*why = "object must start with '/'";
		return -EINVAL;
	}
	size_t n = 0;
	for (; object[n]; n++) {
		if (n >= KEVENT_OBJECT_MAX) {
			*why = "object longer than " STRINGIFY(KEVENT_OBJECT_MAX) " bytes";
			return -EINVAL;
		}
		if ((unsigned char)object[n] < 0x20 || (unsigned char)object[n] > 0x7e) {
			*why = "object has a character that is not printable ASCII";
			return -EINVAL;
		}
	}
	if (!signal || !signal[0]) {
		*why = "signal is empty";
		return -EINVAL;
	}
	if (!kevent_signal_valid(signal)) {
		*why = strlen(signal) > KEVENT_SIGNAL_MAX
			       ? "signal longer than " STRINGIFY(KEVENT_SIGNAL_MAX) " bytes"
			       : "signal has a character outside [A-Za-z0-9_.:-]";
		return -EINVAL;
	}
	if (payload && strlen(payload) > KEVENT_PAYLOAD_MAX) {
		*why = "payload longer than " STRINGIFY(KEVENT_PAYLOAD_MAX) " bytes";
		return -EINVAL;
	}
	return 0;
}

bool kevent_prop_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

bool kevent_prop_key_valid(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!kevent_prop_key_char(*s))
			return false;
	return true;
}

static size_t count_lines(const char *s)
{
	size_t n = 1;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

size_t kevent_parse_props(char *buf, struct kevent_prop *props, size_t max)
{
	size_t n = 0;
	char *line = buf;
	while (line && *line) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		char *p = line;
		while (kevent_prop_key_char(*p))
			p++;
		if (p > line && *p == ':') {
			*p = '\0';
			char *v = p + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			char *end = v + strlen(v);
			while (end > v && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
				*--end = '\0';
			bool dup = false;
			for (size_t i = 0; i < n && !dup; i++)
				dup = strcasecmp(props[i].key, line) == 0;
			if (!dup && n < max)
				props[n++] = (struct kevent_prop){line, v};
		}
		line = nl ? nl + 1 : NULL;
	}
	return n;
}

/* Names that change how the C library, the shells or an interpreter
 * behave (what they load, run or trust): never from an event. */
static const char *const env_forbidden[] = {
	"PATH",		  "HOME",	"IFS",	   "SHELL",   "ENV",	     "BASH_ENV",
	"GLIBC_TUNABLES", "GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_HOST_CONF",
	"SHELLOPTS",	  "BASHOPTS",	"PS4",
};
static const char *const env_forbidden_prefixes[] = {"LD_", "KEVENT_", "PYTHON", "PERL5", "RUBY"};

bool kevent_env_name_allowed(const char *name, size_t len)
{
	if (!env_name_valid(name, len))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(env_forbidden); i++)
		if (strlen(env_forbidden[i]) == len && memcmp(env_forbidden[i], name, len) == 0)
			return false;
	for (size_t i = 0; i < ARRAY_SIZE(env_forbidden_prefixes); i++) {
		size_t l = strlen(env_forbidden_prefixes[i]);
		if (len >= l && memcmp(name, env_forbidden_prefixes[i], l) == 0)
			return false;
	}
	return true;
}

/* The event and everything it points to live in one allocation. */
int kevent_new(int type, const char *object, const char *signal, const char *payload,
	       enum kevent_source source, uint64_t seqnum, uint64_t timestamp,
	       char *const *uevent_env, size_t n_uevent_env, struct kevent **out, const char **why)
{
	if (!payload)
		payload = "";
	int r = kevent_check(type, object, signal, payload, why);
	if (r < 0)
		return r;

	size_t lo = strlen(object) + 1, ls = strlen(signal) + 1, lp = strlen(payload) + 1;
	size_t nprops = count_lines(payload);
	size_t lenv = 0, nenv = 0;
	for (size_t i = 0; i < n_uevent_env; i++) {
		const char *eq = strchr(uevent_env[i], '=');
		if (eq && kevent_env_name_allowed(uevent_env[i], (size_t)(eq - uevent_env[i]))) {
			lenv += strlen(uevent_env[i]) + 1;
			nenv++;
		}
	}
	size_t size = sizeof(struct kevent) + nprops * sizeof(struct kevent_prop) +
		      nenv * sizeof(char *) + lo + ls + 2 * lp + lenv;
	struct kevent *ev = malloc(size); /* every byte after the header is written below */
	if (!ev)
		return -ENOMEM;
	*ev = (struct kevent){0};
	struct kevent_prop *props = (struct kevent_prop *)(ev + 1);
	char **env = (char **)(props + nprops);
	char *p = (char *)(env + nenv);

	ev->type = (enum kevent_type)type;
	ev->source = source;
	ev->seqnum = seqnum;
	ev->timestamp = timestamp;
	ev->object = memcpy(p, object, lo);
	p += lo;
	ev->signal = memcpy(p, signal, ls);
	p += ls;
	ev->payload = memcpy(p, payload, lp);
	p += lp;
	char *scratch = memcpy(p, payload, lp);
	p += lp;
	ev->props = props;
	ev->n_props = kevent_parse_props(scratch, props, nprops);
	size_t k = 0;
	for (size_t i = 0; i < n_uevent_env; i++) {
		const char *eq = strchr(uevent_env[i], '=');
		if (!eq || !kevent_env_name_allowed(uevent_env[i], (size_t)(eq - uevent_env[i])))
			continue;
		size_t l = strlen(uevent_env[i]) + 1;
		env[k++] = memcpy(p, uevent_env[i], l);
		p += l;
	}
	ev->uevent_env = env;
	ev->n_uevent_env = nenv;
	*out = ev;
	return 0;
}

void kevent_free(struct kevent *ev)
{
	if (ev) {
		free(ev->host);
		free(ev->journal_ids);
	}
	free(ev);
}

bool kevent_host_valid(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > KEVENT_HOST_MAX || s[0] == '-' || s[0] == '.')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '-' || *s == '_'))
			return false;
	return true;
}

int kevent_set_host(struct kevent *ev, const char *host, const char **why)
{
	if (!kevent_host_valid(host)) {
		*why = "host is not a host name ([A-Za-z0-9._-], at most 253 bytes)";
		return -EINVAL;
	}
	char *h = strdup(host);
	if (!h)
		return -ENOMEM;
	free(ev->host);
	ev->host = h;
	return 0;
}

int kevent_dup(const struct kevent *ev, struct kevent **out)
{
	const char *why;
	struct kevent *c = NULL;
	int rc = kevent_new(ev->type, ev->object, ev->signal, ev->payload, ev->source, ev->seqnum,
			    ev->timestamp, ev->uevent_env, ev->n_uevent_env, &c, &why);
	if (rc < 0)
		return rc;
	c->recovered = ev->recovered;
	c->instance = ev->instance;
	c->synthetic = ev->synthetic;
	c->redelivered = ev->redelivered;
	c->injected = ev->injected;
	c->test = ev->test;
	if (ev->host && !(c->host = strdup(ev->host))) {
		kevent_free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

const char *kevent_prop(const struct kevent *ev, const char *key)
{
	for (size_t i = 0; i < ev->n_props; i++)
		if (strcasecmp(ev->props[i].key, key) == 0)
			return ev->props[i].value;
	return NULL;
}
