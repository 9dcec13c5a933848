// SPDX-License-Identifier: GPL-2.0-or-later
/* The input source's mapping (input-map.h). */
#include "input-map.h"

#include <errno.h>
#include <linux/input-event-codes.h>

#include "util.h"

/* keventd.rules(5) and docs/sources.md list these, and only these. */
/* clang-format off */
const struct kinput_code kinput_codes[] = {
	{EV_KEY, KEY_POWER, "power", "KEY_POWER"},
	{EV_KEY, KEY_SLEEP, "sleep", "KEY_SLEEP"},
	{EV_KEY, KEY_SUSPEND, "suspend", "KEY_SUSPEND"},
	{EV_KEY, KEY_WAKEUP, "wakeup", "KEY_WAKEUP"},
	{EV_KEY, KEY_BATTERY, "battery", "KEY_BATTERY"},
	{EV_KEY, KEY_BRIGHTNESSUP, "brightnessup", "KEY_BRIGHTNESSUP"},
	{EV_KEY, KEY_BRIGHTNESSDOWN, "brightnessdown", "KEY_BRIGHTNESSDOWN"},
	{EV_KEY, KEY_MUTE, "mute", "KEY_MUTE"},
	{EV_KEY, KEY_VOLUMEUP, "volumeup", "KEY_VOLUMEUP"},
	{EV_KEY, KEY_VOLUMEDOWN, "volumedown", "KEY_VOLUMEDOWN"},
	{EV_KEY, KEY_MICMUTE, "micmute", "KEY_MICMUTE"},
	{EV_SW, SW_LID, "lid", "SW_LID"},
	{EV_SW, SW_TABLET_MODE, "tablet_mode", "SW_TABLET_MODE"},
	{EV_SW, SW_DOCK, "dock", "SW_DOCK"},
	{EV_SW, SW_HEADPHONE_INSERT, "headphone_insert", "SW_HEADPHONE_INSERT"},
};
/* clang-format on */
const size_t kinput_n_codes = ARRAY_SIZE(kinput_codes);

const struct kinput_code *kinput_code_find(unsigned type, unsigned code)
{
	for (size_t i = 0; i < kinput_n_codes; i++)
		if (kinput_codes[i].type == type && kinput_codes[i].code == code)
			return &kinput_codes[i];
	return NULL;
}

/* s as a payload value: one line of printable ASCII. */
static void put_clean(struct strbuf *sb, const char *s)
{
	for (; *s; s++)
		strbuf_putc(sb, *s >= ' ' && *s <= '~' ? *s : '?');
}

int kinput_event(unsigned type, unsigned code, int value, bool initial, const char *devnode,
		 const char *name, uint64_t seqnum, uint64_t timestamp, struct kevent **out,
		 const char **why)
{
	*out = NULL;
	/* Decided on the numbers alone: nothing of an unlisted code is
	 * formatted, copied or kept. */
	const struct kinput_code *c = kinput_code_find(type, code);
	if (!c)
		return 0;
	const char *signal;
	if (type == EV_KEY) {
		if (initial || (value != 0 && value != 1))
			return 0; /* autorepeat (2), or not an edge */
		signal = value ? "press" : "release";
	} else {
		signal = value ? "on" : "off";
	}

	_cleanup_strbuf_ struct strbuf object = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf payload = STRBUF_INIT;
	strbuf_printf(&object, "%s%s", type == EV_KEY ? KINPUT_KEY_PREFIX : KINPUT_SWITCH_PREFIX,
		      c->name);
	strbuf_puts(&payload, "Device: ");
	put_clean(&payload, devnode ? devnode : "");
	strbuf_puts(&payload, "\nName: ");
	put_clean(&payload, name ? name : "");
	strbuf_printf(&payload, "\nCode: %s\n%s", c->code_name, initial ? "Initial: yes\n" : "");
	if (object.oom || payload.oom)
		return -ENOMEM;
	return kevent_new(KEVENT_POWER, object.buf, signal, payload.buf, KEVENT_SOURCE_INPUT,
			  seqnum, timestamp, NULL, 0, out, why);
}
