// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The uevent mapper: the input, split at NUL bytes as a kernel uevent is,
 * gives the KEY=value properties for kuevent_map().  Checks that what
 * reaches a handler's environment is only allowed names, and that no
 * property value can forge a payload line.
 */
#include <errno.h>
#include <string.h>

#include "event.h"
#include "fuzz.h"
#include "uevent-map.h"

#define MAX_INPUT (16 * 1024) /* a uevent buffer is 2048 bytes; leave room */
#define MAX_PROPS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_outside_size(size, 0, MAX_INPUT))
		return 0;
	/* One NUL-terminated copy; every NUL in it ends a property. */
	char *buf = fuzz_cstring(data, size);
	if (!buf)
		return 0;
	char *props[MAX_PROPS];
	size_t n = 0;
	for (size_t off = 0; off < size && n < MAX_PROPS;) {
		props[n++] = buf + off;
		off += strlen(buf + off) + 1;
	}

	struct kevent *ev = NULL;
	const char *why = NULL;
	unsigned truncated = 0;
	int rc = kuevent_map(props, n, 1700000000000000000ull, &ev, &truncated, &why);
	if (rc < 0) {
		FUZZ_CHECK(rc == -EINVAL || rc == -ENOMEM);
		FUZZ_CHECK(!ev && (rc == -ENOMEM || why));
		free(buf);
		return 0;
	}
	FUZZ_CHECK(ev->source == KEVENT_SOURCE_UDEV);
	FUZZ_CHECK(ev->type == KEVENT_STORAGE || ev->type == KEVENT_POWER ||
		   ev->type == KEVENT_HOTPLUG);
	FUZZ_CHECK(strncmp(ev->object, KEVENT_UDEV_OBJECT_PREFIX "/",
			   strlen(KEVENT_UDEV_OBJECT_PREFIX) + 1) == 0);
	FUZZ_CHECK(kevent_check((int)ev->type, ev->object, ev->signal, ev->payload, &why) == 0);
	for (size_t i = 0; i < ev->n_uevent_env; i++) {
		const char *e = ev->uevent_env[i], *eq = strchr(e, '=');
		FUZZ_CHECK(eq && kevent_env_name_allowed(e, (size_t)(eq - e)));
	}
	/* Every payload property comes from a property of the uevent with the
	 * same name and value (or the start of it, when cut; the /dev path of
	 * DEVNAME), or is the Truncated line: a value never smuggles in a line
	 * of its own. */
	for (size_t i = 0; i < ev->n_props; i++) {
		const struct kevent_prop *p = &ev->props[i];
		size_t kl = strlen(p->key);
		bool found = truncated && i == ev->n_props - 1 && strcmp(p->key, "Truncated") == 0;
		if (strcmp(p->key, "DEVNAME") == 0 && strncmp(p->value, "/dev/", 5) == 0)
			continue; /* made from the uevent's DEVNAME */
		for (size_t j = 0; j < n && !found; j++) {
			if (strncmp(props[j], p->key, kl) != 0 || props[j][kl] != '=')
				continue;
			/* the payload trims blanks around values */
			const char *v = props[j] + kl + 1;
			found = strstr(v, p->value) != NULL;
		}
		FUZZ_CHECK(found);
	}
	kevent_free(ev);
	free(buf);
	return 0;
}
