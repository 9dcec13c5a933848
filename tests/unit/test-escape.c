// SPDX-License-Identifier: GPL-2.0-or-later
/* The escaping of names into objects and payloads (strbuf_add_name()):
 * two different names never give one text. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"
#include "util.h"

static char *named(const char *s, size_t n, bool ascii)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_add_name(&sb, s, n, ascii);
	assert_false(sb.oom);
	return strbuf_steal(&sb);
}

/* Names that the escaping of keventd before this one made one text of:
 * a byte it escaped, and the escape written out by hand. */
static void test_name_pairs(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		const char *a, *b, *a_is;
	} pairs[] = {
		{"a b\n c", "a b\\012c", "a b\\n c"},
		{"a b\nc", "a b\\nc", "a b\\nc"},
		{"tab\t", "tab\\t", "tab\\t"},
		{"esc\x1b[31m", "esc\\x1b[31m", "esc\\x1b[31m"},
		{"bad\xff", "bad\\xff", "bad\\xff"},
		{"\\", "\\\\", "\\\\"},
		{"C1 \xc2\x9b", "C1 \\xc2\\x9b", "C1 \\xc2\\x9b"},
		{"caf\xc3\xa9", "caf\\xc3\\xa9", "caf\xc3\xa9"},
	};
	/* clang-format on */
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		for (int ascii = 0; ascii < 2; ascii++) {
			_cleanup_free_ char *a = named(pairs[i].a, strlen(pairs[i].a), ascii);
			_cleanup_free_ char *b = named(pairs[i].b, strlen(pairs[i].b), ascii);
			if (strcmp(a, b) == 0)
				fail_msg("pair %zu (ascii %d): both give \"%s\"", i, ascii, a);
			if (!ascii)
				assert_string_equal(a, pairs[i].a_is);
			/* an object: printable ASCII alone */
			for (const char *p = a; ascii && *p; p++)
				assert_true(*p >= 0x20 && *p < 0x7f);
		}
	}
	_cleanup_free_ char *o = named("caf\xc3\xa9 \\", 7, true);
	assert_string_equal(o, "caf\\xc3\\xa9 \\\\");
}

/* Over random bytes: the escaping is undone by str_unescape(), so it is
 * injective; and a cut by escaped_cut() is a whole escaped prefix. */
static void test_name_roundtrip(void **state)
{
	(void)state;
	static const char alphabet[] = {'\\',	'x',	'n',	't',	'0',	'f',
					'\n',	'\t',	'\x1b', '\x7f', '\xc2', '\x9b',
					'\xc3', '\xa9', '\xff', 'a'};
	unsigned seed = 20261206;
	for (int round = 0; round < 20000; round++) {
		char in[24];
		size_t n = (size_t)(rand_r(&seed) % (int)sizeof(in));
		for (size_t i = 0; i < n; i++)
			in[i] = round % 2 ? (char)(rand_r(&seed) & 0xff)
					  : alphabet[rand_r(&seed) % (int)sizeof(alphabet)];
		for (int ascii = 0; ascii < 2; ascii++) {
			_cleanup_free_ char *e = named(in, n, ascii);
			_cleanup_free_ char *back = NULL;
			size_t len = 0;
			assert_int_equal(str_unescape(e, strlen(e), &back, &len), 0);
			assert_int_equal(len, n);
			assert_memory_equal(back, in, n);
			size_t max = (size_t)(rand_r(&seed) % (int)(strlen(e) + 1));
			size_t cut = escaped_cut(e, strlen(e), max);
			assert_true(cut <= max);
			_cleanup_free_ char *part = NULL;
			assert_int_equal(str_unescape(e, cut, &part, &len), 0);
			assert_memory_equal(part, in, len); /* a prefix of the name */
		}
	}
	char *out = NULL;
	size_t len;
	assert_int_equal(str_unescape("a\\", 2, &out, &len), -EINVAL);
	assert_int_equal(str_unescape("\\x4", 3, &out, &len), -EINVAL);
	assert_int_equal(str_unescape("\\q", 2, &out, &len), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_pairs),
		cmocka_unit_test(test_name_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
