// SPDX-License-Identifier: GPL-2.0-or-later
/* The rule loader: every error class with its location, and what parses. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "testutil.h"
#include "util.h"

struct err_case {
	const char *label;
	const char *yaml;
	const char *diag; /* the exact line; for libyaml's own messages, a prefix */
	bool prefix;
};

#define UNKNOWN_RULE_KEY                                                                          \
	"unknown key 'bogus' in rule (expected name, match, run, shell, timeout, user, "          \
	"ratelimit, "                                                                             \
	"debounce, key, enabled, last, no_new_privs, limits, memory_max, tasks_max, cpu_weight, " \
	"transient, unit_properties, session, notify, title, message or share)"
#define NOT_A_TYPE "not an event type (general, storage, power, fs or hotplug)"
#define BAD_VAR                                                                              \
	"\"${\" must be followed by a variable name and \"}\" (write \"$${\" for a literal " \
	"\"${\")"

/* clang-format off */
static const struct err_case err_cases[] = {
	/* YAML itself */
	{"unclosed flow mapping", "rules:\n  - name: a\n    match: {type: power\n", "t.yaml:4:1: error: YAML syntax error: did not find expected ',' or '}'", true},
	{"tab indentation", "rules:\n  - name: a\n\tmatch: x\n", "t.yaml:3:1: error: YAML syntax error: found a tab character that violates indentation while scanning a plain scalar; hint: indent with spaces: YAML does not take tabs there", false},
	{"unquoted >= in a block", "rules:\n  - match:\n      payload:\n        capacity: >= 90000\n", "t.yaml:4:20: error: YAML syntax error: did not find expected comment or line break while scanning a block scalar; hint: quote values that start with '>'", false},
	{"unquoted ` in a flow", "rules:\n  - match: {signal: `x`}\n", "t.yaml:2:21: error: YAML syntax error: found character that cannot start any token while scanning for the next token; hint: quote values that start with '`'", false},
	{"unquoted @ in a list", "rules:\n  - run:\n      - @x\n", "t.yaml:3:9: error: YAML syntax error: found character that cannot start any token while scanning for the next token; hint: quote values that start with '@'", false},
	{"unclosed flow sequence", "rules: [\n", "t.yaml:2:1: error: YAML syntax error: did not find expected node content", true},
	{"alias", "x: &a [1]\nrules: *a\n", "t.yaml:2:8: error: YAML aliases are not supported", false},
	{"merge key alias", "rules:\n  - <<: *a\n", "t.yaml:2:9: error: YAML aliases are not supported", false},
	{"two documents", "---\nrules: []\n---\nrules: []\n", "t.yaml:3:1: error: only one YAML document per rule file", false},
	/* the schema */
	{"unknown top-level key", "rule:\n  - name: x\n", "t.yaml:1:1: error: unknown top-level key 'rule' (expected 'rules' or 'conditions')", false},
	{"root is a list", "- a\n", "t.yaml:1:1: error: a rule file is a mapping with the key 'rules', not a list", false},
	{"rules is a mapping", "rules: {a: b}\n", "t.yaml:1:8: error: 'rules' must be a list of rules, not a mapping", false},
	{"rule is a value", "rules:\n  - 42\n", "t.yaml:2:5: error: a rule must be a mapping with 'match' and 'run', not a value", false},
	{"unknown rule key", "rules:\n  - name: x\n    bogus: y\n", "t.yaml:3:5: error: " UNKNOWN_RULE_KEY, false},
	{"misspelt rule key", "rules:\n  - name: x\n    nmae: y\n", "t.yaml:3:5: error: unknown key 'nmae' in rule: did you mean name?", false},
	{"misspelt timeout", "rules:\n  - run: [/bin/true]\n    timout: 5s\n", "t.yaml:3:5: error: unknown key 'timout' in rule: did you mean timeout?", false},
	{"misspelt debounce", "rules:\n  - run: [/bin/true]\n    debounse: 5s\n", "t.yaml:3:5: error: unknown key 'debounse' in rule: did you mean debounce?", false},
	{"misspelt match key", "rules:\n  - run: [/bin/true]\n    match: {objetc: /x}\n", "t.yaml:3:13: error: unknown key 'objetc' in match: did you mean object?", false},
	{"run as one string with spaces", "rules:\n  - run: /usr/bin/logger  hello world\n", "t.yaml:2:10: error: 'run' takes a list: did you mean [/usr/bin/logger, hello, world]?", false},
	{"memory_max lots", "rules:\n  - memory_max: lots\n", "t.yaml:2:17: error: bad memory_max \"lots\": not a size (bytes, with K, M, G, T, P or E for powers of 1024, or infinity)", false},
	{"memory_max 20Q", "rules:\n  - memory_max: 20Q\n", "t.yaml:2:17: error: bad memory_max \"20Q\": not a size (bytes, with K, M, G, T, P or E for powers of 1024, or infinity)", false},
	{"memory_max 20MB", "rules:\n  - memory_max: 20MB\n", "t.yaml:2:17: error: bad memory_max \"20MB\": not a size (bytes, with K, M, G, T, P or E for powers of 1024, or infinity)", false},
	{"memory_max percent", "rules:\n  - memory_max: 10%\n", "t.yaml:2:17: error: bad memory_max \"10%\": not a size (bytes, with K, M, G, T, P or E for powers of 1024, or infinity)", false},
	{"memory_max 0", "rules:\n  - memory_max: 0\n", "t.yaml:2:17: error: bad memory_max \"0\": must be more than 0", false},
	{"memory_max too large", "rules:\n  - memory_max: 20000000E\n", "t.yaml:2:17: error: bad memory_max \"20000000E\": too large", false},
	{"memory_max a list", "rules:\n  - memory_max: [1]\n", "t.yaml:2:17: error: 'memory_max' must be a value, not a list", false},
	{"tasks_max 0", "rules:\n  - tasks_max: 0\n", "t.yaml:2:16: error: bad tasks_max \"0\": a number of tasks, 1 or more, or infinity", false},
	{"tasks_max many", "rules:\n  - tasks_max: many\n", "t.yaml:2:16: error: bad tasks_max \"many\": a number of tasks, 1 or more, or infinity", false},
	{"cpu_weight 0", "rules:\n  - cpu_weight: 0\n", "t.yaml:2:17: error: bad cpu_weight \"0\": a weight from 1 to 10000", false},
	{"cpu_weight 10001", "rules:\n  - cpu_weight: 10001\n", "t.yaml:2:17: error: bad cpu_weight \"10001\": a weight from 1 to 10000", false},
	{"transient not a bool", "rules:\n  - run: [/bin/true]\n    transient: maybe\n", "t.yaml:3:16: error: 'transient' must be true or false, not \"maybe\"", false},
	{"transient runs nothing", "rules:\n  - transient: true\n", "t.yaml:2:16: error: 'transient: true' needs a 'run' or 'shell' to run", false},
	{"transient with memory_max", "rules:\n  - run: [/bin/true]\n    transient: true\n    memory_max: 20M\n", "t.yaml:4:17: error: 'memory_max' is for keventd's own runs: a transient unit takes MemoryMax in unit_properties", false},
	{"transient with limits", "rules:\n  - shell: 'true'\n    transient: true\n    limits: {nofile: 8}\n", "t.yaml:4:13: error: 'limits' is for keventd's own runs: a transient unit has the resource limits systemd gives it", false},
	{"unit_properties without transient", "rules:\n  - run: [/bin/true]\n    unit_properties: {MemoryMax: 20M}\n", "t.yaml:3:22: error: 'unit_properties' are a transient unit's: the rule needs 'transient: true' or 'session: active'", false},
	{"unit_properties a list", "rules:\n  - run: [/bin/true]\n    transient: true\n    unit_properties: [MemoryMax]\n", "t.yaml:4:22: error: 'unit_properties' must be a mapping of systemd properties to values, not a list", false},
	{"unknown unit property", "rules:\n  - run: [/bin/true]\n    transient: true\n    unit_properties:\n      MemoryMaximum: 20M\n", "t.yaml:5:7: error: unit property 'MemoryMaximum' cannot be set: not a property keventd knows (keventd.rules(5) lists them)", false},
	{"unit property from the rule", "rules:\n  - run: [/bin/true]\n    transient: true\n    unit_properties:\n      ExecStart: /bin/sh\n", "t.yaml:5:7: error: unit property 'ExecStart' cannot be set: the unit runs the rule's 'run'", false},
	{"bad unit property value", "rules:\n  - run: [/bin/true]\n    transient: true\n    unit_properties:\n      MemoryMax: lots\n", "t.yaml:5:18: error: bad unit property MemoryMax \"lots\": not a size (bytes, with K, M, G, T, P or E for powers of 1024, or infinity)", false},
	{"unit property value a list", "rules:\n  - run: [/bin/true]\n    transient: true\n    unit_properties:\n      Nice: [1]\n", "t.yaml:5:13: error: 'Nice' must be a value, not a list", false},
	{"unit property twice", "rules:\n  - run: [/bin/true]\n    transient: true\n    unit_properties:\n      Nice: 1\n      Nice: 2\n", "t.yaml:6:7: error: unit property 'Nice' given twice", false},
	{"session not active", "rules:\n  - run: [notify-send, hot]\n    session: seat0\n", "t.yaml:3:14: error: 'session' must be active, not \"seat0\"", false},
	{"session with transient false", "rules:\n  - run: [notify-send, hot]\n    session: active\n    transient: false\n", "t.yaml:4:16: error: 'session: active' runs a transient unit: 'transient' cannot be false", false},
	{"session with a user", "rules:\n  - run: [notify-send, hot]\n    session: active\n    user: root\n", "t.yaml:4:11: error: 'session: active' runs as the session's user: no 'user'", false},
	{"session runs nothing", "rules:\n  - session: active\n", "t.yaml:2:14: error: 'session: active' needs a 'run' or 'shell' to run", false},
	{"enabled not a bool", "rules:\n  - enabled: maybe\n", "t.yaml:2:14: error: 'enabled' must be true or false, not \"maybe\"", false},
	{"enabled twice", "rules:\n  - enabled: true\n    enabled: false\n", "t.yaml:3:5: error: key 'enabled' given twice", false},
	{"bad debounce", "rules:\n  - debounce: soon\n", "t.yaml:2:15: error: bad debounce \"soon\": ", true},
	{"bad key", "rules:\n  - key: device\n", "t.yaml:2:10: error: 'key' must be object, rule or payload.NAME, not \"device\"", false},
	{"key of no property", "rules:\n  - key: payload.\n", "t.yaml:2:10: error: 'key' must be object, rule or payload.NAME, not \"payload.\"", false},
	{"key is a list", "rules:\n  - key: [rule]\n", "t.yaml:2:10: error: 'key' must be a value, not a list", false},
	{"unknown match key", "rules:\n  - match:\n      typo: power\n", "t.yaml:3:7: error: unknown key 'typo' in match: did you mean type?", false},
	{"name is a list", "rules:\n  - name: [a, b]\n", "t.yaml:2:11: error: 'name' must be a value, not a list", false},
	{"name is empty", "rules:\n  - name:\n    run: [/bin/true]\n", "t.yaml:2:10: error: 'name' must be a value, not nothing", false},
	{"name with a newline", "rules:\n  - name: \"a\\nb\"\n", "t.yaml:2:11: error: a rule name is 1-128 printable characters", false},
	{"name with an escape sequence", "rules:\n  - name: \"evil\\e[2J\\nfake: error\"\n", "t.yaml:2:11: error: a rule name is 1-128 printable characters", false},
	{"name with DEL", "rules:\n  - name: \"a\\x7fb\"\n", "t.yaml:2:11: error: a rule name is 1-128 printable characters", false},
	{"name with a C1 control (CSI)", "rules:\n  - name: \"a\\x9b2Jb\"\n", "t.yaml:2:11: error: a rule name is 1-128 printable characters", false},
	{"name with a tab", "rules:\n  - name: \"a\\tb\"\n", "t.yaml:2:11: error: a rule name is 1-128 printable characters", false},
	{"echoed key with ESC and a newline, escaped", "rules:\n  - name: a\n    \"k\\e[31m\\nt.yaml:9:9: error: forged\": 1\n", "t.yaml:3:5: error: unknown key 'k\\x1b[31m\\nt.yaml:9:9: error: forged' in rule (expected name, match, run, shell, timeout, user, ratelimit, debounce, key, enabled, last, no_new_privs, limits, memory_max, tasks_max, cpu_weight, transient, unit_properties, session, notify, title, message or share)", false},
	{"echoed glob with a C1 control, escaped", "rules:\n  - match:\n      object: \"/a/[\\x9b\\r\"\n", "t.yaml:3:15: error: bad 'object' value \"/a/[\\xc2\\x9b\\x0d\": glob has '[' without a closing ']'", false},
	{"match is a list", "rules:\n  - match: [a]\n", "t.yaml:2:12: error: 'match' must be a mapping, not a list", false},
	{"type is a mapping", "rules:\n  - match:\n      type: {a: b}\n", "t.yaml:3:13: error: 'type' must be a value or a list of values, not a mapping", false},
	{"list item is a list", "rules:\n  - match:\n      signal: [a, [b]]\n", "t.yaml:3:19: error: 'signal' must be a value or a list of values, not a list", false},
	{"empty list", "rules:\n  - match:\n      signal: []\n", "t.yaml:3:15: error: 'signal' must not be an empty list", false},
	{"payload is a list", "rules:\n  - match:\n      payload: [a]\n", "t.yaml:3:16: error: 'payload' must be a mapping of property names to tests, not a list", false},
	{"run is a mapping", "rules:\n  - run: {a: b}\n", "t.yaml:2:10: error: 'run' must be a list: [program, arguments...]", false},
	{"run is empty", "rules:\n  - run: []\n", "t.yaml:2:10: error: 'run' must name a program", false},
	{"run program empty", "rules:\n  - run: [\"\"]\n", "t.yaml:2:11: error: 'run' must name a program", false},
	{"run argument a list", "rules:\n  - run: [/bin/echo, [x]]\n", "t.yaml:2:22: error: 'run' arguments must be values, not a list", false},
	{"shell is a list", "rules:\n  - shell: [echo]\n", "t.yaml:2:12: error: 'shell' must be a value, not a list", false},
	{"timeout is a list", "rules:\n  - timeout: [1s]\n", "t.yaml:2:14: error: 'timeout' must be a value, not a list", false},
	{"last is not a boolean", "rules:\n  - last: maybe\n", "t.yaml:2:11: error: 'last' must be true or false, not \"maybe\"", false},
	{"bad glob", "rules:\n  - match:\n      object: \"/a/[b\"\n", "t.yaml:3:15: error: bad 'object' value \"/a/[b\": glob has '[' without a closing ']'", false},
	{"bad glob in a list", "rules:\n  - match:\n      object: [/a, \"/b\\\\\"]\n", "t.yaml:3:20: error: bad 'object' value \"/b\\\": glob ends with a lone backslash", false},
	{"bad payload glob", "rules:\n  - match:\n      payload:\n        Zone: \"cpu[0\"\n", "t.yaml:4:15: error: bad 'Zone' value \"cpu[0\": glob has '[' without a closing ']'", false},
	{"empty payload value", "rules:\n  - match:\n      payload:\n        Zone: \"\"\n", "t.yaml:4:15: error: bad 'Zone' value \"\": empty value", false},
	{"lone negation", "rules:\n  - match:\n      object: \"!\"\n", "t.yaml:3:15: error: bad 'object' value \"!\": '!' must be followed by a value", false},
	{"bad duration unit", "rules:\n  - timeout: 10x\n", "t.yaml:2:14: error: bad timeout \"10x\": unknown duration unit (use ms, s, m, h or d)", false},
	{"zero duration", "rules:\n  - timeout: 0\n", "t.yaml:2:14: error: bad timeout \"0\": duration must be greater than zero", false},
	{"duration too long", "rules:\n  - timeout: 31d\n", "t.yaml:2:14: error: bad timeout \"31d\": duration is longer than 30 days", false},
	{"negative duration", "rules:\n  - timeout: -1s\n", "t.yaml:2:14: error: bad timeout \"-1s\": duration must be a number with a unit: ms, s, m, h or d", false},
	{"rate count zero", "rules:\n  - ratelimit: 0/1m\n", "t.yaml:2:16: error: bad ratelimit \"0/1m\": rate count must be at least 1", false},
	{"rate without slash", "rules:\n  - ratelimit: abc\n", "t.yaml:2:16: error: bad ratelimit \"abc\": rate must be N/PERIOD, e.g. 1/60s", false},
	{"rate bad period", "rules:\n  - ratelimit: 1/xs\n", "t.yaml:2:16: error: bad ratelimit \"1/xs\": unknown duration unit (use ms, s, m, h or d)", false},
	{"rate count too big", "rules:\n  - ratelimit: 1000001/s\n", "t.yaml:2:16: error: bad ratelimit \"1000001/s\": rate count must be at most 1000000", false},
	{"bad number test", "rules:\n  - match:\n      payload:\n        Temperature: \">= abc\"\n", "t.yaml:4:22: error: bad test for payload property 'Temperature': a number test is OP NUMBER with OP one of >, >=, <, <=, == and an integer", false},
	{"number test without number", "rules:\n  - match:\n      payload:\n        T: \"<\"\n", "t.yaml:4:12: error: bad test for payload property 'T': a number test is OP NUMBER with OP one of >, >=, <, <=, == and an integer", false},
	{"bad range end", "rules:\n  - match:\n      payload:\n        T: 10..x\n", "t.yaml:4:12: error: bad test for payload property 'T': a range is MIN..MAX with two integers", false},
	{"reversed range", "rules:\n  - match:\n      payload:\n        T: 95..80\n", "t.yaml:4:12: error: bad test for payload property 'T': a range's MIN is greater than its MAX", false},
	{"number test in a list", "rules:\n  - match:\n      payload:\n        T: [x, \">= 5\"]\n", "t.yaml:4:16: error: bad 'T' value \">= 5\": a number test must be the only value, not part of a list", false},
	{"bad payload key", "rules:\n  - match:\n      payload:\n        \"a b\": x\n", "t.yaml:4:9: error: a payload property name is [A-Za-z0-9_.-]+", false},
	{"payload test a mapping", "rules:\n  - match:\n      payload:\n        A: {b: c}\n", "t.yaml:4:12: error: 'A' must be a value or a list of values, not a mapping", false},
	{"bad type name", "rules:\n  - match:\n      type: pwr\n", "t.yaml:3:13: error: bad 'type' value \"pwr\": " NOT_A_TYPE, false},
	{"type as a number", "rules:\n  - match:\n      type: \"2\"\n", "t.yaml:3:13: error: bad 'type' value \"2\": " NOT_A_TYPE, false},
	{"type as a glob", "rules:\n  - match:\n      type: [power, \"st*\"]\n", "t.yaml:3:21: error: bad 'type' value \"st*\": " NOT_A_TYPE, false},
	{"bad source", "rules:\n  - match:\n      source: kern\n", "t.yaml:3:15: error: bad 'source' value \"kern\": not a source (kernel, udev, thermal, socket, acpi, input, fs, mqtt, trace, md, kmsg, condition)", false},
	{"bad signal", "rules:\n  - match:\n      signal: \"a b\"\n", "t.yaml:3:15: error: bad 'signal' value \"a b\": a signal is 1-64 characters of [A-Za-z0-9_.:-], so this never matches", false},
	{"unknown user", "rules:\n  - user: nosuchuser-kevent\n", "t.yaml:2:11: error: unknown user \"nosuchuser-kevent\"", false},
	{"run and shell", "rules:\n  - run: [/bin/true]\n    shell: echo\n", "t.yaml:3:12: error: a rule has either 'run' or 'shell', not both", false},
	{"${ with a digit", "rules:\n  - run: [/bin/echo, \"${1}\"]\n", "t.yaml:2:22: error: bad argument \"${1}\": " BAD_VAR, false},
	{"${ unclosed", "rules:\n  - run: [/bin/echo, \"x${FOO\"]\n", "t.yaml:2:22: error: bad argument \"x${FOO\": " BAD_VAR, false},
	{"${} empty", "rules:\n  - run: [/bin/echo, \"${}\"]\n", "t.yaml:2:22: error: bad argument \"${}\": " BAD_VAR, false},
	{"${ with a dash", "rules:\n  - run: [/bin/echo, \"${A-B}\"]\n", "t.yaml:2:22: error: bad argument \"${A-B}\": " BAD_VAR, false},
	{"$ in the program", "rules:\n  - run: [\"$HOME/x\"]\n", "t.yaml:2:11: error: the program of 'run' must be literal: no '$' in it, so that an event can never choose what runs", false},
	{"${} in the program", "rules:\n  - run: [\"/usr/bin/${KEVENT_SIGNAL}\"]\n", "t.yaml:2:11: error: the program of 'run' must be literal: no '$' in it, so that an event can never choose what runs", false},
	{"duplicate rule names", "rules:\n  - name: a\n  - name: b\n  - name: a\n", "t.yaml:4:11: error: duplicate rule name \"a\" (first used at line 2)", false},
	{"name clashing with a default name", "rules:\n  - {}\n  - name: \"t.yaml:0\"\n", "t.yaml:3:11: error: duplicate rule name \"t.yaml:0\" (first used at line 2)", false},
	{"duplicate rule key", "rules:\n  - name: a\n    name: b\n", "t.yaml:3:5: error: key 'name' given twice", false},
	{"duplicate match key", "rules:\n  - match:\n      type: power\n      type: fs\n", "t.yaml:4:7: error: key 'type' given twice", false},
	{"duplicate payload key", "rules:\n  - match:\n      payload:\n        Cpu: 1\n        CPU: 2\n", "t.yaml:5:9: error: payload property 'CPU' is tested twice", false},
	{"share a mapping", "rules:\n  - run: [/bin/true]\n    share: {a: b}\n", "t.yaml:3:12: error: 'share' must be users or a list of user names and \"@group\" names, not a mapping", false},
	{"share nothing", "rules:\n  - run: [/bin/true]\n    share:\n", "t.yaml:3:11: error: 'share' must be users or a list of user names and \"@group\" names, not nothing", false},
	{"share an empty list", "rules:\n  - run: [/bin/true]\n    share: []\n", "t.yaml:3:12: error: 'share' names 1 to 64 users or \"@group\"s", false},
	{"share one name", "rules:\n  - run: [/bin/true]\n    share: alice\n", "t.yaml:3:12: error: 'share' is users or a list of names: did you mean [alice]?", false},
	{"share one group", "rules:\n  - run: [/bin/true]\n    share: \"@wheel\"\n", "t.yaml:3:12: error: 'share' is users or a list of names: did you mean [\"@wheel\"]?", false},
	{"share another word", "rules:\n  - run: [/bin/true]\n    share: all users\n", "t.yaml:3:12: error: 'share' is users or a list of names, not \"all users\"", false},
	{"share a name with a blank", "rules:\n  - run: [/bin/true]\n    share: [bob, \"al ice\"]\n", "t.yaml:3:18: error: 'share': \"al ice\" is not a user's name nor \"@\" and a group's (1 to 256 of [A-Za-z0-9._-], not starting with '-' or '.', a last '$' allowed)", false},
	{"share a name with a colon", "rules:\n  - run: [/bin/true]\n    share: [\"a:b\"]\n", "t.yaml:3:13: error: 'share': \"a:b\" is not a user's name nor \"@\" and a group's (1 to 256 of [A-Za-z0-9._-], not starting with '-' or '.', a last '$' allowed)", false},
	{"share a name with a slash", "rules:\n  - run: [/bin/true]\n    share: [../root]\n", "t.yaml:3:13: error: 'share': \"../root\" is not a user's name nor \"@\" and a group's (1 to 256 of [A-Za-z0-9._-], not starting with '-' or '.', a last '$' allowed)", false},
	{"share a name starting with -", "rules:\n  - run: [/bin/true]\n    share: [-alice]\n", "t.yaml:3:13: error: 'share': \"-alice\" is not a user's name nor \"@\" and a group's (1 to 256 of [A-Za-z0-9._-], not starting with '-' or '.', a last '$' allowed)", false},
	{"share a lone @", "rules:\n  - run: [/bin/true]\n    share: [\"@\"]\n", "t.yaml:3:13: error: 'share': \"@\" is not a user's name nor \"@\" and a group's (1 to 256 of [A-Za-z0-9._-], not starting with '-' or '.', a last '$' allowed)", false},
	{"share a lone $", "rules:\n  - run: [/bin/true]\n    share: [\"$\"]\n", "t.yaml:3:13: error: 'share': \"$\" is not a user's name nor \"@\" and a group's (1 to 256 of [A-Za-z0-9._-], not starting with '-' or '.', a last '$' allowed)", false},
	{"share a name with a newline", "rules:\n  - run: [/bin/true]\n    share: [\"a\\nb\"]\n", "t.yaml:3:13: error: 'share': \"a\\nb\" is not a user's name nor \"@\" and a group's (1 to 256 of [A-Za-z0-9._-], not starting with '-' or '.', a last '$' allowed)", false},
	{"share a list in the list", "rules:\n  - run: [/bin/true]\n    share: [[alice]]\n", "t.yaml:3:13: error: 'share' must be a value, not a list", false},
	{"share a name twice", "rules:\n  - run: [/bin/true]\n    share: [alice, \"@wheel\", alice]\n", "t.yaml:3:30: error: 'share': 'alice' given twice", false},
	{"duplicate top-level key", "rules: []\nrules: []\n", "t.yaml:2:1: error: key 'rules' given twice", false},
};
/* clang-format on */

static void test_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(err_cases); i++) {
		const struct err_case *c = &err_cases[i];
		print_message("case: %s\n", c->label);
		struct kdiags d = tu_parse_fail(c->yaml, "t.yaml");
		char *got = tu_diag(&d.v[0]);
		if (d.n != 1 || (c->prefix ? strncmp(got, c->diag, strlen(c->diag)) != 0
					   : strcmp(got, c->diag) != 0))
			print_error("got %zu diag(s), first: %s\nwanted: %s\n", d.n, got, c->diag);
		assert_int_equal(d.n, 1);
		if (c->prefix)
			assert_memory_equal(got, c->diag, strlen(c->diag));
		else
			assert_string_equal(got, c->diag);
		free(got);
		kdiags_free(&d);
	}
}

static void test_all_errors_reported(void **state)
{
	(void)state;
	static const char *const want[] = {
		"t.yaml:3:5: error: " UNKNOWN_RULE_KEY,
		"t.yaml:4:19: error: bad 'type' value \"pwr\": " NOT_A_TYPE,
		"t.yaml:5:14: error: bad timeout \"1y\": unknown duration unit (use ms, s, m, h or "
		"d)",
		/* a rule's own errors come before the clash of its name */
		"t.yaml:8:12: error: a rule has either 'run' or 'shell', not both",
		"t.yaml:6:11: error: duplicate rule name \"x\" (first used at line 2)",
	};
	const char *yaml = "rules:\n"
			   "  - name: x\n"
			   "    bogus: y\n"
			   "  - match: {type: pwr}\n"
			   "    timeout: 1y\n"
			   "  - name: x\n"
			   "    run: [/bin/true]\n"
			   "    shell: echo\n";
	struct kdiags d = tu_parse_fail(yaml, "t.yaml");
	assert_int_equal(d.n, ARRAY_SIZE(want));
	for (size_t i = 0; i < d.n; i++) {
		char *got = tu_diag(&d.v[i]);
		assert_string_equal(got, want[i]);
		free(got);
	}
	kdiags_free(&d);
}

static void test_diags_append(void **state)
{
	(void)state;
	/* Diagnostics are appended: what was there stays. */
	struct kdiags d = {0};
	kdiags_add(&d, "other.yaml", 0, 0, "earlier %d", 1);
	struct kfile *f = NULL;
	const char *y = "rules:\n  - nmae: x\n";
	assert_int_equal(krules_parse(y, strlen(y), "/dir/t.yaml", &f, &d), -EINVAL);
	assert_null(f);
	assert_int_equal(d.n, 2);
	char *a = tu_diag(&d.v[0]), *b = tu_diag(&d.v[1]);
	/* one about the whole file has no position, rather than an invented 1:1 */
	assert_string_equal(a, "other.yaml: error: earlier 1");
	assert_memory_equal(b, "/dir/t.yaml:2:5: error: unknown key 'nmae'", 41);
	free(a);
	free(b);
	kdiags_free(&d);
}

static void test_file_limits(void **state)
{
	(void)state;
	struct kdiags d = {0};
	struct kfile *f = NULL;
	const char nul[] = "rules: []\n\0\n";
	assert_int_equal(krules_parse(nul, sizeof(nul) - 1, "n.yaml", &f, &d), -EINVAL);
	assert_null(f);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].msg, "rule file contains a NUL byte");
	kdiags_free(&d);

	size_t big = KRULE_FILE_MAX_BYTES + 1;
	char *buf = malloc(big);
	assert_non_null(buf);
	memset(buf, '#', big);
	assert_int_equal(krules_parse(buf, big, "b.yaml", &f, &d), -EINVAL);
	assert_null(f);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].msg, "rule file larger than 1048576 bytes");
	kdiags_free(&d);
	free(buf);

	/* Deep nesting is refused, not a stack overflow. */
	struct strbuf sb = STRBUF_INIT;
	strbuf_puts(&sb, "rules: ");
	for (int i = 0; i < 100; i++)
		strbuf_putc(&sb, '[');
	for (int i = 0; i < 100; i++)
		strbuf_putc(&sb, ']');
	d = tu_parse_fail(strbuf_str(&sb), "deep.yaml");
	assert_string_equal(d.v[0].msg, "YAML nesting too deep");
	kdiags_free(&d);
	strbuf_release(&sb);
}

static void test_empty_files(void **state)
{
	(void)state;
	static const char *const empty[] = {"",		"\n",	       "# only a comment\n",
					    "rules:\n", "rules: []\n", "---\nrules: ~\n...\n"};
	for (size_t i = 0; i < ARRAY_SIZE(empty); i++) {
		struct kfile *f = tu_parse(empty[i], "e.yaml");
		assert_int_equal(f->n_rules, 0);
		kfile_unref(f);
	}
}

static void test_defaults(void **state)
{
	(void)state;
	struct kfile *f = tu_parse("rules:\n"
				   "  - match: {type: power}\n"
				   "  - name: named\n"
				   "  - {}\n",
				   "/etc/keventd/rules.d/50-x.yaml");
	assert_string_equal(f->path, "/etc/keventd/rules.d/50-x.yaml");
	assert_string_equal(f->name, "50-x.yaml");
	assert_int_equal(f->refs, 1);
	assert_int_equal(f->n_rules, 3);
	assert_string_equal(f->rules[0].name, "50-x.yaml:0");
	assert_string_equal(f->rules[1].name, "named");
	assert_string_equal(f->rules[2].name, "50-x.yaml:2");
	for (unsigned i = 0; i < 3; i++) {
		const struct krule *r = &f->rules[i];
		assert_int_equal(r->index, i);
		assert_int_equal(r->line, 2 + i);
		assert_int_equal(r->col, 5);
		assert_ptr_equal(r->file, f);
		assert_null(r->run);
		assert_null(r->shell);
		assert_null(krule_extra(r)->user);
		assert_false(r->last);
		assert_int_equal(krule_extra(r)->timeout_ms, 60000);
		assert_int_equal(krule_extra(r)->rl_period_ms, 0);
		assert_false(krule_runs_something(r));
	}
	assert_int_equal(f->rules[0].type_mask, 1u << KEVENT_POWER);
	assert_int_equal(f->rules[1].type_mask, 0x1f);
	kfile_unref(f);
}

/* Rules of one file that repeat a list hold it once: the later ones point
 * at the first one's, and each still reads its own values; the file frees
 * every list once (the sanitizer build checks). */
static void test_shared_lists(void **state)
{
	(void)state;
	struct kfile *f = tu_parse("rules:\n"
				   "  - match: {type: power, signal: a, object: \"/x/*\"}\n"
				   "    run: [/bin/true, \"${KEVENT_OBJECT}\"]\n"
				   "  - match: {type: power, signal: b, object: \"/x/*\"}\n"
				   "    run: [/bin/true, \"${KEVENT_OBJECT}\"]\n"
				   "  - match: {type: power, signal: \"!a\", object: \"/x/*\"}\n"
				   "    run: [/bin/true]\n"
				   "    timeout: 5s\n"
				   "  - match: {type: [power], signal: [kernel], source: kernel}\n",
				   "/r/50-x.yaml");
	const struct krule *r = f->rules;
	assert_int_equal(f->n_rules, 4);
	assert_int_equal(r[0].shared, 0);
	assert_int_equal(r[1].shared, KRULE_SHARED_TYPE | KRULE_SHARED_OBJECT | KRULE_SHARED_RUN);
	assert_ptr_equal(r[1].type.v, r[0].type.v);
	assert_ptr_equal(r[1].object.v, r[0].object.v);
	assert_ptr_equal(r[1].run, r[0].run);
	assert_ptr_not_equal(r[1].signal.v, r[0].signal.v);
	assert_string_equal(r[1].signal.v[0].text, "b");
	/* "!a" is not "a"; a run of one argument is not one of two */
	assert_int_equal(r[2].shared, KRULE_SHARED_TYPE | KRULE_SHARED_OBJECT);
	assert_true(r[2].signal.v[0].negate);
	assert_string_equal(r[2].run[0], "/bin/true");
	assert_null(r[2].run[1]);
	/* equal values share across keys too: source kernel is signal kernel */
	assert_int_equal(r[3].shared, KRULE_SHARED_TYPE | KRULE_SHARED_SOURCE);
	assert_ptr_equal(r[3].source.v, r[3].signal.v);
	assert_string_equal(r[3].source.v[0].text, "kernel");
	/* the rare keys: out of line only for the rule that gives one */
	assert_null(r[0].extra);
	assert_non_null(r[2].extra);
	assert_int_equal(krule_extra(&r[2])->timeout_ms, 5000);
	assert_int_equal(krule_extra(&r[0])->timeout_ms, KRULE_DEFAULT_TIMEOUT_MS);
	kfile_unref(f);
}

static void test_full_rule(void **state)
{
	(void)state;
	struct kfile *f = tu_parse("rules:\n"
				   "  - name: cpu-overheat\n"
				   "    match:\n"
				   "      type: [power, \"!fs\"]\n"
				   "      object: /org/kernel/devices/system/cpu/*\n"
				   "      signal: [high, critical]\n"
				   "      source: [kernel, thermal]\n"
				   "      payload:\n"
				   "        Cpu: \"0\"\n"
				   "        Zone: [\"cpu*\", \"!cpu7\"]\n"
				   "        Temperature: \">= 90000\"\n"
				   "    run: [/usr/libexec/x, --cpu, \"${KEVENT_CPU}\", \"$$5\"]\n"
				   "    timeout: 1m30s\n"
				   "    user: root\n"
				   "    ratelimit: 1/60s\n"
				   "    last: yes\n"
				   "  - shell: 'echo \"$KEVENT_OBJECT\" | logger'\n"
				   "    timeout: 500ms\n"
				   "    ratelimit: 10/m\n"
				   "    last: false\n"
				   "  - run: /bin/true\n",
				   NULL);
	assert_int_equal(f->n_rules, 3);
	const struct krule *r = &f->rules[0];
	assert_string_equal(r->name, "cpu-overheat");
	assert_int_equal(r->type_mask, 1u << KEVENT_POWER);
	assert_int_equal(r->type.n, 2);
	assert_true(r->type.v[1].negate);
	assert_string_equal(r->type.v[1].text, "fs");
	assert_int_equal(r->object.n, 1);
	assert_true(r->object.v[0].glob);
	assert_false(r->object.v[0].negate);
	assert_int_equal(r->signal.n, 2);
	assert_false(r->signal.v[0].glob);
	assert_int_equal(r->source.n, 2);
	assert_int_equal(r->n_payload, 3);
	assert_string_equal(r->payload[0].key, "Cpu");
	assert_int_equal(r->payload[0].kind, KPT_GLOB);
	assert_int_equal(r->payload[1].kind, KPT_GLOB);
	assert_int_equal(r->payload[1].globs.n, 2);
	assert_true(r->payload[1].globs.v[1].negate);
	assert_int_equal(r->payload[2].kind, KPT_CMP);
	assert_int_equal(r->payload[2].op, KCMP_GE);
	assert_int_equal(r->payload[2].a, 90000);
	assert_string_equal(r->payload[2].text, ">= 90000");
	assert_int_equal(strv_length(r->run), 4);
	assert_string_equal(r->run[0], "/usr/libexec/x");
	assert_string_equal(r->run[2], "${KEVENT_CPU}"); /* kept as a template */
	assert_string_equal(r->run[3], "$$5");
	assert_null(r->shell);
	assert_int_equal(krule_extra(r)->timeout_ms, 90000);
	assert_string_equal(krule_extra(r)->user, "root");
	assert_int_equal(krule_extra(r)->rl_count, 1);
	assert_int_equal(krule_extra(r)->rl_period_ms, 60000);
	assert_true(r->last);

	r = &f->rules[1];
	assert_null(r->run);
	assert_string_equal(r->shell, "echo \"$KEVENT_OBJECT\" | logger");
	assert_int_equal(krule_extra(r)->timeout_ms, 500);
	assert_int_equal(krule_extra(r)->rl_count, 10);
	assert_int_equal(krule_extra(r)->rl_period_ms, 60000);
	assert_false(r->last);
	assert_true(krule_runs_something(r));

	r = &f->rules[2]; /* a single value names the program alone */
	assert_int_equal(strv_length(r->run), 1);
	assert_string_equal(r->run[0], "/bin/true");
	kfile_unref(f);
}

struct num_case {
	const char *text;
	enum kpayload_kind kind;
	enum kcmp_op op;
	int64_t a, b;
	size_t n_globs; /* KPT_GLOB */
};

static const struct num_case num_cases[] = {
	{">5", KPT_CMP, KCMP_GT, 5, 0, 0},
	{"> 5", KPT_CMP, KCMP_GT, 5, 0, 0},
	{">=90000", KPT_CMP, KCMP_GE, 90000, 0, 0},
	{">= -3", KPT_CMP, KCMP_GE, -3, 0, 0},
	{"<10", KPT_CMP, KCMP_LT, 10, 0, 0},
	{"<= 10", KPT_CMP, KCMP_LE, 10, 0, 0},
	{"==0", KPT_CMP, KCMP_EQ, 0, 0, 0},
	{"== +7", KPT_CMP, KCMP_EQ, 7, 0, 0},
	{"  >= 1", KPT_CMP, KCMP_GE, 1, 0, 0},
	{"80000..95000", KPT_RANGE, 0, 80000, 95000, 0},
	{"-5..5", KPT_RANGE, 0, -5, 5, 0},
	{"7..7", KPT_RANGE, 0, 7, 7, 0},
	{"5", KPT_GLOB, 0, 0, 0, 1},
	{"a..b", KPT_GLOB, 0, 0, 0, 1},
	{"x>5", KPT_GLOB, 0, 0, 0, 1},
	{"1.5..2", KPT_GLOB, 0, 0, 0, 1},
	{"cpu*", KPT_GLOB, 0, 0, 0, 1},
};

static void test_number_tests(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(num_cases); i++) {
		const struct num_case *c = &num_cases[i];
		print_message("case: %s\n", c->text);
		char *y = tu_printf("rules:\n  - match:\n      payload:\n        T: \"%s\"\n",
				    c->text);
		struct kfile *f = tu_parse(y, NULL);
		const struct kpayload_test *t = &f->rules[0].payload[0];
		assert_int_equal(f->rules[0].n_payload, 1);
		assert_string_equal(t->key, "T");
		assert_string_equal(t->text, c->text);
		assert_int_equal(t->kind, c->kind);
		if (c->kind == KPT_CMP) {
			assert_int_equal(t->op, c->op);
			assert_int_equal(t->a, c->a);
		} else if (c->kind == KPT_RANGE) {
			assert_int_equal(t->a, c->a);
			assert_int_equal(t->b, c->b);
		} else {
			assert_int_equal(t->globs.n, c->n_globs);
			assert_string_equal(t->globs.v[0].text, c->text);
		}
		kfile_unref(f);
		free(y);
	}
}

struct dur_case {
	const char *text;
	uint64_t ms; /* 0: invalid */
};

static const struct dur_case dur_cases[] = {
	{"30s", 30000},
	{"90", 90000},
	{"1m30s", 90000},
	{"500ms", 500},
	{"2h", 7200000},
	{"1d", 86400000},
	{"30d", 2592000000ull},
	{"", 0},
	{"0", 0},
	{"0s", 0},
	{"s", 0},
	{"10x", 0},
	{"1.5s", 0},
	{"31d", 0},
	{" 1s", 0},
	{"1s ", 0},
	{"1S", 0},
	{"-1", 0},
};

static void test_durations(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(dur_cases); i++) {
		const struct dur_case *c = &dur_cases[i];
		uint64_t ms = 12345;
		const char *why = NULL;
		print_message("duration: \"%s\"\n", c->text);
		int rc = duration_parse(c->text, &ms, &why);
		if (c->ms) {
			assert_int_equal(rc, 0);
			assert_int_equal(ms, c->ms);
		} else {
			assert_int_equal(rc, -EINVAL);
			assert_non_null(why);
			assert_int_equal(ms, 12345); /* untouched on failure */
		}
	}
	char buf[32];
	duration_format(90000, buf, sizeof(buf));
	assert_string_equal(buf, "1m30s");
	duration_format(60000, buf, sizeof(buf));
	assert_string_equal(buf, "1m");
	duration_format(1500, buf, sizeof(buf));
	assert_string_equal(buf, "1s500ms");
	duration_format(0, buf, sizeof(buf));
	assert_string_equal(buf, "0s");
}

struct rate_case {
	const char *text;
	uint32_t count; /* 0: invalid */
	uint64_t period_ms;
};

static const struct rate_case rate_cases[] = {
	{"1/60s", 1, 60000},
	{"10/m", 10, 60000},
	{"6/1m", 6, 60000},
	{"3/s", 3, 1000},
	{"1000000/1h", 1000000, 3600000},
	{"5/90", 5, 90000},
	{"0/1s", 0, 0},
	{"/1s", 0, 0},
	{"1/", 0, 0},
	{"1", 0, 0},
	{"a/1s", 0, 0},
	{"1/0s", 0, 0},
	{"1000001/s", 0, 0},
	{"1/x", 0, 0},
	{"-1/s", 0, 0},
};

static void test_rates(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rate_cases); i++) {
		const struct rate_case *c = &rate_cases[i];
		uint32_t count = 77;
		uint64_t period = 88;
		const char *why = NULL;
		print_message("rate: \"%s\"\n", c->text);
		int rc = rate_parse(c->text, &count, &period, &why);
		if (c->count) {
			assert_int_equal(rc, 0);
			assert_int_equal(count, c->count);
			assert_int_equal(period, c->period_ms);
		} else {
			assert_int_equal(rc, -EINVAL);
			assert_non_null(why);
			assert_int_equal(count, 77);
			assert_int_equal(period, 88);
		}
	}
}

static void test_booleans(void **state)
{
	(void)state;
	static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On"};
	static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off"};
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		char *y = tu_printf("rules:\n  - last: %s\n  - last: %s\n", yes[i], no[i]);
		struct kfile *f = tu_parse(y, NULL);
		assert_true(f->rules[0].last);
		assert_false(f->rules[1].last);
		kfile_unref(f);
		free(y);
	}
}

static void test_refcount(void **state)
{
	(void)state;
	struct kfile *f = tu_parse("rules:\n  - name: a\n", NULL);
	assert_ptr_equal(kfile_ref(f), f);
	assert_int_equal(f->refs, 2);
	kfile_unref(f);
	assert_int_equal(f->refs, 1);
	kfile_unref(f);
	kfile_unref(NULL);
	assert_null(kfile_ref(NULL));
}

/* A rule's user is looked up once, at load: its ids and groups are in the
 * rule, so a run never waits on the user database. */
static void test_user_resolved_at_load(void **state)
{
	(void)state;
	struct kfile *f = tu_parse("rules:\n"
				   "  - user: root\n    run: /bin/true\n"
				   "  - user: \"0\"\n    run: /bin/true\n"
				   "  - user: \"424242\"\n    run: /bin/true\n"
				   "  - run: /bin/true\n",
				   NULL);
	assert_int_equal(f->n_rules, 4);
	for (size_t i = 0; i < 2; i++) {
		const struct kuser_ids *ids = krule_extra(&f->rules[i])->ids;
		assert_non_null(ids);
		assert_int_equal(ids->uid, 0);
		assert_int_equal(ids->gid, 0);
		bool has_root = false;
		for (size_t k = 0; k < ids->n_groups; k++)
			has_root |= ids->groups[k] == 0;
		assert_true(has_root);
	}
	/* a bare uid with no passwd entry: its uid as gid, no groups */
	const struct kuser_ids *ids = krule_extra(&f->rules[2])->ids;
	assert_non_null(ids);
	assert_int_equal(ids->uid, 424242);
	assert_int_equal(ids->gid, 424242);
	assert_int_equal(ids->n_groups, 0);
	assert_null(krule_extra(&f->rules[3])->ids);
	kfile_unref(f);
}

struct cg_case {
	const char *yaml;
	uint64_t memory_max, tasks_max;
	uint32_t cpu_weight;
};

/* clang-format off */
static const struct cg_case cg_cases[] = {
	{"memory_max: 20M", 20ull << 20, 0, 0},
	{"memory_max: 4096", 4096, 0, 0},
	{"memory_max: 1K", 1024, 0, 0},
	{"memory_max: 2G", 2ull << 30, 0, 0},
	{"memory_max: 1T", 1ull << 40, 0, 0},
	{"memory_max: infinity", UINT64_MAX, 0, 0},
	{"tasks_max: 8", 0, 8, 0},
	{"tasks_max: infinity", 0, UINT64_MAX, 0},
	{"cpu_weight: 1", 0, 0, 1},
	{"cpu_weight: 10000", 0, 0, 10000},
	{"memory_max: 200M\n    tasks_max: 64\n    cpu_weight: 50", 200ull << 20, 64, 50},
};
/* clang-format on */

/* memory_max, tasks_max, cpu_weight: systemd's units, kept for the run's cgroup. */
static void test_cgroup_limits(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cg_cases); i++) {
		const struct cg_case *c = &cg_cases[i];
		print_message("case: %s\n", c->yaml);
		char *y = tu_printf("rules:\n  - run: /bin/true\n    %s\n", c->yaml);
		struct kfile *f = tu_parse(y, NULL);
		free(y);
		const struct kcg_limits *l = krule_extra(&f->rules[0])->cg_limits;
		assert_non_null(l);
		assert_true(l->memory_max == c->memory_max);
		assert_true(l->tasks_max == c->tasks_max);
		assert_int_equal(l->cpu_weight, c->cpu_weight);
		kfile_unref(f);
	}
	struct kfile *f = tu_parse("rules:\n  - run: /bin/true\n", NULL);
	assert_null(krule_extra(&f->rules[0])->cg_limits);
	kfile_unref(f);
}

/* transient: true and unit_properties: kept in file order, converted to
 * what StartTransientUnit takes. */
static void test_transient(void **state)
{
	(void)state;
	struct kfile *f = tu_parse("rules:\n"
				   "  - run: [/bin/true]\n"
				   "    transient: true\n"
				   "    unit_properties:\n"
				   "      MemoryMax: 20M\n"
				   "      CPUQuota: 50%\n"
				   "      PrivateTmp: yes\n"
				   "      Nice: -5\n"
				   "      Slice: background.slice\n"
				   "  - shell: sleep 30\n"
				   "    transient: yes\n"
				   "  - run: [/bin/true]\n"
				   "    transient: false\n",
				   NULL);
	const struct krule *r = &f->rules[0];
	assert_true(r->transient);
	assert_int_equal(krule_extra(r)->n_unit_props, 5);
	assert_string_equal(krule_extra(r)->unit_props[0].name, "MemoryMax");
	assert_int_equal(krule_extra(r)->unit_props[0].type, 't');
	assert_true(krule_extra(r)->unit_props[0].u == 20ull << 20);
	assert_string_equal(krule_extra(r)->unit_props[1].name, "CPUQuotaPerSecUSec");
	assert_true(krule_extra(r)->unit_props[1].u == 500000);
	assert_string_equal(krule_extra(r)->unit_props[2].name, "PrivateTmp");
	assert_int_equal(krule_extra(r)->unit_props[2].type, 'b');
	assert_true(krule_extra(r)->unit_props[2].b);
	assert_string_equal(krule_extra(r)->unit_props[3].name, "Nice");
	assert_int_equal(krule_extra(r)->unit_props[3].type, 'i');
	assert_int_equal(krule_extra(r)->unit_props[3].i, -5);
	assert_string_equal(krule_extra(r)->unit_props[4].name, "Slice");
	assert_string_equal(krule_extra(r)->unit_props[4].s, "background.slice");
	assert_true(f->rules[1].transient);
	assert_int_equal(krule_extra(&f->rules[1])->n_unit_props, 0);
	assert_false(f->rules[2].transient);
	assert_false(f->rules[0].refused);
	assert_false(f->rules[0].session);
	kfile_unref(f);
	/* session: active is a transient rule, with unit properties of its own */
	f = tu_parse("rules:\n"
		     "  - run: [notify-send, hot]\n"
		     "    session: active\n"
		     "    unit_properties: {Nice: 5}\n",
		     NULL);
	assert_true(f->rules[0].session);
	assert_true(f->rules[0].transient);
	assert_int_equal(krule_extra(&f->rules[0])->n_unit_props, 1);
	kfile_unref(f);
}

/* share: every user, or names of users and "@groups", kept as written */
static void test_share(void **state)
{
	(void)state;
	struct kfile *f = tu_parse(
		"rules:\n"
		"  - run: [/bin/true]\n"
		"    share: users\n"
		"  - run: [/bin/true]\n"
		"    share: [alice, \"@wheel\", \"host01$\", u.ser_1-x, \"@Domain.Users\"]\n"
		"  - run: [/bin/true]\n"
		"    share: [users]\n"
		"  - run: [/bin/true]\n",
		NULL);
	const struct krule *r = f->rules;
	assert_true(krule_extra(&r[0])->share_users);
	assert_null(krule_extra(&r[0])->share);
	assert_false(krule_extra(&r[1])->share_users);
	char **v = krule_extra(&r[1])->share;
	assert_int_equal(strv_length(v), 5);
	assert_string_equal(v[0], "alice");
	assert_string_equal(v[1], "@wheel");
	assert_string_equal(v[2], "host01$");
	assert_string_equal(v[3], "u.ser_1-x");
	assert_string_equal(v[4], "@Domain.Users");
	/* in a list, "users" is a user of that name, not everyone */
	assert_false(krule_extra(&r[2])->share_users);
	assert_string_equal(krule_extra(&r[2])->share[0], "users");
	assert_null(krule_extra(&r[2])->share[1]);
	/* a rule without share: shares nothing, and keeps no extra for it */
	assert_null(r[3].extra);
	assert_false(krule_extra(&r[3])->share_users);
	assert_null(krule_extra(&r[3])->share);
	kfile_unref(f);

	/* the longest name, and one byte more */
	char name[KRULE_SHARE_NAME_MAX + 3];
	memset(name, 'a', sizeof(name));
	name[KRULE_SHARE_NAME_MAX] = '\0';
	assert_true(krule_share_name_valid(name));
	name[KRULE_SHARE_NAME_MAX] = 'a';
	name[KRULE_SHARE_NAME_MAX + 1] = '\0';
	assert_false(krule_share_name_valid(name));
	assert_false(krule_share_name_valid(""));
	assert_false(krule_share_name_valid(".hidden"));
	assert_false(krule_share_name_valid("@-x"));
	assert_false(krule_share_name_valid("a$b"));
	assert_true(krule_share_name_valid("@wheel"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_all_errors_reported),
		cmocka_unit_test(test_user_resolved_at_load),
		cmocka_unit_test(test_cgroup_limits),
		cmocka_unit_test(test_transient),
		cmocka_unit_test(test_diags_append),
		cmocka_unit_test(test_file_limits),
		cmocka_unit_test(test_empty_files),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_full_rule),
		cmocka_unit_test(test_number_tests),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_booleans),
		cmocka_unit_test(test_refcount),
		cmocka_unit_test(test_shared_lists),
		cmocka_unit_test(test_share),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
