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

#define FAMILY 0x1d

struct msg {
	char buf[8192] __attribute__((aligned(4)));
	size_t len;
};

static void begin(struct msg *m, int type, int cmd)
{
	memset(m, 0, sizeof(*m));
	struct nlmsghdr *nlh = (struct nlmsghdr *)m->buf;
	nlh->nlmsg_type = (uint16_t)type;
	struct genlmsghdr *gh = (struct genlmsghdr *)(m->buf + NLMSG_HDRLEN);
	gh->cmd = (uint8_t)cmd;
	gh->version = KEVENT_GENL_VERSION;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
	nlh->nlmsg_len = (uint32_t)m->len;
}

static void put(struct msg *m, int type, const void *data, size_t len)
{
	struct nlattr *na = (struct nlattr *)(m->buf + m->len);
	na->nla_type = (uint16_t)type;
	na->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy(m->buf + m->len + NLA_HDRLEN, data, len);
	m->len += NLA_ALIGN(NLA_HDRLEN + len);
	((struct nlmsghdr *)m->buf)->nlmsg_len = (uint32_t)m->len;
}

static void put_str(struct msg *m, int type, const char *s)
{
	put(m, type, s, strlen(s) + 1);
}

static void put_u32(struct msg *m, int type, uint32_t v)
{
	put(m, type, &v, sizeof(v));
}

static void put_u64(struct msg *m, int type, uint64_t v)
{
	put(m, type, &v, sizeof(v));
}

/* A complete, valid event message. */
static void good(struct msg *m, const char *payload)
{
	begin(m, FAMILY, KEVENT_CMD_EVENT);
	put_u32(m, KEVENT_A_TYPE, KEVENT_POWER);
	put_str(m, KEVENT_A_OBJECT, "/org/kernel/devices/system/cpu/temperature");
	put_str(m, KEVENT_A_SIGNAL, "high");
	if (payload)
		put_str(m, KEVENT_A_PAYLOAD, payload);
	put_u64(m, KEVENT_A_SEQNUM, 42);
	put_u64(m, KEVENT_A_TIMESTAMP, 1700000000000000000ull);
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

	begin(&m, FAMILY, KEVENT_CMD_EVENT + 7);
	expect_reject(&m, m.len, "command");

	begin(&m, FAMILY, KEVENT_CMD_EVENT);
	put_u32(&m, KEVENT_A_TYPE, KEVENT_POWER);
	put_str(&m, KEVENT_A_SIGNAL, "high");
	put_u64(&m, KEVENT_A_SEQNUM, 1);
	put_u64(&m, KEVENT_A_TIMESTAMP, 1);
	expect_reject(&m, m.len, "missing object");

	good(&m, "x");
	put_str(&m, KEVENT_A_SIGNAL, "low"); /* a second signal */
	expect_reject(&m, m.len, "duplicated");

	begin(&m, FAMILY, KEVENT_CMD_EVENT);
	put_u32(&m, KEVENT_A_TYPE, KEVENT_POWER);
	put(&m, KEVENT_A_OBJECT, "/abc", 4); /* no NUL */
	put_str(&m, KEVENT_A_SIGNAL, "high");
	put_u64(&m, KEVENT_A_SEQNUM, 1);
	put_u64(&m, KEVENT_A_TIMESTAMP, 1);
	expect_reject(&m, m.len, "NUL-terminated");

	begin(&m, FAMILY, KEVENT_CMD_EVENT);
	put_u32(&m, KEVENT_A_TYPE, KEVENT_POWER);
	put(&m, KEVENT_A_OBJECT, "/a\0b", 5); /* embedded NUL */
	put_str(&m, KEVENT_A_SIGNAL, "high");
	put_u64(&m, KEVENT_A_SEQNUM, 1);
	put_u64(&m, KEVENT_A_TIMESTAMP, 1);
	expect_reject(&m, m.len, "NUL-terminated");

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	good(&m, big);
	expect_reject(&m, m.len, "payload attribute longer");

	begin(&m, FAMILY, KEVENT_CMD_EVENT);
	put_u32(&m, KEVENT_A_TYPE, 9);
	put_str(&m, KEVENT_A_OBJECT, "/a");
	put_str(&m, KEVENT_A_SIGNAL, "high");
	put_u64(&m, KEVENT_A_SEQNUM, 1);
	put_u64(&m, KEVENT_A_TIMESTAMP, 1);
	expect_reject(&m, m.len, "type");

	begin(&m, FAMILY, KEVENT_CMD_EVENT);
	put_u32(&m, KEVENT_A_TYPE, KEVENT_FS);
	put_str(&m, KEVENT_A_OBJECT, "/a");
	put_str(&m, KEVENT_A_SIGNAL, "bad signal!");
	put_u64(&m, KEVENT_A_SEQNUM, 1);
	put_u64(&m, KEVENT_A_TIMESTAMP, 1);
	expect_reject(&m, m.len, "signal");

	begin(&m, FAMILY, KEVENT_CMD_EVENT);
	put_u32(&m, KEVENT_A_TYPE, KEVENT_FS);
	put_str(&m, KEVENT_A_OBJECT, "/a");
	put_str(&m, KEVENT_A_SIGNAL, "x");
	put_u32(&m, KEVENT_A_SEQNUM, 1); /* u32 where a u64 belongs */
	put_u64(&m, KEVENT_A_TIMESTAMP, 1);
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
