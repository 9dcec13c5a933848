// SPDX-License-Identifier: GPL-2.0-or-later
/* A handler as a transient systemd service: the unit properties a rule
 * may give (unitprops.c) and the StartTransientUnit call built from a
 * rule, its plan and the event (transient.c). */
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "testutil.h"
#include "transient-run.h"
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
	uint64_t instance, run;
	const char *want;
};

/* The name holds the rule, this keventd's instance and its number for the
 * run: nothing a sender chooses (an event's seq is in the description). */
/* clang-format off */
static const struct name_case name_cases[] = {
	{"backup", 0x1f, 42, "keventd-backup-000000000000001f-42.service"},
	{"usb_stick", 0xfedcba9876543210ull, 7, "keventd-usb_stick-fedcba9876543210-7.service"},
	{"disk-added", 1, 1, "keventd-disk\\x2dadded-0000000000000001-1.service"},
	{"a/b c", 2, 2, "keventd-a\\x2fb\\x20c-0000000000000002-2.service"},
	{".hidden.x", 3, 3, "keventd-\\x2ehidden.x-0000000000000003-3.service"},
	{"10-usb.yaml:0", 4, 4, "keventd-10\\x2dusb.yaml:0-0000000000000004-4.service"},
	{"\xc3\xa9", 5, 5, "keventd-\\xc3\\xa9-0000000000000005-5.service"},
	{"long job", 9, 0, "keventd-long\\x20job-INSTANCE-RUN.service"}, /* keventctl test */
};
/* clang-format on */

static void test_unit_name(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(name_cases); i++) {
		char *name = NULL;
		print_message("case: %s\n", name_cases[i].rule);
		assert_int_equal(ktransient_unit_name(name_cases[i].rule, name_cases[i].instance,
						      name_cases[i].run, &name),
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
	const char *unit = "keventd-backup-0000000000000001-5.service";
	assert_int_equal(ktransient_build("backup", unit, "backup", 30000, props, 3, &plan,
					  "/usr/local/bin/backup-disk", 42, false, &t),
			 0);
	assert_ptr_equal(t.unit, unit);
	assert_int_equal(t.n_props, 7);
	assert_string_equal(t.props[0].name, "Description");
	assert_string_equal(t.props[0].s, "nightly backup"); /* replaced */
	assert_string_equal(t.props[1].name, "ExecStartEx");
	assert_int_equal(t.props[1].type, 'X');
	assert_string_equal(t.props[1].flags[0], "no-env-expand");
	assert_null(t.props[1].flags[1]);
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
	assert_int_equal(
		ktransient_build("x", unit, NULL, 60000, NULL, 0, &plan, "/bin/true", 1, false, &t),
		0);
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

#if KEVENT_DBUS
/* A bus that sd-bus builds messages for: started on one end of a socket
 * pair that nobody answers (nothing is sent). */
static sd_bus *quiet_bus(int sv[2])
{
	sd_bus *bus = NULL;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(sd_bus_new(&bus), 0);
	assert_true(sd_bus_set_fd(bus, sv[0], sv[0]) >= 0);
	assert_true(sd_bus_start(bus) >= 0);
	return bus;
}

/* Moves to the variant of property name in the call's (sv) array: true,
 * or false when the call has no such property. */
static bool seek_prop(sd_bus_message *m, const char *name)
{
	assert_int_equal(sd_bus_message_rewind(m, true), 1);
	const char *unit, *mode;
	assert_true(sd_bus_message_read(m, "ss", &unit, &mode) > 0);
	assert_true(sd_bus_message_enter_container(m, 'a', "(sv)") > 0);
	for (;;) {
		const char *key;
		if (sd_bus_message_enter_container(m, 'r', "sv") <= 0)
			return false;
		assert_true(sd_bus_message_read(m, "s", &key) > 0);
		if (strcmp(key, name) == 0)
			return true;
		assert_true(sd_bus_message_skip(m, "v") >= 0);
		assert_true(sd_bus_message_exit_container(m) >= 0);
	}
}

static void find_prop(sd_bus_message *m, const char *name)
{
	assert_true(seek_prop(m, name));
}

/* The one command of property name (a(sasas)): its path, argv and flags. */
static void read_exec(sd_bus_message *m, const char *name, const char **path, char ***args,
		      char ***flags)
{
	find_prop(m, name);
	assert_true(sd_bus_message_enter_container(m, 'v', "a(sasas)") > 0);
	assert_true(sd_bus_message_enter_container(m, 'a', "(sasas)") > 0);
	assert_true(sd_bus_message_enter_container(m, 'r', "sasas") > 0);
	assert_true(sd_bus_message_read(m, "s", path) > 0);
	assert_true(sd_bus_message_read_strv(m, args) > 0);
	assert_true(sd_bus_message_read_strv(m, flags) > 0);
}

/* The one encoder of transient and session runs: the command goes as
 * ExecStartEx with no-env-expand, every byte of argv as the rule and the
 * event made it ("$(...)", backquotes, "${NAME}", "$$" included), and a
 * byte that is not UTF-8 as "\xHH" rather than a failed start. */
static void test_start_message(void **state)
{
	(void)state;
	static const char *const hostile = "$(touch /root/pwned)`touch /root/pwned2`${PATH}";
	char *argv[] = {"/bin/sh", "-c", "printf '%s\\n' \"${KEVENT_PAYLOAD}\" $$X", NULL};
	char payload[128];
	snprintf(payload, sizeof(payload), "KEVENT_PAYLOAD=%s", hostile);
	char *envp[] = {"PATH=/usr/bin", payload,
			"KEVENT_CPU=a\xff"
			"b",
			NULL};
	struct kplan plan = {.argv = argv, .argc = 3, .envp = envp, .n_env = 3, .cgroup_fd = -1};
	struct ktransient t;
	const char *name = "keventd-x-0000000000000001-1.service";
	assert_int_equal(
		ktransient_build("x", name, NULL, 1000, NULL, 0, &plan, "/bin/sh", 5, false, &t),
		0);
	int sv[2];
	sd_bus *bus = quiet_bus(sv);
	sd_bus_message *m = NULL;
	assert_int_equal(ktrun_start_message(bus, &t, &m), 0);
	assert_int_equal(sd_bus_message_seal(m, 1, 0), 0);

	assert_int_equal(sd_bus_message_rewind(m, true), 1);
	const char *unit, *mode;
	assert_true(sd_bus_message_read(m, "ss", &unit, &mode) > 0);
	assert_string_equal(unit, name);
	assert_string_equal(mode, "fail");

	const char *path;
	char **args = NULL, **flags = NULL;
	read_exec(m, "ExecStartEx", &path, &args, &flags);
	assert_string_equal(path, "/bin/sh");
	assert_int_equal(strv_length(args), 3);
	for (size_t i = 0; i < 3; i++)
		assert_string_equal(args[i], argv[i]);
	assert_int_equal(strv_length(flags), 1);
	assert_string_equal(flags[0], "no-env-expand");
	strv_free(args);
	strv_free(flags);

	assert_false(seek_prop(m, "ExecStart")); /* whose command systemd would expand */
	sd_bus_message_unref(m);
	sd_bus_close(bus);
	sd_bus_unref(bus);
	close(sv[1]);
	ktransient_release(&t);
}

/* The environment goes as it is, but for a byte D-Bus cannot carry; a
 * session rule's unit checks the session again. */
static void test_start_message_env(void **state)
{
	(void)state;
	char *argv[] = {"/bin/true", NULL};
	char *envp[] = {"KEVENT_PAYLOAD=$(id)",
			"KEVENT_CPU=a\xff"
			"b",
			NULL};
	struct kplan plan = {.argv = argv, .argc = 1, .envp = envp, .n_env = 2, .cgroup_fd = -1};
	struct ktransient t;
	assert_int_equal(ktransient_build("x", "keventd-x-1-1.service", NULL, 1000, NULL, 0, &plan,
					  "/bin/true", 5, true, &t),
			 0);
	int sv[2];
	sd_bus *bus = quiet_bus(sv);
	sd_bus_message *m = NULL;
	assert_int_equal(ktrun_start_message(bus, &t, &m), 0);
	assert_int_equal(sd_bus_message_seal(m, 1, 0), 0);
	find_prop(m, "Environment");
	char **env = NULL;
	assert_true(sd_bus_message_enter_container(m, 'v', "as") > 0);
	assert_true(sd_bus_message_read_strv(m, &env) > 0);
	assert_int_equal(strv_length(env), 2);
	assert_string_equal(env[0], "KEVENT_PAYLOAD=$(id)");
	assert_string_equal(env[1], "KEVENT_CPU=a\\xffb");
	strv_free(env);
	/* a session rule: the unit asks logind again right before the run */
	const char *path;
	char **args = NULL, **flags = NULL;
	read_exec(m, "ExecConditionEx", &path, &args, &flags);
	assert_string_equal(path, "/bin/sh");
	assert_int_equal(strv_length(args), 3);
	assert_non_null(strstr(args[2], "loginctl show-session \"$KEVENT_SESSION\""));
	assert_string_equal(flags[0], "no-env-expand");
	strv_free(args);
	strv_free(flags);
	sd_bus_message_unref(m);
	sd_bus_close(bus);
	sd_bus_unref(bus);
	close(sv[1]);
	ktransient_release(&t);
}
/* The a{sv} reader: the properties named land in their places, whatever
 * the order, one of two values too; the others are skipped; a value of
 * another type than asked is an error. */
static void test_read_props(void **state)
{
	(void)state;
	int sv[2];
	sd_bus *bus = quiet_bus(sv);
	sd_bus_message *m = NULL;
	assert_true(sd_bus_message_new_method_call(bus, &m, "org.example", "/", "org.example",
						   "X") >= 0);
	assert_true(sd_bus_message_append(m, "a{sv}", 4, "ExecMainStatus", "i", 3, "Other", "au", 2,
					  7, 8, "User", "(uo)", 1000, "/org/u/1000", "Result", "s",
					  "exit-code") >= 0);
	assert_true(sd_bus_message_append(m, "a{sv}", 1, "Result", "i", 5) >= 0);
	assert_int_equal(sd_bus_message_seal(m, 1, 0), 0);
	assert_int_equal(sd_bus_message_rewind(m, true), 1);

	const char *result = "", *upath = "";
	int32_t status = 0, code = -1;
	uint32_t uid = 0;
	const struct ktrun_prop props[] = {
		{"Result", "s", &result, NULL},
		{"ExecMainCode", "i", &code, NULL},
		{"ExecMainStatus", "i", &status, NULL},
		{"User", "(uo)", &uid, &upath},
	};
	assert_true(ktrun_read_props(m, props, 4) >= 0);
	assert_string_equal(result, "exit-code");
	assert_int_equal(status, 3);
	assert_int_equal(code, -1); /* not in the message: left as it was */
	assert_int_equal(uid, 1000);
	assert_string_equal(upath, "/org/u/1000");
	assert_true(sd_bus_message_exit_container(m) >= 0);
	assert_true(ktrun_read_props(m, props, 4) < 0); /* Result is not a string */

	sd_bus_message_unref(m);
	sd_bus_close(bus);
	sd_bus_unref(bus);
	close(sv[1]);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unit_props),
		cmocka_unit_test(test_unit_name),
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_session_env),
#if KEVENT_DBUS
		cmocka_unit_test(test_start_message),
		cmocka_unit_test(test_start_message_env),
		cmocka_unit_test(test_read_props),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
