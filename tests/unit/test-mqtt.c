// SPDX-License-Identifier: GPL-2.0-or-later
/* What keventd publishes to a broker: the topic of an event (its bytes that
 * MQTT forbids or reserves encoded) and its message (a record plus host). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <fcntl.h>
#include <unistd.h>

#include "mqtt-spool.h"
#include "plan.h"
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

/* A message another keventd sent comes back as the event it was, of source
 * mqtt, with its host. */
static void test_decode(void **state)
{
	(void)state;
	struct kevent *ev = tu_event(KEVENT_POWER, "/cpu", "high", "Cpu: 1\nHost: forged");
	struct strbuf sb = STRBUF_INIT;
	kmqtt_message(ev, "h7.example", &sb);
	struct kevent *got = NULL;
	const char *why = NULL;
	assert_int_equal(kmqtt_decode(sb.buf, sb.len, &got, &why), 0);
	assert_int_equal(got->source, KEVENT_SOURCE_MQTT);
	assert_string_equal(got->host, "h7.example");
	assert_int_equal(got->type, KEVENT_POWER);
	assert_string_equal(got->object, "/cpu");
	assert_string_equal(got->signal, "high");
	assert_string_equal(got->payload, "Cpu: 1\nHost: forged");
	assert_int_equal(got->seqnum, 1);
	assert_int_equal(got->timestamp, 2);
	kevent_free(got);
	strbuf_release(&sb);
	kevent_free(ev);
}

/* Each kind of bad message is refused, saying why. */
static void test_decode_bad(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		const char *msg, *why;
	} cases[] = {
		{"", "truncated JSON"},
		{"not json", "not JSON"},
		{"[1,2]", "not a JSON object"},
		{"{\"type\":\"power\"", "truncated JSON"},
		{"{\"type\":\"power\",\"host\":\"h\"}", "type, object and signal are needed"},
		{"{\"type\":\"heat\",\"object\":\"/a\",\"signal\":\"s\",\"host\":\"h\"}", "unknown type"},
		{"{\"type\":\"power\",\"object\":\"a\",\"signal\":\"s\",\"host\":\"h\"}", NULL},
		{"{\"type\":\"power\",\"object\":\"/a\",\"signal\":\"s p\",\"host\":\"h\"}", NULL},
		{"{\"type\":\"power\",\"object\":\"/a\",\"signal\":\"s\"}", "no host"},
		{"{\"type\":\"power\",\"object\":\"/a\",\"signal\":\"s\",\"host\":\"a b\"}", "host is not a host name ([A-Za-z0-9._-], at most 253 bytes)"},
		{"{\"type\":\"power\",\"object\":\"/a\",\"signal\":\"s\",\"host\":7}", "no host"},
		{"{\"type\":\"power\",\"object\":\"/a\",\"signal\":\"s\",\"host\":\"-h\"}", "host is not a host name ([A-Za-z0-9._-], at most 253 bytes)"},
		{"{\"type\":\"power\",\"object\":\"/a\",\"signal\":\"s\",\"seqnum\":\"1\",\"host\":\"h\"}", "a key of the wrong type"},
		{"{\"type\":\"power\",\"object\":\"/a\",\"signal\":\"s\",\"payload_base64\":\"!!\",\"host\":\"h\"}", "payload_base64 is not base64"},
		{"{\"type\":\"power\",\"object\":\"/a\",\"signal\":\"s\",\"host\":\"h\"} x", "more after the JSON object"},
		{"{\"type\":\"power\",\"object\":\"/a\",\"signal\":\"s\",\"source\":\"nosuch\",\"host\":\"h\"}", "unknown source"},
		{"{\"type\":\"power\",\"object\":\"/a\",\"signal\":\"s\",\"payload\":5,\"host\":\"h\"}", "a key of the wrong type"},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kevent *got = NULL;
		const char *why = NULL;
		int rc = kmqtt_decode(cases[i].msg, strlen(cases[i].msg), &got, &why);
		if (rc != -EINVAL || !why || (cases[i].why && strcmp(why, cases[i].why) != 0))
			fail_msg("case %zu (%s): rc %d, why %s", i, cases[i].msg, rc,
				 why ? why : "(none)");
		assert_null(got);
	}
	/* no message at all, a NUL byte, and more than 64 KiB */
	struct kevent *got = NULL;
	const char *why = NULL;
	assert_int_equal(kmqtt_decode(NULL, 0, &got, &why), -EINVAL);
	assert_string_equal(why, "truncated JSON");
	assert_int_equal(kmqtt_decode("{\"a\":\"\0\"}", 10, &got, &why), -EINVAL);
	assert_string_equal(why, "a NUL byte in the message");
	char *big = calloc(1, KMQTT_MSG_MAX + 2);
	memset(big, ' ', KMQTT_MSG_MAX + 1);
	assert_int_equal(kmqtt_decode(big, KMQTT_MSG_MAX + 1, &got, &why), -EINVAL);
	assert_string_equal(why, "message larger than 64 KiB");
	free(big);
}

/* Another machine's event runs only rules written for it, and its handler
 * learns the host, which no payload property can forge. */
static void test_inbound_rules_and_env(void **state)
{
	(void)state;
	struct kfile *f = tu_parse("rules:\n"
				   "  - name: any\n"
				   "    match: {signal: high}\n"
				   "  - name: fleet\n"
				   "    match: {source: mqtt, signal: high}\n"
				   "  - name: not-socket\n"
				   "    match: {source: \"!socket\"}\n",
				   NULL);
	struct kevent *local = tu_event(KEVENT_POWER, "/cpu", "high", "Host: forged");
	struct kevent *remote = tu_event(KEVENT_POWER, "/cpu", "high", "Host: forged");
	const char *why = NULL;
	remote->source = KEVENT_SOURCE_MQTT;
	assert_int_equal(kevent_set_host(remote, "h7", &why), 0);
	assert_int_equal(kevent_set_host(remote, "h 7", &why), -EINVAL);
	assert_true(krule_match(&f->rules[0], local, NULL));
	assert_false(krule_match(&f->rules[1], local, NULL));
	assert_false(krule_match(&f->rules[2], local, NULL));
	struct strbuf sb = STRBUF_INIT;
	assert_false(krule_match(&f->rules[0], remote, &sb));
	assert_string_equal(strbuf_str(&sb), "source \"mqtt\" needs a rule with source: mqtt");
	strbuf_release(&sb);
	assert_true(krule_match(&f->rules[1], remote, NULL));
	assert_true(krule_match(&f->rules[2], remote, NULL));

	char **env = NULL;
	size_t n = 0;
	assert_int_equal(kplan_build_env(&f->rules[1], remote, &env, &n), 0);
	size_t hosts = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(env[i], "KEVENT_HOST=", 12) == 0) {
			assert_string_equal(env[i], "KEVENT_HOST=h7");
			hosts++;
		}
	assert_int_equal(hosts, 1);
	strv_free(env);
	/* a local event's "Host:" never becomes KEVENT_HOST either */
	assert_int_equal(kplan_build_env(&f->rules[0], local, &env, &n), 0);
	for (size_t i = 0; i < n; i++)
		assert_true(strncmp(env[i], "KEVENT_HOST=", 12) != 0);
	strv_free(env);
	kevent_free(local);
	kevent_free(remote);
	kfile_unref(f);
}

static struct kmqtt_spool *spool_open(const char *dir, uint64_t max, uint64_t *cut)
{
	struct kmqtt_spool *s = NULL;
	uint64_t c = 0;
	assert_int_equal(kmqtt_spool_open(dir, max, &s, cut ? cut : &c), 0);
	return s;
}

static void append(struct kmqtt_spool *s, unsigned i, size_t len, uint64_t *dropped)
{
	char topic[32], *msg = malloc(len + 1);
	uint64_t d = 0;
	snprintf(topic, sizeof(topic), "t/%u", i);
	memset(msg, 'a' + i % 26, len);
	msg[len] = '\0';
	assert_int_equal(kmqtt_spool_append(s, topic, msg, len, &d), 0);
	if (dropped)
		*dropped += d;
	else
		assert_int_equal(d, 0);
	free(msg);
}

/* The next message is number seq, topic "t/<i>". */
static void expect_next(struct kmqtt_spool *s, uint64_t seq, unsigned i)
{
	struct strbuf t = STRBUF_INIT, m = STRBUF_INIT;
	uint64_t got = 0;
	char want[32];
	snprintf(want, sizeof(want), "t/%u", i);
	assert_int_equal(kmqtt_spool_next(s, &t, &m, &got), 0);
	assert_int_equal(got, seq);
	assert_string_equal(strbuf_str(&t), want);
	assert_true(m.len > 0 && m.buf[0] == 'a' + (char)(i % 26));
	strbuf_release(&t);
	strbuf_release(&m);
}

static void expect_end(struct kmqtt_spool *s)
{
	struct strbuf t = STRBUF_INIT, m = STRBUF_INIT;
	uint64_t got = 0;
	assert_int_equal(kmqtt_spool_next(s, &t, &m, &got), -ENOENT);
	strbuf_release(&t);
	strbuf_release(&m);
}

/* In order, what was acknowledged forgotten, the rest there after a restart. */
static void test_spool_order_and_restart(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	_cleanup_free_ char *sp = tu_printf("%s/a/spool", dir);
	struct kmqtt_spool *s = spool_open(sp, 1 << 20, NULL);
	for (unsigned i = 0; i < 10; i++)
		append(s, i, 100, NULL);
	assert_int_equal(kmqtt_spool_pending(s), 10);
	for (unsigned i = 0; i < 7; i++)
		expect_next(s, i + 1, i);
	kmqtt_spool_ack_below(s, 6); /* 1..5 acknowledged; 6 and 7 in flight */
	assert_int_equal(kmqtt_spool_pending(s), 5);
	assert_int_equal(kmqtt_spool_cursor(s), 8);
	/* a second keventd may not share it */
	struct kmqtt_spool *other = NULL;
	uint64_t cut = 0;
	assert_int_equal(kmqtt_spool_open(sp, 1 << 20, &other, &cut), -EBUSY);
	kmqtt_spool_free(s);
	/* after a restart: 6 and 7 are sent again, then the rest */
	s = spool_open(sp, 1 << 20, NULL);
	assert_int_equal(kmqtt_spool_pending(s), 5);
	for (unsigned i = 5; i < 10; i++)
		expect_next(s, i + 1, i);
	expect_end(s);
	kmqtt_spool_ack_below(s, 11);
	assert_int_equal(kmqtt_spool_pending(s), 0);
	append(s, 10, 100, NULL); /* numbers go on */
	expect_next(s, 11, 10);
	kmqtt_spool_free(s);
	s = spool_open(sp, 1 << 20, NULL);
	assert_int_equal(kmqtt_spool_pending(s), 1);
	expect_next(s, 11, 10);
	kmqtt_spool_free(s);
	tu_rm_rf(dir);
}

/* Past the bound, the oldest go, each one not sent counted once. */
static void test_spool_bound(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	uint64_t max = 256 * 1024, dropped = 0;
	struct kmqtt_spool *s = spool_open(dir, max, NULL);
	append(s, 0, 1000, NULL);
	expect_next(s, 1, 0); /* in flight: not counted when it goes */
	for (unsigned i = 1; i < 2000; i++) {
		append(s, i, 1000, &dropped);
		assert_true(kmqtt_spool_bytes(s) <= max);
	}
	uint64_t kept = kmqtt_spool_pending(s);
	assert_true(kept > 100 && kept < 260);
	assert_int_equal(kept + dropped, 1999);
	/* the newest, in order */
	for (uint64_t i = 2000 - kept; i < 2000; i++)
		expect_next(s, i + 1, (unsigned)i);
	expect_end(s);
	/* one larger than the whole spool is dropped at once */
	dropped = 0;
	_cleanup_free_ char *big = malloc(max + 1);
	memset(big, 'x', max);
	big[max] = '\0';
	assert_int_equal(kmqtt_spool_append(s, "t/big", big, max, &dropped), 0);
	assert_int_equal(dropped, 1);
	kmqtt_spool_free(s);
	tu_rm_rf(dir);
}

/* A record torn by a crash mid-write is cut off; what came before stays. */
static void test_spool_torn(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	struct kmqtt_spool *s = spool_open(dir, 1 << 20, NULL);
	for (unsigned i = 0; i < 5; i++)
		append(s, i, 50, NULL);
	kmqtt_spool_free(s);
	_cleanup_free_ char *seg = tu_printf("%s/seg-0000000000000001", dir);
	int fd = open(seg, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "\x31\x71\x6d\x6b\x05\x00", 6), 6);
	close(fd);
	uint64_t cut = 0;
	s = spool_open(dir, 1 << 20, &cut);
	assert_int_equal(cut, 6);
	assert_int_equal(kmqtt_spool_pending(s), 5);
	for (unsigned i = 0; i < 5; i++)
		expect_next(s, i + 1, i);
	append(s, 5, 50, NULL);
	expect_next(s, 6, 5);
	kmqtt_spool_free(s);
	tu_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topic),
		cmocka_unit_test(test_message),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_decode_bad),
		cmocka_unit_test(test_inbound_rules_and_env),
		cmocka_unit_test(test_spool_order_and_restart),
		cmocka_unit_test(test_spool_bound),
		cmocka_unit_test(test_spool_torn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
