// SPDX-License-Identifier: GPL-2.0-or-later
/* The matcher: one rule against one event, and the indexed ruleset against
 * a brute-force loop. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "util.h"

struct match_case {
	const char *match; /* the rule's match: as a YAML flow mapping */
	int type;	   /* the event */
	const char *object;
	const char *signal;
	const char *payload; /* NULL: "" */
	int source;	     /* 0: socket */
	bool want;
	const char *why; /* expected explanation of a miss, when given */
};

#define CPU "/org/kernel/devices/system/cpu/temperature"
#define DEV "/org/kernel/devices/pci0000:00/block/sda"

/* clang-format off */
static const struct match_case cases[] = {
	/* no match keys: everything */
	{.match = "{}", .type = 0, .object = "/a", .signal = "x", .want = true},
	{.match = "~", .type = 4, .object = "/a", .signal = "x", .want = true},
	/* values */
	{.match = "{type: power}", .type = 2, .object = "/a", .signal = "x", .want = true},
	{.match = "{type: power}", .type = 1, .object = "/a", .signal = "x", .want = false, .why = "type \"storage\" does not match power"},
	{.match = "{signal: high}", .type = 2, .object = "/a", .signal = "high", .want = true},
	{.match = "{signal: high}", .type = 2, .object = "/a", .signal = "High", .want = false, .why = "signal \"High\" does not match high"},
	{.match = "{signal: high}", .type = 2, .object = "/a", .signal = "higher", .want = false},
	{.match = "{object: " CPU "}", .type = 2, .object = CPU, .signal = "x", .want = true},
	{.match = "{object: " CPU "}", .type = 2, .object = CPU "/", .signal = "x", .want = false},
	/* lists */
	{.match = "{type: [power, storage]}", .type = 1, .object = "/a", .signal = "x", .want = true},
	{.match = "{type: [power, storage]}", .type = 3, .object = "/a", .signal = "x", .want = false, .why = "type \"fs\" does not match [power, storage]"},
	{.match = "{signal: [high, critical]}", .type = 2, .object = "/a", .signal = "critical", .want = true},
	{.match = "{signal: [high, critical]}", .type = 2, .object = "/a", .signal = "normal", .want = false, .why = "signal \"normal\" does not match [high, critical]"},
	/* all keys must match */
	{.match = "{type: power, signal: high, object: " CPU "}", .type = 2, .object = CPU, .signal = "high", .want = true},
	{.match = "{type: power, signal: high, object: " CPU "}", .type = 2, .object = "/b", .signal = "high", .want = false, .why = "object \"/b\" does not match " CPU},
	/* globs: fnmatch without FNM_PATHNAME, so '*' crosses '/' */
	{.match = "{object: /org/kernel/*}", .type = 1, .object = DEV, .signal = "x", .want = true},
	{.match = "{object: /org/kernel/devices/*/sda}", .type = 1, .object = DEV, .signal = "x", .want = true},
	{.match = "{object: /org/kernel/*}", .type = 1, .object = "/org/kernel", .signal = "x", .want = false},
	{.match = "{object: \"/dev/sd?\"}", .type = 1, .object = "/dev/sda", .signal = "x", .want = true},
	{.match = "{object: \"/dev/sd?\"}", .type = 1, .object = "/dev/sda1", .signal = "x", .want = false},
	{.match = "{object: \"/dev/sd[a-c]\"}", .type = 1, .object = "/dev/sdb", .signal = "x", .want = true},
	{.match = "{object: \"/dev/sd[!a-c]\"}", .type = 1, .object = "/dev/sdb", .signal = "x", .want = false},
	{.match = "{object: \"/dev/sd[!a-c]\"}", .type = 1, .object = "/dev/sdd", .signal = "x", .want = true},
	{.match = "{object: \"/a/\\\\*\"}", .type = 1, .object = "/a/*", .signal = "x", .want = true},
	{.match = "{object: \"/a/\\\\*\"}", .type = 1, .object = "/a/b", .signal = "x", .want = false},
	{.match = "{signal: \"hi*\"}", .type = 2, .object = "/a", .signal = "high", .want = true},
	{.match = "{object: \"/.hidden*\"}", .type = 2, .object = "/.hidden/x", .signal = "x", .want = true},
	/* negation */
	{.match = "{signal: \"!normal\"}", .type = 2, .object = "/a", .signal = "high", .want = true},
	{.match = "{signal: \"!normal\"}", .type = 2, .object = "/a", .signal = "normal", .want = false, .why = "signal \"normal\" does not match !normal"},
	{.match = "{type: \"!power\"}", .type = 2, .object = "/a", .signal = "x", .want = false},
	{.match = "{type: \"!power\"}", .type = 0, .object = "/a", .signal = "x", .want = true},
	{.match = "{object: \"!/org/kernel/*\"}", .type = 1, .object = DEV, .signal = "x", .want = false},
	{.match = "{object: \"!/org/kernel/*\"}", .type = 1, .object = "/usr/x", .signal = "x", .want = true},
	/* lists mixing positive and negated: one positive hits and no negated one */
	{.match = "{object: [\"/org/*\", \"!*/sda\"]}", .type = 1, .object = DEV, .signal = "x", .want = false, .why = "object \"" DEV "\" does not match [/org/*, !*/sda]"},
	{.match = "{object: [\"/org/*\", \"!*/sda\"]}", .type = 1, .object = DEV "1", .signal = "x", .want = true},
	{.match = "{object: [\"/org/*\", \"!*/sda\"]}", .type = 1, .object = "/usr/sdb", .signal = "x", .want = false},
	{.match = "{signal: [\"!remove\", \"!change\"]}", .type = 4, .object = "/a", .signal = "add", .want = true},
	{.match = "{signal: [\"!remove\", \"!change\"]}", .type = 4, .object = "/a", .signal = "change", .want = false},
	{.match = "{signal: [\"!a*\", add]}", .type = 4, .object = "/a", .signal = "add", .want = false},
	{.match = "{type: [\"!fs\", \"!power\"]}", .type = 3, .object = "/a", .signal = "x", .want = false},
	{.match = "{type: [\"!fs\", \"!power\"]}", .type = 4, .object = "/a", .signal = "x", .want = true},
	/* source */
	{.match = "{source: kernel}", .type = 0, .object = "/a", .signal = "x", .source = 1, .want = true},
	{.match = "{source: kernel}", .type = 0, .object = "/a", .signal = "x", .want = false, .why = "source \"socket\" does not match kernel"},
	{.match = "{source: \"!socket\"}", .type = 0, .object = "/a", .signal = "x", .source = 3, .want = true},
	/* payload globs; property names ignore case */
	{.match = "{payload: {Cpu: \"0\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "Cpu: 0", .want = true},
	{.match = "{payload: {cpu: \"0\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "CPU: 0", .want = true},
	{.match = "{payload: {Cpu: \"0\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "Cpu: 00", .want = false, .why = "payload property Cpu=\"00\" does not match 0"},
	{.match = "{payload: {Zone: \"cpu*\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "Zone: cpu3\nCpu: 3", .want = true},
	{.match = "{payload: {Zone: [x86_pkg_temp, \"cpu*\"]}}", .type = 2, .object = "/a", .signal = "x", .payload = "Zone: x86_pkg_temp", .want = true},
	{.match = "{payload: {Zone: \"!acpitz\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "Zone: acpitz", .want = false},
	{.match = "{payload: {Zone: \"!acpitz\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "Zone: cpu0", .want = true},
	{.match = "{payload: {Zone: \"*\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "Zone:", .want = true},
	{.match = "{payload: {Cpu: \"0\", Zone: \"cpu*\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "Cpu: 0\nZone: acpitz", .want = false},
	/* a missing property matches no positive value, and no negated one */
	{.match = "{payload: {Cpu: \"*\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "Zone: 1", .want = false, .why = "payload property Cpu is missing (wanted *)"},
	{.match = "{payload: {Cpu: \"!1\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "", .want = true},
	/* number tests */
	{.match = "{payload: {T: \">= 90000\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: 90000", .want = true},
	{.match = "{payload: {T: \">= 90000\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: 89999", .want = false, .why = "payload property T=89999 is not >= 90000"},
	{.match = "{payload: {T: \">90000\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: 90000", .want = false},
	{.match = "{payload: {T: \">90000\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: 90001", .want = true},
	{.match = "{payload: {T: \"<0\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: -5", .want = true},
	{.match = "{payload: {T: \"<0\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: 0", .want = false},
	{.match = "{payload: {T: \"<=0\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: 0", .want = true},
	{.match = "{payload: {T: \"== 7\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: +7", .want = true},
	{.match = "{payload: {T: \"== 7\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: 8", .want = false},
	{.match = "{payload: {T: \"== 7\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: 007", .want = true},
	{.match = "{payload: {T: 80000..95000}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: 80000", .want = true},
	{.match = "{payload: {T: 80000..95000}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: 95000", .want = true},
	{.match = "{payload: {T: 80000..95000}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: 95001", .want = false, .why = "payload property T=95001 is not 80000..95000"},
	{.match = "{payload: {T: 80000..95000}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: 79999", .want = false},
	{.match = "{payload: {T: -10..-5}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: -7", .want = true},
	/* missing and non-numeric properties never pass a number test */
	{.match = "{payload: {T: \">= 0\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "", .want = false, .why = "payload property T is missing (wanted >= 0)"},
	{.match = "{payload: {T: \">= 0\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: hot", .want = false, .why = "payload property T=\"hot\" is not a number (wanted >= 0)"},
	{.match = "{payload: {T: \">= 0\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: 5C", .want = false},
	{.match = "{payload: {T: \">= 0\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "T:", .want = false},
	{.match = "{payload: {T: \"< 0\"}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: 99999999999999999999", .want = false},
	{.match = "{payload: {T: 0..10}}", .type = 2, .object = "/a", .signal = "x", .payload = "T: 1.5", .want = false},
};
/* clang-format on */

static struct kfile *rule_file(const char *match)
{
	char *y = tu_printf("rules:\n  - name: r\n    match: %s\n", match);
	struct kfile *f = tu_parse(y, NULL);
	free(y);
	return f;
}

static struct kevent *case_event(const struct match_case *c)
{
	struct kevent *ev = NULL;
	const char *why = NULL;
	enum kevent_source src =
		c->source ? (enum kevent_source)(c->source - 1) : KEVENT_SOURCE_SOCKET;
	assert_int_equal(kevent_new(c->type, c->object, c->signal, c->payload ? c->payload : "",
				    src, 1, 2, NULL, 0, &ev, &why),
			 0);
	return ev;
}

static bool collect(const struct krule *r, void *userdata);

struct hits {
	const struct krule *v[4096];
	size_t n;
	size_t stop_after; /* 0: never */
};

static bool collect(const struct krule *r, void *userdata)
{
	struct hits *h = userdata;
	assert_true(h->n < ARRAY_SIZE(h->v));
	h->v[h->n++] = r;
	return !h->stop_after || h->n < h->stop_after;
}

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct match_case *c = &cases[i];
		print_message("case %zu: %s vs %s %s %s [%s]\n", i, c->match,
			      kevent_type_name((enum kevent_type)c->type), c->object, c->signal,
			      c->payload ? c->payload : "");
		struct kfile *f = rule_file(c->match);
		struct kevent *ev = case_event(c);
		struct strbuf why = STRBUF_INIT;
		bool got = krule_match(&f->rules[0], ev, &why);
		if (got != c->want)
			print_error("got %d, why: %s\n", got, strbuf_str(&why));
		assert_int_equal(got, c->want);
		assert_int_equal(krule_match(&f->rules[0], ev, NULL), c->want);
		if (c->want)
			assert_string_equal(strbuf_str(&why), "");
		else
			assert_true(why.len > 0);
		if (c->why)
			assert_string_equal(strbuf_str(&why), c->why);

		/* the indexed ruleset agrees */
		struct kruleset *rs = NULL;
		assert_int_equal(kruleset_from_files(&f, 1, &rs), 0);
		struct hits h = {0};
		assert_int_equal(kruleset_match(rs, ev, collect, &h), c->want ? 1 : 0);
		assert_int_equal(h.n, c->want ? 1 : 0);
		kruleset_free(rs);
		strbuf_release(&why);
		kevent_free(ev);
		kfile_unref(f);
	}
}

static void test_last(void **state)
{
	(void)state;
	struct kfile *f = tu_parse("rules:\n"
				   "  - name: first\n"
				   "    match: {type: power}\n"
				   "  - name: filter\n"
				   "    match: {type: power, signal: normal}\n"
				   "    last: true\n"
				   "  - name: after\n"
				   "    match: {type: power}\n"
				   "  - name: not-last-miss\n"
				   "    match: {signal: nothing}\n"
				   "    last: true\n"
				   "  - name: tail\n",
				   NULL);
	struct kruleset *rs = NULL;
	assert_int_equal(kruleset_from_files(&f, 1, &rs), 0);
	kfile_unref(f); /* the ruleset holds its own reference */

	struct kevent *ev = tu_event(KEVENT_POWER, "/a", "normal", "");
	struct hits h = {0};
	assert_int_equal(kruleset_match(rs, ev, collect, &h), 2);
	assert_int_equal(h.n, 2);
	assert_string_equal(h.v[0]->name, "first");
	assert_string_equal(h.v[1]->name, "filter");
	kevent_free(ev);

	/* a "last" rule that does not match stops nothing */
	ev = tu_event(KEVENT_POWER, "/a", "high", "");
	h = (struct hits){0};
	assert_int_equal(kruleset_match(rs, ev, collect, &h), 3);
	assert_string_equal(h.v[0]->name, "first");
	assert_string_equal(h.v[1]->name, "after");
	assert_string_equal(h.v[2]->name, "tail");

	/* the callback can stop the walk */
	h = (struct hits){.stop_after = 1};
	assert_int_equal(kruleset_match(rs, ev, collect, &h), 1);
	assert_int_equal(h.n, 1);
	kevent_free(ev);
	kruleset_free(rs);
}

/* Rules spread over files, merged in file order. */
static void test_order_across_files(void **state)
{
	(void)state;
	struct kfile *f[3] = {
		tu_parse("rules:\n  - {name: a1, match: {signal: s}}\n  - {name: a2}\n", "10.yaml"),
		tu_parse("rules:\n  - {name: b1, match: {signal: \"s*\"}}\n"
			 "  - {name: b2, match: {type: fs, signal: s}}\n",
			 "20.yaml"),
		tu_parse("rules:\n  - {name: c1, match: {signal: [t, s]}}\n", "30.yaml"),
	};
	struct kruleset *rs = NULL;
	assert_int_equal(kruleset_from_files(f, 3, &rs), 0);
	for (int i = 0; i < 3; i++)
		kfile_unref(f[i]);
	assert_int_equal(rs->n_rules, 5);
	assert_int_equal(rs->n_files, 3);
	struct kevent *ev = tu_event(KEVENT_FS, "/a", "s", "");
	struct hits h = {0};
	assert_int_equal(kruleset_match(rs, ev, collect, &h), 5);
	static const char *const want[] = {"a1", "a2", "b1", "b2", "c1"};
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(h.v[i]->name, want[i]);
	kevent_free(ev);
	ev = tu_event(KEVENT_GENERAL, "/a", "t", "");
	h = (struct hits){0};
	assert_int_equal(kruleset_match(rs, ev, collect, &h), 2);
	assert_string_equal(h.v[0]->name, "a2");
	assert_string_equal(h.v[1]->name, "c1");
	kevent_free(ev);
	kruleset_free(rs);

	/* an empty ruleset matches nothing */
	assert_int_equal(kruleset_from_files(NULL, 0, &rs), 0);
	ev = tu_event(KEVENT_GENERAL, "/a", "t", "");
	h = (struct hits){0};
	assert_int_equal(kruleset_match(rs, ev, collect, &h), 0);
	kevent_free(ev);
	kruleset_free(rs);
}

/* A small deterministic generator, the same on every machine. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % n);
}

static const char *const r_types[] = {"general", "storage", "power", "fs", "hotplug"};
static const char *const r_signals[] = {"add", "remove", "change", "high", "normal", "critical"};
static const char *const r_objects[] = {"/a/b", "/a/c", "/a/b/c", "/d", "/d/e", "/x/y", "/a/b/c/d"};
/* some start with a directory ("/a/b/"), which the index keys them on */
static const char *const r_object_globs[] = {"/a/*",	"/a/?",	    "*/c",     "/d*",
					     "/[ad]/*", "*",	    "/a/b/*",  "/a/b/c*",
					     "/d/e/*",	"/a/\\\\*", "/a/b/c/?"};
static const char *const r_signal_globs[] = {"a*", "*e", "h?gh", "[cn]*"};

static void gen_values(struct strbuf *sb, const char *key, const char *const *lits, size_t nl,
		       const char *const *globs, size_t ng)
{
	unsigned k = rnd(ng ? 7 : 4);
	if (k == 0)
		return; /* key absent */
	strbuf_printf(sb, "%s: ", key);
	switch (k) {
	case 1:
		strbuf_printf(sb, "%s, ", lits[rnd((unsigned)nl)]);
		break;
	case 2:
		strbuf_printf(sb, "[%s, %s], ", lits[rnd((unsigned)nl)], lits[rnd((unsigned)nl)]);
		break;
	case 3:
		strbuf_printf(sb, "\"!%s\", ", lits[rnd((unsigned)nl)]);
		break;
	case 4:
		strbuf_printf(sb, "\"%s\", ", globs[rnd((unsigned)ng)]);
		break;
	case 5: /* two globs, maybe of nested directories */
		strbuf_printf(sb, "[\"%s\", \"%s\"], ", globs[rnd((unsigned)ng)],
			      globs[rnd((unsigned)ng)]);
		break;
	default:
		strbuf_printf(sb, "[\"%s\", \"!%s\", %s], ", globs[rnd((unsigned)ng)],
			      lits[rnd((unsigned)nl)], lits[rnd((unsigned)nl)]);
	}
}

static char *gen_rules(size_t n, const char *tag)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_puts(&sb, "rules:\n");
	for (size_t i = 0; i < n; i++) {
		strbuf_printf(&sb, "  - {name: %s%zu, match: {", tag, i);
		/* most rules name an exact type and signal, as real ones do */
		if (rnd(10) < 7) {
			strbuf_printf(&sb, "type: %s, signal: %s, ", r_types[rnd(5)],
				      r_signals[rnd(6)]);
			if (rnd(2))
				strbuf_printf(&sb, "object: \"%s\", ",
					      r_objects[rnd(ARRAY_SIZE(r_objects))]);
		} else {
			gen_values(&sb, "type", r_types, 5, NULL, 0);
			gen_values(&sb, "signal", r_signals, 6, r_signal_globs, 4);
			gen_values(&sb, "object", r_objects, ARRAY_SIZE(r_objects), r_object_globs,
				   ARRAY_SIZE(r_object_globs));
		}
		if (rnd(8) == 0)
			strbuf_printf(&sb, "payload: {N: \"%s%u\"}, ", rnd(2) ? ">= " : "", rnd(4));
		if (rnd(10) == 0)
			strbuf_printf(&sb, "source: %s, ", rnd(2) ? "kernel" : "\"!udev\"");
		strbuf_puts(&sb, "}");
		if (rnd(300) == 0)
			strbuf_puts(&sb, ", last: true");
		strbuf_puts(&sb, "}\n");
	}
	assert_false(sb.oom);
	return strbuf_steal(&sb);
}

static void test_index_equivalence(void **state)
{
	(void)state;
	enum { N_FILES = 3, N_RULES = 1000, N_EVENTS = 3000 };
	struct kfile *f[N_FILES];
	for (int i = 0; i < N_FILES; i++) {
		char tag[4] = {(char)('a' + i), '\0'};
		char *y = gen_rules(N_RULES, tag);
		char *path = tu_printf("%d-gen.yaml", i);
		f[i] = tu_parse(y, path);
		free(y);
		free(path);
	}
	struct kruleset *rs = NULL;
	assert_int_equal(kruleset_from_files(f, N_FILES, &rs), 0);
	assert_int_equal(rs->n_rules, N_FILES * N_RULES);
	for (int i = 0; i < N_FILES; i++)
		kfile_unref(f[i]);

	static struct hits got, want;
	size_t total = 0, lasts = 0;
	for (int e = 0; e < N_EVENTS; e++) {
		char payload[16];
		snprintf(payload, sizeof(payload), rnd(3) ? "N: %u" : "M: %u", rnd(5));
		const char *sig = rnd(8) ? r_signals[rnd(6)] : "unknown";
		struct kevent *ev = NULL;
		const char *why = NULL;
		assert_int_equal(kevent_new((int)rnd(5), r_objects[rnd(ARRAY_SIZE(r_objects))], sig,
					    payload, (enum kevent_source)rnd(4), 1, 2, NULL, 0, &ev,
					    &why),
				 0);
		got.n = want.n = 0;
		size_t n = kruleset_match(rs, ev, collect, &got);
		for (size_t i = 0; i < rs->n_rules; i++) {
			const struct krule *r = rs->rules[i];
			if (!krule_match(r, ev, NULL))
				continue;
			want.v[want.n++] = r;
			if (r->last) {
				lasts++;
				break;
			}
		}
		if (got.n != want.n)
			print_error("event %d (%s %s %s): indexed %zu, brute force %zu\n", e,
				    kevent_type_name(ev->type), ev->object, ev->signal, got.n,
				    want.n);
		assert_int_equal(n, got.n);
		assert_int_equal(got.n, want.n);
		for (size_t i = 0; i < got.n; i++)
			assert_ptr_equal(got.v[i], want.v[i]);
		total += got.n;
		kevent_free(ev);
	}
	print_message("%d events, %zu matches, %zu stopped by last\n", N_EVENTS, total, lasts);
	assert_true(total > N_EVENTS); /* the test exercises real matches */
	assert_true(lasts > 0);
	kruleset_free(rs);
}

/* More distinct prefix lengths than the index keeps (64): the longer ones
 * are keyed on a shorter start, and every event still finds every rule. */
static void test_prefix_lengths_over_the_cap(void **state)
{
	(void)state;
	enum { LENS = 150 };
	struct strbuf y = STRBUF_INIT;
	char x[LENS + 1];
	memset(x, 'x', LENS);
	strbuf_puts(&y, "rules:\n");
	for (int i = 0; i < LENS; i++) {
		x[i] = '\0';
		/* globs, literals in a list, and two values of nested prefixes */
		if (i % 3 == 0)
			strbuf_printf(&y, "  - {name: g%d, match: {object: \"/p/%s*\"}}\n", i, x);
		else if (i % 3 == 1)
			strbuf_printf(&y, "  - {name: l%d, match: {object: [\"/p/%s\", /q]}}\n", i,
				      x);
		else
			strbuf_printf(
				&y, "  - {name: n%d, match: {object: [\"/p/%s?\", \"/p/%s*\"]}}\n",
				i, x, x + i / 2);
		x[i] = 'x';
	}
	assert_false(y.oom);
	struct kfile *f = tu_parse(y.buf, "10-lens.yaml");
	strbuf_release(&y);
	struct kruleset *rs = NULL;
	assert_int_equal(kruleset_from_files(&f, 1, &rs), 0);
	kfile_unref(f);
	assert_true(rs->has_prefix_keys);
	size_t lens = 0;
	for (size_t i = 0; i < ARRAY_SIZE(rs->prefix_lens); i++)
		lens += (size_t)__builtin_popcountll(rs->prefix_lens[i]);
	assert_int_equal(lens, 64);

	static struct hits got;
	size_t total = 0;
	for (int n = 0; n <= LENS + 1; n++) {
		char obj[LENS + 8];
		snprintf(obj, sizeof(obj), "/p/%.*s", n, x);
		struct kevent *ev = NULL;
		const char *why = NULL;
		assert_int_equal(kevent_new(KEVENT_GENERAL, obj, "s", "", KEVENT_SOURCE_SOCKET, 1,
					    2, NULL, 0, &ev, &why),
				 0);
		got.n = 0;
		kruleset_match(rs, ev, collect, &got);
		size_t k = 0;
		for (size_t i = 0; i < rs->n_rules; i++) {
			if (!krule_match(rs->rules[i], ev, NULL))
				continue;
			assert_true(k < got.n);
			assert_ptr_equal(got.v[k], rs->rules[i]);
			k++;
		}
		assert_int_equal(got.n, k);
		total += k;
		kevent_free(ev);
	}
	assert_true(total > LENS); /* real matches, at every length */
	kruleset_free(rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_last),
		cmocka_unit_test(test_order_across_files),
		cmocka_unit_test(test_index_equivalence),
		cmocka_unit_test(test_prefix_lengths_over_the_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
