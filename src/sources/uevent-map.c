// SPDX-License-Identifier: GPL-2.0-or-later
#include "uevent-map.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

#define TRUNCATED_NAMES_MAX 200 /* of the Truncated: line, then "..." */

static const char *find(char *const *props, size_t n, const char *key)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i < n; i++)
		if (strncmp(props[i], key, kl) == 0 && props[i][kl] == '=')
			return props[i] + kl + 1;
	return NULL;
}

/* One property as a payload line "KEY: value". */
struct line {
	const char *key, *value;
	size_t klen, vlen;
	bool cut;
};

static size_t line_len(const struct line *l)
{
	return l->klen + 2 + l->vlen + 1;
}

/* The "Truncated: A B ...\n" line for the lines cut so far (0 if none). */
static size_t truncated_len(const struct line *lines, size_t n)
{
	size_t len = 0, names = 0;
	for (size_t i = 0; i < n; i++) {
		if (!lines[i].cut)
			continue;
		if (names + lines[i].klen > TRUNCATED_NAMES_MAX) {
			len += 4; /* " ..." */
			break;
		}
		names += lines[i].klen + 1;
		len += lines[i].klen + 1;
	}
	return len ? strlen("Truncated:") + len + 1 : 0;
}

/*
 * Cuts the longest values until the payload, its Truncated: line included,
 * fits in KEVENT_PAYLOAD_MAX: the longest down to the next longest, or by
 * what is still over, whichever cuts less, never inside a UTF-8 character.
 * Returns how many lines were cut.
 */
static unsigned fit(struct line *lines, size_t n)
{
	size_t total = 0;
	unsigned cut = 0;
	for (size_t i = 0; i < n; i++)
		total += line_len(&lines[i]);
	while (total + truncated_len(lines, n) > KEVENT_PAYLOAD_MAX) {
		size_t top = 0, next = 0;
		for (size_t i = 1; i < n; i++)
			if (lines[i].vlen > lines[top].vlen)
				top = i;
		for (size_t i = 0; i < n; i++)
			if (i != top && lines[i].vlen > next)
				next = lines[i].vlen;
		struct line *l = &lines[top];
		if (!l->vlen)
			break; /* every value is empty: kevent_new() refuses it, counted */
		if (!l->cut) {
			l->cut = true;
			cut++;
		}
		size_t over = total + truncated_len(lines, n) - KEVENT_PAYLOAD_MAX;
		size_t keep = l->vlen > over ? l->vlen - over : 0;
		if (keep < next)
			keep = next;
		if (keep == l->vlen)
			keep--; /* ties with the next longest: one byte at a time */
		while (keep && ((unsigned char)l->value[keep] & 0xc0) == 0x80)
			keep--;
		total -= l->vlen - keep;
		l->vlen = keep;
	}
	return cut;
}

static void put_truncated(struct strbuf *sb, const struct line *lines, size_t n)
{
	size_t names = 0;
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		if (!lines[i].cut)
			continue;
		if (!any)
			strbuf_puts(sb, "Truncated:");
		any = true;
		if (names + lines[i].klen > TRUNCATED_NAMES_MAX) {
			strbuf_puts(sb, " ...");
			break;
		}
		strbuf_putc(sb, ' ');
		strbuf_add(sb, lines[i].key, lines[i].klen);
		names += lines[i].klen + 1;
	}
	if (any)
		strbuf_putc(sb, '\n');
}

int kuevent_map(char *const *props, size_t n, uint64_t timestamp, struct kevent **out,
		unsigned *truncated, const char **why)
{
	const char *action = find(props, n, "ACTION");
	const char *devpath = find(props, n, "DEVPATH");
	const char *subsystem = find(props, n, "SUBSYSTEM");
	const char *seq = find(props, n, "SEQNUM");
	const char *devname = find(props, n, "DEVNAME");
	*truncated = 0;
	if (!action || !devpath) {
		*why = "uevent without ACTION or DEVPATH";
		return -EINVAL;
	}
	if (devpath[0] != '/') {
		*why = "uevent DEVPATH does not start with '/'";
		return -EINVAL;
	}
	int type = KEVENT_HOTPLUG;
	if (subsystem && strcmp(subsystem, "block") == 0)
		type = KEVENT_STORAGE;
	else if (subsystem && strcmp(subsystem, "power_supply") == 0)
		type = KEVENT_POWER;
	int64_t seqnum = 0;
	if (seq && (parse_int64(seq, &seqnum) < 0 || seqnum < 0))
		seqnum = 0;

	/* DEVNAME: the kernel's own, relative to /dev, for the hotplug
	 * environment; the /dev path, as udevd gives it, for the payload */
	_cleanup_free_ char *env_devname = NULL, *dev_path = NULL;
	const char *bare = devname && strncmp(devname, "/dev/", 5) == 0 ? devname + 5 : devname;
	if (devname && (asprintf(&env_devname, "DEVNAME=%s", bare) < 0 ||
			asprintf(&dev_path, "/dev/%s", bare) < 0))
		return -ENOMEM;
	_cleanup_free_ char **env = calloc(n ? n : 1, sizeof(*env));
	_cleanup_free_ struct line *lines = calloc(n ? n : 1, sizeof(*lines));
	if (!env || !lines)
		return -ENOMEM;
	size_t n_lines = 0;
	for (size_t i = 0; i < n; i++) {
		bool is_devname = devname && props[i] + strlen("DEVNAME=") == devname &&
				  strncmp(props[i], "DEVNAME=", 8) == 0;
		env[i] = is_devname ? env_devname : props[i];
		/* Only names the payload parser reads back as one key: a ':' or a
		 * newline in a name, or a newline in a value, would forge lines. */
		size_t kl = 0;
		while (kevent_prop_key_char(props[i][kl]))
			kl++;
		const char *eq = props[i] + kl;
		if (kl == 0 || *eq != '=' || strchr(eq + 1, '\n'))
			continue;
		const char *value = is_devname ? dev_path : eq + 1;
		lines[n_lines++] = (struct line){
			.key = props[i], .klen = kl, .value = value, .vlen = strlen(value)};
	}
	*truncated = fit(lines, n_lines);

	_cleanup_strbuf_ struct strbuf object = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf payload = STRBUF_INIT;
	strbuf_puts(&object, KEVENT_UDEV_OBJECT_PREFIX);
	strbuf_puts(&object, devpath);
	for (size_t i = 0; i < n_lines; i++) {
		strbuf_add(&payload, lines[i].key, lines[i].klen);
		strbuf_puts(&payload, ": ");
		strbuf_add(&payload, lines[i].value, lines[i].vlen);
		strbuf_putc(&payload, '\n');
	}
	put_truncated(&payload, lines, n_lines);
	if (object.oom || payload.oom)
		return -ENOMEM;
	return kevent_new(type, strbuf_str(&object), action, strbuf_str(&payload),
			  KEVENT_SOURCE_UDEV, (uint64_t)seqnum, timestamp, env, n, out, why);
}
