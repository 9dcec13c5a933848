// SPDX-License-Identifier: GPL-2.0-or-later
/* Decoding the thermal family's trip-point messages. */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/thermal.h>
#include <string.h>

#include "genl-msg.h"
#include "thermal.h"

int kthermal_decode(const void *buf, size_t len, int family_id, struct kthermal_msg *m,
		    const char **why)
{
	struct kgenl_attr at[THERMAL_GENL_ATTR_TZ_TRIP_ID + 1];
	const unsigned ids[] = {THERMAL_GENL_ATTR_TZ_ID, THERMAL_GENL_ATTR_TZ_TRIP_ID,
				THERMAL_GENL_ATTR_TZ_TEMP};
	uint32_t val[THERMAL_GENL_ATTR_TZ_TRIP_ID + 1] = {0};
	/* the zone, trip and temperature attributes are numbered 2..5 */
	static const struct kgenl_shape shape = {
		.cmds = {THERMAL_GENL_EVENT_TZ_TRIP_UP, THERMAL_GENL_EVENT_TZ_TRIP_DOWN},
		.ncmds = 2,
		.max = THERMAL_GENL_ATTR_TZ_TRIP_ID};
	uint8_t cmd;

	*m = (struct kthermal_msg){.kind = KTHERMAL_OTHER};
	int rc = kgenl_decode(buf, len, family_id, &shape, &cmd, at, why);
	if (rc <= 0)
		return rc; /* an error, or other thermal news: not an event keventd maps */
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		const struct kgenl_attr *a = &at[ids[i]];
		if (!a->seen)
			continue;
		if (a->len != sizeof(uint32_t)) {
			*why = "thermal attribute is not a u32";
			return -EINVAL;
		}
		memcpy(&val[ids[i]], a->data, sizeof(uint32_t));
	}
	if (!at[THERMAL_GENL_ATTR_TZ_ID].seen || !at[THERMAL_GENL_ATTR_TZ_TRIP_ID].seen) {
		*why = "trip message without zone or trip id";
		return -EINVAL;
	}
	if (val[THERMAL_GENL_ATTR_TZ_ID] >= KTHERMAL_MAX_ZONES ||
	    val[THERMAL_GENL_ATTR_TZ_TRIP_ID] >= KTHERMAL_MAX_TRIPS) {
		*why = "zone or trip id out of range";
		return -EINVAL;
	}
	m->kind = cmd == THERMAL_GENL_EVENT_TZ_TRIP_UP ? KTHERMAL_TRIP_UP : KTHERMAL_TRIP_DOWN;
	m->zone = val[THERMAL_GENL_ATTR_TZ_ID];
	m->trip = val[THERMAL_GENL_ATTR_TZ_TRIP_ID];
	m->has_temp = at[THERMAL_GENL_ATTR_TZ_TEMP].seen;
	m->temp = (int32_t)val[THERMAL_GENL_ATTR_TZ_TEMP];
	return 0;
}
