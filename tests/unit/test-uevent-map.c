// SPDX-License-Identifier: GPL-2.0-or-later
/* Mapping uevents to events: type by subsystem, object, signal, payload,
 * and the hotplug environment with the forbidden names filtered out. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "uevent-map.h"

static struct kevent *map(char **props, size_t n)
{
	struct kevent *ev = NULL;
	const char *why = NULL;
	unsigned truncated = 0;
	if (kuevent_map(props, n, 7, &ev, &truncated, &why) < 0)
		fail_msg("rejected: %s", why);
	return ev;
}

static bool has_env(const struct kevent *ev, const char *entry)
{
	for (size_t i = 0; i < ev->n_uevent_env; i++)
		if (strcmp(ev->uevent_env[i], entry) == 0)
			return true;
	return false;
}

static void test_types_by_subsystem(void **state)
{
	(void)state;
	static const struct {
		const char *subsystem;
		int type;
	} cases[] = {
		{"SUBSYSTEM=block", KEVENT_STORAGE}, {"SUBSYSTEM=power_supply", KEVENT_POWER},
		{"SUBSYSTEM=net", KEVENT_HOTPLUG},   {"SUBSYSTEM=usb", KEVENT_HOTPLUG},
		{"X=no-subsystem", KEVENT_HOTPLUG},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *props[] = {"ACTION=add", "DEVPATH=/devices/x", (char *)cases[i].subsystem};
		struct kevent *ev = map(props, 3);
		assert_int_equal(ev->type, cases[i].type);
		kevent_free(ev);
	}
}

static void test_block_add(void **state)
{
	(void)state;
	char *props[] = {
		"ACTION=add",	   "DEVPATH=/devices/pci0000:00/0000:00:1f.2/ata1/host0/block/sda",
		"SUBSYSTEM=block", "DEVNAME=/dev/sda",
		"DEVTYPE=disk",	   "SEQNUM=1234",
		"PATH=/evil",	   "LD_PRELOAD=/evil.so",
		"HOME=/root",	   "KEVENT_TYPE=forged",
	};
	struct kevent *ev = map(props, sizeof(props) / sizeof(props[0]));
	assert_int_equal(ev->type, KEVENT_STORAGE);
	assert_string_equal(ev->object,
			    "/org/kernel/devices/pci0000:00/0000:00:1f.2/ata1/host0/block/sda");
	assert_string_equal(ev->signal, "add");
	assert_int_equal(ev->seqnum, 1234);
	assert_int_equal(ev->source, KEVENT_SOURCE_UDEV);
	assert_string_equal(kevent_prop(ev, "DEVNAME"), "/dev/sda");
	assert_true(has_env(ev, "ACTION=add"));
	assert_true(has_env(ev, "DEVNAME=sda")); /* the kernel's own, as /sbin/hotplug had it */
	assert_false(has_env(ev, "DEVNAME=/dev/sda"));
	assert_true(has_env(ev, "SEQNUM=1234"));
	assert_false(has_env(ev, "PATH=/evil"));
	assert_false(has_env(ev, "LD_PRELOAD=/evil.so"));
	assert_false(has_env(ev, "HOME=/root"));
	assert_false(has_env(ev, "KEVENT_TYPE=forged"));
	kevent_free(ev);
}

static void test_newline_in_value_cannot_forge_payload_lines(void **state)
{
	(void)state;
	char *props[] = {"ACTION=change", "DEVPATH=/devices/x", "ID_MODEL=disk\nCpu: 9"};
	struct kevent *ev = map(props, 3);
	assert_null(kevent_prop(ev, "Cpu"));
	assert_null(strstr(ev->payload, "Cpu"));
	kevent_free(ev);
}

static void test_rejects(void **state)
{
	(void)state;
	struct kevent *ev = NULL;
	const char *why = NULL;
	unsigned truncated = 0;
	char *no_action[] = {"DEVPATH=/devices/x"};
	assert_int_equal(kuevent_map(no_action, 1, 0, &ev, &truncated, &why), -EINVAL);
	char *no_devpath[] = {"ACTION=add"};
	assert_int_equal(kuevent_map(no_devpath, 1, 0, &ev, &truncated, &why), -EINVAL);
	char *relative[] = {"ACTION=add", "DEVPATH=devices/x"};
	assert_int_equal(kuevent_map(relative, 2, 0, &ev, &truncated, &why), -EINVAL);
	char *bad_action[] = {"ACTION=add now", "DEVPATH=/devices/x"};
	assert_int_equal(kuevent_map(bad_action, 2, 0, &ev, &truncated, &why), -EINVAL);
	assert_non_null(strstr(why, "signal"));
	assert_null(ev);
}

/* A value of n bytes of c, as a "NAME=value" property. */
static char *prop_of(const char *name, size_t n, char c)
{
	char *p = malloc(strlen(name) + 1 + n + 1);
	assert_non_null(p);
	size_t k = strlen(name);
	memcpy(p, name, k);
	p[k] = '=';
	memset(p + k + 1, c, n);
	p[k + 1 + n] = '\0';
	return p;
}

static void test_devname_kernel_style(void **state)
{
	(void)state;
	/* from the kernel's monitor: DEVNAME relative to /dev */
	char *props[] = {"ACTION=add", "DEVPATH=/devices/virtual/block/loop0", "SUBSYSTEM=block",
			 "DEVNAME=loop0"};
	struct kevent *ev = map(props, 4);
	assert_true(has_env(ev, "DEVNAME=loop0"));
	assert_string_equal(kevent_prop(ev, "DEVNAME"), "/dev/loop0");
	kevent_free(ev);
	/* a device in a subdirectory of /dev */
	char *usb[] = {"ACTION=add", "DEVPATH=/devices/pci0000:00/usb1/1-1", "SUBSYSTEM=usb",
		       "DEVNAME=/dev/bus/usb/001/002"};
	ev = map(usb, 4);
	assert_true(has_env(ev, "DEVNAME=bus/usb/001/002"));
	assert_string_equal(kevent_prop(ev, "DEVNAME"), "/dev/bus/usb/001/002");
	kevent_free(ev);
}

/* A USB stick whose label, serial and links make the payload too long:
 * the event is still made, under the limit, the longest values cut and
 * named, everything a rule matches on intact. */
static void test_long_uevent_is_cut_not_rejected(void **state)
{
	(void)state;
	char *props[] = {
		"ACTION=add",
		"DEVPATH=/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/"
		"6:0:0:0/block/sdb",
		"SUBSYSTEM=block",
		"DEVNAME=/dev/sdb",
		"DEVTYPE=disk",
		prop_of("ID_FS_LABEL", 255, 'L'),
		prop_of("ID_FS_LABEL_ENC", 1020, 'E'),
		prop_of("ID_SERIAL", 200, 'S'),
		prop_of("ID_SERIAL_SHORT", 126, 's'),
		prop_of("DEVLINKS", 2500, 'D'),
		"ID_BUS=usb",
		"SEQNUM=77",
	};
	size_t n = sizeof(props) / sizeof(props[0]);
	struct kevent *ev = NULL;
	const char *why = NULL;
	unsigned truncated = 0;
	assert_int_equal(kuevent_map(props, n, 7, &ev, &truncated, &why), 0);
	assert_true(strlen(ev->payload) <= KEVENT_PAYLOAD_MAX);
	assert_true(truncated >= 1);
	assert_int_equal(ev->type, KEVENT_STORAGE);
	assert_string_equal(ev->signal, "add");
	assert_string_equal(kevent_prop(ev, "ID_BUS"), "usb");
	assert_string_equal(kevent_prop(ev, "DEVTYPE"), "disk");
	assert_string_equal(kevent_prop(ev, "ID_SERIAL_SHORT"),
			    props[8] + strlen("ID_SERIAL_SHORT="));
	assert_string_equal(kevent_prop(ev, "ID_FS_LABEL"), props[5] + strlen("ID_FS_LABEL="));
	/* the longest ones lost their end, and the Truncated line names them */
	const char *links = kevent_prop(ev, "DEVLINKS");
	assert_non_null(links);
	assert_true(strlen(links) < 2500 && strspn(links, "D") == strlen(links));
	const char *cut = kevent_prop(ev, "Truncated");
	assert_non_null(cut);
	assert_non_null(strstr(cut, "DEVLINKS"));
	assert_null(strstr(cut, "ID_SERIAL_SHORT"));
	/* the hotplug environment keeps the whole values */
	assert_true(has_env(ev, props[9]));
	kevent_free(ev);
	for (size_t i = 5; i <= 9; i++)
		free(props[i]);
}

/* Cutting stops at a character: a value of two-byte UTF-8 characters is
 * cut to a whole number of them. */
static void test_cut_keeps_utf8_whole(void **state)
{
	(void)state;
	char *label = malloc(strlen("ID_FS_LABEL=") + 2 * 2100 + 1);
	assert_non_null(label);
	strcpy(label, "ID_FS_LABEL=");
	for (size_t i = 0; i < 2100; i++)
		strcat(label, "\xc3\xa9");
	char *props[] = {"ACTION=add", "DEVPATH=/devices/x", label};
	struct kevent *ev = NULL;
	const char *why = NULL;
	unsigned truncated = 0;
	assert_int_equal(kuevent_map(props, 3, 7, &ev, &truncated, &why), 0);
	assert_int_equal(truncated, 1);
	const char *v = kevent_prop(ev, "ID_FS_LABEL");
	assert_int_equal(strlen(v) % 2, 0);
	assert_true(strlen(v) > 3000);
	kevent_free(ev);
	free(label);
}

static void test_short_uevent_is_not_cut(void **state)
{
	(void)state;
	char *props[] = {"ACTION=add", "DEVPATH=/devices/x", "ID_SERIAL=abc"};
	struct kevent *ev = NULL;
	const char *why = NULL;
	unsigned truncated = 9;
	assert_int_equal(kuevent_map(props, 3, 7, &ev, &truncated, &why), 0);
	assert_int_equal(truncated, 0);
	assert_null(kevent_prop(ev, "Truncated"));
	kevent_free(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_types_by_subsystem),
		cmocka_unit_test(test_block_add),
		cmocka_unit_test(test_newline_in_value_cannot_forge_payload_lines),
		cmocka_unit_test(test_rejects),
		cmocka_unit_test(test_devname_kernel_style),
		cmocka_unit_test(test_long_uevent_is_cut_not_rejected),
		cmocka_unit_test(test_cut_keeps_utf8_whole),
		cmocka_unit_test(test_short_uevent_is_not_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
