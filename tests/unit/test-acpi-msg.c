// SPDX-License-Identifier: GPL-2.0-or-later
/* The ACPI family's events: decoding the kernel's struct acpi_genl_event,
 * and the event a rule sees (docs/sources.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "acpi-msg.h"
#include "../nlbuild.h"

#define FAMILY 0x17

/* The attribute as drivers/acpi/event.c lays it out: class[20],
 * bus_id[15], a pad byte, type, data. */
static void acpi_msg(struct msg *m, const char *cls, const char *bus, uint32_t type, uint32_t data,
		     size_t attr_len)
{
	char ev[64] = {0};
	strncpy(ev, cls, 20);
	strncpy(ev + 20, bus, 15);
	memcpy(ev + 36, &type, 4);
	memcpy(ev + 40, &data, 4);
	nl_begin(m, FAMILY, KACPI_GENL_CMD_EVENT);
	nl_put(m, KACPI_GENL_ATTR_EVENT, ev, attr_len);
}

struct map_case {
	const char *cls, *bus;
	uint32_t type, data;
	const char *object, *signal, *acpid;
};

/* clang-format off */
static const struct map_case map_cases[] = {
	{"button/power", "PBTN", 0x80, 1, "/org/kernel/acpi/button/power", "pressed", "button/power PBTN 00000080 00000001"},
	{"button/power", "LNXPWRBN:00", 0x80, 2, "/org/kernel/acpi/button/power", "pressed", "button/power LNXPWRBN:00 00000080 00000002"},
	{"button/sleep", "SBTN", 0x80, 1, "/org/kernel/acpi/button/sleep", "pressed", "button/sleep SBTN 00000080 00000001"},
	{"button/lid", "LID0", 0x80, 1, "/org/kernel/acpi/button/lid", "pressed", "button/lid LID0 00000080 00000001"},
	{"ac_adapter", "ACPI0003:00", 0x80, 1, "/org/kernel/acpi/ac_adapter", "online", "ac_adapter ACPI0003:00 00000080 00000001"},
	{"ac_adapter", "ACPI0003:00", 0x80, 0, "/org/kernel/acpi/ac_adapter", "offline", "ac_adapter ACPI0003:00 00000080 00000000"},
	{"battery", "PNP0C0A:00", 0x80, 1, "/org/kernel/acpi/battery", "change", "battery PNP0C0A:00 00000080 00000001"},
	{"video/brightnessup", "BRTUP", 0x86, 0, "/org/kernel/acpi/video/brightnessup", "0x86", "video/brightnessup BRTUP 00000086 00000000"},
	{"processor", "", 0x81, 0, "/org/kernel/acpi/processor", "0x81", "processor  00000081 00000000"},
	{"thermal_zone", "TZ00", 0x1234, 7, "/org/kernel/acpi/thermal_zone", "0x1234", "thermal_zone TZ00 00001234 00000007"},
};
/* clang-format on */

static void test_map(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(map_cases) / sizeof(map_cases[0]); i++) {
		const struct map_case *c = &map_cases[i];
		struct msg m;
		struct kacpi_msg am;
		struct kevent *ev = NULL;
		const char *why = NULL;
		acpi_msg(&m, c->cls, c->bus, c->type, c->data, KACPI_EVENT_LEN);
		assert_int_equal(kacpi_decode(m.buf, m.len, FAMILY, &am, &why), 0);
		assert_int_equal(kacpi_event(&am, 7, 9, &ev, &why), 0);
		assert_int_equal(ev->type, KEVENT_POWER);
		assert_int_equal(ev->source, KEVENT_SOURCE_ACPI);
		assert_int_equal(ev->seqnum, 7);
		assert_int_equal(ev->timestamp, 9);
		assert_string_equal(ev->object, c->object);
		assert_string_equal(ev->signal, c->signal);
		assert_string_equal(kevent_prop(ev, "Acpid"), c->acpid);
		assert_string_equal(kevent_prop(ev, "Class"), c->cls);
		if (c->bus[0])
			assert_string_equal(kevent_prop(ev, "Bus-Id"), c->bus);
		kevent_free(ev);
	}
}

static void test_payload(void **state)
{
	(void)state;
	struct msg m;
	struct kacpi_msg am;
	struct kevent *ev = NULL;
	const char *why = NULL;
	acpi_msg(&m, "button/power", "PBTN", 0x80, 1, KACPI_EVENT_LEN);
	assert_int_equal(kacpi_decode(m.buf, m.len, FAMILY, &am, &why), 0);
	assert_int_equal(kacpi_event(&am, 1, 2, &ev, &why), 0);
	assert_string_equal(ev->payload, "Class: button/power\n"
					 "Bus-Id: PBTN\n"
					 "Event: 0x00000080\n"
					 "Data: 0x00000001\n"
					 "Acpid: button/power PBTN 00000080 00000001\n");
	kevent_free(ev);
}

enum bad_kind { BAD_NONE, BAD_FAMILY, BAD_CMD, BAD_NO_ATTR, BAD_TRUNCATED };

struct bad_case {
	const char *name;
	const char *cls, *bus;
	size_t attr_len;
	enum bad_kind kind;
	const char *why;
};

static const char cls_unterminated[] = "button/powerbutton/p"; /* 20 bytes, no NUL */
static const char bus_unterminated[] = "LNXPWRBN:000000";      /* 15 bytes, no NUL */

/* clang-format off */
static const struct bad_case bad_cases[] = {
	{"another family", "button/power", "PBTN", KACPI_EVENT_LEN, BAD_FAMILY, "family"},
	{"another command", "button/power", "PBTN", KACPI_EVENT_LEN, BAD_CMD, "unknown ACPI event command"},
	{"no event attribute", "button/power", "PBTN", KACPI_EVENT_LEN, BAD_NO_ATTR, "without an event"},
	{"attribute too short", "button/power", "PBTN", KACPI_EVENT_LEN - 4, BAD_NONE, "unexpected size"},
	{"attribute too long", "button/power", "PBTN", KACPI_EVENT_LEN + 4, BAD_NONE, "unexpected size"},
	{"empty class", "", "PBTN", KACPI_EVENT_LEN, BAD_NONE, "device class"},
	{"class unterminated", cls_unterminated, "PBTN", KACPI_EVENT_LEN, BAD_NONE, "device class"},
	{"class with a newline", "button/\npower", "PBTN", KACPI_EVENT_LEN, BAD_NONE, "device class"},
	{"class with a space", "button power", "PBTN", KACPI_EVENT_LEN, BAD_NONE, "device class"},
	{"class with ESC", "button/\x1b[2J", "PBTN", KACPI_EVENT_LEN, BAD_NONE, "device class"},
	{"bus id unterminated", "button/power", bus_unterminated, KACPI_EVENT_LEN, BAD_NONE, "bus id"},
	{"bus id with a newline", "button/power", "PB\nAcpid: x", KACPI_EVENT_LEN, BAD_NONE, "bus id"},
	{"bus id not ASCII", "button/power", "PB\xc3\xa9", KACPI_EVENT_LEN, BAD_NONE, "bus id"},
	{"message truncated", "button/power", "PBTN", KACPI_EVENT_LEN, BAD_TRUNCATED, NULL},
};
/* clang-format on */

static void test_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct msg m;
		struct kacpi_msg am;
		const char *why = NULL;
		size_t len;
		char ev[64] = {0};
		memcpy(ev, c->cls, strnlen(c->cls, 20));
		memcpy(ev + 20, c->bus, strnlen(c->bus, 15));
		nl_begin(&m, c->kind == BAD_FAMILY ? FAMILY + 1 : FAMILY,
			 c->kind == BAD_CMD ? 2 : KACPI_GENL_CMD_EVENT);
		if (c->kind != BAD_NO_ATTR)
			nl_put(&m, KACPI_GENL_ATTR_EVENT, ev, c->attr_len);
		len = c->kind == BAD_TRUNCATED ? m.len - 8 : m.len;
		print_message("case: %s\n", c->name);
		assert_true(kacpi_decode(m.buf, len, FAMILY, &am, &why) < 0);
		assert_non_null(why);
		if (c->why)
			assert_non_null(strstr(why, c->why));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map),
		cmocka_unit_test(test_payload),
		cmocka_unit_test(test_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
