// SPDX-License-Identifier: GPL-2.0-or-later
/* Conditions: their declarations in rule files (and drop-ins), the table's
 * state machine (COND.txt) step by step, the reminders' schedule, the
 * table's file (its damage costs the file, never the caller), and the
 * read-back of condition events after a kill. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cond.h"
#include "dropin.h"
#include "file.h"
#include "render.h"
#include "ruleset.h"
#include "table.h"
#include "testutil.h"
#include "util.h"

#define S    1000000000ull
#define DAY  (24 * 3600 * S)
#define T0   (1700000000ull * S) /* 2023-11-14T22:13:20Z */
#define MIN_ (60 * S)

/* Parsing */

static bool first_match(const struct krule *r, void *ud)
{
	*(const struct krule **)ud = r;
	return false;
}

static void test_parse(void **state)
{
	(void)state;
	struct kfile *f = tu_parse("conditions:\n"
				   "  - name: md-degraded\n"
				   "    set: {source: md, signal: [degraded, failed-device]}\n"
				   "    clear: {source: md, signal: optimal}\n"
				   "    severity: critical\n"
				   "    remind: diminishing\n"
				   "    expire: 7d\n"
				   "  - name: oom\n"
				   "    set: {source: kmsg, signal: oom-kill}\n"
				   "    remind: every 2s\n"
				   "    key: payload.Memcg\n"
				   "rules:\n"
				   "  - match: {source: condition, signal: set}\n"
				   "    run: [/bin/true]\n",
				   NULL);
	assert_int_equal(f->n_conds, 2);
	assert_int_equal(f->n_rules, 1);
	const struct kcond_def *md = &f->conds[0], *oom = &f->conds[1];
	assert_string_equal(md->name, "md-degraded");
	assert_int_equal(md->severity, KCOND_CRITICAL);
	assert_int_equal(md->remind, KCOND_REMIND_DIMINISHING);
	assert_int_equal(md->expire_ms, 7 * 24 * 3600 * 1000ull);
	assert_true(md->has_clear);
	assert_null(md->key_prop);
	assert_int_equal(md->set.signal.n, 2);
	assert_true(md->set.cond && md->clear.cond);
	assert_ptr_equal(kcond_def_of(&md->set), md);
	assert_ptr_equal(kcond_def_of(&md->clear), md);
	assert_null(kcond_def_of(&f->rules[0]));
	assert_int_equal(oom->severity, KCOND_WARNING);
	assert_int_equal(oom->remind, KCOND_REMIND_EVERY);
	assert_int_equal(oom->remind_ms, 2000);
	assert_false(oom->has_clear);
	assert_string_equal(oom->key_prop, "Memcg");

	/* the set's index finds them; a matcher is not a rule */
	struct kruleset *rs = NULL;
	assert_int_equal(kruleset_from_files(&f, 1, &rs), 0);
	assert_int_equal(rs->n_rules, 1);
	assert_int_equal(rs->n_cond_defs, 2);
	assert_ptr_equal(kruleset_cond(rs, "oom"), oom);
	assert_null(kruleset_cond(rs, "nope"));
	struct kevent *ev = tu_event(KEVENT_STORAGE, "/md0", "failed-device", "");
	ev->source = KEVENT_SOURCE_MD;
	const struct krule *first = NULL;
	assert_int_equal(kruleset_match(rs->conds, ev, first_match, &first), 1);
	assert_ptr_equal(first, &md->set);
	kevent_free(ev);
	kruleset_free(rs);
	kfile_unref(f);
}

/* The one condition of a test's file, by name. */
static const struct kcond_def *lookup_one(void *ud, const char *name)
{
	const struct kcond_def *def = ud;
	return strcmp(def->name, name) == 0 ? def : NULL;
}

struct perr_case {
	const char *label, *yaml, *want;
};

/* clang-format off */
static const struct perr_case perr_cases[] = {
	{"not a list", "conditions: {name: x}\n", "t.yaml:1:13: error: 'conditions' must be a list of conditions, not a mapping"},
	{"no name", "conditions:\n  - set: {signal: a}\n", "t.yaml:2:5: error: a condition needs a 'name'"},
	{"bad name", "conditions:\n  - name: Disk_Bad\n    set: {signal: a}\n", "t.yaml:2:11: error: a condition's name is 1-64 characters of [a-z0-9-], not \"Disk_Bad\""},
	{"no set", "conditions:\n  - name: x\n", "t.yaml:2:5: error: a condition needs 'set': the match: of the events that set it"},
	{"set not a mapping", "conditions:\n  - name: x\n    set: bad\n", "t.yaml:3:10: error: a condition's set and clear are match: mappings, not a value"},
	{"set bad key", "conditions:\n  - name: x\n    set: {sigal: a}\n", "t.yaml:3:11: error: unknown key 'sigal' in match: did you mean signal?"},
	{"bad severity", "conditions:\n  - name: x\n    set: {signal: a}\n    severity: huge\n", "t.yaml:4:15: error: 'severity' must be info, warning or critical, not \"huge\""},
	{"bad remind", "conditions:\n  - name: x\n    set: {signal: a}\n    remind: weekly\n", "t.yaml:4:13: error: 'remind' must be none, daily, diminishing or every DURATION, not \"weekly\""},
	{"bad every", "conditions:\n  - name: x\n    set: {signal: a}\n    remind: every often\n", "t.yaml:4:13: error: bad remind \"every often\": duration must be a number with a unit: ms, s, m, h or d"},
	{"every too short", "conditions:\n  - name: x\n    set: {signal: a}\n    remind: every 10ms\n", "t.yaml:4:13: error: bad remind \"every 10ms\": at least every 1s"},
	{"bad expire", "conditions:\n  - name: x\n    set: {signal: a}\n    expire: soon\n", "t.yaml:4:13: error: bad expire \"soon\": duration must be a number with a unit: ms, s, m, h or d"},
	{"bad key", "conditions:\n  - name: x\n    set: {signal: a}\n    key: rule\n", "t.yaml:4:10: error: 'key' must be object or payload.NAME, not \"rule\""},
	{"misspelt key", "conditions:\n  - name: x\n    set: {signal: a}\n    sevrity: info\n", "t.yaml:4:5: error: unknown key 'sevrity' in condition: did you mean severity?"},
	{"twice", "conditions:\n  - name: x\n    set: {signal: a}\n  - name: x\n    set: {signal: b}\n", "t.yaml:4:11: error: duplicate condition name \"x\" (first used at line 2)"},
	{"set by conditions", "conditions:\n  - name: x\n    set: {source: condition}\n", "t.yaml:3:10: error: a condition's set cannot match the events of source 'condition': conditions are not set by conditions"},
	{"top-level", "condition:\n  - name: x\n", "t.yaml:1:1: error: unknown top-level key 'condition' (expected 'rules' or 'conditions')"},
};
/* clang-format on */

static void test_parse_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(perr_cases); i++) {
		struct kdiags d = tu_parse_fail(perr_cases[i].yaml, NULL);
		assert_true(d.n >= 1);
		char *got = tu_diag(&d.v[0]);
		if (strcmp(got, perr_cases[i].want) != 0)
			fail_msg("%s:\n got  %s\n want %s", perr_cases[i].label, got,
				 perr_cases[i].want);
		free(got);
		kdiags_free(&d);
	}
}

/* A drop-in changes a condition by name, key by key. */
static void test_dropin(void **state)
{
	(void)state;
	static const char base[] = "conditions:\n"
				   "  - name: hot\n"
				   "    set: {signal: high}\n"
				   "    clear: {signal: normal}\n";
	static const char drop[] = "conditions:\n"
				   "  - name: hot\n"
				   "    severity: critical\n"
				   "    remind: daily\n";
	struct ksrc b = {"/r/50-t.yaml", base, sizeof(base) - 1};
	struct ksrc d = {"/r/50-t.yaml.d/10-a.yaml", drop, sizeof(drop) - 1};
	struct kdiags diags = {0};
	struct kfile *f = NULL;
	assert_int_equal(kdropin_parse(&b, &d, 1, &f, &diags), 0);
	assert_int_equal(f->conds[0].severity, KCOND_CRITICAL);
	assert_int_equal(f->conds[0].remind, KCOND_REMIND_DAILY);
	assert_true(f->conds[0].has_clear);
	kfile_unref(f);

	static const char bad[] = "conditions:\n  - name: cold\n    severity: info\n";
	d.buf = bad;
	d.len = sizeof(bad) - 1;
	assert_int_equal(kdropin_parse(&b, &d, 1, &f, &diags), -EINVAL);
	char *got = tu_diag(&diags.v[0]);
	assert_string_equal(
		got,
		"/r/50-t.yaml.d/10-a.yaml:2:11: error: no condition named \"cold\" in 50-t.yaml");
	free(got);
	kdiags_free(&diags);
}

/* Reminders */

struct remind_case {
	enum kcond_remind kind;
	uint64_t every_ms, since, after, want;
};

/* clang-format off */
static const struct remind_case remind_cases[] = {
	{KCOND_REMIND_NONE, 0, T0, T0, 0},
	{KCOND_REMIND_DAILY, 0, T0, T0, T0 + DAY},
	{KCOND_REMIND_DAILY, 0, T0, T0 + DAY - 1, T0 + DAY},
	{KCOND_REMIND_DAILY, 0, T0, T0 + DAY, T0 + 2 * DAY},
	{KCOND_REMIND_DAILY, 0, T0, T0 + 10 * DAY + 5, T0 + 11 * DAY}, /* down 10 days: the next after now */
	{KCOND_REMIND_DIMINISHING, 0, T0, T0, T0 + DAY},
	{KCOND_REMIND_DIMINISHING, 0, T0, T0 + DAY, T0 + 2 * DAY},
	{KCOND_REMIND_DIMINISHING, 0, T0, T0 + 2 * DAY, T0 + 4 * DAY},
	{KCOND_REMIND_DIMINISHING, 0, T0, T0 + 5 * DAY, T0 + 8 * DAY},
	{KCOND_REMIND_DIMINISHING, 0, T0, T0 + 8 * DAY, T0 + 16 * DAY},
	{KCOND_REMIND_EVERY, 2000, T0, T0, T0 + 2 * S},
	{KCOND_REMIND_EVERY, 2000, T0, T0 + 3 * S, T0 + 4 * S},
	{KCOND_REMIND_EVERY, 2000, T0, T0 - 5 * S, T0 + 2 * S}, /* a clock behind since */
};
/* clang-format on */

static void test_remind_schedule(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(remind_cases); i++) {
		const struct remind_case *c = &remind_cases[i];
		uint64_t got = kcond_remind_next(c->kind, c->every_ms, c->since, c->after);
		if (got != c->want)
			fail_msg("case %zu: got %llu, want %llu", i, (unsigned long long)got,
				 (unsigned long long)c->want);
	}
}

/* The state machine, step by step */

/* What the table told, one word a change: "set:x", "clear:x:why"... */
static void record(void *ud, enum kcond_signal sig, const struct kcond_row *r, const char *reason)
{
	struct strbuf *sb = ud;
	strbuf_printf(sb, "%s%s:%s:%s", sb->len ? " " : "", kcond_signal_name(sig), r->key,
		      reason ? reason : "");
}

enum op { SET, CLEAR, TICK, ACK, SETTLE_BEGIN, SETTLE_END };

struct step {
	enum op op;
	const char *object; /* SET, CLEAR, ACK (NULL: all rows) */
	uint64_t now;
	const char *emits; /* what it tells, "" none */
	const char *row;   /* after it, the row of object ("-": none), as describe() */
};

/* A row in a line: holds/cleared, count, acked, next reminder (s after T0). */
static char *describe(const struct kcond_table *t, const char *name, const char *key)
{
	const struct kcond_row *r = kcond_table_find(t, name, key);
	if (!r)
		return strdup("-");
	char *reason = r->reason ? tu_printf(" reason=%s", r->reason) : strdup("");
	char *d =
		tu_printf("%s count=%llu%s remind=%lld%s", kcond_row_holds(r) ? "holds" : "cleared",
			  (unsigned long long)r->count, r->acked_at ? " acked" : "",
			  r->next_remind ? (long long)((r->next_remind - T0) / S) : -1LL, reason);
	free(reason);
	return d;
}

struct script {
	const char *label;
	const char *yaml; /* one condition named c */
	size_t max;
	struct step steps[12];
};

#define C_DISK                        \
	"conditions:\n  - name: c\n"  \
	"    set: {signal: bad}\n"    \
	"    clear: {signal: good}\n" \
	"    remind: every 10s\n"
#define C_OOM                        \
	"conditions:\n  - name: c\n" \
	"    set: {signal: oom}\n"   \
	"    expire: 1m\n"

/* clang-format off */
static const struct script scripts[] = {
	{"set, count, clear", C_DISK, 0, {
		{SET, "/a", T0, "set:/a:bad", "holds count=1 remind=10"},
		{SET, "/a", T0 + S, "", "holds count=2 remind=10"},
		{CLEAR, "/b", T0 + S, "", "-"},
		{CLEAR, "/a", T0 + 2 * S, "clear:/a:good", "cleared count=2 remind=-1 reason=good"},
		{CLEAR, "/a", T0 + 3 * S, "", "cleared count=2 remind=-1 reason=good"},
		{SET, "/a", T0 + 4 * S, "set:/a:bad", "holds count=1 remind=14"},
		{0}}},
	{"reminders, once for many due, and none once acked", C_DISK, 0, {
		{SET, "/a", T0, "set:/a:bad", "holds count=1 remind=10"},
		{TICK, NULL, T0 + 9 * S, "", "holds count=1 remind=10"},
		{TICK, NULL, T0 + 10 * S, "remind:/a:reminder", "holds count=1 remind=20"},
		{TICK, NULL, T0 + 55 * S, "remind:/a:reminder", "holds count=1 remind=60"},
		{ACK, NULL, T0 + 56 * S, "ack:/a:acked", "holds count=1 acked remind=-1"},
		{TICK, NULL, T0 + 100 * S, "", "holds count=1 acked remind=-1"},
		{CLEAR, "/a", T0 + 101 * S, "clear:/a:good", "cleared count=1 acked remind=-1 reason=good"},
		{SET, "/a", T0 + 102 * S, "set:/a:bad", "holds count=1 remind=112"},
		{0}}},
	{"expire from the last set", C_OOM, 0, {
		{SET, "/a", T0, "set:/a:oom", "holds count=1 remind=-1"},
		{SET, "/a", T0 + 50 * S, "", "holds count=2 remind=-1"},
		{TICK, NULL, T0 + 60 * S, "", "holds count=2 remind=-1"},
		{TICK, NULL, T0 + 110 * S, "clear:/a:expired", "cleared count=2 remind=-1 reason=expired"},
		{TICK, NULL, T0 + 110 * S + DAY, "", "-"}, /* a day later the cleared row goes */
		{0}}},
	{"ack ends a condition without clear", C_OOM, 0, {
		{SET, "/a", T0, "set:/a:oom", "holds count=1 remind=-1"},
		{ACK, "/a", T0 + S, "ack:/a:acked clear:/a:acked", "cleared count=1 acked remind=-1 reason=acked"},
		{0}}},
	{"the bound refuses, counted", C_DISK, 1, {
		{SET, "/a", T0, "set:/a:bad", "holds count=1 remind=10"},
		{SET, "/b", T0, "", "-"},
		{SET, "/a", T0, "", "holds count=2 remind=10"},
		{0}}},
	{"start-up: confirmed, not counted; the others cleared", C_DISK, 0, {
		{SET, "/a", T0, "set:/a:bad", "holds count=1 remind=10"},
		{SETTLE_BEGIN, NULL, T0 + S, "", "holds count=1 remind=10"},
		{SET, "/a", T0 + 2 * S, "", "holds count=1 remind=10"},
		{SET, "/a", T0 + 3 * S, "", "holds count=2 remind=10"},
		{SETTLE_END, NULL, T0 + 4 * S, "", "holds count=2 remind=10"},
		{SETTLE_BEGIN, NULL, T0 + 5 * S, "", "holds count=2 remind=10"},
		{SETTLE_END, NULL, T0 + 6 * S, "clear:/a:not so at start", "cleared count=2 remind=-1 reason=not so at start"},
		{0}}},
};
/* clang-format on */

static void test_state_machine(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(scripts); i++) {
		const struct script *sc = &scripts[i];
		struct kfile *f = tu_parse(sc->yaml, NULL);
		const struct kcond_def *def = &f->conds[0];
		struct strbuf told = STRBUF_INIT;
		struct kcond_table t;
		assert_int_equal(kcond_table_init(&t, sc->max, record, &told), 0);
		for (size_t k = 0; k < ARRAY_SIZE(sc->steps) && sc->steps[k].emits; k++) {
			const struct step *st = &sc->steps[k];
			const char *obj = st->object ? st->object : "/a";
			strbuf_reset(&told);
			struct kevent *ev =
				tu_event(KEVENT_STORAGE, obj,
					 st->op == SET ? def->set.signal.v[0].text : "good", "");
			ev->timestamp = st->now;
			switch (st->op) {
			case SET:
			case CLEAR:
				(void)kcond_table_event(&t, def, ev, st->op == SET, st->now);
				break;
			case TICK:
				(void)kcond_table_tick(&t, lookup_one, (void *)def, st->now);
				break;
			case ACK:
				(void)kcond_table_ack(&t, def, "c", st->object, "root", NULL,
						      st->now);
				break;
			case SETTLE_BEGIN:
				kcond_table_settle_begin(&t, 1u << KEVENT_SOURCE_SOCKET);
				break;
			case SETTLE_END:
				(void)kcond_table_settle_end(&t, 1u << KEVENT_SOURCE_SOCKET,
							     st->now);
				break;
			}
			kevent_free(ev);
			char *row = describe(&t, "c", obj);
			if (strcmp(strbuf_str(&told), st->emits) != 0 || strcmp(row, st->row) != 0)
				fail_msg("%s, step %zu:\n told %s (want %s)\n row  %s (want %s)",
					 sc->label, k, strbuf_str(&told), st->emits, row, st->row);
			free(row);
		}
		if (sc->max)
			assert_int_equal(t.refused, 1);
		kcond_table_release(&t);
		strbuf_release(&told);
		kfile_unref(f);
	}
}

/* A row keyed by a payload value, confirmed at start-up by an event of
 * another object (an array assembled as md127 after a reboot, not md0):
 * the same row, not counted, under the object it has now. */
static void test_confirm_renamed(void **state)
{
	(void)state;
	struct kfile *f = tu_parse("conditions:\n  - name: md\n    set: {signal: degraded}\n"
				   "    clear: {signal: optimal}\n    key: payload.Uuid\n",
				   NULL);
	const struct kcond_def *def = &f->conds[0];
	struct strbuf told = STRBUF_INIT;
	struct kcond_table t;
	assert_int_equal(kcond_table_init(&t, 0, record, &told), 0);
	struct kevent *ev = tu_event(KEVENT_STORAGE, "/md0", "degraded", "Uuid: u1\n");
	ev->timestamp = T0;
	assert_int_equal(kcond_table_event(&t, def, ev, true, T0), 1);
	kevent_free(ev);
	/* an event without the key's property is no row's */
	ev = tu_event(KEVENT_STORAGE, "/md9", "degraded", "");
	assert_int_equal(kcond_table_event(&t, def, ev, true, T0), 0);
	kevent_free(ev);
	kcond_table_settle_begin(&t, 1u << KEVENT_SOURCE_SOCKET);
	ev = tu_event(KEVENT_STORAGE, "/md127", "degraded", "Uuid: u1\n");
	ev->timestamp = T0 + 100 * S;
	strbuf_reset(&told);
	assert_int_equal(kcond_table_event(&t, def, ev, true, T0 + 100 * S), 1);
	kevent_free(ev);
	assert_string_equal(strbuf_str(&told), "");
	const struct kcond_row *r = kcond_table_find(&t, "md", "u1");
	assert_non_null(r);
	assert_string_equal(r->object, "/md127");
	assert_int_equal(r->since, T0);
	assert_int_equal(r->count, 1);
	assert_int_equal(kcond_table_settle_end(&t, 1u << KEVENT_SOURCE_SOCKET, T0 + 110 * S), 0);
	assert_int_equal(t.n, 1);
	/* acknowledged by its object as by its key */
	assert_int_equal(kcond_table_ack(&t, def, "md", "/md0", "root", NULL, T0 + 120 * S), 0);
	assert_int_equal(kcond_table_ack(&t, def, "md", "/md127", "root", NULL, T0 + 120 * S), 1);
	assert_int_equal(kcond_table_ack(&t, def, "md", "u1", "root", NULL, T0 + 121 * S), 1);
	kcond_table_release(&t);
	strbuf_release(&told);
	kfile_unref(f);
}

/* The file */

/* A table of three rows: one that holds, one acknowledged with a note of
 * every byte that needs escaping, one cleared. */
static void fill(struct kcond_table *t, struct kfile **fp)
{
	struct kfile *f = tu_parse(C_DISK, NULL);
	const struct kcond_def *def = &f->conds[0];
	assert_int_equal(kcond_table_init(t, 0, NULL, NULL), 0);
	static const char *const objs[] = {"/a", "/b\\x", "/c"};
	for (size_t i = 0; i < 3; i++) {
		struct kevent *ev = tu_event(KEVENT_STORAGE, objs[i], "bad", "Why: tab\there\n");
		ev->timestamp = T0 + i;
		assert_int_equal(kcond_table_event(t, def, ev, true, T0 + i), 1);
		kevent_free(ev);
	}
	assert_int_equal(kcond_table_ack(t, def, "c", "/b\\x", "root", "a\tb\\c \xff", T0 + 5), 1);
	struct kevent *ev = tu_event(KEVENT_STORAGE, "/c", "good", "");
	assert_int_equal(kcond_table_event(t, def, ev, false, T0 + 6), 1);
	kevent_free(ev);
	*fp = f;
}

static void test_file_roundtrip(void **state)
{
	(void)state;
	struct kcond_table t, u;
	struct kfile *f;
	fill(&t, &f);
	struct kcond_marks m = {.seq = 42,
				.boot = "b00t",
				.socket_seq = 7,
				.kernel_instance = 9,
				.kernel_seq = 11},
			   n;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	assert_int_equal(kcond_file_encode(&t, &m, &a), 0);
	unsigned line;
	const char *why;
	assert_int_equal(kcond_table_init(&u, 0, NULL, NULL), 0);
	int rc = kcond_file_decode(a.buf, a.len, &u, &n, &line, &why);
	if (rc < 0)
		fail_msg("line %u: %s\n%s", line, why, a.buf);
	assert_int_equal(u.n, 3);
	assert_int_equal(u.holding, 2);
	assert_false(u.dirty);
	assert_int_equal(n.seq, 42);
	assert_string_equal(n.boot, "b00t");
	assert_int_equal(n.socket_seq, 7);
	assert_int_equal(n.kernel_instance, 9);
	assert_int_equal(n.kernel_seq, 11);
	const struct kcond_row *r = kcond_table_find(&u, "c", "/b\\x");
	assert_non_null(r);
	assert_string_equal(r->note, "a\tb\\c \xff");
	assert_string_equal(r->last_payload, "Why: tab\there\n");
	/* the same rows, the same file */
	assert_int_equal(kcond_file_encode(&u, &n, &b), 0);
	assert_string_equal(a.buf, b.buf);
	kcond_table_release(&t);
	kcond_table_release(&u);
	strbuf_release(&a);
	strbuf_release(&b);
	kfile_unref(f);
}

/* Any byte changed, any cut: the whole file refused, the table empty. */
static void test_file_damage(void **state)
{
	(void)state;
	struct kcond_table t, u;
	struct kfile *f;
	fill(&t, &f);
	struct kcond_marks m = {.seq = 1}, n;
	struct strbuf a = STRBUF_INIT;
	assert_int_equal(kcond_file_encode(&t, &m, &a), 0);
	char *buf = malloc(a.len + 1);
	unsigned line;
	const char *why;
	assert_int_equal(kcond_table_init(&u, 0, NULL, NULL), 0);
	for (size_t cut = 0; cut < a.len; cut++) {
		memcpy(buf, a.buf, cut);
		assert_int_equal(kcond_file_decode(buf, cut, &u, &n, &line, &why), -EINVAL);
		assert_int_equal(u.n, 0);
		assert_non_null(why);
	}
	for (size_t at = 0; at < a.len; at++) {
		memcpy(buf, a.buf, a.len);
		buf[at] ^= 0x01;
		if (kcond_file_decode(buf, a.len, &u, &n, &line, &why) != -EINVAL)
			fail_msg("byte %zu changed, and the file was taken", at);
		assert_int_equal(u.n, 0);
		assert_int_equal(u.holding, 0);
	}
	static const char *const bad[] = {
		"",
		"keventd-conditions 2\nend 0 0000000000000000\n",
		"keventd-conditions 1\nrow\tc\n",
		"keventd-conditions 1\nbogus\n",
		"keventd-conditions 1\nmark socket x\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(kcond_file_decode(bad[i], strlen(bad[i]), &u, &n, &line, &why),
				 -EINVAL);
		assert_int_equal(u.n, 0);
	}
	free(buf);
	kcond_table_release(&t);
	kcond_table_release(&u);
	strbuf_release(&a);
	kfile_unref(f);
}

/* After a kill: the journal's condition events read back into a table
 * that has their change, or not yet (COND.txt). */
static struct kevent *cond_event(const char *signal, const char *object, uint64_t since_s,
				 const char *reason, uint64_t at)
{
	char *p = tu_printf("Condition: c\nSeverity: critical\nSince: %s\nCount: 3\n"
			    "Reason: %s\nSource: md\n",
			    since_s == 1700000000 ? "2023-11-14T22:13:20Z" : "2023-11-14T22:13:30Z",
			    reason);
	struct kevent *ev = tu_event(KEVENT_STORAGE, object, signal, p);
	free(p);
	ev->source = KEVENT_SOURCE_CONDITION;
	ev->redelivered = true;
	ev->timestamp = at;
	return ev;
}

static void test_replay(void **state)
{
	(void)state;
	struct kcond_table t;
	struct strbuf told = STRBUF_INIT;
	assert_int_equal(kcond_table_init(&t, 0, record, &told), 0);
	/* a table that lacks the set: made, nothing told */
	struct kevent *set1 = cond_event("set", "/md0", 1700000000, "degraded", T0);
	struct kevent *clr1 = cond_event("clear", "/md0", 1700000000, "optimal", T0 + 5 * S);
	struct kevent *set2 = cond_event("set", "/md0", 1700000010, "degraded", T0 + 10 * S);
	assert_int_equal(kcond_table_replay(&t, set1), 1);
	const struct kcond_row *r = kcond_table_find(&t, "c", "/md0");
	assert_true(r && kcond_row_holds(r));
	assert_int_equal(r->since, T0);
	assert_int_equal(r->count, 3);
	assert_int_equal(r->severity, KCOND_CRITICAL);
	assert_int_equal(r->source, KEVENT_SOURCE_MD);
	/* again: it has it */
	assert_int_equal(kcond_table_replay(&t, set1), 0);
	/* the clear of that time */
	assert_int_equal(kcond_table_replay(&t, clr1), 1);
	assert_false(kcond_row_holds(r));
	/* the old set again, after its clear: not made again */
	assert_int_equal(kcond_table_replay(&t, set1), 0);
	assert_false(kcond_row_holds(r));
	/* a later set: made */
	assert_int_equal(kcond_table_replay(&t, set2), 1);
	assert_true(kcond_row_holds(r));
	/* the clear of the earlier time does not clear the later one */
	assert_int_equal(kcond_table_replay(&t, clr1), 0);
	assert_true(kcond_row_holds(r));
	assert_string_equal(strbuf_str(&told), "");
	kevent_free(set1);
	kevent_free(clr1);
	kevent_free(set2);
	kcond_table_release(&t);
	strbuf_release(&told);
}

/* The rows in order, as rows come: sorted once, the later ones merged. */
static void test_sorted(void **state)
{
	(void)state;
	static const char *const batches[][4] = {
		{"/d", "/b", "/f", NULL},
		{"/c", "/a", NULL},
		{"/g", "/e", "/0", NULL},
		{NULL},
	};
	static const char *const want[] = {
		"/b /d /f",
		"/a /b /c /d /f",
		"/0 /a /b /c /d /e /f /g",
		"/0 /a /b /c /d /e /f /g",
	};
	struct kcond_table t;
	struct strbuf told = STRBUF_INIT;
	assert_int_equal(kcond_table_init(&t, 0, record, &told), 0);
	for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
		for (size_t i = 0; batches[b][i]; i++) {
			struct kevent *ev = cond_event("set", batches[b][i], 1700000000, "x", T0);
			assert_int_equal(kcond_table_replay(&t, ev), 1);
			kevent_free(ev);
		}
		struct kcond_row **v = kcond_table_sorted(&t);
		assert_non_null(v);
		struct strbuf got = STRBUF_INIT;
		for (size_t i = 0; i < t.n; i++)
			strbuf_printf(&got, "%s%s", i ? " " : "", v[i]->key);
		assert_string_equal(strbuf_str(&got), want[b]);
		strbuf_release(&got);
		free(v);
	}
	kcond_table_release(&t);
	strbuf_release(&told);
}

/* The plugin's line and status. */
static void test_check(void **state)
{
	(void)state;
	struct kcond_table t;
	struct kfile *f;
	fill(&t, &f);
	struct kcond_row **rows = kcond_table_sorted(&t);
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(kcond_render_check(&sb, rows, t.n, NULL), 1);
	assert_string_equal(strbuf_str(&sb),
			    "CONDITIONS WARNING - 0 critical, 2 warning, 0 info: c /a, c /b\\x "
			    "(acknowledged) | critical=0 warning=2 info=0 acknowledged=1\n");
	strbuf_reset(&sb);
	assert_int_equal(kcond_render_check(&sb, rows, t.n, "other,more"), 0);
	assert_string_equal(strbuf_str(&sb), "CONDITIONS OK - no condition holds | critical=0 "
					     "warning=0 info=0 acknowledged=0\n");
	strbuf_reset(&sb);
	rows[0]->severity = KCOND_CRITICAL;
	assert_int_equal(kcond_render_check(&sb, rows, t.n, "x,c"), 2);
	free(rows);
	strbuf_release(&sb);
	kcond_table_release(&t);
	kfile_unref(f);
}

/* Times as the table writes them: by arithmetic, as gmtime_r() says. */
static void test_put_time(void **state)
{
	(void)state;
	static const struct {
		uint64_t s;
		const char *want;
	} cases[] = {
		{0, "1970-01-01T00:00:00Z"},
		{951782400, "2000-02-29T00:00:00Z"}, /* a leap day of a 400th year */
		{951955199, "2000-03-01T23:59:59Z"},
		{1796581133, "2026-12-06T18:18:53Z"},
		{4107542399, "2100-02-28T23:59:59Z"}, /* 2100 is not a leap year */
		{4107542400, "2100-03-01T00:00:00Z"},
		{18446744073, "2554-07-21T23:34:33Z"}, /* the last second of 64-bit ns */
	};
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strbuf_reset(&sb);
		kcond_put_time(&sb, cases[i].s * 1000000000ull + 500000000ull);
		assert_string_equal(strbuf_str(&sb), cases[i].want);
	}
	/* and against the C library, a week and some seconds apart */
	for (uint64_t s = 0; s < 16725225600ull; s += 7 * 86400 + 4099) {
		time_t t = (time_t)s;
		struct tm tm;
		char want[32];
		assert_non_null(gmtime_r(&t, &tm));
		strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%SZ", &tm);
		strbuf_reset(&sb);
		kcond_put_time(&sb, s * 1000000000ull);
		assert_string_equal(strbuf_str(&sb), want);
	}
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),	      cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_dropin),	      cmocka_unit_test(test_remind_schedule),
		cmocka_unit_test(test_state_machine), cmocka_unit_test(test_file_roundtrip),
		cmocka_unit_test(test_file_damage),   cmocka_unit_test(test_replay),
		cmocka_unit_test(test_sorted),	      cmocka_unit_test(test_check),
		cmocka_unit_test(test_put_time),      cmocka_unit_test(test_confirm_renamed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
