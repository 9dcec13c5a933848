// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A kernel log record's DEVICE= key (kmsg.h) to the device's path in
 * sysfs: the kernel's dev_printk() names a device as udev's device ids
 * do ("b8:0", "c4:64", "n2", "+pci:0000:00:1f.2"), and sysfs resolves
 * each to the device's directory under /sys/devices, whose path is the
 * DEVPATH of the device's uevents, so an event about a disk from the log
 * has the object of its udev events.  The value comes from a driver's
 * choice of names, so it is checked before it becomes a path: no "/",
 * no "..", and the answer must lie below root/devices.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmsg.h"

/* realpath() of path if it lies below root's "/devices/": 0 with *out,
 * the part after root. */
static int below(const char *root_real, const char *path, char **out)
{
	char *real = realpath(path, NULL);
	if (!real)
		return errno == ENOMEM ? -ENOMEM : -ENOENT;
	size_t n = strlen(root_real);
	if (strncmp(real, root_real, n) != 0 || strncmp(real + n, "/devices/", 9) != 0) {
		free(real);
		return -ENOENT;
	}
	memmove(real, real + n, strlen(real + n) + 1);
	*out = real;
	return 0;
}

static bool number(const char *s, const char *end, unsigned long *out)
{
	unsigned long v = 0;
	if (s == end || end - s > 10)
		return false;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	*out = v;
	return true;
}

/* A name that is one component of a path: not empty, not "." or "..",
 * printable, no '/'. */
static bool component(const char *s, size_t n)
{
	if (!n || n > NAME_MAX || (s[0] == '.' && (n == 1 || (n == 2 && s[1] == '.'))))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f || s[i] == '/')
			return false;
	return true;
}

int kkmsg_device_path(const char *root, const char *device, char **out)
{
	*out = NULL;
	char path[PATH_MAX];
	char *root_real = realpath(root, NULL);
	if (!root_real)
		return errno == ENOMEM ? -ENOMEM : -ENOENT;
	int rc = -EINVAL;
	size_t len = strlen(device);
	if (device[0] == 'b' || device[0] == 'c') {
		/* b8:0, c4:64 */
		const char *colon = strchr(device, ':');
		unsigned long maj, min;
		if (colon && number(device + 1, colon, &maj) &&
		    number(colon + 1, device + len, &min)) {
			snprintf(path, sizeof(path), "%s/dev/%s/%lu:%lu", root_real,
				 device[0] == 'b' ? "block" : "char", maj, min);
			rc = below(root_real, path, out);
		}
	} else if (device[0] == 'n') {
		/* n2: an interface index, of keventd's network namespace */
		unsigned long idx;
		char name[IF_NAMESIZE];
		if (number(device + 1, device + len, &idx) && idx && idx <= UINT_MAX) {
			rc = -ENOENT;
			if (if_indextoname((unsigned)idx, name)) {
				snprintf(path, sizeof(path), "%s/class/net/%s", root_real, name);
				rc = below(root_real, path, out);
			}
		}
	} else if (device[0] == '+') {
		/* +SUBSYSTEM:NAME; a '/' in a device's name is '!' in sysfs */
		const char *colon = strchr(device, ':');
		if (colon && component(device + 1, (size_t)(colon - device - 1)) && colon[1] &&
		    strlen(colon + 1) <= NAME_MAX) {
			char name[NAME_MAX + 1];
			snprintf(name, sizeof(name), "%s", colon + 1);
			for (char *p = name; *p; p++)
				if (*p == '/')
					*p = '!';
			if (component(name, strlen(name))) {
				int sub = (int)(colon - device - 1);
				snprintf(path, sizeof(path), "%s/bus/%.*s/devices/%s", root_real,
					 sub, device + 1, name);
				rc = below(root_real, path, out);
				if (rc == -ENOENT) {
					snprintf(path, sizeof(path), "%s/class/%.*s/%s", root_real,
						 sub, device + 1, name);
					rc = below(root_real, path, out);
				}
			}
		}
	}
	free(root_real);
	return rc;
}
