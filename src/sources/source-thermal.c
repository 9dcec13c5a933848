// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The "thermal" source: trip-point crossings from the stock kernel's
 * "thermal" Generic Netlink family, mapped to power events (thermal.h), a
 * Generic Netlink source (source-genl.h).  At start-up, and whenever the
 * family comes back, it reads /sys/class/thermal, so a machine that is
 * already hot gets its "high" event even though no trip is crossed again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/netlink.h>

#include "log.h"
#include "source-genl.h"
#include "statedir.h"
#include "thermal.h"
#include "util.h"
#include "source-type.h"

#define SCAN_MAX   64
#define ZONES_FILE "thermal.zones" /* in the state directory */

static const char *const group_names[] = {"event"};

static int thermal_init(const void *arg, void **state)
{
	const struct ksource_thermal_arg *a = arg;
	struct kthermal *t = NULL;
	int rc = kthermal_new(a->sysfs_root, &t);
	if (rc == 0 && a->state && (rc = kthermal_remember(t, a->state->fd, ZONES_FILE)) < 0 &&
	    rc != -ENOMEM) {
		log_warning("thermal: cannot read %s/" ZONES_FILE ": %s", a->state->path,
			    kstatedir_strerror(rc));
		rc = 0;
	}
	*state = t;
	return rc;
}

static void thermal_fini(void *state)
{
	kthermal_free(state);
}

static int thermal_decode(void *state, const struct nlmsghdr *nlh, size_t left, int family_id,
			  struct kevent **ev, const char **why)
{
	struct kthermal_msg m;
	int rc = kthermal_decode(nlh, left, family_id, &m, why);
	return rc < 0 ? rc : kthermal_apply(state, &m, now_realtime_ns(), ev, why);
}

/* Emits high for zones already above a trip (start-up, or the family back). */
static void thermal_scan(void *state, const struct ksink *sink)
{
	struct kevent *evs[SCAN_MAX];
	size_t n = kthermal_scan(state, now_realtime_ns(), evs, SCAN_MAX);
	for (size_t i = 0; i < n; i++) {
		if (evs[i]->synthetic)
			log_notice("thermal: %s cooled while keventd was down", evs[i]->object);
		else
			log_notice("thermal: %s is already above a trip point at start-up",
				   evs[i]->object);
		(void)ksink_submit(sink, evs[i]);
	}
}

static void thermal_describe(void *state, struct strbuf *out)
{
	kthermal_describe(state, out);
}

const struct ksource_genl_desc ksource_thermal_desc = {
	.name = "thermal",
	.kind = KEVENT_SOURCE_THERMAL,
	.family = "thermal",
	.groups = group_names,
	.n_groups = ARRAY_SIZE(group_names),
	.recv_buf = 16 * 1024,
	.decode = thermal_decode,
	.init = thermal_init,
	.fini = thermal_fini,
	.resync = thermal_scan,
	.describe = thermal_describe,
	.say_subscribed = "subscribed to the thermal family's trip events",
	.say_absent = "the kernel has no thermal netlink family (yet)",
};

int ksource_thermal_new(const struct ksink *sink, const char *sysfs_root, struct ksource **out)
{
	const struct ksource_thermal_arg arg = {sysfs_root, sink->state};
	return ksource_genl_new(&ksource_thermal_desc, sink, &arg, out);
}

static int make(const struct ksource_args *a, struct ksource **out)
{
	return ksource_thermal_new(a->sink, a->thermal_sysfs ? a->thermal_sysfs : KTHERMAL_SYSFS,
				   out);
}

/* Every zone's state is reported afresh when its file is gone (a
 * first start, a reboot that emptied the state directory). */
static bool reports_at_start(const struct kstatedir *state)
{
	return !state || faccessat(state->fd, ZONES_FILE, F_OK, AT_SYMLINK_NOFOLLOW) < 0;
}

const struct ksource_type ksource_type_thermal = {
	.kind = KEVENT_SOURCE_THERMAL,
	.make = make,
	.reports_at_start = reports_at_start,
};
