// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The table of the sources' rows (source-type.h), and the rows of the
 * sources that other parts of keventd make: the control socket's, the
 * broker's subscriptions and the condition table's changes.
 */
#include "source-type.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The source that the part of keventd it belongs to made (NULL: none). */
static int take_made(const struct ksource_args *a, struct ksource **out)
{
	*out = a->made;
	return 0;
}

/* the events of keventctl send and post (the control socket's glue) */
const struct ksource_type ksource_type_socket = {
	.kind = KEVENT_SOURCE_SOCKET,
	.make = take_made,
};

/* the broker's subscriptions: the connection is the MQTT output's, made
 * first; no broker or none subscribed, no source */
const struct ksource_type ksource_type_mqtt = {
	.kind = KEVENT_SOURCE_MQTT,
	.make = take_made,
};

/* keventd's own: the condition table's changes, which its glue
 * (cond/daemon-cond.c) submits as it makes them; nothing to read */
const struct ksource_type ksource_type_condition = {
	.kind = KEVENT_SOURCE_CONDITION,
	.make = take_made,
};

const struct ksource_type *const ksource_types[KEVENT_SOURCE_MAX] = {
	[KEVENT_SOURCE_KERNEL] = &ksource_type_kernel,
	[KEVENT_SOURCE_UDEV] = &ksource_type_udev,
	[KEVENT_SOURCE_THERMAL] = &ksource_type_thermal,
	[KEVENT_SOURCE_SOCKET] = &ksource_type_socket,
	[KEVENT_SOURCE_ACPI] = &ksource_type_acpi,
	[KEVENT_SOURCE_INPUT] = &ksource_type_input,
	[KEVENT_SOURCE_FS] = &ksource_type_fs,
	[KEVENT_SOURCE_MQTT] = &ksource_type_mqtt,
	[KEVENT_SOURCE_TRACE] = &ksource_type_trace,
	[KEVENT_SOURCE_MD] = &ksource_type_md,
	[KEVENT_SOURCE_KMSG] = &ksource_type_kmsg,
	[KEVENT_SOURCE_CONDITION] = &ksource_type_condition,
};

const struct ksource_type *ksource_type_of_section(const char *name)
{
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++)
		if (ksource_types[i]->section_size &&
		    strcmp(kevent_source_name((enum kevent_source)i), name) == 0)
			return ksource_types[i];
	return NULL;
}

int ksource_sections_parse(struct ksource_sections *s, const struct ksource_type *t,
			   const struct ynode *v, const char *path, struct kdiags *diags)
{
	void **slot = &s->v[t->kind];
	if (!*slot) {
		*slot = malloc(t->section_size);
		if (!*slot)
			return -ENOMEM;
		memcpy(*slot, t->defaults, t->section_size);
	}
	return t->parse(*slot, v, path, diags);
}

const void *ksource_section(const struct ksource_sections *s, enum kevent_source kind)
{
	if ((unsigned)kind >= KEVENT_SOURCE_MAX)
		return NULL;
	if (s && s->v[kind])
		return s->v[kind];
	return ksource_types[kind]->defaults;
}

int ksource_sections_check(const struct ksource_sections *s, unsigned mask, struct kdiags *diags)
{
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++) {
		const struct ksource_type *t = ksource_types[i];
		if (!t->check || !(mask & (1u << i)))
			continue;
		int rc = t->check(ksource_section(s, (enum kevent_source)i), diags);
		if (rc < 0)
			return rc;
	}
	return 0;
}

void ksource_section_free(enum kevent_source kind, void *section)
{
	if (!section)
		return;
	if (ksource_types[kind]->release)
		ksource_types[kind]->release(section);
	free(section);
}

void ksource_sections_release(struct ksource_sections *s)
{
	for (int i = 0; i < KEVENT_SOURCE_MAX; i++)
		ksource_section_free((enum kevent_source)i, s->v[i]);
	*s = (struct ksource_sections){0};
}
