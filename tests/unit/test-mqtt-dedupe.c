// SPDX-License-Identifier: GPL-2.0-or-later
/* The messages of the source mqtt already taken: a message delivered again
 * is told from a new one by (host, source, instance, seqnum), within a
 * window of numbers per stream, for a bounded number of streams, and the
 * table comes back whole from its file or not at all. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mqtt-dedupe-file.h"
#include "mqtt-dedupe.h"
#include "testutil.h"

#define K  KEVENT_SOURCE_KERNEL
#define S  KEVENT_SOURCE_SOCKET
#define I1 0x1111111111111111ull
#define I2 0x2222222222222222ull

struct step {
	const char *host;
	enum kevent_source source;
	uint64_t instance;
	uint64_t seqnum;
	int want; /* 1: a duplicate */
};

/* clang-format off */
static const struct {
	const char *name;
	struct step steps[12];
} windows[] = {
	{"the same message twice", {{"h1", S, I1, 5, 0}, {"h1", S, I1, 5, 1}}},
	{"another instance, the same number", {{"h1", S, I1, 5, 0}, {"h1", S, I2, 5, 0}, {"h1", S, I2, 5, 1}}},
	{"another source, the same number", {{"h1", S, I1, 5, 0}, {"h1", K, I1, 5, 0}}},
	{"another host, the same number", {{"h1", S, I1, 5, 0}, {"h2", S, I1, 5, 0}}},
	{"no instance: never a duplicate", {{"h1", S, 0, 5, 0}, {"h1", S, 0, 5, 0}}},
	{"out of order, then each again", {{"h1", S, I1, 10, 0}, {"h1", S, I1, 8, 0}, {"h1", S, I1, 9, 0}, {"h1", S, I1, 8, 1}, {"h1", S, I1, 9, 1}, {"h1", S, I1, 10, 1}, {"h1", S, I1, 7, 0}}},
	{"a gap filled late", {{"h1", S, I1, 1, 0}, {"h1", S, I1, 100, 0}, {"h1", S, I1, 50, 0}, {"h1", S, I1, 50, 1}, {"h1", S, I1, 1, 1}}},
	{"the window's last number", {{"h1", S, I1, 1, 0}, {"h1", S, I1, 256, 0}, {"h1", S, I1, 1, 1}}},
	{"below the window: taken as new", {{"h1", S, I1, 1, 0}, {"h1", S, I1, 257, 0}, {"h1", S, I1, 1, 0}, {"h1", S, I1, 257, 1}}},
	{"a jump across words keeps the bits", {{"h1", S, I1, 3, 0}, {"h1", S, I1, 70, 0}, {"h1", S, I1, 200, 0}, {"h1", S, I1, 3, 1}, {"h1", S, I1, 70, 1}, {"h1", S, I1, 4, 0}}},
	{"a jump past the window forgets", {{"h1", S, I1, 3, 0}, {"h1", S, I1, 1000, 0}, {"h1", S, I1, 999, 0}, {"h1", S, I1, 3, 0}}},
	{"number 0", {{"h1", S, I1, 0, 0}, {"h1", S, I1, 0, 1}, {"h1", S, I1, 1, 0}, {"h1", S, I1, 0, 1}}},
};
/* clang-format on */

static void test_windows(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(windows); i++) {
		struct kmqtt_dedupe *d = NULL;
		assert_int_equal(kmqtt_dedupe_new(&d), 0);
		for (size_t j = 0; j < ARRAY_SIZE(windows[i].steps) && windows[i].steps[j].host;
		     j++) {
			const struct step *s = &windows[i].steps[j];
			struct kmqtt_key k = {s->host, s->source, s->instance, s->seqnum};
			int got = kmqtt_dedupe_seen(d, &k);
			if (got != s->want)
				fail_msg("%s: step %zu (seqnum %llu): %d, not %d", windows[i].name,
					 j, (unsigned long long)s->seqnum, got, s->want);
		}
		kmqtt_dedupe_free(d);
	}
}

/* The least recently used stream is forgotten first; using one keeps it. */
static void test_bounded(void **state)
{
	(void)state;
	struct kmqtt_dedupe *d = NULL;
	assert_int_equal(kmqtt_dedupe_new(&d), 0);
	struct kmqtt_key first = {"first", S, I1, 1};
	assert_int_equal(kmqtt_dedupe_seen(d, &first), 0);
	struct kmqtt_key second = {"second", S, I1, 1};
	assert_int_equal(kmqtt_dedupe_seen(d, &second), 0);
	for (uint64_t i = 1; i <= KMQTT_DEDUPE_STREAMS - 2; i++) {
		struct kmqtt_key k = {"many", S, i, 1};
		assert_int_equal(kmqtt_dedupe_seen(d, &k), 0);
	}
	assert_int_equal(kmqtt_dedupe_streams(d), KMQTT_DEDUPE_STREAMS);
	assert_int_equal(kmqtt_dedupe_seen(d, &first), 1); /* used: now the newest */
	struct kmqtt_key more = {"more", S, I1, 1};
	assert_int_equal(kmqtt_dedupe_seen(d, &more), 0); /* pushes out "second" */
	assert_int_equal(kmqtt_dedupe_streams(d), KMQTT_DEDUPE_STREAMS);
	assert_int_equal(kmqtt_dedupe_seen(d, &first), 1);
	assert_int_equal(kmqtt_dedupe_seen(d, &second), 0); /* forgotten: new again */
	kmqtt_dedupe_free(d);
}

static struct kmqtt_dedupe *filled(void)
{
	struct kmqtt_dedupe *d = NULL;
	assert_int_equal(kmqtt_dedupe_new(&d), 0);
	static const struct kmqtt_key keys[] = {
		{"h1", S, I1, 5},
		{"h1", S, I1, 300},
		{"h1", S, I1, 200},
		{"h2.example", K, I2, 9},
	};
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		assert_int_equal(kmqtt_dedupe_seen(d, &keys[i]), 0);
	return d;
}

/* What a new table read from the file says: the same as the old one. */
static void test_file_roundtrip(void **state)
{
	(void)state;
	struct kmqtt_dedupe *d = filled();
	assert_true(kmqtt_dedupe_dirty(d));
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	kmqtt_dedupe_encode(d, &a);
	struct kmqtt_dedupe *e = NULL;
	const char *why = NULL;
	assert_int_equal(kmqtt_dedupe_new(&e), 0);
	assert_int_equal(kmqtt_dedupe_decode(e, a.buf, a.len, &why), 2);
	assert_false(kmqtt_dedupe_dirty(e));
	kmqtt_dedupe_encode(e, &b);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.buf, b.buf, a.len);
	struct kmqtt_key again = {"h1", S, I1, 200}, older = {"h1", S, I1, 5};
	assert_int_equal(kmqtt_dedupe_seen(e, &again), 1);
	assert_int_equal(kmqtt_dedupe_seen(e, &older), 0); /* 295 below: out of the window */
	struct kmqtt_key other = {"h2.example", K, I2, 9};
	assert_int_equal(kmqtt_dedupe_seen(e, &other), 1);
	strbuf_release(&a);
	strbuf_release(&b);
	kmqtt_dedupe_free(d);
	kmqtt_dedupe_free(e);
}

/* A file that is not whole or not well formed is refused, saying why. */
static void test_file_bad(void **state)
{
	(void)state;
	struct kmqtt_dedupe *d = filled();
	struct strbuf good = STRBUF_INIT;
	kmqtt_dedupe_encode(d, &good);
	kmqtt_dedupe_free(d);
	/* clang-format off */
	static const struct {
		const char *name;
		size_t at;	/* a byte to change (SIZE_MAX: none) */
		int cut;	/* bytes to cut off the end (negative: a byte added) */
		const char *why;
	} cases[] = {
		{"empty", SIZE_MAX, 9999, "shorter than its header"},
		{"another magic", 0, 0, "not a table of messages taken, or of another version"},
		{"another version", 4, 0, "not a table of messages taken, or of another version"},
		{"a flipped byte", 20, 0, "damaged"},
		{"cut short", SIZE_MAX, 1, "damaged"},
		{"a byte more", SIZE_MAX, -1, "damaged"},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char buf[4096];
		size_t len = good.len;
		memcpy(buf, good.buf, len);
		if (cases[i].cut < 0)
			buf[len++] = 0;
		else
			len = (size_t)cases[i].cut > len ? 0 : len - (size_t)cases[i].cut;
		if (cases[i].at != SIZE_MAX)
			buf[cases[i].at] ^= 0x40;
		struct kmqtt_dedupe *e = NULL;
		const char *why = NULL;
		assert_int_equal(kmqtt_dedupe_new(&e), 0);
		int rc = kmqtt_dedupe_decode(e, buf, len, &why);
		if (rc != -EINVAL || !why || strcmp(why, cases[i].why) != 0)
			fail_msg("%s: rc %d, why %s", cases[i].name, rc, why ? why : "(none)");
		kmqtt_dedupe_free(e);
	}
	/* an older keventd's file, whose hosts were the messages' own word
	 * (one host could have filled another's streams): not read */
	good.buf[4] = 1;
	struct kmqtt_dedupe *e = NULL;
	const char *why = NULL;
	assert_int_equal(kmqtt_dedupe_new(&e), 0);
	assert_int_equal(kmqtt_dedupe_decode(e, good.buf, good.len, &why), -EINVAL);
	assert_string_equal(why, "written by an older keventd, which took a message's host on "
				 "its word: not read");
	assert_int_equal(kmqtt_dedupe_streams(e), 0);
	kmqtt_dedupe_free(e);
	strbuf_release(&good);
}

/* Saved in the state directory and read back by the next keventd; no file
 * is no table, and not an error. */
static void test_save_load(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	_cleanup_close_ int dfd = tu_dirfd(dir);
	struct kmqtt_dedupe *d = filled();
	const char *why = NULL;
	assert_int_equal(kmqtt_dedupe_load(d, dfd, &why), 0);
	assert_int_equal(kmqtt_dedupe_save(d, dfd), 0);
	assert_false(kmqtt_dedupe_dirty(d));
	_cleanup_free_ char *path = tu_printf("%s/" KMQTT_DEDUPE_FILE, dir);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	struct kmqtt_dedupe *e = NULL;
	assert_int_equal(kmqtt_dedupe_new(&e), 0);
	assert_int_equal(kmqtt_dedupe_load(e, dfd, &why), 2);
	struct kmqtt_key again = {"h1", S, I1, 300};
	assert_int_equal(kmqtt_dedupe_seen(e, &again), 1);
	kmqtt_dedupe_free(d);
	kmqtt_dedupe_free(e);
	tu_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_windows),	       cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_file_roundtrip), cmocka_unit_test(test_file_bad),
		cmocka_unit_test(test_save_load),
	};
	return tu_result(cmocka_run_group_tests(tests, NULL, NULL));
}
