// SPDX-License-Identifier: GPL-2.0-or-later
/* A handler as a transient systemd service: the unit properties a rule
 * may give (unitprops.c) and the StartTransientUnit call built from a
 * rule, its plan and the event (transient.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "transient.h"
#include "unitprops.h"
#include "util.h"

struct prop_case {
	const char *key, *value;
	int rc;
	const char *name; /* the D-Bus property */
	char type;
	const char *s;
	uint64_t u;
	int64_t i;
	int b;
	const char *why; /* rc < 0 */
};

#define NOT_SIZE "not a size (bytes, with K, M, G, T, P or E for powers of 1024, or infinity)"

/* clang-format off */
static const struct prop_case prop_cases[] = {
	{"MemoryMax", "200M", 0, "MemoryMax", 't', NULL, 200ull << 20, 0, 0, NULL},
	{"MemoryMax", "infinity", 0, "MemoryMax", 't', NULL, UINT64_MAX, 0, 0, NULL},
	{"MemoryHigh", "1G", 0, "MemoryHigh", 't', NULL, 1ull << 30, 0, 0, NULL},
	{"MemorySwapMax", "4096", 0, "MemorySwapMax", 't', NULL, 4096, 0, 0, NULL},
	{"MemoryMax", "lots", -EINVAL, NULL, 0, NULL, 0, 0, 0, NOT_SIZE},
	{"MemoryMax", "0", -ERANGE, NULL, 0, NULL, 0, 0, 0, "must be more than 0"},
	{"TasksMax", "64", 0, "TasksMax", 't', NULL, 64, 0, 0, NULL},
	{"TasksMax", "infinity", 0, "TasksMax", 't', NULL, UINT64_MAX, 0, 0, NULL},
	{"TasksMax", "0", -ERANGE, NULL, 0, NULL, 0, 0, 0, "a count, 1 or more, or infinity"},
	{"CPUWeight", "50", 0, "CPUWeight", 't', NULL, 50, 0, 0, NULL},
	{"IOWeight", "10000", 0, "IOWeight", 't', NULL, 10000, 0, 0, NULL},
	{"CPUWeight", "10001", -ERANGE, NULL, 0, NULL, 0, 0, 0, "a weight from 1 to 10000"},
	{"CPUQuota", "50%", 0, "CPUQuotaPerSecUSec", 't', NULL, 500000, 0, 0, NULL},
	{"CPUQuota", "200%", 0, "CPUQuotaPerSecUSec", 't', NULL, 2000000, 0, 0, NULL},
	{"CPUQuota", "50", -EINVAL, NULL, 0, NULL, 0, 0, 0, "a percentage of one CPU, such as 50% or 200%"},
	{"TimeoutStopSec", "30s", 0, "TimeoutStopUSec", 't', NULL, 30000000, 0, 0, NULL},
	{"TimeoutStopSec", "1m30s", 0, "TimeoutStopUSec", 't', NULL, 90000000, 0, 0, NULL},
	{"Nice", "-5", 0, "Nice", 'i', NULL, 0, -5, 0, NULL},
	{"Nice", "20", -ERANGE, NULL, 0, NULL, 0, 0, 0, "a nice level from -20 to 19"},
	{"OOMScoreAdjust", "500", 0, "OOMScoreAdjust", 'i', NULL, 0, 500, 0, NULL},
	{"NoNewPrivileges", "true", 0, "NoNewPrivileges", 'b', NULL, 0, 0, 1, NULL},
	{"PrivateTmp", "no", 0, "PrivateTmp", 'b', NULL, 0, 0, 0, NULL},
	{"PrivateTmp", "maybe", -EINVAL, NULL, 0, NULL, 0, 0, 0, "not true or false"},
	{"KillMode", "mixed", 0, "KillMode", 's', "mixed", 0, 0, 0, NULL},
	{"KillMode", "all", -EINVAL, NULL, 0, NULL, 0, 0, 0, "control-group|mixed|process|none"},
	{"ProtectSystem", "strict", 0, "ProtectSystem", 's', "strict", 0, 0, 0, NULL},
	{"ProtectHome", "read-only", 0, "ProtectHome", 's', "read-only", 0, 0, 0, NULL},
	{"Slice", "keventd.slice", 0, "Slice", 's', "keventd.slice", 0, 0, 0, NULL},
	{"Slice", "keventd", -EINVAL, NULL, 0, NULL, 0, 0, 0, "not a slice (NAME.slice)"},
	{"WorkingDirectory", "/var/lib/x", 0, "WorkingDirectory", 's', "/var/lib/x", 0, 0, 0, NULL},
	{"WorkingDirectory", "var", -EINVAL, NULL, 0, NULL, 0, 0, 0, "not an absolute path"},
	{"Description", "backup", 0, "Description", 's', "backup", 0, 0, 0, NULL},
	{"MemoryLimit", "1G", -ENOENT, NULL, 0, NULL, 0, 0, 0, "not a property keventd knows (keventd.rules(5) lists them)"},
	{"memorymax", "1G", -ENOENT, NULL, 0, NULL, 0, 0, 0, "not a property keventd knows (keventd.rules(5) lists them)"},
	{"ExecStart", "/bin/sh", -ENOENT, NULL, 0, NULL, 0, 0, 0, "the unit runs the rule's 'run'"},
	{"Environment", "A=1", -ENOENT, NULL, 0, NULL, 0, 0, 0, "the unit gets the handler's environment"},
	{"User", "root", -ENOENT, NULL, 0, NULL, 0, 0, 0, "the unit runs as the rule's 'user'"},
	{"RuntimeMaxSec", "1h", -ENOENT, NULL, 0, NULL, 0, 0, 0, "the rule's 'timeout' is the unit's RuntimeMaxSec"},
};
/* clang-format on */

static void test_unit_props(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(prop_cases); i++) {
		const struct prop_case *c = &prop_cases[i];
		print_message("case: %s: %s\n", c->key, c->value);
		struct kunitprop p;
		const char *why = NULL;
		int rc = kunitprop_parse(c->key, c->value, &p, &why);
		assert_int_equal(rc, c->rc);
		if (rc < 0) {
			assert_string_equal(why, c->why);
			kunitprop_release(&p);
			continue;
		}
		assert_string_equal(p.name, c->name);
		assert_int_equal(p.type, c->type);
		if (c->type == 's')
			assert_string_equal(p.s, c->s);
		else
			assert_null(p.s);
		assert_true(p.u == c->u);
		assert_true(p.i == c->i);
		assert_int_equal(p.b, c->b);
		kunitprop_release(&p);
	}
}

struct name_case {
	const char *rule;
	uint64_t seq;
	const char *want;
};

/* clang-format off */
static const struct name_case name_cases[] = {
	{"backup", 42, "keventd-backup-42.service"},
	{"usb_stick", 7, "keventd-usb_stick-7.service"},
	{"disk-added", 1, "keventd-disk\\x2dadded-1.service"},
	{"a/b c", 2, "keventd-a\\x2fb\\x20c-2.service"},
	{".hidden.x", 3, "keventd-\\x2ehidden.x-3.service"},
	{"10-usb.yaml:0", 4, "keventd-10\\x2dusb.yaml:0-4.service"},
	{"\xc3\xa9", 5, "keventd-\\xc3\\xa9-5.service"},
};
/* clang-format on */

static void test_unit_name(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(name_cases); i++) {
		char *name = NULL;
		print_message("case: %s\n", name_cases[i].rule);
		assert_int_equal(ktransient_unit_name(name_cases[i].rule, name_cases[i].seq, &name),
				 0);
		assert_string_equal(name, name_cases[i].want);
		free(name);
	}
}

/* The call: the fixed properties from the rule, plan and event, in order,
 * then the rule's own, which replace a fixed one of the same name. */
static void test_build(void **state)
{
	(void)state;
	char *argv[] = {"backup-disk", "--dev", "sdb", NULL};
	char *envp[] = {"PATH=/usr/bin", "KEVENT_SEQNUM=42", NULL};
	struct kplan plan = {.argv = argv, .argc = 3, .envp = envp, .n_env = 2, .cgroup_fd = -1};
	struct kunitprop props[3];
	const char *why = NULL;
	assert_int_equal(kunitprop_parse("MemoryMax", "200M", &props[0], &why), 0);
	assert_int_equal(kunitprop_parse("Description", "nightly backup", &props[1], &why), 0);
	assert_int_equal(kunitprop_parse("Nice", "10", &props[2], &why), 0);

	struct ktransient t;
	assert_int_equal(ktransient_build("backup", "backup", 30000, props, 3, &plan,
					  "/usr/local/bin/backup-disk", 42, &t),
			 0);
	assert_string_equal(t.unit, "keventd-backup-42.service");
	assert_int_equal(t.n_props, 7);
	assert_string_equal(t.props[0].name, "Description");
	assert_string_equal(t.props[0].s, "nightly backup"); /* replaced */
	assert_string_equal(t.props[1].name, "ExecStart");
	assert_int_equal(t.props[1].type, 'X');
	assert_string_equal(t.props[1].s, "/usr/local/bin/backup-disk");
	assert_ptr_equal(t.props[1].strv, argv);
	assert_string_equal(t.props[2].name, "Environment");
	assert_int_equal(t.props[2].type, 'E');
	assert_ptr_equal(t.props[2].strv, envp);
	assert_string_equal(t.props[3].name, "User");
	assert_string_equal(t.props[3].s, "backup");
	assert_string_equal(t.props[4].name, "RuntimeMaxUSec");
	assert_true(t.props[4].u == 30000000ull);
	assert_string_equal(t.props[5].name, "MemoryMax");
	assert_true(t.props[5].u == 200ull << 20);
	assert_string_equal(t.props[6].name, "Nice");
	assert_int_equal(t.props[6].i, 10);
	ktransient_release(&t);

	/* no user, no properties: keventd's user, the rule's description */
	assert_int_equal(ktransient_build("x", NULL, 60000, NULL, 0, &plan, "/bin/true", 1, &t), 0);
	assert_int_equal(t.n_props, 4);
	assert_string_equal(t.props[0].s, "keventd rule x, seq 1");
	assert_string_equal(t.props[3].name, "RuntimeMaxUSec");
	assert_true(t.props[3].u == 60000000ull);
	ktransient_release(&t);
	for (size_t i = 0; i < 3; i++)
		kunitprop_release(&props[i]);
}

/* session: active: the session's variables after the handler's own,
 * replacing any of the same name; DISPLAY and WAYLAND_DISPLAY only where
 * logind says the session has them. */
static void test_session_env(void **state)
{
	(void)state;
	char *envp[] = {"PATH=/usr/bin:/bin", "KEVENT_OBJECT=/x", "DISPLAY=:9", NULL};
	struct ksession x11 = {
		.id = "3", .user = "alice", .uid = 1000, .display = ":0", .type = "x11"};
	char **v = NULL;
	assert_int_equal(ktransient_session_env(envp, &x11, &v), 0);
	const char *want[] = {"PATH=/usr/bin:/bin",
			      "KEVENT_OBJECT=/x",
			      "DISPLAY=:0",
			      "XDG_RUNTIME_DIR=/run/user/1000",
			      "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus",
			      "KEVENT_SESSION=3",
			      "KEVENT_SESSION_USER=alice",
			      NULL};
	for (size_t i = 0; want[i]; i++)
		assert_string_equal(v[i], want[i]);
	assert_int_equal(strv_length(v), ARRAY_SIZE(want) - 1);
	strv_free(v);

	struct ksession wl = {
		.id = "c2", .user = "bob", .uid = 1001, .display = "", .type = "wayland"};
	assert_int_equal(ktransient_session_env(NULL, &wl, &v), 0);
	const char *want_wl[] = {"XDG_RUNTIME_DIR=/run/user/1001",
				 "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1001/bus",
				 "WAYLAND_DISPLAY=wayland-0",
				 "KEVENT_SESSION=c2",
				 "KEVENT_SESSION_USER=bob",
				 NULL};
	for (size_t i = 0; want_wl[i]; i++)
		assert_string_equal(v[i], want_wl[i]);
	assert_int_equal(strv_length(v), ARRAY_SIZE(want_wl) - 1);
	strv_free(v);

	/* a text console: no display at all */
	struct ksession tty = {
		.id = "1", .user = "systest", .uid = 0, .display = "", .type = "tty"};
	assert_int_equal(ktransient_session_env(envp, &tty, &v), 0);
	for (char **e = v; *e; e++)
		assert_true(strncmp(*e, "WAYLAND_DISPLAY=", 16) != 0);
	assert_string_equal(v[2], "DISPLAY=:9"); /* the handler's own, untouched */
	assert_string_equal(v[3], "XDG_RUNTIME_DIR=/run/user/0");
	strv_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unit_props),
		cmocka_unit_test(test_unit_name),
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_session_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
