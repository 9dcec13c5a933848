// SPDX-License-Identifier: GPL-2.0-or-later
/* The input source's mapping: the keys and switches keventd reports, the
 * event a rule sees of each, and every other code dropped with nothing made
 * of it (docs/sources.md). */
#include <linux/input-event-codes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "input-map.h"

#define DEV  "/dev/input/event3"
#define NAME "Power Button"

struct map_case {
	unsigned type, code;
	int value;
	bool initial;
	const char *object, *signal, *code_name;
};

/* Every listed key and switch, each way. */
/* clang-format off */
static const struct map_case map_cases[] = {
	{EV_KEY, KEY_POWER, 1, false, "/org/kernel/input/key/power", "press", "KEY_POWER"},
	{EV_KEY, KEY_POWER, 0, false, "/org/kernel/input/key/power", "release", "KEY_POWER"},
	{EV_KEY, KEY_SLEEP, 1, false, "/org/kernel/input/key/sleep", "press", "KEY_SLEEP"},
	{EV_KEY, KEY_SLEEP, 0, false, "/org/kernel/input/key/sleep", "release", "KEY_SLEEP"},
	{EV_KEY, KEY_SUSPEND, 1, false, "/org/kernel/input/key/suspend", "press", "KEY_SUSPEND"},
	{EV_KEY, KEY_SUSPEND, 0, false, "/org/kernel/input/key/suspend", "release", "KEY_SUSPEND"},
	{EV_KEY, KEY_WAKEUP, 1, false, "/org/kernel/input/key/wakeup", "press", "KEY_WAKEUP"},
	{EV_KEY, KEY_WAKEUP, 0, false, "/org/kernel/input/key/wakeup", "release", "KEY_WAKEUP"},
	{EV_KEY, KEY_BATTERY, 1, false, "/org/kernel/input/key/battery", "press", "KEY_BATTERY"},
	{EV_KEY, KEY_BATTERY, 0, false, "/org/kernel/input/key/battery", "release", "KEY_BATTERY"},
	{EV_KEY, KEY_BRIGHTNESSUP, 1, false, "/org/kernel/input/key/brightnessup", "press", "KEY_BRIGHTNESSUP"},
	{EV_KEY, KEY_BRIGHTNESSUP, 0, false, "/org/kernel/input/key/brightnessup", "release", "KEY_BRIGHTNESSUP"},
	{EV_KEY, KEY_BRIGHTNESSDOWN, 1, false, "/org/kernel/input/key/brightnessdown", "press", "KEY_BRIGHTNESSDOWN"},
	{EV_KEY, KEY_BRIGHTNESSDOWN, 0, false, "/org/kernel/input/key/brightnessdown", "release", "KEY_BRIGHTNESSDOWN"},
	{EV_KEY, KEY_MUTE, 1, false, "/org/kernel/input/key/mute", "press", "KEY_MUTE"},
	{EV_KEY, KEY_MUTE, 0, false, "/org/kernel/input/key/mute", "release", "KEY_MUTE"},
	{EV_KEY, KEY_VOLUMEUP, 1, false, "/org/kernel/input/key/volumeup", "press", "KEY_VOLUMEUP"},
	{EV_KEY, KEY_VOLUMEUP, 0, false, "/org/kernel/input/key/volumeup", "release", "KEY_VOLUMEUP"},
	{EV_KEY, KEY_VOLUMEDOWN, 1, false, "/org/kernel/input/key/volumedown", "press", "KEY_VOLUMEDOWN"},
	{EV_KEY, KEY_VOLUMEDOWN, 0, false, "/org/kernel/input/key/volumedown", "release", "KEY_VOLUMEDOWN"},
	{EV_KEY, KEY_MICMUTE, 1, false, "/org/kernel/input/key/micmute", "press", "KEY_MICMUTE"},
	{EV_KEY, KEY_MICMUTE, 0, false, "/org/kernel/input/key/micmute", "release", "KEY_MICMUTE"},
	{EV_SW, SW_LID, 1, false, "/org/kernel/input/switch/lid", "on", "SW_LID"},
	{EV_SW, SW_LID, 0, false, "/org/kernel/input/switch/lid", "off", "SW_LID"},
	{EV_SW, SW_LID, 1, true, "/org/kernel/input/switch/lid", "on", "SW_LID"},
	{EV_SW, SW_LID, 0, true, "/org/kernel/input/switch/lid", "off", "SW_LID"},
	{EV_SW, SW_TABLET_MODE, 1, false, "/org/kernel/input/switch/tablet_mode", "on", "SW_TABLET_MODE"},
	{EV_SW, SW_TABLET_MODE, 0, true, "/org/kernel/input/switch/tablet_mode", "off", "SW_TABLET_MODE"},
	{EV_SW, SW_DOCK, 1, false, "/org/kernel/input/switch/dock", "on", "SW_DOCK"},
	{EV_SW, SW_DOCK, 0, false, "/org/kernel/input/switch/dock", "off", "SW_DOCK"},
	{EV_SW, SW_HEADPHONE_INSERT, 1, true, "/org/kernel/input/switch/headphone_insert", "on", "SW_HEADPHONE_INSERT"},
	{EV_SW, SW_HEADPHONE_INSERT, 0, false, "/org/kernel/input/switch/headphone_insert", "off", "SW_HEADPHONE_INSERT"},
};
/* clang-format on */

static void test_map(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(map_cases) / sizeof(map_cases[0]); i++) {
		const struct map_case *c = &map_cases[i];
		struct kevent *ev = NULL;
		const char *why = NULL;
		print_message("case: %s %s%s\n", c->code_name, c->signal,
			      c->initial ? " initial" : "");
		assert_int_equal(kinput_event(c->type, c->code, c->value, c->initial, DEV, NAME, 7,
					      9, &ev, &why),
				 0);
		assert_non_null(ev);
		assert_int_equal(ev->type, KEVENT_POWER);
		assert_int_equal(ev->source, KEVENT_SOURCE_INPUT);
		assert_int_equal(ev->seqnum, 7);
		assert_int_equal(ev->timestamp, 9);
		assert_string_equal(ev->object, c->object);
		assert_string_equal(ev->signal, c->signal);
		assert_string_equal(kevent_prop(ev, "Device"), DEV);
		assert_string_equal(kevent_prop(ev, "Name"), NAME);
		assert_string_equal(kevent_prop(ev, "Code"), c->code_name);
		if (c->initial)
			assert_string_equal(kevent_prop(ev, "Initial"), "yes");
		else
			assert_null(kevent_prop(ev, "Initial"));
		assert_int_equal(ev->n_props, c->initial ? 4 : 3);
		kevent_free(ev);
	}
	/* the table is exactly the cases' codes */
	for (size_t k = 0; k < kinput_n_codes; k++) {
		size_t seen = 0;
		for (size_t i = 0; i < sizeof(map_cases) / sizeof(map_cases[0]); i++)
			seen += map_cases[i].type == kinput_codes[k].type &&
				map_cases[i].code == kinput_codes[k].code;
		assert_true(seen >= 2);
	}
	assert_int_equal(kinput_n_codes, 15);
}

struct drop_case {
	const char *what;
	unsigned type, code;
	int value;
	bool initial;
};

/* Nothing at all of these. */
/* clang-format off */
static const struct drop_case drop_cases[] = {
	{"KEY_A pressed", EV_KEY, KEY_A, 1, false},
	{"KEY_A released", EV_KEY, KEY_A, 0, false},
	{"KEY_A repeated", EV_KEY, KEY_A, 2, false},
	{"KEY_ENTER", EV_KEY, KEY_ENTER, 1, false},
	{"KEY_1", EV_KEY, KEY_1, 1, false},
	{"KEY_LEFTCTRL", EV_KEY, KEY_LEFTCTRL, 1, false},
	{"KEY_ESC", EV_KEY, KEY_ESC, 0, false},
	{"KEY_F1", EV_KEY, KEY_F1, 1, false},
	{"KEY_PLAYPAUSE", EV_KEY, KEY_PLAYPAUSE, 1, false},
	{"BTN_LEFT", EV_KEY, BTN_LEFT, 1, false},
	{"KEY_MAX", EV_KEY, KEY_MAX, 1, false},
	{"KEY_POWER autorepeat", EV_KEY, KEY_POWER, 2, false},
	{"KEY_VOLUMEUP autorepeat", EV_KEY, KEY_VOLUMEUP, 2, false},
	{"KEY_POWER value 3", EV_KEY, KEY_POWER, 3, false},
	{"KEY_POWER value -1", EV_KEY, KEY_POWER, -1, false},
	{"KEY_POWER as an initial state", EV_KEY, KEY_POWER, 1, true},
	{"SW_RFKILL_ALL", EV_SW, SW_RFKILL_ALL, 1, false},
	{"SW_MICROPHONE_INSERT", EV_SW, SW_MICROPHONE_INSERT, 1, true},
	{"SW_LINEOUT_INSERT", EV_SW, SW_LINEOUT_INSERT, 0, false},
	{"SW_CAMERA_LENS_COVER", EV_SW, SW_CAMERA_LENS_COVER, 1, false},
	{"KEY_POWER's number as EV_MSC", EV_MSC, KEY_POWER, 1, false},
	{"KEY_POWER's number as EV_ABS", EV_ABS, KEY_POWER, 1, false},
	{"SW_LID's number as EV_KEY (KEY_RESERVED)", EV_KEY, SW_LID, 1, false},
	{"KEY_MUTE's number as EV_SW", EV_SW, KEY_MUTE, 1, false},
	{"EV_SYN", EV_SYN, SYN_REPORT, 0, false},
	{"EV_MSC MSC_SCAN", EV_MSC, MSC_SCAN, 0x1e, false},
	{"EV_REL", EV_REL, REL_X, 5, false},
	{"EV_LED", EV_LED, LED_CAPSL, 1, false},
};
/* clang-format on */

static void test_dropped(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(drop_cases) / sizeof(drop_cases[0]); i++) {
		const struct drop_case *c = &drop_cases[i];
		struct kevent *ev = (struct kevent *)&ev; /* must be cleared */
		const char *why = NULL;
		print_message("case: %s\n", c->what);
		assert_int_equal(kinput_event(c->type, c->code, c->value, c->initial, DEV, NAME, 7,
					      9, &ev, &why),
				 0);
		assert_null(ev);
		assert_null(why);
	}
	/* and no code between the listed ones is found */
	for (unsigned code = 0; code <= KEY_MAX; code++) {
		const struct kinput_code *k = kinput_code_find(EV_KEY, code);
		if (k)
			assert_int_equal(k->code, code);
		if (code == KEY_A || code == KEY_Z || code == KEY_SPACE)
			assert_null(k);
	}
}

/* A device's name is the device's to choose (uinput): it cannot add a
 * payload line or bring in a control character. */
static void test_name(void **state)
{
	(void)state;
	struct kevent *ev = NULL;
	const char *why = NULL;
	assert_int_equal(kinput_event(EV_SW, SW_LID, 1, false, DEV, "Lid\nCode: KEY_A\x1b[0m\x7f",
				      7, 9, &ev, &why),
			 0);
	assert_string_equal(kevent_prop(ev, "Name"), "Lid?Code: KEY_A?[0m?");
	assert_string_equal(kevent_prop(ev, "Code"), "SW_LID");
	assert_int_equal(ev->n_props, 3);
	kevent_free(ev);
	assert_int_equal(kinput_event(EV_KEY, KEY_POWER, 1, false, NULL, NULL, 7, 9, &ev, &why), 0);
	assert_string_equal(ev->payload, "Device: \nName: \nCode: KEY_POWER\n");
	kevent_free(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map),
		cmocka_unit_test(test_dropped),
		cmocka_unit_test(test_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
