// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Writes the binary seeds of fuzz-kernel-msg, fuzz-thermal-msg and
 * fuzz-acpi-msg: netlink messages built as tests/unit/test-kernel-msg.c,
 * test-thermal.c and test-acpi-msg.c build them, good ones and every kind
 * of bad one the decoders reject.
 *   gen-seeds tests/fuzz/corpus
 * writes tests/fuzz/corpus/kernel-msg/, thermal-msg/ and acpi-msg/.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/thermal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event.h"
#include "../nlbuild.h"

#define FAMILY	0x1d /* the family ids the fuzz targets decode with */
#define THERMAL 0x17

static char out_dir[4096];
static int failed;

static void trip(struct msg *m, int cmd, uint32_t zone, uint32_t trip_id, int32_t temp)
{
	nl_begin(m, THERMAL, cmd);
	nl_put_u32(m, THERMAL_GENL_ATTR_TZ_ID, zone);
	nl_put_u32(m, THERMAL_GENL_ATTR_TZ_TRIP_ID, trip_id);
	nl_put_u32(m, THERMAL_GENL_ATTR_TZ_TEMP, (uint32_t)temp);
}

static void event(struct msg *m, uint32_t type, const char *object, const char *signal,
		  const char *payload)
{
	nl_begin(m, FAMILY, KEVENT_CMD_EVENT);
	nl_put_u32(m, KEVENT_A_TYPE, type);
	nl_put_str(m, KEVENT_A_OBJECT, object);
	nl_put_str(m, KEVENT_A_SIGNAL, signal);
	if (payload)
		nl_put_str(m, KEVENT_A_PAYLOAD, payload);
	nl_put_u64(m, KEVENT_A_SEQNUM, 42);
	nl_put_u64(m, KEVENT_A_TIMESTAMP, 1700000000000000000ull);
}

static void save(const char *name, const struct msg *m, size_t len)
{
	char *path = NULL;
	if (asprintf(&path, "%s/%s", out_dir, name) < 0) {
		failed = 1;
		return;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, m->buf, len) != (ssize_t)len) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		failed = 1;
	}
	if (fd >= 0)
		close(fd);
	free(path);
}

/* Where save() writes next: DIR/NAME, made if missing. */
static void set_dir(const char *dir, const char *name)
{
	snprintf(out_dir, sizeof(out_dir), "%s/%s", dir, name);
	if (mkdir(out_dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "%s: %s\n", out_dir, strerror(errno));
		failed = 1;
	}
}

int main(int argc, char **argv)
{
	static const char *const types[] = {"general", "storage", "power", "fs", "hotplug"};
	struct msg m;
	char big[KEVENT_PAYLOAD_MAX + 2];
	char name[64];

	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	set_dir(argv[1], "kernel-msg");

	/* good ones */
	event(&m, KEVENT_POWER, "/org/kernel/devices/system/cpu/temperature", "high", "Cpu: 3\n");
	save("good-cpu-high", &m, m.len);
	event(&m, KEVENT_POWER, "/org/kernel/devices/system/cpu/temperature", "high", NULL);
	save("good-no-payload", &m, m.len);
	event(&m, KEVENT_POWER, "/org/kernel/devices/virtual/thermal/thermal_zone0", "critical",
	      "Zone: 0\nTrip: 1\nTripType: critical\nTemperature: 105000\n");
	save("good-thermal-payload", &m, m.len);
	event(&m, KEVENT_FS, "/org/kernel/fs/ext4/sda1", "remount-ro", "");
	save("good-empty-payload", &m, m.len);
	for (uint32_t t = 0; t <= KEVENT_TYPE_MAX; t++) {
		snprintf(name, sizeof(name), "good-type-%s", types[t]);
		event(&m, t, "/org/kernel/x", "add",
		      "Key: value\n  Spaced :  no\nDup: 1\ndup: 2\n");
		save(name, &m, m.len);
	}
	memset(big, 'a', sizeof(big));
	big[0] = '/';
	big[KEVENT_OBJECT_MAX] = '\0';
	event(&m, KEVENT_GENERAL, big, "x", NULL);
	save("good-object-max", &m, m.len);
	memset(big, 's', KEVENT_SIGNAL_MAX);
	big[KEVENT_SIGNAL_MAX] = '\0';
	event(&m, KEVENT_GENERAL, "/a", big, NULL);
	save("good-signal-max", &m, m.len);
	memset(big, 'p', sizeof(big));
	memcpy(big, "Cpu: 1\n", 7);
	big[KEVENT_PAYLOAD_MAX] = '\0';
	event(&m, KEVENT_GENERAL, "/a", "x", big);
	save("good-payload-max", &m, m.len);
	nl_begin(&m, FAMILY, KEVENT_CMD_EVENT); /* with the kernel's pad attributes */
	nl_put_u32(&m, KEVENT_A_TYPE, KEVENT_STORAGE);
	nl_put_str(&m, KEVENT_A_OBJECT, "/org/kernel/block/sda");
	nl_put_str(&m, KEVENT_A_SIGNAL, "add");
	nl_put(&m, KEVENT_A_PAD, "", 0);
	nl_put_u64(&m, KEVENT_A_SEQNUM, 1);
	nl_put(&m, KEVENT_A_PAD, "", 0);
	nl_put_u64(&m, KEVENT_A_TIMESTAMP, 2);
	nl_put_str(&m, 99, "unknown attributes are skipped");
	save("good-pad-unknown", &m, m.len);
	event(&m, KEVENT_POWER, "/a", "b", "c: d\n"); /* two messages in one buffer */
	memcpy(m.buf + m.len, m.buf, m.len);
	save("good-two-messages", &m, 2 * m.len);

	/* bad ones */
	event(&m, KEVENT_POWER, "/a", "high", "x");
	save("bad-short-header", &m, 10);
	save("bad-truncated", &m, m.len - 4);
	((struct nlmsghdr *)m.buf)->nlmsg_type = FAMILY + 1;
	save("bad-family", &m, m.len);
	nl_begin(&m, FAMILY, KEVENT_CMD_EVENT + 7);
	save("bad-command", &m, m.len);
	nl_begin(&m, FAMILY, KEVENT_CMD_EVENT);
	m.len -= 2;
	((struct nlmsghdr *)m.buf)->nlmsg_len = (uint32_t)m.len;
	save("bad-genl-header", &m, m.len);
	nl_begin(&m, FAMILY, KEVENT_CMD_EVENT);
	nl_put_u32(&m, KEVENT_A_TYPE, KEVENT_POWER);
	nl_put_str(&m, KEVENT_A_SIGNAL, "high");
	nl_put_u64(&m, KEVENT_A_SEQNUM, 1);
	nl_put_u64(&m, KEVENT_A_TIMESTAMP, 1);
	save("bad-missing-object", &m, m.len);
	event(&m, KEVENT_POWER, "/a", "high", "x");
	nl_put_str(&m, KEVENT_A_SIGNAL, "low");
	save("bad-duplicated", &m, m.len);
	nl_begin(&m, FAMILY, KEVENT_CMD_EVENT);
	nl_put_u32(&m, KEVENT_A_TYPE, KEVENT_POWER);
	nl_put(&m, KEVENT_A_OBJECT, "/abc", 4);
	nl_put_str(&m, KEVENT_A_SIGNAL, "high");
	nl_put_u64(&m, KEVENT_A_SEQNUM, 1);
	nl_put_u64(&m, KEVENT_A_TIMESTAMP, 1);
	save("bad-unterminated", &m, m.len);
	nl_begin(&m, FAMILY, KEVENT_CMD_EVENT);
	nl_put_u32(&m, KEVENT_A_TYPE, KEVENT_POWER);
	nl_put(&m, KEVENT_A_OBJECT, "/a\0b", 5);
	nl_put_str(&m, KEVENT_A_SIGNAL, "high");
	nl_put_u64(&m, KEVENT_A_SEQNUM, 1);
	nl_put_u64(&m, KEVENT_A_TIMESTAMP, 1);
	save("bad-embedded-nul", &m, m.len);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	event(&m, KEVENT_POWER, "/a", "high", big);
	save("bad-payload-oversize", &m, m.len);
	event(&m, 9, "/a", "high", NULL);
	save("bad-type", &m, m.len);
	event(&m, KEVENT_FS, "/a", "bad signal!", NULL);
	save("bad-signal", &m, m.len);
	event(&m, KEVENT_FS, "a/", "x", NULL);
	save("bad-object", &m, m.len);
	nl_begin(&m, FAMILY, KEVENT_CMD_EVENT);
	nl_put_u32(&m, KEVENT_A_TYPE, KEVENT_FS);
	nl_put_str(&m, KEVENT_A_OBJECT, "/a");
	nl_put_str(&m, KEVENT_A_SIGNAL, "x");
	nl_put_u32(&m, KEVENT_A_SEQNUM, 1);
	nl_put_u64(&m, KEVENT_A_TIMESTAMP, 1);
	save("bad-seqnum-u32", &m, m.len);
	event(&m, KEVENT_POWER, "/a", "high", "x");
	((struct nlattr *)(m.buf + m.len - NLA_ALIGN(NLA_HDRLEN + 8)))->nla_len = 200;
	save("bad-attr-bounds", &m, m.len);
	event(&m, KEVENT_POWER, "/a", "high", "x");
	((struct nlattr *)(m.buf + NLMSG_HDRLEN + GENL_HDRLEN))->nla_len = 2;
	save("bad-attr-short", &m, m.len);

	/* thermal trip messages: one message or a stream of them */
	set_dir(argv[1], "thermal-msg");
	struct msg s = {.len = 0};
	static const struct {
		const char *name;
		int cmd;
		uint32_t zone, trip;
		int32_t temp;
	} trips[] = {
		{"up-cpu-hot", THERMAL_GENL_EVENT_TZ_TRIP_UP, 0, 0, 95000},
		{"up-cpu-critical", THERMAL_GENL_EVENT_TZ_TRIP_UP, 0, 1, 105000},
		{"down-cpu-critical", THERMAL_GENL_EVENT_TZ_TRIP_DOWN, 0, 1, 99000},
		{"down-cpu-hot", THERMAL_GENL_EVENT_TZ_TRIP_DOWN, 0, 0, 85000},
		{"up-other-zone", THERMAL_GENL_EVENT_TZ_TRIP_UP, 1, 0, -5},
		{"down-other-zone", THERMAL_GENL_EVENT_TZ_TRIP_DOWN, 1, 0, 0},
		{"up-zone-without-sysfs", THERMAL_GENL_EVENT_TZ_TRIP_UP, 2, 63, 1},
		{"up-zone-max", THERMAL_GENL_EVENT_TZ_TRIP_UP, 1023, 0, 1},
		{"bad-zone-range", THERMAL_GENL_EVENT_TZ_TRIP_UP, 1024, 0, 1},
		{"bad-trip-range", THERMAL_GENL_EVENT_TZ_TRIP_UP, 0, 64, 1},
		{"other-trip-change", THERMAL_GENL_EVENT_TZ_TRIP_CHANGE, 0, 0, 1},
	};
	for (size_t i = 0; i < sizeof(trips) / sizeof(trips[0]); i++) {
		trip(&m, trips[i].cmd, trips[i].zone, trips[i].trip, trips[i].temp);
		save(trips[i].name, &m, m.len);
		if (i < 6) { /* the first six, in order, as one stream */
			memcpy(s.buf + s.len, m.buf, m.len);
			s.len += m.len;
		}
	}
	save("stream-up-down", &s, s.len);
	nl_begin(&m, THERMAL, THERMAL_GENL_EVENT_TZ_TRIP_UP); /* temperature from sysfs */
	nl_put_u32(&m, THERMAL_GENL_ATTR_TZ_ID, 0);
	nl_put_u32(&m, THERMAL_GENL_ATTR_TZ_TRIP_ID, 0);
	save("up-without-temp", &m, m.len);
	nl_begin(&m, THERMAL, THERMAL_GENL_EVENT_TZ_TRIP_UP);
	nl_put_u32(&m, THERMAL_GENL_ATTR_TZ_TRIP_ID, 0);
	save("bad-no-zone", &m, m.len);
	trip(&m, THERMAL_GENL_EVENT_TZ_TRIP_UP, 0, 0, 1);
	nl_put_u32(&m, THERMAL_GENL_ATTR_TZ_ID, 1);
	save("bad-duplicated", &m, m.len);
	nl_begin(&m, THERMAL, THERMAL_GENL_EVENT_TZ_TRIP_UP);
	nl_put_u64(&m, THERMAL_GENL_ATTR_TZ_ID, 0);
	nl_put_u32(&m, THERMAL_GENL_ATTR_TZ_TRIP_ID, 0);
	save("bad-not-u32", &m, m.len);
	trip(&m, THERMAL_GENL_EVENT_TZ_TRIP_UP, 0, 0, 1);
	((struct nlmsghdr *)m.buf)->nlmsg_type = THERMAL + 1;
	save("bad-family", &m, m.len);
	trip(&m, THERMAL_GENL_EVENT_TZ_TRIP_UP, 0, 0, 1);
	save("bad-truncated", &m, m.len - 4);
	trip(&m, THERMAL_GENL_EVENT_TZ_TRIP_UP, 0, 0, 1);
	((struct nlattr *)(m.buf + NLMSG_HDRLEN + GENL_HDRLEN))->nla_len = 100;
	save("bad-attr-bounds", &m, m.len);

	/* ACPI events: struct acpi_genl_event in the attribute */
	set_dir(argv[1], "acpi-msg");
	static const struct {
		const char *name, *cls, *bus;
		uint32_t type, data;
		size_t len;
	} acpi[] = {
		{"power-button", "button/power", "PBTN", 0x80, 1, 44},
		{"lid", "button/lid", "LID0", 0x80, 1, 44},
		{"ac-online", "ac_adapter", "ACPI0003:00", 0x80, 1, 44},
		{"ac-offline", "ac_adapter", "ACPI0003:00", 0x80, 0, 44},
		{"battery", "battery", "PNP0C0A:00", 0x80, 1, 44},
		{"other", "processor", "", 0x81, 0, 44},
		{"bad-short", "button/power", "PBTN", 0x80, 1, 40},
		{"bad-class", "button/\npower", "PBTN", 0x80, 1, 44},
	};
	for (size_t i = 0; i < sizeof(acpi) / sizeof(acpi[0]); i++) {
		char ev[44] = {0};
		memcpy(ev, acpi[i].cls, strlen(acpi[i].cls));
		memcpy(ev + 20, acpi[i].bus, strlen(acpi[i].bus));
		memcpy(ev + 36, &acpi[i].type, 4);
		memcpy(ev + 40, &acpi[i].data, 4);
		nl_begin(&m, THERMAL, 1);
		nl_put(&m, 1, ev, acpi[i].len);
		save(acpi[i].name, &m, m.len);
	}
	return failed;
}
