// SPDX-License-Identifier: GPL-2.0-or-later
/* Decoding kevent netlink messages: good ones, and every way to be bad. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <linux/genetlink.h>

#include "kernel-msg.h"
#include "../nlbuild.h"

#define FAMILY 0x1d

/* A complete, valid event message. */
static void good(struct msg *m, const char *payload)
{
	nl_begin(m, FAMILY, KEVENT_CMD_EVENT);
	nl_put_u32(m, KEVENT_A_TYPE, KEVENT_POWER);
	nl_put_str(m, KEVENT_A_OBJECT, "/org/kernel/devices/system/cpu/temperature");
	nl_put_str(m, KEVENT_A_SIGNAL, "high");
	if (payload)
		nl_put_str(m, KEVENT_A_PAYLOAD, payload);
	nl_put_u64(m, KEVENT_A_SEQNUM, 42);
	nl_put_u64(m, KEVENT_A_TIMESTAMP, 1700000000000000000ull);
}

static void test_good_message(void **state)
{
	(void)state;
	struct msg m;
	good(&m, "Cpu: 3\n");
	struct kevent *ev = NULL;
	const char *why = NULL;
	assert_int_equal(kkernel_decode(m.buf, m.len, FAMILY, &ev, &why), 0);
	assert_int_equal(ev->type, KEVENT_POWER);
	assert_string_equal(ev->object, "/org/kernel/devices/system/cpu/temperature");
	assert_string_equal(ev->signal, "high");
	assert_string_equal(ev->payload, "Cpu: 3\n");
	assert_string_equal(kevent_prop(ev, "cpu"), "3");
	assert_int_equal(ev->seqnum, 42);
	assert_int_equal(ev->source, KEVENT_SOURCE_KERNEL);
	kevent_free(ev);
}

static void test_payload_is_optional(void **state)
{
	(void)state;
	struct msg m;
	good(&m, NULL);
	struct kevent *ev = NULL;
	const char *why = NULL;
	assert_int_equal(kkernel_decode(m.buf, m.len, FAMILY, &ev, &why), 0);
	assert_string_equal(ev->payload, "");
	kevent_free(ev);
}

static void expect_reject(struct msg *m, size_t len, const char *why_part)
{
	struct kevent *ev = NULL;
	const char *why = NULL;
	assert_true(kkernel_decode(m->buf, len, FAMILY, &ev, &why) < 0);
	assert_null(ev);
	assert_non_null(why);
	if (!strstr(why, why_part))
		fail_msg("reason \"%s\" does not mention \"%s\"", why, why_part);
}

static void test_rejects(void **state)
{
	(void)state;
	struct msg m;
	char big[KEVENT_PAYLOAD_MAX + 2];

	good(&m, "x");
	expect_reject(&m, 10, "truncated"); /* shorter than a header */
	good(&m, "x");
	expect_reject(&m, m.len - 4, "truncated"); /* nlmsg_len beyond the data */

	good(&m, "x");
	((struct nlmsghdr *)m.buf)->nlmsg_type = FAMILY + 1;
	expect_reject(&m, m.len, "family");

	nl_begin(&m, FAMILY, KEVENT_CMD_EVENT + 7);
	expect_reject(&m, m.len, "command");

	nl_begin(&m, FAMILY, KEVENT_CMD_EVENT);
	nl_put_u32(&m, KEVENT_A_TYPE, KEVENT_POWER);
	nl_put_str(&m, KEVENT_A_SIGNAL, "high");
	nl_put_u64(&m, KEVENT_A_SEQNUM, 1);
	nl_put_u64(&m, KEVENT_A_TIMESTAMP, 1);
	expect_reject(&m, m.len, "missing object");

	good(&m, "x");
	nl_put_str(&m, KEVENT_A_SIGNAL, "low"); /* a second signal */
	expect_reject(&m, m.len, "duplicated");

	nl_begin(&m, FAMILY, KEVENT_CMD_EVENT);
	nl_put_u32(&m, KEVENT_A_TYPE, KEVENT_POWER);
	nl_put(&m, KEVENT_A_OBJECT, "/abc", 4); /* no NUL */
	nl_put_str(&m, KEVENT_A_SIGNAL, "high");
	nl_put_u64(&m, KEVENT_A_SEQNUM, 1);
	nl_put_u64(&m, KEVENT_A_TIMESTAMP, 1);
	expect_reject(&m, m.len, "NUL-terminated");

	nl_begin(&m, FAMILY, KEVENT_CMD_EVENT);
	nl_put_u32(&m, KEVENT_A_TYPE, KEVENT_POWER);
	nl_put(&m, KEVENT_A_OBJECT, "/a\0b", 5); /* embedded NUL */
	nl_put_str(&m, KEVENT_A_SIGNAL, "high");
	nl_put_u64(&m, KEVENT_A_SEQNUM, 1);
	nl_put_u64(&m, KEVENT_A_TIMESTAMP, 1);
	expect_reject(&m, m.len, "NUL-terminated");

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	good(&m, big);
	expect_reject(&m, m.len, "payload attribute longer");

	nl_begin(&m, FAMILY, KEVENT_CMD_EVENT);
	nl_put_u32(&m, KEVENT_A_TYPE, 9);
	nl_put_str(&m, KEVENT_A_OBJECT, "/a");
	nl_put_str(&m, KEVENT_A_SIGNAL, "high");
	nl_put_u64(&m, KEVENT_A_SEQNUM, 1);
	nl_put_u64(&m, KEVENT_A_TIMESTAMP, 1);
	expect_reject(&m, m.len, "type");

	nl_begin(&m, FAMILY, KEVENT_CMD_EVENT);
	nl_put_u32(&m, KEVENT_A_TYPE, KEVENT_FS);
	nl_put_str(&m, KEVENT_A_OBJECT, "/a");
	nl_put_str(&m, KEVENT_A_SIGNAL, "bad signal!");
	nl_put_u64(&m, KEVENT_A_SEQNUM, 1);
	nl_put_u64(&m, KEVENT_A_TIMESTAMP, 1);
	expect_reject(&m, m.len, "signal");

	nl_begin(&m, FAMILY, KEVENT_CMD_EVENT);
	nl_put_u32(&m, KEVENT_A_TYPE, KEVENT_FS);
	nl_put_str(&m, KEVENT_A_OBJECT, "/a");
	nl_put_str(&m, KEVENT_A_SIGNAL, "x");
	nl_put_u32(&m, KEVENT_A_SEQNUM, 1); /* u32 where a u64 belongs */
	nl_put_u64(&m, KEVENT_A_TIMESTAMP, 1);
	expect_reject(&m, m.len, "seqnum");

	/* an attribute whose length runs past the message */
	good(&m, "x");
	struct nlattr *last = (struct nlattr *)(m.buf + m.len - NLA_ALIGN(NLA_HDRLEN + 8));
	last->nla_len = 200;
	expect_reject(&m, m.len, "out of bounds");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_message),
		cmocka_unit_test(test_payload_is_optional),
		cmocka_unit_test(test_rejects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
