// SPDX-License-Identifier: GPL-2.0-or-later
/* What keventd publishes to a broker: the topic of an event (its bytes that
 * MQTT forbids or reserves encoded) and its message (a record plus host). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mqtt.h"
#include "testutil.h"

static void test_topic(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		int type;
		const char *object, *signal, *want;
	} cases[] = {
		{KEVENT_POWER, "/org/kernel/devices/system/cpu/temperature", "high", "p/power/high/org/kernel/devices/system/cpu/temperature"},
		{KEVENT_GENERAL, "/", "x", "p/general/x/"},
		{KEVENT_STORAGE, "/block/sda+1", "add", "p/storage/add/block/sda%2B1"},
		{KEVENT_FS, "/a#b", "a.b:c-d_e", "p/fs/a.b:c-d_e/a%23b"},
		{KEVENT_HOTPLUG, "/100%", "add", "p/hotplug/add/100%25"},
		{KEVENT_GENERAL, "/a b/c", "x", "p/general/x/a b/c"},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kevent *ev = tu_event(cases[i].type, cases[i].object, cases[i].signal, "");
		struct strbuf sb = STRBUF_INIT;
		kmqtt_topic("p", ev, &sb);
		assert_string_equal(strbuf_str(&sb), cases[i].want);
		strbuf_release(&sb);
		kevent_free(ev);
	}
}

static void test_message(void **state)
{
	(void)state;
	struct kevent *ev = tu_event(KEVENT_POWER, "/cpu", "high", "Cpu: 1");
	struct strbuf sb = STRBUF_INIT;
	kmqtt_message(ev, "host\"1", &sb);
	assert_string_equal(
		strbuf_str(&sb),
		"{\"seqnum\":1,\"timestamp\":2,\"source\":\"socket\",\"type\":\"power\","
		"\"object\":\"/cpu\",\"signal\":\"high\",\"payload\":\"Cpu: 1\","
		"\"properties\":{\"Cpu\":\"1\"},\"host\":\"host\\\"1\"}");
	strbuf_release(&sb);
	kevent_free(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topic),
		cmocka_unit_test(test_message),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
