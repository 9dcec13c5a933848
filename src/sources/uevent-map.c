// SPDX-License-Identifier: GPL-2.0-or-later
#include "uevent-map.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "util.h"

static const char *find(char *const *props, size_t n, const char *key)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i < n; i++)
		if (strncmp(props[i], key, kl) == 0 && props[i][kl] == '=')
			return props[i] + kl + 1;
	return NULL;
}

int kuevent_map(char *const *props, size_t n, uint64_t timestamp, struct kevent **out,
		const char **why)
{
	const char *action = find(props, n, "ACTION");
	const char *devpath = find(props, n, "DEVPATH");
	const char *subsystem = find(props, n, "SUBSYSTEM");
	const char *seq = find(props, n, "SEQNUM");
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

	struct strbuf object = STRBUF_INIT, payload = STRBUF_INIT;
	strbuf_puts(&object, KEVENT_UDEV_OBJECT_PREFIX);
	strbuf_puts(&object, devpath);
	for (size_t i = 0; i < n; i++) {
		/* Only names the payload parser reads back as one key: a ':' or a
		 * newline in a name, or a newline in a value, would forge lines. */
		size_t kl = 0;
		while (kevent_prop_key_char(props[i][kl]))
			kl++;
		const char *eq = props[i] + kl;
		if (kl == 0 || *eq != '=' || strchr(eq + 1, '\n'))
			continue;
		strbuf_add(&payload, props[i], (size_t)(eq - props[i]));
		strbuf_puts(&payload, ": ");
		strbuf_puts(&payload, eq + 1);
		strbuf_putc(&payload, '\n');
	}
	int rc = -ENOMEM;
	if (!object.oom && !payload.oom)
		rc = kevent_new(type, strbuf_str(&object), action, strbuf_str(&payload),
				KEVENT_SOURCE_UDEV, (uint64_t)seqnum, timestamp, props, n, out,
				why);
	strbuf_release(&object);
	strbuf_release(&payload);
	return rc;
}
