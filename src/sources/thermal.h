/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stock kernel's thermal trip points, as events: decoding the
 * "thermal" Generic Netlink family's trip messages, and the per-zone state
 * that turns trip crossings into power events (docs/sources.md):
 *   object  /org/kernel/devices/system/cpu/temperature for CPU zones
 *           (type x86_pkg_temp, cpu*, acpitz), else
 *           /org/kernel/devices/virtual/thermal/thermal_zone<N>
 *   signal  high when a trip is crossed upward (critical for a critical
 *           trip), normal once no trip of the zone is crossed any more
 *   payload Zone:, ZoneType:, Trip:, TripType:, Temperature: (millidegrees)
 * Pure but for reading sysfs under a given root, so tests can fake it.
 */
#ifndef KEVENT_THERMAL_H
#define KEVENT_THERMAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define KTHERMAL_SYSFS	     "/sys/class/thermal"
#define KTHERMAL_CPU_OBJECT  "/org/kernel/devices/system/cpu/temperature"
#define KTHERMAL_ZONE_OBJECT "/org/kernel/devices/virtual/thermal/thermal_zone"
#define KTHERMAL_MAX_ZONES   1024
#define KTHERMAL_MAX_TRIPS   64

enum kthermal_kind { KTHERMAL_TRIP_UP, KTHERMAL_TRIP_DOWN, KTHERMAL_OTHER };

struct kthermal_msg {
	enum kthermal_kind kind;
	uint32_t zone, trip;
	int32_t temp;
	bool has_temp;
};

/* Decodes one netlink message of the thermal family (family_id).  Returns 0
 * (kind OTHER for messages keventd does not map), or -EBADMSG / -EINVAL
 * with *why. */
int kthermal_decode(const void *buf, size_t len, int family_id, struct kthermal_msg *m,
		    const char **why);

struct kthermal;

int kthermal_new(const char *sysfs_root, struct kthermal **out);
void kthermal_free(struct kthermal *t);

/* Keeps the zones above a trip in the file name of the state directory
 * dirfd (statedir.h; the descriptor is copied), rewritten when they
 * change, and reads what the last keventd left there: kthermal_scan()
 * then gives a zone that was above a trip and is cool now its normal
 * (flagged synthetic), and no second high to a zone still above the same
 * trips.  0, or -errno (nothing is read; kstatedir_strerror()). */
int kthermal_remember(struct kthermal *t, int dirfd, const char *name);

/* Applies a trip message; *out gets the event to send, or NULL when the
 * crossing changes nothing a rule can see (a trip already known crossed,
 * a trip down with others still crossed, a trip down never seen going
 * up).  0, or -errno. */
int kthermal_apply(struct kthermal *t, const struct kthermal_msg *m, uint64_t now_ns,
		   struct kevent **out, const char **why);

/* Scans every zone under the sysfs root: a zone already above one of its
 * trip points is marked and gets a high (or critical) event, appended to
 * out (up to max); a zone remembered above a trip (kthermal_remember())
 * and cool now gets a normal.  Returns how many events were made. */
size_t kthermal_scan(struct kthermal *t, uint64_t now_ns, struct kevent **out, size_t max);

struct strbuf;
/* The zones under the sysfs root, their types, trip points, and how many
 * are above a trip now: one line for keventctl status. */
void kthermal_describe(const struct kthermal *t, struct strbuf *out);

#endif
