/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unit_properties: the systemd properties a rule may give its transient
 * unit (keventd.rules(5)), by their unit-file names, each checked and
 * converted at load to the D-Bus property and type StartTransientUnit
 * takes.  Pure: no bus, no systemd needed.
 */
#ifndef KEVENT_UNITPROPS_H
#define KEVENT_UNITPROPS_H

#include <stdbool.h>
#include <stdint.h>

/* One property, ready for the D-Bus message: type 's' (s), 'b' (b), 't'
 * (u) or 'i' (i). */
struct kunitprop {
	const char *name; /* the D-Bus name (static) */
	char type;
	char *s;
	bool b;
	uint64_t u;
	int64_t i;
};

/*
 * Parses key: value as written in unit_properties ("MemoryMax", "200M").
 * 0 and *out filled (out->s malloc'd for strings), or -EINVAL / -ERANGE /
 * -ENOENT (no such property) with *why, or -ENOMEM.
 */
int kunitprop_parse(const char *key, const char *value, struct kunitprop *out, const char **why);
void kunitprop_release(struct kunitprop *p);

/* systemd's sizes (MemoryMax=): bytes, with K, M, G, T, P or E for powers
 * of 1024, or "infinity" (UINT64_MAX).  0 is refused. */
int kunitprop_parse_size(const char *s, uint64_t *out, const char **why);

#endif
