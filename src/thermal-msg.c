// SPDX-License-Identifier: GPL-2.0-or-later
/* Decoding the thermal family's trip-point messages. */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/thermal.h>
#include <string.h>

#include "thermal.h"

int kthermal_decode(const void *buf, size_t len, int family_id, struct kthermal_msg *m,
		    const char **why)
{
	const struct nlmsghdr *nlh = buf;
	bool seen[THERMAL_GENL_ATTR_MAX + 1] = {false};
	uint32_t val[THERMAL_GENL_ATTR_MAX + 1] = {0};

	*m = (struct kthermal_msg){.kind = KTHERMAL_OTHER};
	if (len < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > len) {
		*why = "truncated netlink message";
		return -EBADMSG;
	}
	if (nlh->nlmsg_type != family_id) {
		*why = "message not of the thermal family";
		return -EINVAL;
	}
	size_t body = nlh->nlmsg_len - NLMSG_HDRLEN;
	if (body < GENL_HDRLEN) {
		*why = "truncated generic netlink header";
		return -EBADMSG;
	}
	const struct genlmsghdr *gh = (const struct genlmsghdr *)((const char *)buf + NLMSG_HDRLEN);
	if (gh->cmd != THERMAL_GENL_EVENT_TZ_TRIP_UP && gh->cmd != THERMAL_GENL_EVENT_TZ_TRIP_DOWN)
		return 0; /* other thermal news: not an event keventd maps */
	const char *p = (const char *)gh + GENL_HDRLEN;
	size_t left = body - GENL_HDRLEN;
	while (left >= NLA_HDRLEN) {
		const struct nlattr *na = (const struct nlattr *)p;
		if (na->nla_len < NLA_HDRLEN || na->nla_len > left) {
			*why = "attribute length out of bounds";
			return -EBADMSG;
		}
		unsigned type = na->nla_type & NLA_TYPE_MASK;
		if (type == THERMAL_GENL_ATTR_TZ_ID || type == THERMAL_GENL_ATTR_TZ_TRIP_ID ||
		    type == THERMAL_GENL_ATTR_TZ_TEMP) {
			if (seen[type]) {
				*why = "duplicated attribute";
				return -EINVAL;
			}
			if (na->nla_len != NLA_HDRLEN + sizeof(uint32_t)) {
				*why = "thermal attribute is not a u32";
				return -EINVAL;
			}
			seen[type] = true;
			memcpy(&val[type], p + NLA_HDRLEN, sizeof(uint32_t));
		}
		size_t step = NLA_ALIGN(na->nla_len);
		if (step >= left)
			break;
		p += step;
		left -= step;
	}
	if (!seen[THERMAL_GENL_ATTR_TZ_ID] || !seen[THERMAL_GENL_ATTR_TZ_TRIP_ID]) {
		*why = "trip message without zone or trip id";
		return -EINVAL;
	}
	if (val[THERMAL_GENL_ATTR_TZ_ID] >= KTHERMAL_MAX_ZONES ||
	    val[THERMAL_GENL_ATTR_TZ_TRIP_ID] >= KTHERMAL_MAX_TRIPS) {
		*why = "zone or trip id out of range";
		return -EINVAL;
	}
	m->kind = gh->cmd == THERMAL_GENL_EVENT_TZ_TRIP_UP ? KTHERMAL_TRIP_UP : KTHERMAL_TRIP_DOWN;
	m->zone = val[THERMAL_GENL_ATTR_TZ_ID];
	m->trip = val[THERMAL_GENL_ATTR_TZ_TRIP_ID];
	m->has_temp = seen[THERMAL_GENL_ATTR_TZ_TEMP];
	m->temp = (int32_t)val[THERMAL_GENL_ATTR_TZ_TEMP];
	return 0;
}
