// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The "acpi" source: the stock kernel's ACPI events (the power button, the
 * lid, the AC adapter, the battery...), what acpid reads, mapped as
 * acpi-msg.h says; a Generic Netlink source (source-genl.h).  The kernel
 * numbers its messages from 0 for every listener alike; keventd numbers
 * the events it takes, from 1.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <stdlib.h>

#include "acpi-msg.h"
#include "source-genl.h"
#include "util.h"
#include "source-type.h"

static const char *const group_names[] = {KACPI_GENL_GROUP};

static int acpi_init(const void *arg, void **state)
{
	(void)arg;
	*state = calloc(1, sizeof(uint64_t)); /* the last seqnum given */
	return *state ? 0 : -ENOMEM;
}

static void acpi_fini(void *state)
{
	free(state);
}

static int acpi_decode(void *state, const struct nlmsghdr *nlh, size_t left, int family_id,
		       struct kevent **ev, const char **why)
{
	uint64_t *seqnum = state;
	struct kacpi_msg m;
	int rc = kacpi_decode(nlh, left, family_id, &m, why);
	if (rc == 0)
		rc = kacpi_event(&m, *seqnum + 1, now_realtime_ns(), ev, why);
	if (rc == 0)
		++*seqnum;
	return rc;
}

const struct ksource_genl_desc ksource_acpi_desc = {
	.name = "acpi",
	.kind = KEVENT_SOURCE_ACPI,
	.family = KACPI_GENL_FAMILY,
	.groups = group_names,
	.n_groups = ARRAY_SIZE(group_names),
	.recv_buf = 8 * 1024,
	.decode = acpi_decode,
	.init = acpi_init,
	.fini = acpi_fini,
	.say_subscribed = "subscribed to the ACPI event family",
	.say_absent = "the kernel has no ACPI event family (no ACPI, or not yet)",
	.say_appeared = "the ACPI event family appeared",
	.say_gone = "the ACPI event family went away; waiting for it",
	.say_cannot_subscribe = "cannot subscribe to the ACPI event group",
	.say_cannot_follow = "cannot follow the generic netlink controller",
};

int ksource_acpi_new(const struct ksink *sink, struct ksource **out)
{
	return ksource_genl_new(&ksource_acpi_desc, sink, NULL, out);
}

static int make(const struct ksource_args *a, struct ksource **out)
{
	return ksource_acpi_new(a->sink, out);
}

const struct ksource_type ksource_type_acpi = {
	.kind = KEVENT_SOURCE_ACPI,
	.make = make,
};
