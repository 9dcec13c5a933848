// SPDX-License-Identifier: GPL-2.0-or-later
/* The event model: the limits of keventd(8), and payload "Key: value" parsing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "testutil.h"
#include "util.h"

/* A string of n copies of c after prefix. */
static char *fill(const char *prefix, char c, size_t n)
{
	size_t lp = strlen(prefix);
	char *s = malloc(lp + n + 1);
	assert_non_null(s);
	memcpy(s, prefix, lp);
	memset(s + lp, c, n);
	s[lp + n] = '\0';
	return s;
}

struct check_case {
	const char *label;
	int type;
	const char *object;  /* NULL: use object_len */
	size_t object_len;   /* "/" followed by object_len - 1 'a' */
	const char *signal;  /* NULL: use signal_len */
	size_t signal_len;   /* signal_len 'x' */
	const char *payload; /* NULL: use payload_len ('p' bytes) */
	size_t payload_len;  /* ignored when payload is set */
	bool payload_null;   /* pass NULL as payload */
	const char *why;     /* NULL: valid */
};

/* clang-format off */
static const struct check_case check_cases[] = {
	{"plain", 0, "/a", 0, "high", 0, "", 0, false, NULL},
	{"each type 4", 4, "/a", 0, "add", 0, "", 0, false, NULL},
	{"type -1", -1, "/a", 0, "add", 0, "", 0, false, "unknown event type"},
	{"type 5", 5, "/a", 0, "add", 0, "", 0, false, "unknown event type"},
	{"object without slash", 0, "a/b", 0, "add", 0, "", 0, false, "object must start with '/'"},
	{"empty object", 0, "", 0, "add", 0, "", 0, false, "object must start with '/'"},
	{"object 1024", 0, NULL, 1024, "add", 0, "", 0, false, NULL},
	{"object 1025", 0, NULL, 1025, "add", 0, "", 0, false, "object longer than 1024 bytes"},
	{"object with newline", 0, "/a\nb", 0, "add", 0, "", 0, false, "object has a character that is not printable ASCII"},
	{"object with tab", 0, "/a\tb", 0, "add", 0, "", 0, false, "object has a character that is not printable ASCII"},
	{"object with DEL", 0, "/a\x7f", 0, "add", 0, "", 0, false, "object has a character that is not printable ASCII"},
	{"object with UTF-8", 0, "/caf\xc3\xa9", 0, "add", 0, "", 0, false, "object has a character that is not printable ASCII"},
	{"object with space and symbols", 0, "/a b/~!@#$%^&*()", 0, "add", 0, "", 0, false, NULL},
	{"empty signal", 0, "/a", 0, "", 0, "", 0, false, "signal is empty"},
	{"signal 1", 0, "/a", 0, NULL, 1, "", 0, false, NULL},
	{"signal 64", 0, "/a", 0, NULL, 64, "", 0, false, NULL},
	{"signal 65", 0, "/a", 0, NULL, 65, "", 0, false, "signal longer than 64 bytes"},
	{"signal charset", 0, "/a", 0, "Az09_.:-", 0, "", 0, false, NULL},
	{"signal space", 0, "/a", 0, "a b", 0, "", 0, false, "signal has a character outside [A-Za-z0-9_.:-]"},
	{"signal slash", 0, "/a", 0, "a/b", 0, "", 0, false, "signal has a character outside [A-Za-z0-9_.:-]"},
	{"signal dollar", 0, "/a", 0, "$x", 0, "", 0, false, "signal has a character outside [A-Za-z0-9_.:-]"},
	{"payload 4000", 0, "/a", 0, "add", 0, NULL, 4000, false, NULL},
	{"payload 4001", 0, "/a", 0, "add", 0, NULL, 4001, false, "payload longer than 4000 bytes"},
	{"payload NULL", 0, "/a", 0, "add", 0, NULL, 0, true, NULL},
};
/* clang-format on */

static void test_check(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(check_cases); i++) {
		const struct check_case *c = &check_cases[i];
		char *obj = c->object ? strdup(c->object) : fill("/", 'a', c->object_len - 1);
		char *sig = c->signal ? strdup(c->signal) : fill("", 'x', c->signal_len);
		char *pl = c->payload_null ? NULL
			   : c->payload	   ? strdup(c->payload)
					   : fill("", 'p', c->payload_len);
		const char *why = NULL;
		print_message("case: %s\n", c->label);
		int rc = kevent_check(c->type, obj, sig, pl, &why);
		if (c->why) {
			assert_int_equal(rc, -EINVAL);
			assert_non_null(why);
			assert_string_equal(why, c->why);
		} else {
			assert_int_equal(rc, 0);
		}

		/* kevent_new agrees, and leaves its output alone on failure. */
		struct kevent *sentinel = (struct kevent *)&check_cases[0];
		struct kevent *ev = sentinel;
		why = NULL;
		rc = kevent_new(c->type, obj, sig, pl, KEVENT_SOURCE_KERNEL, 7, 8, NULL, 0, &ev,
				&why);
		if (c->why) {
			assert_int_equal(rc, -EINVAL);
			assert_string_equal(why, c->why);
			assert_ptr_equal(ev, sentinel);
		} else {
			assert_int_equal(rc, 0);
			assert_int_equal(ev->type, c->type);
			assert_string_equal(ev->object, obj);
			assert_string_equal(ev->signal, sig);
			assert_string_equal(ev->payload, pl ? pl : "");
			assert_int_equal(ev->seqnum, 7);
			assert_int_equal(ev->timestamp, 8);
			assert_int_equal(ev->source, KEVENT_SOURCE_KERNEL);
			kevent_free(ev);
		}
		free(obj);
		free(sig);
		free(pl);
	}
	assert_int_equal(kevent_check(0, NULL, "a", "", &(const char *){NULL}), -EINVAL);
	assert_int_equal(kevent_check(0, "/a", NULL, "", &(const char *){NULL}), -EINVAL);
}

static void test_names(void **state)
{
	(void)state;
	static const char *const types[] = {"general", "storage", "power", "fs", "hotplug"};
	for (int i = 0; i < 5; i++) {
		assert_string_equal(kevent_type_name((enum kevent_type)i), types[i]);
		assert_int_equal(kevent_type_from_name(types[i]), i);
		char num[2] = {(char)('0' + i), '\0'};
		assert_int_equal(kevent_type_from_name(num), i);
	}
	assert_int_equal(kevent_type_from_name("5"), -1);
	assert_int_equal(kevent_type_from_name("Power"), -1);
	assert_int_equal(kevent_type_from_name("22"), -1);
	assert_int_equal(kevent_type_from_name(""), -1);
	assert_string_equal(kevent_type_name((enum kevent_type)9), "unknown");

	static const char *const sources[] = {"kernel", "udev", "thermal", "socket"};
	for (int i = 0; i < 4; i++) {
		assert_string_equal(kevent_source_name((enum kevent_source)i), sources[i]);
		assert_int_equal(kevent_source_from_name(sources[i]), i);
	}
	assert_int_equal(kevent_source_from_name("Kernel"), -1);
	assert_int_equal(kevent_source_from_name(""), -1);
}

struct prop {
	const char *key, *value;
};

struct props_case {
	const char *label;
	const char *payload;
	size_t n;
	struct prop want[4];
};

/* clang-format off */
static const struct props_case props_cases[] = {
	{"empty", "", 0, {{0}}},
	{"one", "Cpu: 0", 1, {{"Cpu", "0"}}},
	{"trailing newline", "Cpu: 0\n", 1, {{"Cpu", "0"}}},
	{"two", "Cpu: 0\nTemperature: 95000\n", 2, {{"Cpu", "0"}, {"Temperature", "95000"}}},
	{"blank lines", "\n\nA: 1\n\n\nB: 2\n\n", 2, {{"A", "1"}, {"B", "2"}}},
	{"CRLF", "A: 1\r\nB: two words\r\n", 2, {{"A", "1"}, {"B", "two words"}}},
	{"blanks around value", "A:   x y \t \nB:\t\tz", 2, {{"A", "x y"}, {"B", "z"}}},
	{"no blank after colon", "A:1", 1, {{"A", "1"}}},
	{"empty value", "A:\nB:   \nC: c", 3, {{"A", ""}, {"B", ""}, {"C", "c"}}},
	{"missing colon", "just text\nA 1\nB: 2", 1, {{"B", "2"}}},
	{"space before colon", "A : 1\nB: 2", 1, {{"B", "2"}}},
	{"leading blank", " A: 1\nB: 2", 1, {{"B", "2"}}},
	{"key charset", "a.b-c_D9: v\nx/y: 1\nx y: 2\n$X: 3\n:4", 1, {{"a.b-c_D9", "v"}}},
	{"colon in value", "Time: 12:30:00", 1, {{"Time", "12:30:00"}}},
	{"duplicate: first wins", "A: 1\nA: 2\nB: 3", 2, {{"A", "1"}, {"B", "3"}}},
	{"duplicate ignoring case", "cpu: 1\nCPU: 2", 1, {{"cpu", "1"}}},
	{"hostile value kept literal", "Cmd: $(rm -rf /) `id` ${X}", 1, {{"Cmd", "$(rm -rf /) `id` ${X}"}}},
};
/* clang-format on */

static void test_props(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(props_cases); i++) {
		const struct props_case *c = &props_cases[i];
		print_message("case: %s\n", c->label);
		struct kevent *ev = tu_event(KEVENT_GENERAL, "/a", "x", c->payload);
		assert_string_equal(ev->payload, c->payload); /* the payload is untouched */
		assert_int_equal(ev->n_props, c->n);
		for (size_t j = 0; j < c->n; j++) {
			assert_string_equal(ev->props[j].key, c->want[j].key);
			assert_string_equal(ev->props[j].value, c->want[j].value);
		}
		kevent_free(ev);
	}
}

static void test_prop_lookup(void **state)
{
	(void)state;
	struct kevent *ev = tu_event(KEVENT_POWER, "/a", "x", "Cpu: 3\nFan-Speed: 1200\nE:");
	assert_string_equal(kevent_prop(ev, "Cpu"), "3");
	assert_string_equal(kevent_prop(ev, "cpu"), "3");
	assert_string_equal(kevent_prop(ev, "CPU"), "3");
	assert_string_equal(kevent_prop(ev, "fan-speed"), "1200");
	assert_string_equal(kevent_prop(ev, "E"), "");
	assert_null(kevent_prop(ev, "Temperature"));
	assert_null(kevent_prop(ev, "Cp"));
	kevent_free(ev);
}

static void test_props_limit(void **state)
{
	(void)state;
	/* kevent_parse_props never writes more than max entries. */
	char buf[] = "A: 1\nB: 2\nC: 3\n";
	struct kevent_prop props[3] = {{0}};
	assert_int_equal(kevent_parse_props(buf, props, 2), 2);
	assert_null(props[2].key);
	assert_string_equal(props[1].key, "B");
}

struct env_case {
	const char *name;
	bool allowed;
};

static const struct env_case env_cases[] = {
	{"ACTION", true},
	{"DEVPATH", true},
	{"SUBSYSTEM", true},
	{"SEQNUM", true},
	{"ID_FS_TYPE", true},
	{"lower_ok", true},
	{"_X", true},
	{"PATH", false},
	{"HOME", false},
	{"IFS", false},
	{"SHELL", false},
	{"ENV", false},
	{"BASH_ENV", false},
	{"LD_PRELOAD", false},
	{"LD_", false},
	{"LD_LIBRARY_PATH", false},
	{"KEVENT_", false},
	{"KEVENT_CPU", false},
	{"KEVENT_TYPE", false},
	{"", false},
	{"1ABC", false},
	{"A-B", false},
	{"A B", false},
	{"PATHX", true},
	{"XPATH", true},
	{"LD", true},
	{"KEVENT", true},
	/* what changes the C library, the shells and the interpreters */
	{"GLIBC_TUNABLES", false},
	{"GCONV_PATH", false},
	{"LOCPATH", false},
	{"NLSPATH", false},
	{"HOSTALIASES", false},
	{"RESOLV_HOST_CONF", false},
	{"SHELLOPTS", false},
	{"BASHOPTS", false},
	{"PS4", false},
	{"PYTHONPATH", false},
	{"PYTHONSTARTUP", false},
	{"PYTHON", false},
	{"PERL5LIB", false},
	{"PERL5OPT", false},
	{"RUBYOPT", false},
	{"RUBYLIB", false},
	{"PS1", true},
	{"PERL", true},
	{"XPYTHONPATH", true},
	{"GLIBC", true},
	{"LOCPATHS", true},
};

static void test_env_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(env_cases); i++) {
		print_message("name: %s\n", env_cases[i].name);
		assert_int_equal(
			kevent_env_name_allowed(env_cases[i].name, strlen(env_cases[i].name)),
			env_cases[i].allowed);
	}
}

static void test_uevent_env_filtered(void **state)
{
	(void)state;
	char *env[] = {"ACTION=add",	  "PATH=/evil",
		       "HOME=/root",	  "IFS= ",
		       "SHELL=/bin/evil", "ENV=/x",
		       "BASH_ENV=/x",	  "LD_PRELOAD=/x.so",
		       "KEVENT_RULE=x",	  "DEVPATH=/devices/x",
		       "no-equals-sign",  "A-B=1",
		       "SUBSYSTEM=block"};
	struct kevent *ev = NULL;
	const char *why = NULL;
	assert_int_equal(kevent_new(KEVENT_STORAGE, "/org/kernel/devices/x", "add", "",
				    KEVENT_SOURCE_UDEV, 1, 2, env, ARRAY_SIZE(env), &ev, &why),
			 0);
	assert_int_equal(ev->n_uevent_env, 3);
	assert_string_equal(ev->uevent_env[0], "ACTION=add");
	assert_string_equal(ev->uevent_env[1], "DEVPATH=/devices/x");
	assert_string_equal(ev->uevent_env[2], "SUBSYSTEM=block");
	kevent_free(ev);
}

/* A copy keeps every field: what a debounced run gets is what the event
 * had, its host and flags included. */
static void test_dup(void **state)
{
	(void)state;
	char *env[] = {"DEVNAME=/dev/sdb", NULL};
	struct kevent *ev = NULL, *c = NULL;
	const char *why = NULL;
	assert_int_equal(kevent_new(KEVENT_POWER, "/org/kernel/x", "high", "Host: spoofed\nCpu: 3",
				    KEVENT_SOURCE_MQTT, 42, 1700, env, 1, &ev, &why),
			 0);
	assert_int_equal(kevent_set_host(ev, "h7", &why), 0);
	ev->recovered = true;
	ev->synthetic = true;
	ev->instance = 0xabcdef;
	assert_int_equal(kevent_dup(ev, &c), 0);
	assert_int_equal(c->type, KEVENT_POWER);
	assert_int_equal(c->source, KEVENT_SOURCE_MQTT);
	assert_true(c->seqnum == 42 && c->timestamp == 1700);
	assert_string_equal(c->object, "/org/kernel/x");
	assert_string_equal(c->signal, "high");
	assert_string_equal(c->payload, "Host: spoofed\nCpu: 3");
	assert_int_equal(c->n_props, 2);
	assert_string_equal(kevent_prop(c, "cpu"), "3");
	assert_int_equal(c->n_uevent_env, 1);
	assert_string_equal(c->uevent_env[0], "DEVNAME=/dev/sdb");
	assert_string_equal(c->host, "h7");
	assert_ptr_not_equal(c->host, ev->host);
	assert_true(c->recovered && c->synthetic);
	assert_true(c->instance == 0xabcdef);
	kevent_free(ev);
	kevent_free(c);
}

/* D-Bus takes valid UTF-8 only: valid text passes as it is, each other
 * byte becomes "\xHH". */
static void test_utf8_sanitize(void **state)
{
	(void)state;
	static const struct {
		const char *in, *want;
	} cases[] = {
		{"", ""},
		{"plain $(touch x) `y` ${PATH}", "plain $(touch x) `y` ${PATH}"},
		{"caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac"},
		{"a\xff"
		 "b",
		 "a\\xffb"},
		{"\xc3", "\\xc3"},		     /* cut short */
		{"\xc0\xaf", "\\xc0\\xaf"},	     /* overlong */
		{"\xed\xa0\x80", "\\xed\\xa0\\x80"}, /* a surrogate */
		{"back\\slash \\xff", "back\\slash \\xff"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *out = utf8_sanitize(cases[i].in);
		assert_non_null(out);
		assert_string_equal(out, cases[i].want);
		assert_true(utf8_valid(out));
		free(out);
	}
	char *v[] = {"ok", "x\x80", NULL};
	char **c = strv_utf8_sanitize(v);
	assert_string_equal(c[0], "ok");
	assert_string_equal(c[1], "x\\x80");
	assert_null(c[2]);
	strv_free(c);
}

/* monitor's and events' filters: each field given must hold; a field of
 * no such kind, an unknown source or type, a rule name too long, refused
 * with why. */
static void test_filter(void **state)
{
	(void)state;
	struct kfilter f;
	const char *why = NULL;
	kfilter_init(&f);
	assert_false(kfilter_any(&f));
	assert_true(kfilter_event(&f, KEVENT_SOURCE_MD, KEVENT_STORAGE));
	const char *names[] = {"a", "raid-mail"};
	assert_true(kfilter_rules(&f, names, 0));
	assert_int_equal(kfilter_add(&f, "source=md", &why), 0);
	assert_int_equal(kfilter_add(&f, "type=storage", &why), 0);
	assert_int_equal(kfilter_add(&f, "rule=raid-mail", &why), 0);
	assert_int_equal(kfilter_add(&f, "failed", &why), 0);
	assert_true(kfilter_any(&f) && f.failed);
	assert_true(kfilter_event(&f, KEVENT_SOURCE_MD, KEVENT_STORAGE));
	assert_false(kfilter_event(&f, KEVENT_SOURCE_FS, KEVENT_STORAGE));
	assert_false(kfilter_event(&f, KEVENT_SOURCE_MD, KEVENT_POWER));
	assert_true(kfilter_rules(&f, names, 2));
	assert_false(kfilter_rules(&f, names, 1));
	static const char *const bad[] = {
		"source=nope", "type=", "rule=", "sauce=md", "failed=1", ""};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		why = NULL;
		assert_int_equal(kfilter_add(&f, bad[i], &why), -EINVAL);
		assert_non_null(why);
	}
	char longname[140];
	memset(longname, 'x', sizeof(longname));
	memcpy(longname, "rule=", 5);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(kfilter_add(&f, longname, &why), -EINVAL);
	assert_string_equal(f.rule, "raid-mail"); /* untouched by what was refused */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_props),
		cmocka_unit_test(test_prop_lookup),
		cmocka_unit_test(test_props_limit),
		cmocka_unit_test(test_env_names),
		cmocka_unit_test(test_uevent_env_filtered),
		cmocka_unit_test(test_dup),
		cmocka_unit_test(test_utf8_sanitize),
		cmocka_unit_test(test_filter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
