// SPDX-License-Identifier: GPL-2.0-or-later
/* Mapping uevents to events: type by subsystem, object, signal, payload,
 * and the hotplug environment with the forbidden names filtered out. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "uevent-map.h"

static struct kevent *map(char **props, size_t n)
{
	struct kevent *ev = NULL;
	const char *why = NULL;
	if (kuevent_map(props, n, 7, &ev, &why) < 0)
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
	assert_true(has_env(ev, "DEVNAME=/dev/sda"));
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
	char *no_action[] = {"DEVPATH=/devices/x"};
	assert_int_equal(kuevent_map(no_action, 1, 0, &ev, &why), -EINVAL);
	char *no_devpath[] = {"ACTION=add"};
	assert_int_equal(kuevent_map(no_devpath, 1, 0, &ev, &why), -EINVAL);
	char *relative[] = {"ACTION=add", "DEVPATH=devices/x"};
	assert_int_equal(kuevent_map(relative, 2, 0, &ev, &why), -EINVAL);
	char *bad_action[] = {"ACTION=add now", "DEVPATH=/devices/x"};
	assert_int_equal(kuevent_map(bad_action, 2, 0, &ev, &why), -EINVAL);
	assert_non_null(strstr(why, "signal"));
	assert_null(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_types_by_subsystem),
		cmocka_unit_test(test_block_add),
		cmocka_unit_test(test_newline_in_value_cannot_forge_payload_lines),
		cmocka_unit_test(test_rejects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
