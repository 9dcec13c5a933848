// SPDX-License-Identifier: GPL-2.0-or-later
/* An event as JSON (event-json.h). */
#include "event-json.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

void kevent_json_head(struct strbuf *sb, uint64_t seqnum, uint64_t timestamp,
		      enum kevent_source source, enum kevent_type type, const char *object,
		      const char *signal)
{
	strbuf_printf(sb,
		      "{\"seqnum\":%" PRIu64 ",\"timestamp\":%" PRIu64 ",\"source\":\"%s\","
		      "\"type\":\"%s\",\"object\":",
		      seqnum, timestamp, kevent_source_name(source), kevent_type_name(type));
	strbuf_json(sb, object);
	strbuf_puts(sb, ",\"signal\":");
	strbuf_json(sb, signal);
}

void kevent_json_open(struct strbuf *sb, const struct kevent *ev, const char *payload, bool brief)
{
	kevent_json_head(sb, ev->seqnum, ev->timestamp, ev->source, ev->type, ev->object,
			 ev->signal);
	strbuf_puts(sb, ",\"payload\":");
	strbuf_json(sb, payload);
	if (brief)
		strbuf_puts(sb, ",\"truncated\":true");
	strbuf_puts(sb, ",\"properties\":{");
	for (size_t i = 0; i < ev->n_props && !brief; i++) {
		strbuf_puts(sb, i ? "," : "");
		strbuf_json(sb, ev->props[i].key);
		strbuf_putc(sb, ':');
		strbuf_json(sb, ev->props[i].value);
	}
	strbuf_putc(sb, '}');
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void put_base64(struct strbuf *sb, const unsigned char *s, size_t n)
{
	strbuf_putc(sb, '"');
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) |
			     (i + 2 < n ? s[i + 2] : 0);
		char q[5] = {b64[v >> 18 & 63], b64[v >> 12 & 63],
			     i + 1 < n ? b64[v >> 6 & 63] : '=', i + 2 < n ? b64[v & 63] : '=', 0};
		strbuf_puts(sb, q);
	}
	strbuf_putc(sb, '"');
}

/* Decodes base64 into out (at least 3/4 of its length + 3); -1 if malformed. */
static ssize_t from_base64(const char *s, size_t n, unsigned char *out)
{
	size_t o = 0;
	uint32_t v = 0;
	unsigned bits = 0, pad = 0;
	for (size_t i = 0; i < n; i++) {
		const char *p = s[i] ? strchr(b64, s[i]) : NULL;
		if (s[i] == '=') {
			pad++;
			continue;
		}
		if (!p || pad)
			return -1;
		v = v << 6 | (uint32_t)(p - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(v >> bits);
		}
	}
	if ((n % 4) || pad > 2)
		return -1;
	return (ssize_t)o;
}

void kevent_json_record(struct strbuf *sb, const struct kevent *ev)
{
	kevent_json_open(sb, ev, ev->payload, false);
	if (!utf8_valid(ev->payload)) {
		strbuf_puts(sb, ",\"payload_base64\":");
		put_base64(sb, (const unsigned char *)ev->payload, strlen(ev->payload));
	}
	strbuf_puts(sb, "}\n");
}

/* The string at key: NULL when absent; *bad when present and not a string. */
static const char *get_string(struct json_object *o, const char *key, size_t *len, bool *bad)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, key, &v))
		return NULL;
	if (!json_object_is_type(v, json_type_string)) {
		*bad = true;
		return NULL;
	}
	*len = (size_t)json_object_get_string_len(v);
	return json_object_get_string(v);
}

static int get_u64(struct json_object *o, const char *key, uint64_t *out)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return -EINVAL;
	errno = 0;
	uint64_t n = json_object_get_uint64(v);
	if (errno || (json_object_get_int64(v) < 0 && n == 0))
		return -EINVAL;
	*out = n;
	return 0;
}

int kevent_json_read(const char *line, size_t len, struct kevent **out, const char **why)
{
	_cleanup_free_ unsigned char *bin = NULL;
	struct json_tokener *tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	struct json_object *o =
		json_tokener_parse_ex(tok, line, (int)(len > INT32_MAX ? INT32_MAX : len));
	enum json_tokener_error err = json_tokener_get_error(tok);
	size_t used = (size_t)json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	int rc = -EINVAL;
	*why = NULL;
	if (!o || err != json_tokener_success) {
		*why = err == json_tokener_continue ? "truncated JSON" : "not JSON";
		goto out;
	}
	while (used < len && strchr(" \t\r\n", line[used]))
		used++;
	if (used < len) {
		*why = "more after the JSON object";
		goto out;
	}
	if (!json_object_is_type(o, json_type_object)) {
		*why = "not a JSON object";
		goto out;
	}
	bool bad = false;
	size_t tl = 0, ol = 0, sl = 0, pl = 0, bl = 0, srcl = 0;
	const char *type = get_string(o, "type", &tl, &bad);
	const char *object = get_string(o, "object", &ol, &bad);
	const char *signal = get_string(o, "signal", &sl, &bad);
	const char *payload = get_string(o, "payload", &pl, &bad);
	const char *b64text = get_string(o, "payload_base64", &bl, &bad);
	const char *source = get_string(o, "source", &srcl, &bad);
	uint64_t seqnum = 0, timestamp = 0;
	if (bad || get_u64(o, "seqnum", &seqnum) < 0 || get_u64(o, "timestamp", &timestamp) < 0) {
		*why = "a key of the wrong type";
		goto out;
	}
	if (!type || !object || !signal) {
		*why = "type, object and signal are needed";
		goto out;
	}
	int t = kevent_type_from_name(type);
	int src = source ? kevent_source_from_name(source) : KEVENT_SOURCE_SOCKET;
	if (t < 0 || src < 0) {
		*why = t < 0 ? "unknown type" : "unknown source";
		goto out;
	}
	if (b64text) {
		bin = malloc(bl / 4 * 3 + 4);
		if (!bin) {
			rc = -ENOMEM;
			goto out;
		}
		ssize_t n = from_base64(b64text, bl, bin);
		if (n < 0) {
			*why = "payload_base64 is not base64";
			goto out;
		}
		bin[n] = '\0';
		payload = (const char *)bin;
		pl = (size_t)n;
	}
	if (strlen(type) != tl || strlen(object) != ol || strlen(signal) != sl ||
	    (payload && strlen(payload) != pl)) {
		*why = "a NUL character in a field";
		goto out;
	}
	rc = kevent_new(t, object, signal, payload ? payload : "", (enum kevent_source)src, seqnum,
			timestamp, NULL, 0, out, why);
out:
	json_object_put(o);
	return rc;
}
