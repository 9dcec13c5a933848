// SPDX-License-Identifier: GPL-2.0-or-later
#include "mqtt-msg.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <string.h>

#include "event-json.h"
#include "mqtt-config.h"

static void put_encoded(struct strbuf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '+' || *p == '#' || *p == '%' || *p < 0x20 || *p >= 0x7f) {
			strbuf_putc(out, '%');
			strbuf_putc(out, hex[*p >> 4]);
			strbuf_putc(out, hex[*p & 15]);
		} else {
			strbuf_putc(out, (char)*p);
		}
	}
}

void kmqtt_topic(const char *prefix, const struct kevent *ev, struct strbuf *out)
{
	strbuf_puts(out, prefix);
	strbuf_putc(out, '/');
	strbuf_puts(out, kevent_type_name(ev->type));
	strbuf_putc(out, '/');
	put_encoded(out, ev->signal);
	put_encoded(out, ev->object);
}

bool kmqtt_condition_topic(const char *prefix, const struct kevent *ev, struct strbuf *out)
{
	const char *name = kevent_prop(ev, "Condition"), *key = kevent_prop(ev, "Key");
	if (ev->source != KEVENT_SOURCE_CONDITION || !name || !*name)
		return false;
	if (!key)
		key = ev->object;
	strbuf_puts(out, prefix);
	strbuf_puts(out, "/condition/");
	put_encoded(out, name);
	if (*key != '/')
		strbuf_putc(out, '/');
	put_encoded(out, key);
	return true;
}

bool kmqtt_topic_retained(const char *prefix, const char *topic)
{
	size_t n = strlen(prefix);
	return strncmp(topic, prefix, n) == 0 && strncmp(topic + n, "/condition/", 11) == 0;
}

void kmqtt_message(const struct kevent *ev, const char *host, struct strbuf *out)
{
	size_t start = out->len;
	kevent_json_record(out, ev);
	if (out->oom || out->len < start + 2)
		return;
	out->len -= 2; /* "}\n" */
	out->buf[out->len] = '\0';
	strbuf_puts(out, ",\"host\":");
	strbuf_json(out, host);
	strbuf_printf(out, ",\"instance\":\"%016" PRIx64 "\",\"redelivered\":%s,\"recovered\":%s}",
		      ev->instance, ev->redelivered ? "true" : "false",
		      ev->recovered ? "true" : "false");
}

/* "instance": 16 hex digits; 0 when absent.  -EINVAL with *why. */
static int instance_of(struct json_object *o, uint64_t *out, const char **why)
{
	struct json_object *v = NULL;
	*out = 0;
	if (!json_object_object_get_ex(o, "instance", &v))
		return 0;
	const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
	uint64_t n = 0;
	size_t i = 0;
	for (; i < 16 && isxdigit((unsigned char)s[i]); i++)
		n = n << 4 | (uint64_t)(isdigit((unsigned char)s[i])
						? s[i] - '0'
						: (tolower((unsigned char)s[i]) - 'a' + 10));
	if (i != 16 || s[16] || (size_t)json_object_get_string_len(v) != 16) {
		*why = "instance is not 16 hex digits";
		return -EINVAL;
	}
	*out = n;
	return 0;
}

/* The string "host" of the JSON object in buf, and its "instance"; NULL
 * with *why. */
static char *host_of(const char *buf, size_t len, uint64_t *instance, const char **why)
{
	struct json_tokener *tok = json_tokener_new();
	if (!tok)
		return NULL;
	struct json_object *o = json_tokener_parse_ex(tok, buf, (int)len);
	json_tokener_free(tok);
	struct json_object *h = NULL;
	char *host = NULL;
	if (!o || !json_object_object_get_ex(o, "host", &h) ||
	    !json_object_is_type(h, json_type_string))
		*why = "no host";
	else if ((size_t)json_object_get_string_len(h) != strlen(json_object_get_string(h)) ||
		 !kevent_host_valid(json_object_get_string(h)))
		*why = "host is not a host name ([A-Za-z0-9._-], at most 253 bytes)";
	else if (instance_of(o, instance, why) < 0)
		; /* *why says it */
	else if (!(host = strdup(json_object_get_string(h))))
		*why = NULL; /* no memory */
	json_object_put(o);
	return host;
}

bool kmqtt_topic_matches(const char *filter, const char *topic)
{
	const char *f = filter, *t = topic;
	if (*t == '$' && (*f == '+' || *f == '#'))
		return false;
	for (;;) {
		size_t fl = strcspn(f, "/"), tl = strcspn(t, "/");
		if (fl == 1 && *f == '#')
			return true; /* this level and those below, or none ("a/#" is "a" too) */
		if (!(fl == 1 && *f == '+') && (fl != tl || memcmp(f, t, fl) != 0))
			return false;
		f += fl;
		t += tl;
		if (!*f || !*t)
			break;
		f++;
		t++;
	}
	/* the topic is at its end: matched if the filter is too, or has only
	 * "/#" left */
	return !*t && (!*f || strcmp(f, "/#") == 0);
}

/* Level (from 1) of topic into out (empty when it is too long for a host
 * name); false if the topic has none. */
static bool topic_level(const char *topic, unsigned level, char out[KEVENT_HOST_MAX + 1])
{
	const char *p = topic;
	for (unsigned i = 1; i < level; i++) {
		p = strchr(p, '/');
		if (!p)
			return false;
		p++;
	}
	size_t len = strcspn(p, "/");
	if (len > KEVENT_HOST_MAX)
		len = 0; /* too long: no host name, as the empty one is not */
	memcpy(out, p, len);
	out[len] = '\0';
	return true;
}

int kmqtt_topic_host(char *const *filters, const unsigned *levels, size_t n, const char *topic,
		     char out[KEVENT_HOST_MAX + 1], const char **why)
{
	char host[KEVENT_HOST_MAX + 1];
	bool found = false;
	*why = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!kmqtt_topic_matches(kmqtt_filter_topics(filters[i]), topic))
			continue;
		if (!topic_level(topic, levels[i], host)) {
			*why = "the topic has no level for the host";
			return -EINVAL;
		}
		if (!kevent_host_valid(host)) {
			*why = "the topic's host level is not a host name ([A-Za-z0-9._-], at most "
			       "253 bytes)";
			return -EINVAL;
		}
		if (found && strcmp(host, out) != 0) {
			*why = "the subscriptions the topic matches name different hosts";
			return -EINVAL;
		}
		if (!found)
			memcpy(out, host, strlen(host) + 1);
		found = true;
	}
	if (!found)
		*why = "a topic no subscription matches";
	return found ? 0 : -EINVAL;
}

int kmqtt_decode(const void *buf, size_t len, const char *topic_host, struct kevent **out,
		 struct kmqtt_key *key, const char **why)
{
	*out = NULL;
	*why = NULL;
	if (len > KMQTT_MSG_MAX) {
		*why = "message larger than 64 KiB";
		return -EINVAL;
	}
	if (!len)
		buf = ""; /* an empty message may come with no buffer at all */
	if (memchr(buf, '\0', len)) {
		*why = "a NUL byte in the message";
		return -EINVAL;
	}
	struct kevent *ev = NULL;
	int rc = kevent_json_read(buf, len, &ev, why);
	if (rc < 0)
		return rc;
	uint64_t instance = 0;
	char *host = host_of(buf, len, &instance, why);
	if (!host) {
		kevent_free(ev);
		return *why ? -EINVAL : -ENOMEM;
	}
	if (strcmp(host, topic_host) != 0) {
		/* a sender the broker lets write under its own host's topics
		 * only, speaking as another (docs/fleet.md) */
		*why = "the message's host is not its topic's";
		free(host);
		kevent_free(ev);
		return -EINVAL;
	}
	if (key)
		*key = (struct kmqtt_key){.host = host,
					  .source = ev->source,
					  .instance = instance,
					  .seqnum = ev->seqnum};
	ev->source = KEVENT_SOURCE_MQTT;
	ev->host = host;
	ev->instance = instance;
	*out = ev;
	return 0;
}
