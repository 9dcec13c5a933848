// SPDX-License-Identifier: GPL-2.0-or-later
/* The handler plan: exact argv and environment (keventd.rules(5)). */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"
#include "template.h"
#include "testutil.h"
#include "util.h"

#define RULE_PATH "/etc/keventd/rules.d/50-x.yaml"
#define OBJ	  "/org/kernel/devices/system/cpu/temperature"

static struct kfile *file_with(const char *rule_body)
{
	char *y = tu_printf("rules:\n  - name: cpu\n%s", rule_body);
	struct kfile *f = tu_parse(y, RULE_PATH);
	free(y);
	return f;
}

static void check_env(char **env, size_t n, const char *const *want, size_t n_want)
{
	for (size_t i = 0; i < n; i++)
		print_message("env[%zu] %s\n", i, env[i]);
	assert_int_equal(n, n_want);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(env[i], want[i]);
	assert_null(env[n]);
}

static void test_env(void **state)
{
	(void)state;
	struct kfile *f = file_with("    run: [/bin/true]\n");
	const char *payload = "Cpu: 0\n"
			      "Temperature: 95000\n"
			      "fan-speed: 1200\n"
			      "fan_speed: 1\n" /* the same variable: the first wins */
			      "Fan.Speed: 2\n"
			      "Type: evil\n"	  /* never overrides KEVENT_TYPE */
			      "rule.file: evil\n" /* nor KEVENT_RULE_FILE */
			      "Rule: evil\n"
			      "Payload: evil\n"
			      "cpu: 9\n" /* the same property: the first wins */
			      "Path: /evil\n"
			      "zone_2: x86_pkg_temp\n"
			      "free text line\n";
	struct kevent *ev = NULL;
	const char *why = NULL;
	assert_int_equal(kevent_new(KEVENT_POWER, OBJ, "high", payload, KEVENT_SOURCE_THERMAL, 42,
				    1700000000123456789ull, NULL, 0, &ev, &why),
			 0);
	char *pl = tu_printf("KEVENT_PAYLOAD=%s", payload);
	const char *const want[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"KEVENT_TYPE=power",
		"KEVENT_OBJECT=" OBJ,
		"KEVENT_SIGNAL=high",
		pl,
		"KEVENT_SEQNUM=42",
		"KEVENT_TIMESTAMP=1700000000123456789",
		"KEVENT_SOURCE=thermal",
		"KEVENT_RULE=cpu",
		("KEVENT_RULE_FILE=" RULE_PATH),
		"KEVENT_CPU=0",
		"KEVENT_TEMPERATURE=95000",
		"KEVENT_FAN_SPEED=1200",
		"KEVENT_PATH=/evil",
		"KEVENT_ZONE_2=x86_pkg_temp",
	};
	char **env = NULL;
	size_t n = 0;
	assert_int_equal(kplan_build_env(&f->rules[0], ev, &env, &n), 0);
	check_env(env, n, want, ARRAY_SIZE(want));
	strv_free(env);

	/* kplan_build gives the same environment */
	struct kplan plan;
	assert_int_equal(kplan_build(&f->rules[0], ev, &plan), 0);
	check_env(plan.envp, plan.n_env, want, ARRAY_SIZE(want));
	assert_int_equal(plan.argc, 1);
	assert_string_equal(plan.argv[0], "/bin/true");
	assert_null(plan.argv[1]);
	kplan_release(&plan);
	assert_null(plan.argv);
	assert_null(plan.envp);
	free(pl);
	kevent_free(ev);
	kfile_unref(f);
}

/* A kernel event fetched after it was missed: KEVENT_RECOVERED=1, which a
 * payload property of the same name cannot override. */
static void test_recovered_env(void **state)
{
	(void)state;
	struct kfile *f = file_with("    run: [/bin/true]\n");
	struct kevent *ev = NULL;
	const char *why = NULL;
	assert_int_equal(kevent_new(KEVENT_POWER, OBJ, "high", "Recovered: 0\nCpu: 1\n",
				    KEVENT_SOURCE_KERNEL, 9, 1700000000000000000ull, NULL, 0, &ev,
				    &why),
			 0);
	ev->recovered = true;
	const char *const want[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"KEVENT_TYPE=power",
		"KEVENT_OBJECT=" OBJ,
		"KEVENT_SIGNAL=high",
		"KEVENT_PAYLOAD=Recovered: 0\nCpu: 1\n",
		"KEVENT_SEQNUM=9",
		"KEVENT_TIMESTAMP=1700000000000000000",
		"KEVENT_SOURCE=kernel",
		"KEVENT_RULE=cpu",
		("KEVENT_RULE_FILE=" RULE_PATH),
		"KEVENT_RECOVERED=1",
		"KEVENT_CPU=1",
	};
	char **env = NULL;
	size_t n = 0;
	assert_int_equal(kplan_build_env(&f->rules[0], ev, &env, &n), 0);
	check_env(env, n, want, ARRAY_SIZE(want));
	strv_free(env);
	/* live: no such variable, and never the payload's either */
	ev->recovered = false;
	assert_int_equal(kplan_build_env(&f->rules[0], ev, &env, &n), 0);
	for (size_t i = 0; i < n; i++)
		assert_true(strncmp(env[i], "KEVENT_RECOVERED=", strlen("KEVENT_RECOVERED=")) != 0);
	strv_free(env);
	kevent_free(ev);
	kfile_unref(f);
}

/* A udev event made by keventctl trigger: KEVENT_SYNTHETIC=1, which a
 * payload property of the same name cannot override. */
static void test_synthetic_env(void **state)
{
	(void)state;
	struct kfile *f = file_with("    run: [/bin/true]\n");
	struct kevent *ev = NULL;
	const char *why = NULL;
	assert_int_equal(kevent_new(KEVENT_POWER, OBJ, "high", "Synthetic: 0\nCpu: 1\n",
				    KEVENT_SOURCE_KERNEL, 9, 1700000000000000000ull, NULL, 0, &ev,
				    &why),
			 0);
	ev->synthetic = true;
	const char *const want[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"KEVENT_TYPE=power",
		"KEVENT_OBJECT=" OBJ,
		"KEVENT_SIGNAL=high",
		"KEVENT_PAYLOAD=Synthetic: 0\nCpu: 1\n",
		"KEVENT_SEQNUM=9",
		"KEVENT_TIMESTAMP=1700000000000000000",
		"KEVENT_SOURCE=kernel",
		"KEVENT_RULE=cpu",
		("KEVENT_RULE_FILE=" RULE_PATH),
		"KEVENT_SYNTHETIC=1",
		"KEVENT_CPU=1",
	};
	char **env = NULL;
	size_t n = 0;
	assert_int_equal(kplan_build_env(&f->rules[0], ev, &env, &n), 0);
	check_env(env, n, want, ARRAY_SIZE(want));
	strv_free(env);
	/* keventctl test --run: KEVENT_TEST=1 after it */
	ev->test = true;
	assert_int_equal(kplan_build_env(&f->rules[0], ev, &env, &n), 0);
	assert_int_equal(n, ARRAY_SIZE(want) + 1);
	assert_string_equal(env[ARRAY_SIZE(want) - 1], "KEVENT_TEST=1");
	strv_free(env);
	ev->test = false;
	/* a uevent: no such variable, and never the payload's either */
	ev->synthetic = false;
	assert_int_equal(kplan_build_env(&f->rules[0], ev, &env, &n), 0);
	for (size_t i = 0; i < n; i++)
		assert_true(strncmp(env[i], "KEVENT_SYNTHETIC=", strlen("KEVENT_SYNTHETIC=")) != 0);
	strv_free(env);
	kevent_free(ev);
	kfile_unref(f);
}

/* What keventd alone says never comes from a payload line, for any source
 * and whether or not the event carries it. */
static void test_reserved_env(void **state)
{
	(void)state;
	static const char *const lines[] = {
		"Host: spoofed",
		"Recovered: 1",
		"Synthetic: 1",
		"Redelivered: 1",
		"Test: 1",
		"Instance: 7",
		"Session: 2",
		"Session-User: root",
		"Session_User: root",
		"Unit: x.service",
		"Seqnum: 1",
		"Source: kernel",
		"Rule-File: /etc/passwd",
	};
	struct kfile *f = file_with("    run: [/bin/true]\n");
	for (enum kevent_source src = 0; src < KEVENT_SOURCE_MAX; src++)
		for (size_t l = 0; l < ARRAY_SIZE(lines); l++) {
			char payload[80];
			snprintf(payload, sizeof(payload), "%s\nCpu: 1\n", lines[l]);
			print_message("case: %s from %s\n", lines[l], kevent_source_name(src));
			struct kevent *ev = NULL;
			const char *why = NULL;
			assert_int_equal(kevent_new(KEVENT_POWER, OBJ, "high", payload, src, 9, 1,
						    NULL, 0, &ev, &why),
					 0);
			char **env = NULL;
			size_t n = 0;
			assert_int_equal(kplan_build_env(&f->rules[0], ev, &env, &n), 0);
			/* the fixed ten, then KEVENT_CPU: nothing of the first line */
			assert_int_equal(n, 11);
			assert_string_equal(env[10], "KEVENT_CPU=1");
			assert_string_equal(env[5], "KEVENT_SEQNUM=9");
			assert_string_equal(env[7] + strlen("KEVENT_SOURCE="),
					    kevent_source_name(src));
			assert_string_equal(env[9], "KEVENT_RULE_FILE=" RULE_PATH);
			strv_free(env);
			kevent_free(ev);
		}
	assert_true(kplan_var_reserved("KEVENT_HOST"));
	assert_true(kplan_var_reserved("KEVENT_TEST"));
	assert_true(kplan_var_reserved("KEVENT_TYPE"));
	assert_false(kplan_var_reserved("KEVENT_CPU"));
	kfile_unref(f);
}

static void test_udev_env(void **state)
{
	(void)state;
	struct kfile *f = file_with("    run: [/sbin/hotplug-compat, \"${SUBSYSTEM}\"]\n");
	char *uevent[] = {
		"ACTION=add",
		"DEVPATH=/devices/pci0000:00/block/sda",
		"SUBSYSTEM=block",
		"SEQNUM=1234",
		"PATH=/tmp/evil",
		"HOME=/tmp",
		"IFS=/",
		"SHELL=/tmp/sh",
		"ENV=/tmp/env",
		"BASH_ENV=/tmp/env",
		"LD_PRELOAD=/tmp/evil.so",
		"LD_LIBRARY_PATH=/tmp",
		"KEVENT_RULE=evil",
		"KEVENT_X=evil",
		"GLIBC_TUNABLES=glibc.evil=1",
		"GCONV_PATH=/tmp/evil",
		"LOCPATH=/tmp/evil",
		"NLSPATH=/tmp/evil",
		"HOSTALIASES=/tmp/evil",
		"RESOLV_HOST_CONF=/tmp/evil",
		"SHELLOPTS=xtrace:evil",
		"BASHOPTS=evil",
		"PS4=$(evil)",
		"PYTHONSTARTUP=/tmp/evil.py",
		"PERL5OPT=-Mevil",
		"RUBYOPT=-revil",
		"ACTION=remove",
		"DEVTYPE=disk",
		"bad name=x",
		"novalue",
	};
	struct kevent *ev = NULL;
	const char *why = NULL;
	assert_int_equal(kevent_new(KEVENT_STORAGE, "/org/kernel/devices/pci0000:00/block/sda",
				    "add", "", KEVENT_SOURCE_UDEV, 7, 8, uevent, ARRAY_SIZE(uevent),
				    &ev, &why),
			 0);
	const char *const want[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"KEVENT_TYPE=storage",
		"KEVENT_OBJECT=/org/kernel/devices/pci0000:00/block/sda",
		"KEVENT_SIGNAL=add",
		"KEVENT_PAYLOAD=",
		"KEVENT_SEQNUM=7",
		"KEVENT_TIMESTAMP=8",
		"KEVENT_SOURCE=udev",
		"KEVENT_RULE=cpu",
		("KEVENT_RULE_FILE=" RULE_PATH),
		"ACTION=add",
		"DEVPATH=/devices/pci0000:00/block/sda",
		"SUBSYSTEM=block",
		"SEQNUM=1234",
		"DEVTYPE=disk",
	};
	struct kplan plan;
	assert_int_equal(kplan_build(&f->rules[0], ev, &plan), 0);
	check_env(plan.envp, plan.n_env, want, ARRAY_SIZE(want));
	/* whatever the order, no forbidden name ever appears twice or at all */
	static const char *const forbidden[] = {"HOME=",
						"IFS=",
						"SHELL=",
						"ENV=",
						"BASH_ENV=",
						"LD_",
						"GLIBC_TUNABLES=",
						"GCONV_PATH=",
						"LOCPATH=",
						"NLSPATH=",
						"HOSTALIASES=",
						"RESOLV_HOST_CONF=",
						"SHELLOPTS=",
						"BASHOPTS=",
						"PS4=",
						"PYTHON",
						"PERL5",
						"RUBY"};
	size_t paths = 0;
	for (size_t i = 0; i < plan.n_env; i++) {
		for (size_t j = 0; j < ARRAY_SIZE(forbidden); j++)
			assert_false(strncmp(plan.envp[i], forbidden[j], strlen(forbidden[j])) ==
				     0);
		paths += strncmp(plan.envp[i], "PATH=", 5) == 0;
		assert_null(strstr(plan.envp[i], "evil"));
	}
	assert_int_equal(paths, 1);
	assert_int_equal(plan.argc, 2);
	assert_string_equal(plan.argv[1], "block");
	kplan_release(&plan);
	kevent_free(ev);
	kfile_unref(f);
}

/* Payload properties always become KEVENT_<KEY>: a property named like a
 * dangerous variable never sets that variable; and uevent variables of an
 * event not made by kevent_new() are filtered again. */
static void test_payload_never_sets_dangerous(void **state)
{
	(void)state;
	struct kfile *f = file_with("    run: [/bin/true]\n");
	const char *payload = "GLIBC_TUNABLES: glibc.malloc.x=1\n"
			      "LD_PRELOAD: /tmp/evil.so\n"
			      "PYTHONPATH: /tmp\n";
	struct kevent *ev = NULL;
	const char *why = NULL;
	assert_int_equal(kevent_new(KEVENT_POWER, OBJ, "high", payload, KEVENT_SOURCE_SOCKET, 1, 2,
				    NULL, 0, &ev, &why),
			 0);
	char *forged[] = {"ACTION=add", "GLIBC_TUNABLES=x", "PERL5LIB=/tmp", "PATH=/tmp"};
	ev->uevent_env = forged;
	ev->n_uevent_env = ARRAY_SIZE(forged);
	struct kplan plan;
	assert_int_equal(kplan_build(&f->rules[0], ev, &plan), 0);
	bool cpu_like = false, action = false;
	for (size_t i = 0; i < plan.n_env; i++) {
		print_message("env[%zu] %s\n", i, plan.envp[i]);
		assert_false(strncmp(plan.envp[i], "GLIBC_TUNABLES=", 15) == 0);
		assert_false(strncmp(plan.envp[i], "LD_PRELOAD=", 11) == 0);
		assert_false(strncmp(plan.envp[i], "PYTHONPATH=", 11) == 0);
		assert_false(strncmp(plan.envp[i], "PERL5LIB=", 9) == 0);
		assert_false(strcmp(plan.envp[i], "PATH=/tmp") == 0);
		cpu_like |= strcmp(plan.envp[i], "KEVENT_GLIBC_TUNABLES=glibc.malloc.x=1") == 0;
		action |= strcmp(plan.envp[i], "ACTION=add") == 0;
	}
	assert_true(cpu_like);
	assert_true(action);
	kplan_release(&plan);
	ev->uevent_env = NULL;
	ev->n_uevent_env = 0;
	kevent_free(ev);
	kfile_unref(f);
}

struct exp_case {
	const char *tmpl;
	const char *want;
};

static const struct exp_case exp_cases[] = {
	{"plain", "plain"},
	{"", ""},
	{"${KEVENT_CPU}", "0"},
	{"--cpu=${KEVENT_CPU}", "--cpu=0"},
	{"x${KEVENT_CPU}y${KEVENT_CPU}z", "x0y0z"},
	{"${KEVENT_SIGNAL}", "high"},
	{"${PATH}", KEVENT_HANDLER_PATH},
	/* hostile values stay literal, in one argument, never re-expanded */
	{"${KEVENT_EVIL}", "$(rm -rf /)"},
	{"${KEVENT_TICK}", "`id`; reboot"},
	{"${KEVENT_REF}", "${KEVENT_OBJECT}"},
	{"${KEVENT_SP}", "a b  c\t*"},
	{"${KEVENT_DOLLAR}", "$$ $1"},
	{"${KEVENT_EVIL}${KEVENT_REF}", "$(rm -rf /)${KEVENT_OBJECT}"},
	{"${KEVENT_PAYLOAD}", "Cpu: 0\nEvil: $(rm -rf /)\nTick: `id`; reboot\n"
			      "Ref: ${KEVENT_OBJECT}\nSp: a b  c\t*\nDollar: $$ $1\n"},
	/* "$$" is a '$'; a lone '$' is literal; unset is empty */
	{"$$", "$"},
	{"$$$$", "$$"},
	{"$${KEVENT_CPU}", "${KEVENT_CPU}"},
	{"$$$${KEVENT_CPU}", "$${KEVENT_CPU}"},
	{"$$${KEVENT_CPU}", "$0"},
	{"$KEVENT_CPU", "$KEVENT_CPU"},
	{"cost 5$", "cost 5$"},
	{"$", "$"},
	{"${UNSET}", ""},
	{"a${UNSET}b", "ab"},
	{"${KEVENT_}", ""},
	{"${kevent_cpu}", ""}, /* names are case-sensitive */
	{"${HOME}", ""},       /* not in the handler's environment */
};

static void test_expand(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	strbuf_puts(&sb, "    run: [/usr/bin/handler");
	for (size_t i = 0; i < ARRAY_SIZE(exp_cases); i++) {
		/* as a single-quoted YAML scalar: only ' needs doubling, none here */
		assert_null(strchr(exp_cases[i].tmpl, '\''));
		strbuf_printf(&sb, ", '%s'", exp_cases[i].tmpl);
	}
	strbuf_puts(&sb, "]\n");
	struct kfile *f = file_with(strbuf_str(&sb));
	strbuf_release(&sb);
	struct kevent *ev = tu_event(KEVENT_POWER, OBJ, "high",
				     "Cpu: 0\nEvil: $(rm -rf /)\nTick: `id`; reboot\n"
				     "Ref: ${KEVENT_OBJECT}\nSp: a b  c\t*\nDollar: $$ $1\n");
	struct kplan plan;
	assert_int_equal(kplan_build(&f->rules[0], ev, &plan), 0);
	assert_int_equal(plan.argc, 1 + ARRAY_SIZE(exp_cases));
	assert_string_equal(plan.argv[0], "/usr/bin/handler");
	for (size_t i = 0; i < ARRAY_SIZE(exp_cases); i++) {
		print_message("template: %s\n", exp_cases[i].tmpl);
		assert_string_equal(plan.argv[1 + i], exp_cases[i].want);
	}
	assert_null(plan.argv[plan.argc]);
	/* the rule's templates are untouched */
	assert_string_equal(f->rules[0].run[3], "${KEVENT_CPU}");
	kplan_release(&plan);

	/* ktemplate_expand alone, against a given environment */
	char *env[] = {"A=1", "AB=2", "B=${A}", NULL};
	char *s = ktemplate_expand("${A}${AB}${B}$${A}", env);
	assert_string_equal(s, "12${A}${A}");
	free(s);
	s = ktemplate_expand("${A}", NULL);
	assert_string_equal(s, "");
	free(s);
	kevent_free(ev);
	kfile_unref(f);
}

static void test_shell(void **state)
{
	(void)state;
	const char *script = "echo \"$KEVENT_OBJECT ${KEVENT_CPU} $$\" | logger -t x; exit 0";
	char *body = tu_printf("    shell: '%s'\n", script);
	struct kfile *f = file_with(body);
	free(body);
	struct kevent *ev = tu_event(KEVENT_POWER, OBJ, "high", "Cpu: $(reboot)");
	struct kplan plan;
	assert_int_equal(kplan_build(&f->rules[0], ev, &plan), 0);
	assert_int_equal(plan.argc, 3);
	assert_string_equal(plan.argv[0], "/bin/sh");
	assert_string_equal(plan.argv[1], "-c");
	assert_string_equal(plan.argv[2], script); /* verbatim: nothing expanded */
	assert_null(plan.argv[3]);
	bool found = false;
	for (size_t i = 0; i < plan.n_env; i++)
		found |= strcmp(plan.envp[i], "KEVENT_CPU=$(reboot)") == 0;
	assert_true(found);
	kplan_release(&plan);
	kevent_free(ev);
	kfile_unref(f);
}

/* A user instance's session (kplan_add_env()): added after the event's,
 * never over them, nor over PATH or a name keventd alone sets. */
static void test_add_env(void **state)
{
	(void)state;
	struct kfile *f = file_with("    run: [/bin/true]\n");
	struct kevent *ev = tu_event(KEVENT_POWER, OBJ, "high", "Cpu: 1\n");
	const char *const extra[] = {
		"DISPLAY=:0",	    "PATH=/home/u/bin",
		"KEVENT_TYPE=evil", "KEVENT_HOST=evil",
		"KEVENT_CPU=9",	    "DISPLAY=:1",
		"NOEQUALS",	    "=empty",
		"HOME=/home/u",	    NULL,
	};
	struct kplan plan;
	assert_int_equal(kplan_build(&f->rules[0], ev, &plan), 0);
	size_t before = plan.n_env;
	assert_int_equal(kplan_add_env(&plan, extra), 0);
	assert_int_equal(plan.n_env, before + 2);
	assert_string_equal(plan.envp[before], "DISPLAY=:0");
	assert_string_equal(plan.envp[before + 1], "HOME=/home/u");
	assert_null(plan.envp[plan.n_env]);
	assert_string_equal(plan.envp[0], "PATH=" KEVENT_HANDLER_PATH);
	for (size_t i = 0; i < plan.n_env; i++) {
		assert_null(strstr(plan.envp[i], "evil"));
		assert_string_not_equal(plan.envp[i], "KEVENT_CPU=9");
	}
	/* nothing, and NULL, add nothing */
	const char *const none[] = {NULL};
	assert_int_equal(kplan_add_env(&plan, none), 0);
	assert_int_equal(kplan_add_env(&plan, NULL), 0);
	assert_int_equal(plan.n_env, before + 2);
	kplan_release(&plan);
	kevent_free(ev);
	kfile_unref(f);
}

static void test_runs_nothing(void **state)
{
	(void)state;
	struct kfile *f = file_with("    last: true\n");
	struct kevent *ev = tu_event(KEVENT_POWER, OBJ, "high", "");
	struct kplan plan = {.argc = 99};
	assert_int_equal(kplan_build(&f->rules[0], ev, &plan), -EINVAL);
	assert_null(plan.argv);
	assert_null(plan.envp);
	assert_int_equal(plan.argc, 0);
	kplan_release(&plan);
	kevent_free(ev);
	kfile_unref(f);
}

struct var_case {
	const char *key, *var;
};

static const struct var_case var_cases[] = {
	{"Cpu", "KEVENT_CPU"},
	{"cpu", "KEVENT_CPU"},
	{"fan-speed", "KEVENT_FAN_SPEED"},
	{"a.b", "KEVENT_A_B"},
	{"x_y", "KEVENT_X_Y"},
	{"Zone9", "KEVENT_ZONE9"},
	{"9", "KEVENT_9"},
	{"", "KEVENT_"},
	{"---", "KEVENT____"},
	{"MiXeD.Case-1", "KEVENT_MIXED_CASE_1"},
};

static void test_prop_var(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(var_cases); i++) {
		char buf[64];
		memset(buf, 'Z', sizeof(buf));
		kplan_prop_var(var_cases[i].key, buf);
		assert_string_equal(buf, var_cases[i].var);
	}
}

struct tmpl_case {
	const char *tmpl;
	bool ok;
};

static const struct tmpl_case tmpl_cases[] = {
	{"plain", true},  {"${A}", true}, {"${_a9}", true}, {"x${A}y${B}", true}, {"$", true},
	{"$$", true},	  {"$${", true},  {"$$${A}", true}, {"$A", true},	  {"a$", true},
	{"${", false},	  {"${}", false}, {"${9}", false},  {"${A", false},	  {"${A-B}", false},
	{"${A }", false}, {"x${", false}, {"$$$${", true},  {"${A}${", false},	  {"${ A}", false},
};

static void test_check_template(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(tmpl_cases); i++) {
		const char *why = NULL;
		print_message("template: %s\n", tmpl_cases[i].tmpl);
		int rc = ktemplate_check(tmpl_cases[i].tmpl, &why);
		assert_int_equal(rc, tmpl_cases[i].ok ? 0 : -EINVAL);
		if (!tmpl_cases[i].ok)
			assert_non_null(why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_recovered_env),
		cmocka_unit_test(test_synthetic_env),
		cmocka_unit_test(test_reserved_env),
		cmocka_unit_test(test_udev_env),
		cmocka_unit_test(test_payload_never_sets_dangerous),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_shell),
		cmocka_unit_test(test_runs_nothing),
		cmocka_unit_test(test_add_env),
		cmocka_unit_test(test_prop_var),
		cmocka_unit_test(test_check_template),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
