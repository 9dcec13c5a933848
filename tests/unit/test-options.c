// SPDX-License-Identifier: GPL-2.0-or-later
/* keventd's options: the configuration file (any long option by name, the
 * section mqtt), its diagnostics, and the command line over it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "options.h"
#include "testutil.h"
#include "userdirs.h"

/* Parses yaml as "k.yaml" into o (initialised here); returns the
 * diagnostics as one string of lines, NULL for none. */
static char *parse(struct koptions *o, const char *yaml)
{
	struct kdiags d = {0};
	koptions_init(o);
	assert_int_equal(koptions_parse_file(o, yaml, strlen(yaml), "k.yaml", &d), 0);
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < d.n; i++) {
		_cleanup_free_ char *line = tu_diag(&d.v[i]);
		strbuf_printf(&sb, "%s\n", line);
	}
	bool none = d.n == 0;
	kdiags_free(&d);
	if (none) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_steal(&sb);
}

static void test_good(void **state)
{
	(void)state;
	struct koptions o;
	_cleanup_free_ char *diags = parse(&o, "max-children: 16\n"
					       "queue-size: 100\n"
					       "history: 0\n"
					       "log-level: debug\n"
					       "log-format: json\n"
					       "dry-run: true\n"
					       "sources: socket,udev\n"
					       "udev-monitor: kernel\n"
					       "control: /run/k/ctl\n"
					       "control-group: 0\n"
					       "rules-dir: [/a, /b]\n");
	assert_string_equal(diags ? diags : "", "");
	koptions_finish(&o);
	assert_int_equal(o.cfg.max_children, 16);
	assert_int_equal(o.cfg.queue_size, 100);
	assert_int_equal(o.cfg.history, 0);
	assert_int_equal(o.log_level, LOG_DEBUG);
	assert_int_equal(o.log_format, KLOG_JSON);
	assert_true(o.cfg.dry_run);
	assert_int_equal(o.cfg.sources, (1u << KEVENT_SOURCE_SOCKET) | (1u << KEVENT_SOURCE_UDEV));
	assert_int_equal(o.cfg.udev_monitor, KUDEV_KERNEL);
	assert_string_equal(o.cfg.control_path, "/run/k/ctl");
	assert_int_equal(o.cfg.control_gid, 0);
	assert_int_equal(o.cfg.n_rule_dirs, 2);
	assert_string_equal(o.cfg.rule_dirs[0], "/a");
	assert_string_equal(o.cfg.rule_dirs[1], "/b");
	assert_false(o.mqtt.enabled);
	koptions_release(&o);
}

static void test_empty(void **state)
{
	(void)state;
	static const char *const cases[] = {"", "# nothing\n", "~\n", "---\n...\n"};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct koptions o, def;
		_cleanup_free_ char *diags = parse(&o, cases[i]);
		assert_null(diags);
		koptions_init(&def);
		koptions_finish(&o);
		koptions_finish(&def);
		assert_int_equal(o.cfg.max_children, def.cfg.max_children);
		assert_int_equal(o.cfg.n_rule_dirs, 3);
		koptions_release(&o);
		koptions_release(&def);
	}
}

/* The command line wins, whatever the file says; its --rules-dir list
 * replaces the file's. */
static void test_command_line_wins(void **state)
{
	(void)state;
	struct koptions o;
	_cleanup_free_ char *diags =
		parse(&o, "max-children: 16\nrules-dir: [/a, /b]\nlog-level: debug\n");
	assert_null(diags);
	struct strbuf why = STRBUF_INIT;
	assert_int_equal(koptions_set(&o, "max-children", "3", false, &why), 0);
	assert_int_equal(koptions_set(&o, "rules-dir", "/c", false, &why), 0);
	assert_int_equal(koptions_set(&o, "rules-dir", "/d", false, &why), 0);
	assert_int_equal(koptions_set(&o, "dry-run", NULL, false, &why), 0);
	assert_int_equal(koptions_set(&o, "bogus", "1", false, &why), -ENOENT);
	assert_int_equal(koptions_set(&o, "max-children", "0", false, &why), -EINVAL);
	assert_string_equal(strbuf_str(&why), "--max-children wants 1..65536, not '0'");
	strbuf_release(&why);
	koptions_finish(&o);
	assert_int_equal(o.cfg.max_children, 3);
	assert_int_equal(o.log_level, LOG_DEBUG);
	assert_true(o.cfg.dry_run);
	assert_int_equal(o.cfg.n_rule_dirs, 2);
	assert_string_equal(o.cfg.rule_dirs[0], "/c");
	assert_string_equal(o.cfg.rule_dirs[1], "/d");
	koptions_release(&o);
}

static void test_mqtt(void **state)
{
	(void)state;
	struct koptions o;
	_cleanup_free_ char *diags = parse(
		&o, "mqtt:\n"
		    "  url: mqtts://[::1]:8884\n"
		    "  client_id: c1\n"
		    "  username: u\n"
		    "  password_file: /p\n"
		    "  ca_file: /ca.pem\n"
		    "  cert_file: /c.pem\n"
		    "  key_file: /k.pem\n"
		    "  topic_prefix: fleet/h1\n"
		    "  publish: matched\n"
		    "  qos: 0\n"
		    "  spool: {dir: /s, max_mb: 2}\n"
		    "  subscribe: [\"fleet/+/power/#\", {filter: \"#\", host_level: 2}, \"+\",\n"
		    "              {filter: a/b, host_level: 1}, \"$share/g/x/+/y\",\n"
		    "              {host_level: 3, filter: \"a/+/+/+\"}]\n");
	assert_null(diags);
	const struct kmqtt_config *m = &o.mqtt;
	assert_true(m->enabled);
	assert_true(m->tls);
	assert_string_equal(m->host, "::1");
	assert_int_equal(m->port, 8884);
	assert_string_equal(m->client_id, "c1");
	assert_string_equal(m->username, "u");
	assert_string_equal(m->password_file, "/p");
	assert_string_equal(m->ca_file, "/ca.pem");
	assert_string_equal(m->cert_file, "/c.pem");
	assert_string_equal(m->key_file, "/k.pem");
	assert_string_equal(m->topic_prefix, "fleet/h1");
	assert_int_equal(m->publish, KMQTT_PUBLISH_MATCHED);
	assert_int_equal(m->qos, 0);
	assert_string_equal(m->spool_dir, "/s");
	assert_int_equal(m->spool_max_mb, 2);
	assert_int_equal(m->n_subscribe, 6);
	assert_string_equal(m->subscribe[0], "fleet/+/power/#");
	assert_string_equal(m->subscribe[3], "a/b");
	assert_string_equal(m->subscribe[4], "$share/g/x/+/y");
	/* the level of the host: the first '+' ("$share/NAME/" not counted),
	 * or what host_level says */
	static const unsigned want[] = {2, 2, 1, 1, 2, 3};
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		assert_int_equal(m->host_level[i], want[i]);
	koptions_release(&o);

	/* the defaults */
	diags = (free(diags), parse(&o, "mqtt: {url: mqtt://broker}\n"));
	assert_null(diags);
	assert_true(o.mqtt.enabled);
	assert_false(o.mqtt.tls);
	assert_string_equal(o.mqtt.host, "broker");
	assert_int_equal(o.mqtt.port, 1883);
	assert_null(o.mqtt.client_id);
	assert_null(o.mqtt.topic_prefix);
	assert_null(o.mqtt.spool_dir);
	assert_int_equal(o.mqtt.spool_max_mb, KMQTT_DEFAULT_SPOOL_MAX_MB);
	assert_int_equal(o.mqtt.qos, 1);
	assert_int_equal(o.mqtt.publish, KMQTT_PUBLISH_ALL);
	koptions_release(&o);
	diags = (free(diags), parse(&o, "mqtt: {url: \"mqtts://b/\"}\n"));
	assert_null(diags);
	assert_int_equal(o.mqtt.port, 8883);
	koptions_release(&o);
}

/* A password over mqtt:// is allowed, and warned about, with where the
 * url is; never over mqtts://, and never without a password. */
static void test_mqtt_warning(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		const char *yaml;
		bool warns;
		unsigned line, col;
	} cases[] = {
		{"mqtt:\n  username: u\n  password_file: /p\n  url: mqtt://b\n", true, 4, 8},
		{"mqtt: {url: mqtt://b, username: u, password_file: /p}\n", true, 1, 13},
		{"mqtt: {url: mqtts://b, username: u, password_file: /p}\n", false, 0, 0},
		{"mqtt: {url: mqtt://b, username: u}\n", false, 0, 0},
		{"mqtt: {url: mqtt://b}\n", false, 0, 0},
		{"max-children: 2\n", false, 0, 0},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct koptions o;
		_cleanup_free_ char *diags = parse(&o, cases[i].yaml);
		assert_null(diags);
		const char *w = kmqtt_config_warning(&o.mqtt);
		if (!w != !cases[i].warns)
			fail_msg("%s: %s", cases[i].yaml, w ? w : "no warning");
		if (w) {
			assert_string_equal(w, "the broker's password is sent over mqtt://, in "
					       "clear text, for anyone on the way to read: use "
					       "mqtts://");
			assert_int_equal(o.mqtt.url_line, cases[i].line);
			assert_int_equal(o.mqtt.url_col, cases[i].col);
		}
		koptions_release(&o);
	}
}

/* Each mistake is one diagnostic at its place, and sets nothing. */
static void test_bad(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		const char *yaml, *diag;
	} cases[] = {
		{"max-children: 0\n", "k.yaml:1:15: error: max-children wants 1..65536, not '0'\n"},
		{"queue-size: x\n", "k.yaml:1:13: error: queue-size wants 1..10000000, not 'x'\n"},
		{"history: -1\n", "k.yaml:1:10: error: history wants 0..1048576, not '-1'\n"},
		{"log-level: loud\n", "k.yaml:1:12: error: unknown log level 'loud'\n"},
		{"log-format: xml\n", "k.yaml:1:13: error: unknown log format 'xml' (text, json)\n"},
		{"udev-monitor: x\n", "k.yaml:1:15: error: udev-monitor wants auto, udev or kernel, not 'x'\n"},
		{"sources: nosuch\n", "k.yaml:1:10: error: unknown source in 'nosuch' (kernel, udev, thermal, socket, acpi, input, fs, mqtt, trace, md, kmsg, condition)\n"},
		{"control-group: no-such-group-here\n", "k.yaml:1:16: error: unknown group 'no-such-group-here'\n"},
		{"dry-run: maybe\n", "k.yaml:1:10: error: dry-run wants true or false, not 'maybe'\n"},
		{"dry-run:\n", "k.yaml:1:9: error: dry-run wants true or false, not nothing\n"},
		{"control: [a]\n", "k.yaml:1:10: error: control wants a value, not a list\n"},
		{"rules-dir: {a: b}\n", "k.yaml:1:12: error: rules-dir wants a directory or a list of them, not a mapping\n"},
		{"bogus: 1\n", "k.yaml:1:1: error: unknown option 'bogus' (a long option of keventd(8), or a section: mqtt, notify, alertmanager, fs, trace, kmsg)\n"},
		{"max-chilren: 3\n", "k.yaml:1:1: error: unknown option 'max-chilren': did you mean max-children?\n"},
		{"fss: {}\n", "k.yaml:1:1: error: unknown option 'fss': did you mean fs?\n"},
		{"help: true\n", "k.yaml:1:1: error: unknown option 'help' (a long option of keventd(8), or a section: mqtt, notify, alertmanager, fs, trace, kmsg)\n"},
		{"config: /x\n", "k.yaml:1:1: error: unknown option 'config' (a long option of keventd(8), or a section: mqtt, notify, alertmanager, fs, trace, kmsg)\n"},
		{"log-format: json\nlog-format: text\n", "k.yaml:2:1: error: 'log-format' given twice\n"},
		{"- a\n", "k.yaml:1:1: error: a configuration file is a mapping of option names, not a list\n"},
		{"? [a]\n: b\n", "k.yaml:1:3: error: an option is a name, not a list\n"},
		{"a: [\n", "k.yaml:2:1: error: YAML syntax error: did not find expected node content while parsing a flow node\n"},
		{"mqtt: 1\n", "k.yaml:1:7: error: mqtt: a mapping of keys (url, client_id, username, password_file, ca_file, cert_file, key_file, topic_prefix, publish, qos, spool, subscribe), not a value\n"},
		{"mqtt: {qos: 1}\n", "k.yaml:1:7: error: mqtt: 'url' is missing (mqtt://HOST:PORT or mqtts://HOST:PORT)\n"},
		{"mqtt: {url: http://b}\n", "k.yaml:1:13: error: mqtt: url \"http://b\" is neither mqtt://HOST:PORT nor mqtts://HOST:PORT\n"},
		{"mqtt: {url: \"mqtt://\"}\n", "k.yaml:1:13: error: mqtt: url \"mqtt://\" names no host\n"},
		{"mqtt: {url: \"mqtt://b:0\"}\n", "k.yaml:1:13: error: mqtt: url \"mqtt://b:0\": the port is a number from 1 to 65535\n"},
		{"mqtt: {url: \"mqtt://b:x\"}\n", "k.yaml:1:13: error: mqtt: url \"mqtt://b:x\": the port is a number from 1 to 65535\n"},
		{"mqtt: {url: \"mqtt://b/t\"}\n", "k.yaml:1:13: error: mqtt: url \"mqtt://b/t\": nothing may follow HOST:PORT\n"},
		{"mqtt: {url: \"mqtt://[::1\"}\n", "k.yaml:1:13: error: mqtt: url \"mqtt://[::1\": no ']' after the IPv6 address\n"},
		{"mqtt: {url: \"mqtt://u@b\"}\n", "k.yaml:1:13: error: mqtt: url \"mqtt://u@b\": a host name has no '@'\n"},
		{"mqtt: {url: mqtt://b, url: mqtt://c}\n", "k.yaml:1:23: error: mqtt: 'url' given twice\n"},
		{"mqtt: {url: mqtt://b, qos: 2}\n", "k.yaml:1:28: error: mqtt: 'qos' wants a number from 0 to 1, not '2'\n"},
		{"mqtt: {url: mqtt://b, publish: some}\n", "k.yaml:1:32: error: mqtt: 'publish' is all, matched or none, not 'some'\n"},
		{"mqtt: {url: mqtt://b, username: \"\"}\n", "k.yaml:1:33: error: mqtt: 'username' wants a value, not an empty string\n"},
		{"mqtt: {url: mqtt://b, spool: 1}\n", "k.yaml:1:30: error: mqtt: 'spool' is a mapping with 'dir' and 'max_mb', not a value\n"},
		{"mqtt: {url: mqtt://b, spool: {dir: s}}\n", "k.yaml:1:36: error: mqtt: spool: 'dir' is an absolute path, not \"s\"\n"},
		{"mqtt: {url: mqtt://b, spool: {max_mb: 0}}\n", "k.yaml:1:39: error: mqtt: spool: 'max_mb' wants a number from 1 to 1048576, not '0'\n"},
		{"mqtt: {url: mqtt://b, spool: {x: 0}}\n", "k.yaml:1:31: error: mqtt: spool: unknown key 'x' (dir, max_mb)\n"},
		{"mqtt: {url: mqtt://b, subscribe: a}\n", "k.yaml:1:34: error: mqtt: 'subscribe' is a list of topic filters, not a value\n"},
		{"mqtt: {url: mqtt://b, subscribe: [a/#/b]}\n", "k.yaml:1:35: error: mqtt: bad topic filter \"a/#/b\": '#' stands for the last levels: \"a/#\", and only at the end\n"},
		{"mqtt: {url: mqtt://b, subscribe: [a+]}\n", "k.yaml:1:35: error: mqtt: bad topic filter \"a+\": '+' stands for a whole level: \"a/+/b\", not \"a+\"\n"},
		{"mqtt: {url: mqtt://b, subscribe: [[a]]}\n", "k.yaml:1:35: error: mqtt: a topic filter of 'subscribe' is a value or {filter: F, host_level: N}, not a list\n"},
		/* no level names the host: it would be the message's own word */
		{"mqtt: {url: mqtt://b, subscribe: [keventd/host17/#]}\n", "k.yaml:1:35: error: mqtt: topic filter \"keventd/host17/#\" names no host: the level of its first '+' is the host, or say which level is with {filter: \"keventd/host17/#\", host_level: N}\n"},
		{"mqtt: {url: mqtt://b, subscribe: [\"$share/g/#\"]}\n", "k.yaml:1:35: error: mqtt: topic filter \"$share/g/#\" names no host: the level of its first '+' is the host, or say which level is with {filter: \"$share/g/#\", host_level: N}\n"},
		{"mqtt: {url: mqtt://b, subscribe: [{filter: a/b, host_level: 3}]}\n", "k.yaml:1:61: error: mqtt: host_level 3: the filter \"a/b\" has 2 levels\n"},
		{"mqtt: {url: mqtt://b, subscribe: [{filter: a/+, host_level: 0}]}\n", "k.yaml:1:61: error: mqtt: subscribe: 'host_level' wants a number from 1 to 64, not '0'\n"},
		{"mqtt: {url: mqtt://b, subscribe: [{host_level: 1}]}\n", "k.yaml:1:35: error: mqtt: subscribe: a mapping needs 'filter'\n"},
		{"mqtt: {url: mqtt://b, subscribe: [{filter: a/+, level: 1}]}\n", "k.yaml:1:49: error: mqtt: subscribe: unknown or repeated key 'level' (filter, host_level)\n"},
		{"mqtt: {url: mqtt://b, topic_prefix: a/+}\n", "k.yaml:1:37: error: mqtt: topic_prefix \"a/+\" has a wildcard ('+' or '#')\n"},
		{"mqtt: {url: mqtt://b, topic_prefix: a/}\n", "k.yaml:1:37: error: mqtt: topic_prefix \"a/\" ends with '/'\n"},
		{"mqtt: {url: mqtt://b, ca_file: /c}\n", "k.yaml:1:13: error: mqtt: ca_file, cert_file and key_file need an mqtts:// url\n"},
		{"mqtt: {url: mqtts://b, cert_file: /c}\n", "k.yaml:1:7: error: mqtt: cert_file and key_file go together\n"},
		{"mqtt: {url: mqtts://b, password_file: /p}\n", "k.yaml:1:7: error: mqtt: password_file needs a username\n"},
		{"mqtt: {url: mqtt://b, colour: blue}\n", "k.yaml:1:23: error: mqtt: unknown key 'colour' (url, client_id, username, password_file, ca_file, cert_file, key_file, topic_prefix, publish, qos, spool, subscribe)\n"},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct koptions o, def;
		_cleanup_free_ char *diags = parse(&o, cases[i].yaml);
		if (!diags || strcmp(diags, cases[i].diag) != 0)
			fail_msg("case %zu: %s\nwanted: %sgot:    %s", i, cases[i].yaml,
				 cases[i].diag, diags ? diags : "(nothing)\n");
		/* and nothing was set */
		koptions_init(&def);
		assert_int_equal(o.cfg.max_children, def.cfg.max_children);
		assert_int_equal(o.cfg.history, def.cfg.history);
		assert_int_equal(o.cfg.dry_run, def.cfg.dry_run);
		assert_int_equal(o.log_level, def.log_level);
		assert_false(o.mqtt.enabled);
		assert_null(o.mqtt.host);
		koptions_release(&o);
		koptions_release(&def);
	}
}

static void test_load_file(void **state)
{
	(void)state;
	_cleanup_free_ char *dir = tu_mkdtemp();
	tu_write(dir, "k.yaml", "history: 7\n", 0644);
	tu_write(dir, "w.yaml", "history: 7\n", 0666);
	_cleanup_free_ char *path = tu_printf("%s/k.yaml", dir);
	_cleanup_free_ char *writable = tu_printf("%s/w.yaml", dir);
	_cleanup_free_ char *missing = tu_printf("%s/none.yaml", dir);
	struct koptions o;
	struct kdiags d = {0};
	koptions_init(&o);
	assert_int_equal(koptions_load_file(&o, path, false, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(o.cfg.history, 7);
	assert_int_equal(koptions_load_file(&o, missing, false, &d), -ENOENT);
	/* a file others may write is refused when keventd trusts only root */
	assert_int_equal(koptions_load_file(&o, writable, true, &d), 0);
	assert_int_equal(d.n, 1);
	assert_non_null(strstr(d.v[0].msg, "refusing configuration file"));
	kdiags_free(&d);
	koptions_release(&o);
	tu_rm_rf(dir);
}

/* --history-bytes: bytes, KiB, MiB or GiB, from 4 KiB to 1024 GiB; unset,
 * 0 (the default: 2 KiB per event kept). */
static void test_history_bytes(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct { const char *value; size_t bytes; } cases[] = {
		{"4096", 4096},
		{"64K", 64 * 1024},
		{"3M", 3 * 1024 * 1024},
		{"2G", (size_t)2 << 30},
		{"1024G", (size_t)1 << 40},
		{"0", 0}, {"4095", 0}, {"1025G", 0}, {"-1", 0}, {"1KB", 0}, {"1Q", 0},
		{"K", 0}, {"", 0}, {"99999999999999999999", 0},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct koptions o;
		koptions_init(&o);
		assert_int_equal(o.cfg.history_bytes, 0);
		struct strbuf why = STRBUF_INIT;
		int rc = koptions_set(&o, "history-bytes", cases[i].value, false, &why);
		print_message("case %s: %d %s\n", cases[i].value, rc, strbuf_str(&why));
		assert_int_equal(rc, cases[i].bytes ? 0 : -EINVAL);
		assert_int_equal(o.cfg.history_bytes, cases[i].bytes);
		if (!cases[i].bytes)
			assert_non_null(strstr(strbuf_str(&why), "--history-bytes wants a size of "
								 "4K..1024G (bytes, or with K, M "
								 "or G)"));
		strbuf_release(&why);
		koptions_release(&o);
	}
}

/* --state-dir (an absolute path; default /run/keventd) and --journal-size
 * (64 KiB to 1 GiB; default 4 MiB), on the command line and from a file. */
static void test_state(void **state)
{
	(void)state;
	/* clang-format off */
	static const struct {
		const char *name, *value;
		bool file;
		int rc;
		const char *dir; /* what state_dir is after */
		size_t size;	 /* what journal_size is after */
		const char *why;
	} cases[] = {
		{"state-dir", "/tmp/kevt-state", false, 0, "/tmp/kevt-state", 4u << 20, NULL},
		{"state-dir", "/var/lib/keventd", true, 0, "/var/lib/keventd", 4u << 20, NULL},
		{"state-dir", "relative", false, -EINVAL, "/run/keventd", 4u << 20,
		 "--state-dir wants an absolute path, not 'relative'"},
		{"state-dir", "", true, -EINVAL, "/run/keventd", 4u << 20,
		 "state-dir wants an absolute path"},
		{"journal-size", "64K", false, 0, "/run/keventd", 64u << 10, NULL},
		{"journal-size", "1G", true, 0, "/run/keventd", 1u << 30, NULL},
		{"journal-size", "65535", false, -EINVAL, "/run/keventd", 4u << 20,
		 "--journal-size wants a size of 64K..1G"},
		{"journal-size", "2G", false, -EINVAL, "/run/keventd", 4u << 20,
		 "--journal-size wants a size of 64K..1G"},
		{"journal-size", "0", true, -EINVAL, "/run/keventd", 4u << 20,
		 "journal-size wants a size of 64K..1G"},
	};
	/* clang-format on */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct koptions o;
		koptions_init(&o);
		assert_string_equal(o.cfg.state_dir, "/run/keventd");
		struct strbuf why = STRBUF_INIT;
		int rc = koptions_set(&o, cases[i].name, cases[i].value, cases[i].file, &why);
		print_message("case %s %s: %d %s\n", cases[i].name, cases[i].value, rc,
			      strbuf_str(&why));
		assert_int_equal(rc, cases[i].rc);
		assert_string_equal(o.cfg.state_dir, cases[i].dir);
		assert_int_equal(o.cfg.journal_size, cases[i].size);
		if (cases[i].why)
			assert_non_null(strstr(strbuf_str(&why), cases[i].why));
		strbuf_release(&why);
		koptions_release(&o);
	}
}

/* --lib-dir: an absolute path or none; default /var/lib/keventd. */
static void test_lib_dir(void **state)
{
	(void)state;
	struct koptions o;
	koptions_init(&o);
	assert_string_equal(o.cfg.lib_dir, "/var/lib/keventd");
	struct strbuf why = STRBUF_INIT;
	assert_int_equal(koptions_set(&o, "lib-dir", "/tmp/kevt-lib", false, &why), 0);
	assert_string_equal(o.cfg.lib_dir, "/tmp/kevt-lib");
	assert_int_equal(koptions_set(&o, "lib-dir", "lib", true, &why), -EINVAL);
	assert_string_equal(strbuf_str(&why), "lib-dir wants an absolute path or none, not 'lib'");
	assert_string_equal(o.cfg.lib_dir, "/tmp/kevt-lib");
	assert_int_equal(koptions_set(&o, "lib-dir", "none", false, &why), 0);
	assert_null(o.cfg.lib_dir);
	strbuf_release(&why);
	koptions_release(&o);
}

/* The user instance's defaults: its places, the sources socket and
 * condition, the trust checks; every option still wins. */
static void test_user(void **state)
{
	(void)state;
	struct kuserenv env = {.home = "/home/a", .runtime_dir = "/run/user/7"};
	struct kuserdirs u;
	const char *bad;
	assert_int_equal(kuserdirs_compute(&env, &u, &bad), 0);
	struct koptions o;
	koptions_init(&o);
	assert_int_equal(koptions_init_user(&o, &u), 0);
	kuserdirs_release(&u); /* o has its own copies */
	koptions_finish(&o);
	assert_int_equal(o.cfg.n_rule_dirs, 4);
	assert_string_equal(o.cfg.rule_dirs[0], "/home/a/.config/keventd/rules.d");
	assert_string_equal(o.cfg.rule_dirs[1], "/run/user/7/keventd/rules.d");
	assert_string_equal(o.cfg.rule_dirs[2], KEVENT_USER_RULES_DIR_ETC);
	assert_string_equal(o.cfg.rule_dirs[3], KEVENT_USER_RULES_DIR_LIB);
	assert_string_equal(o.cfg.control_path, "/run/user/7/keventd/control");
	assert_string_equal(o.cfg.state_dir, "/run/user/7/keventd");
	assert_string_equal(o.cfg.lib_dir, "/home/a/.local/state/keventd");
	assert_int_equal(o.cfg.sources, 1u << KEVENT_SOURCE_SOCKET | 1u << KEVENT_SOURCE_CONDITION);
	assert_true(o.cfg.trust);
	assert_true(o.cfg.user);
	koptions_release(&o);

	/* the options over them */
	assert_int_equal(kuserdirs_compute(&env, &u, &bad), 0);
	koptions_init(&o);
	assert_int_equal(koptions_init_user(&o, &u), 0);
	kuserdirs_release(&u);
	struct strbuf why = STRBUF_INIT;
	assert_int_equal(koptions_set(&o, "rules-dir", "/x", false, &why), 0);
	assert_int_equal(koptions_set(&o, "control", "/c/ctl", false, &why), 0);
	assert_int_equal(koptions_set(&o, "sources", "socket,udev", false, &why), 0);
	assert_int_equal(koptions_set(&o, "lib-dir", "none", false, &why), 0);
	koptions_finish(&o);
	assert_int_equal(o.cfg.n_rule_dirs, 1);
	assert_string_equal(o.cfg.rule_dirs[0], "/x");
	assert_string_equal(o.cfg.control_path, "/c/ctl");
	assert_int_equal(o.cfg.sources, 1u << KEVENT_SOURCE_SOCKET | 1u << KEVENT_SOURCE_UDEV);
	assert_null(o.cfg.lib_dir);
	strbuf_release(&why);
	koptions_release(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_command_line_wins),
		cmocka_unit_test(test_mqtt),
		cmocka_unit_test(test_mqtt_warning),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_history_bytes),
		cmocka_unit_test(test_state),
		cmocka_unit_test(test_lib_dir),
		cmocka_unit_test(test_user),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
