// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The thermal source: the stock kernel's "thermal" Generic Netlink trip
 * messages.  The input is a stream of netlink messages, each decoded with
 * kthermal_decode() and applied to one zone state (kthermal_apply()) over a
 * small fake /sys/class/thermal.  The events that come out are checked
 * against a model of the crossed trips: a high (or critical) once per trip
 * crossed upward, a normal only when a zone's last crossed trip goes down.
 */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "thermal.h"
#include "util.h"

#define FAMILY	     0x17 /* as tests/unit/test-thermal.c */
#define MAX_INPUT    (16 * 1024)
#define MAX_MESSAGES 64

static void put_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "we");
	FUZZ_CHECK(f);
	fputs(text, f);
	fclose(f);
}

/* A CPU zone with a hot and a critical trip, a zone that is not a CPU's with
 * an unprintable type, and a zone without any attributes.  Created once per
 * process, under /tmp; removed at exit. */
static char root[64];
static char zones[3][96];

static void remove_sysfs(void)
{
	static const char *const files[] = {"type", "temp", "trip_point_0_temp",
					    "trip_point_0_type", "trip_point_1_type"};
	for (size_t z = 0; z < 3; z++) {
		for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
			char path[512];
			snprintf(path, sizeof(path), "%s/%s", zones[z], files[i]);
			unlink(path);
		}
		rmdir(zones[z]);
	}
	rmdir(root);
}

static const char *fake_sysfs(void)
{
	if (root[0])
		return root;
	snprintf(root, sizeof(root), "/tmp/keventd-fuzz-thermal.XXXXXX");
	FUZZ_CHECK(mkdtemp(root));
	for (size_t z = 0; z < 3; z++) {
		snprintf(zones[z], sizeof(zones[z]), "%s/thermal_zone%zu", root, z);
		FUZZ_CHECK(mkdir(zones[z], 0755) == 0);
	}
	put_file(zones[0], "type", "x86_pkg_temp\n");
	put_file(zones[0], "temp", "95000\n");
	put_file(zones[0], "trip_point_0_temp", "90000\n");
	put_file(zones[0], "trip_point_0_type", "hot\n");
	put_file(zones[0], "trip_point_1_type", "critical\n");
	put_file(zones[1], "type", "wifi\x01\xff\x7f\n");
	put_file(zones[1], "temp", "not a number\n");
	put_file(zones[1], "trip_point_0_type", "a trip type longer than thirty-two bytes\n");
	atexit(remove_sysfs);
	return root;
}

static void check_event(const struct kevent *ev, const struct kthermal_msg *m, bool critical)
{
	const char *why;
	FUZZ_CHECK(kevent_check((int)ev->type, ev->object, ev->signal, ev->payload, &why) == 0);
	FUZZ_CHECK(ev->type == KEVENT_POWER && ev->source == KEVENT_SOURCE_THERMAL);
	if (m->kind == KTHERMAL_TRIP_UP)
		FUZZ_CHECK(strcmp(ev->signal, critical ? "critical" : "high") == 0);
	else
		FUZZ_CHECK(strcmp(ev->signal, "normal") == 0);
	if (m->zone == 0) {
		FUZZ_CHECK(strcmp(ev->object, KTHERMAL_CPU_OBJECT) == 0);
	} else {
		char object[128];
		snprintf(object, sizeof(object), "%s%u", KTHERMAL_ZONE_OBJECT, (unsigned)m->zone);
		FUZZ_CHECK(strcmp(ev->object, object) == 0);
	}
	char zone[16], trip[16];
	snprintf(zone, sizeof(zone), "%u", (unsigned)m->zone);
	snprintf(trip, sizeof(trip), "%u", (unsigned)m->trip);
	FUZZ_CHECK(kevent_prop(ev, "Zone") && strcmp(kevent_prop(ev, "Zone"), zone) == 0);
	FUZZ_CHECK(kevent_prop(ev, "Trip") && strcmp(kevent_prop(ev, "Trip"), trip) == 0);
	FUZZ_CHECK(kevent_prop(ev, "Temperature"));
	FUZZ_CHECK(ev->n_props == 5); /* nothing in a zone's type forges a line */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_outside_size(size, 0, MAX_INPUT))
		return 0;
	void *buf = malloc(size ? size : 1); /* aligned as a receive buffer */
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	struct kthermal *t = NULL;
	FUZZ_CHECK(kthermal_new(fake_sysfs(), &t) == 0);

	/* The model: which trips of which zone are crossed. */
	static uint64_t crossed[KTHERMAL_MAX_ZONES];
	memset(crossed, 0, sizeof(crossed));

	size_t off = 0;
	for (unsigned i = 0; i < MAX_MESSAGES && size - off >= NLMSG_HDRLEN; i++) {
		const char *p = (const char *)buf + off;
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)p;
		struct kthermal_msg m;
		const char *why = NULL;
		int rc = kthermal_decode(p, size - off, FAMILY, &m, &why);
		if (rc == -EBADMSG &&
		    (nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > size - off)) {
			FUZZ_CHECK(why);
			break; /* no message boundary to go on from */
		}
		FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -EBADMSG);
		if (rc == 0 && m.kind != KTHERMAL_OTHER) {
			FUZZ_CHECK(m.zone < KTHERMAL_MAX_ZONES && m.trip < KTHERMAL_MAX_TRIPS);
			uint64_t bit = 1ull << m.trip, before = crossed[m.zone];
			bool want;
			if (m.kind == KTHERMAL_TRIP_UP) {
				want = !(before & bit);
				crossed[m.zone] |= bit;
			} else {
				crossed[m.zone] &= ~bit;
				want = (before & bit) && !crossed[m.zone];
			}
			struct kevent *ev = NULL;
			rc = kthermal_apply(t, &m, 1700000000000000000ull + i, &ev, &why);
			FUZZ_CHECK(rc == 0 || rc == -ENOMEM);
			if (rc == 0) {
				FUZZ_CHECK(want == (ev != NULL));
				if (ev)
					check_event(ev, &m, m.zone == 0 && m.trip == 1);
			}
			kevent_free(ev);
		} else if (rc < 0) {
			FUZZ_CHECK(why);
		}
		size_t step = NLMSG_ALIGN(nlh->nlmsg_len);
		if (step == 0 || step >= size - off)
			break;
		off += step;
	}
	kthermal_free(t);
	free(buf);
	return 0;
}
