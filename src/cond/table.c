// SPDX-License-Identifier: GPL-2.0-or-later
/* The condition table's state machine (table.h; its law in COND.txt). */
#include "table.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "hashmap.h"
#include "util.h"

/* clang-format off */
static const char *const signals[] = {
	[KCOND_SET] = "set",
	[KCOND_CLEAR] = "clear",
	[KCOND_REMIND] = "remind",
	[KCOND_ACK] = "ack",
};
/* clang-format on */

const char *kcond_signal_name(enum kcond_signal s)
{
	return (unsigned)s < ARRAY_SIZE(signals) ? signals[s] : "?";
}

void kcond_row_free(struct kcond_row *r)
{
	if (!r)
		return;
	free(r->name);
	free(r->key);
	free(r->object);
	free(r->last_signal);
	free(r->last_payload);
	free(r->acked_by);
	free(r->note);
	free(r->reason);
	free(r);
}

/* "NAME\x1fKEY": a name has no \x1f, so no two rows share one. */
static char *row_id(const char *name, const char *key)
{
	char *id = NULL;
	return asprintf(&id, "%s\x1f%s", name, key) < 0 ? NULL : id;
}

int kcond_table_init(struct kcond_table *t, size_t max, kcond_emit_fn emit, void *userdata)
{
	*t = (struct kcond_table){
		.max = max ? max : KCOND_ROWS_MAX, .emit = emit, .userdata = userdata};
	return hashmap_new(&t->rows);
}

void kcond_table_release(struct kcond_table *t)
{
	hashmap_free(t->rows, NULL);
	for (size_t i = 0; i < t->n; i++)
		kcond_row_free(t->v[i]);
	free(t->v);
	free(t->sorted);
	*t = (struct kcond_table){0};
}

struct kcond_row *kcond_table_find(const struct kcond_table *t, const char *name, const char *key)
{
	_cleanup_free_ char *id = row_id(name, key);
	return id ? hashmap_get(t->rows, id) : NULL;
}

int kcond_table_put(struct kcond_table *t, struct kcond_row *row)
{
	_cleanup_free_ char *id = row_id(row->name, row->key);
	int rc = -ENOMEM;
	if (!id)
		goto fail;
	rc = -EEXIST;
	if (hashmap_get(t->rows, id))
		goto fail;
	rc = -ENOMEM;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct kcond_row **v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			goto fail;
		t->v = v;
		t->cap = cap;
	}
	if (hashmap_put(t->rows, id, row, NULL) < 0)
		goto fail;
	row->pos = t->n;
	t->v[t->n++] = row;
	t->holding += kcond_row_holds(row);
	t->dirty = true;
	return 0;
fail:
	kcond_row_free(row);
	return rc;
}

static int is_row(const char *key, void *value, void *ud)
{
	(void)key;
	return value == ud;
}

/* Takes r out of the table and frees it. */
static void remove_row(struct kcond_table *t, struct kcond_row *r)
{
	_cleanup_free_ char *id = row_id(r->name, r->key);
	if (id)
		hashmap_remove(t->rows, id);
	else /* no memory for its id: find it the long way */
		hashmap_sweep(t->rows, is_row, r);
	t->v[r->pos] = t->v[--t->n];
	t->v[r->pos]->pos = r->pos;
	t->holding -= kcond_row_holds(r);
	t->removals++;
	t->dirty = true;
	kcond_row_free(r);
}

const char *kcond_key_of(const struct kcond_def *def, const struct kevent *ev)
{
	if (!def->key_prop)
		return ev->object;
	const char *v = kevent_prop(ev, def->key_prop);
	return v && *v ? v : NULL;
}

/* s replaced by a copy of v (NULL: none); false on ENOMEM, s unchanged. */
static bool set_str(char **s, const char *v)
{
	char *c = NULL;
	if (v && !(c = strdup(v)))
		return false;
	free(*s);
	*s = c;
	return true;
}

/* The payload kept of an event: its first KCOND_PAYLOAD_KEEP bytes, cut
 * after a whole line when it is longer. */
static char *keep_payload(const char *p)
{
	size_t n = strlen(p);
	if (n > KCOND_PAYLOAD_KEEP) {
		n = KCOND_PAYLOAD_KEEP;
		while (n > 0 && p[n - 1] != '\n')
			n--;
	}
	return strndup(p, n);
}

/* The row's last set event is ev. */
static bool note_event(struct kcond_row *r, const struct kevent *ev, uint64_t now)
{
	char *payload = keep_payload(ev->payload);
	if (!payload || !set_str(&r->last_signal, ev->signal)) {
		free(payload);
		return false;
	}
	free(r->last_payload);
	r->last_payload = payload;
	r->last_time = now;
	r->last_seqnum = ev->seqnum;
	return true;
}

/* The caller is to tick at at, if no sooner (table.h: wake). */
static void wake_at(struct kcond_table *t, uint64_t at)
{
	if (at && (!t->wake || at < t->wake))
		t->wake = at;
}

uint64_t kcond_remind_next(enum kcond_remind kind, uint64_t every_ms, uint64_t since,
			   uint64_t after)
{
	uint64_t period;
	switch (kind) {
	case KCOND_REMIND_DAILY:
		period = KCOND_NS_PER_DAY;
		break;
	case KCOND_REMIND_EVERY:
		period = every_ms * 1000000ull;
		break;
	case KCOND_REMIND_DIMINISHING:
		/* 1, 2, 4, 8 ... days after since (smartd's -M diminishing) */
		for (uint64_t d = KCOND_NS_PER_DAY; d < (UINT64_MAX - since) / 2; d *= 2)
			if (since + d > after)
				return since + d;
		return 0;
	default:
		return 0;
	}
	if (!period)
		return 0;
	uint64_t k = after < since ? 1 : (after - since) / period + 1;
	if (k > (UINT64_MAX - since) / period)
		return 0;
	return since + k * period;
}

static void clear_row(struct kcond_table *t, struct kcond_row *r, const char *reason, uint64_t now)
{
	if (!set_str(&r->reason, reason))
		r->reason = NULL; /* the clear matters more than its reason */
	r->cleared = now ? now : 1;
	r->next_remind = 0;
	wake_at(t, r->cleared + KCOND_CLEARED_KEEP_NS);
	t->holding--;
	t->dirty = true;
	if (t->emit)
		t->emit(t->userdata, KCOND_CLEAR, r, reason);
}

/* A new row of def for key, holding, as of ev; NULL on ENOMEM. */
static struct kcond_row *new_row(const struct kcond_def *def, const char *key)
{
	struct kcond_row *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->name = strdup(def->name);
	r->key = strdup(key);
	if (!r->name || !r->key) {
		kcond_row_free(r);
		return NULL;
	}
	return r;
}

/* Makes r (holding or cleared) a row set afresh by ev. */
static bool reset_row(struct kcond_row *r, const struct kcond_def *def, const struct kevent *ev,
		      uint64_t now)
{
	if (!set_str(&r->object, ev->object) || !note_event(r, ev, now))
		return false;
	free(TAKE_PTR(r->acked_by));
	free(TAKE_PTR(r->note));
	free(TAKE_PTR(r->reason));
	r->acked_at = 0;
	r->type = (uint8_t)ev->type;
	r->source = (uint8_t)ev->source;
	r->severity = (uint8_t)def->severity;
	r->since = ev->timestamp ? ev->timestamp : now;
	r->count = 1;
	r->reminds = 0;
	r->confirmed = true;
	r->cleared = 0;
	r->next_remind = kcond_remind_next(def->remind, def->remind_ms, r->since, now);
	return true;
}

int kcond_table_event(struct kcond_table *t, const struct kcond_def *def, const struct kevent *ev,
		      bool set, uint64_t now)
{
	const char *key = kcond_key_of(def, ev);
	if (!key)
		return 0;
	struct kcond_row *r = kcond_table_find(t, def->name, key);
	if (!set) {
		if (!r || !kcond_row_holds(r))
			return 0;
		clear_row(t, r, ev->signal, now);
		return 1;
	}
	if (r && kcond_row_holds(r)) {
		if (!r->confirmed) {
			/* the source said it again at start-up: confirmed, not
			 * counted; under the object it has now (a row keyed by a
			 * payload value: an array assembled as md127, not md0) */
			if (strcmp(r->object, ev->object) != 0 && !set_str(&r->object, ev->object))
				return -ENOMEM;
			r->confirmed = true;
			t->dirty = true;
			return 1;
		}
		if (!note_event(r, ev, now))
			return -ENOMEM;
		r->count++;
		t->dirty = true;
		return 1;
	}
	if (t->holding >= t->max) {
		t->refused++;
		return -ENOSPC;
	}
	bool fresh = !r;
	if (fresh && !(r = new_row(def, key)))
		return -ENOMEM;
	if (!reset_row(r, def, ev, now)) {
		if (fresh)
			kcond_row_free(r);
		return -ENOMEM;
	}
	if (fresh) {
		int rc = kcond_table_put(t, r);
		if (rc < 0)
			return rc;
	} else {
		t->holding++;
	}
	t->dirty = true;
	wake_at(t, r->next_remind);
	if (def->expire_ms)
		wake_at(t, now + def->expire_ms * 1000000ull);
	if (t->emit)
		t->emit(t->userdata, KCOND_SET, r, ev->signal);
	return 1;
}

int kcond_table_ack(struct kcond_table *t, const struct kcond_def *def, const char *name,
		    const char *key, const char *who, const char *note, uint64_t now)
{
	int n = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct kcond_row *r = t->v[i];
		/* key: the row's key, or its object (a row keyed by a
		 * payload value is also named by the object it is of) */
		if (!kcond_row_holds(r) || strcmp(r->name, name) != 0 ||
		    (key && strcmp(r->key, key) != 0 && strcmp(r->object, key) != 0))
			continue;
		if (!set_str(&r->acked_by, who) || !set_str(&r->note, note))
			return -ENOMEM;
		r->acked_at = now ? now : 1;
		r->next_remind = 0;
		t->dirty = true;
		n++;
		if (t->emit)
			t->emit(t->userdata, KCOND_ACK, r, "acked");
		/* nothing else ends it: the acknowledgement does */
		if (!def || !def->has_clear)
			clear_row(t, r, "acked", now);
	}
	return n;
}

uint64_t kcond_table_tick(struct kcond_table *t, kcond_lookup_fn lookup, void *ud, uint64_t now)
{
	uint64_t next = 0;
#define SOONER(x)                               \
	do {                                    \
		uint64_t x_ = (x);              \
		if (x_ && (!next || x_ < next)) \
			next = x_;              \
	} while (0)
	for (size_t i = 0; i < t->n;) {
		struct kcond_row *r = t->v[i];
		if (!kcond_row_holds(r)) {
			if (now - r->cleared >= KCOND_CLEARED_KEEP_NS && now >= r->cleared) {
				remove_row(t, r); /* the last row moved to i */
				continue;
			}
			SOONER(r->cleared + KCOND_CLEARED_KEEP_NS);
			i++;
			continue;
		}
		i++;
		const struct kcond_def *def = lookup(ud, r->name);
		if (!def) {
			/* its file broken or gone: the row holds as it is, with
			 * no reminder nor expiry, until its declaration is back
			 * or it is acknowledged -- a typo never clears a table */
			continue;
		}
		if (r->severity != def->severity) {
			r->severity = (uint8_t)def->severity;
			t->dirty = true;
		}
		if (def->expire_ms) {
			uint64_t at = r->last_time + def->expire_ms * 1000000ull;
			if (now >= at) {
				clear_row(t, r, "expired", now);
				SOONER(now + KCOND_CLEARED_KEEP_NS);
				continue;
			}
			SOONER(at);
		}
		if (r->acked_at || def->remind == KCOND_REMIND_NONE) {
			if (r->next_remind) {
				r->next_remind = 0;
				t->dirty = true;
			}
			continue;
		}
		if (!r->next_remind) { /* remind: came with a reload */
			r->next_remind =
				kcond_remind_next(def->remind, def->remind_ms, r->since, now);
			t->dirty = true;
		}
		if (r->next_remind && now >= r->next_remind) {
			/* once, however many fell due while keventd was down */
			r->reminds++;
			r->next_remind =
				kcond_remind_next(def->remind, def->remind_ms, r->since, now);
			t->dirty = true;
			if (t->emit)
				t->emit(t->userdata, KCOND_REMIND, r, "reminder");
		}
		SOONER(r->next_remind);
	}
#undef SOONER
	return next;
}

void kcond_table_settle_begin(struct kcond_table *t, unsigned fresh)
{
	for (size_t i = 0; i < t->n; i++) {
		struct kcond_row *r = t->v[i];
		if (kcond_row_holds(r) && r->source < 32 && (fresh & (1u << r->source)))
			r->confirmed = false;
	}
}

size_t kcond_table_settle_end(struct kcond_table *t, unsigned fresh, uint64_t now)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct kcond_row *r = t->v[i];
		if (!kcond_row_holds(r) || r->confirmed)
			continue;
		r->confirmed = true;
		if (r->source < 32 && (fresh & (1u << r->source))) {
			clear_row(t, r, "not so at start", now);
			n++;
		}
	}
	return n;
}

/* The time of a condition event's Since: (seconds, as kcond_put_time()
 * writes it), in ns; 0 when it has none. */
static uint64_t since_of(const struct kevent *ev)
{
	const char *s = kevent_prop(ev, "Since");
	struct tm tm = {0};
	if (!s)
		return 0;
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!end || *end)
		return 0;
	time_t tt = timegm(&tm);
	return tt > 0 ? (uint64_t)tt * KCOND_NS_PER_S : 0;
}

static bool same_since(const struct kcond_row *r, uint64_t since)
{
	return r->since / KCOND_NS_PER_S == since / KCOND_NS_PER_S;
}

int kcond_table_replay(struct kcond_table *t, const struct kevent *ev)
{
	const char *name = kevent_prop(ev, "Condition");
	const char *key = kevent_prop(ev, "Key");
	uint64_t since = since_of(ev);
	if (!name || !since)
		return 0;
	if (!key)
		key = ev->object;
	struct kcond_row *r = kcond_table_find(t, name, key);
	bool holds = r && kcond_row_holds(r);
	if (strcmp(ev->signal, "set") == 0) {
		/* the table has it, or a later clear of it: nothing to do */
		if (holds || (r && r->since / KCOND_NS_PER_S >= since / KCOND_NS_PER_S))
			return 0;
		bool fresh = !r;
		if (fresh && !(r = calloc(1, sizeof(*r))))
			return -ENOMEM;
		int64_t count = 1;
		const char *c = kevent_prop(ev, "Count"), *sev = kevent_prop(ev, "Severity");
		const char *src = kevent_prop(ev, "Source"), *reason = kevent_prop(ev, "Reason");
		int severity = sev ? kcond_severity_from_name(sev) : -1;
		int source = src ? kevent_source_from_name(src) : -1;
		if (c)
			(void)parse_int64(c, &count);
		if ((fresh && (!set_str(&r->name, name) || !set_str(&r->key, key))) ||
		    !set_str(&r->object, ev->object) || !set_str(&r->last_signal, reason) ||
		    !set_str(&r->last_payload, "")) {
			if (fresh)
				kcond_row_free(r);
			return -ENOMEM;
		}
		free(TAKE_PTR(r->acked_by));
		free(TAKE_PTR(r->note));
		free(TAKE_PTR(r->reason));
		r->acked_at = 0;
		r->type = (uint8_t)ev->type;
		r->source = (uint8_t)(source >= 0 ? source : KEVENT_SOURCE_CONDITION);
		r->severity = (uint8_t)(severity >= 0 ? severity : KCOND_WARNING);
		r->since = since;
		r->count = count > 0 ? (uint64_t)count : 1;
		r->last_time = ev->timestamp;
		r->confirmed = true;
		r->cleared = 0;
		r->reminds = 0;
		r->next_remind = 0; /* the tick reckons it */
		if (!fresh) {
			t->holding++;
			t->dirty = true;
			return 1;
		}
		int rc = kcond_table_put(t, r);
		return rc < 0 ? rc : 1;
	}
	if (!holds || !same_since(r, since))
		return 0; /* of another time the row held, or done already */
	if (strcmp(ev->signal, "clear") == 0) {
		kcond_emit_fn emit = t->emit;
		t->emit = NULL;
		const char *reason = kevent_prop(ev, "Reason");
		clear_row(t, r, reason ? reason : "clear", ev->timestamp);
		t->emit = emit;
		return 1;
	}
	if (strcmp(ev->signal, "ack") == 0 && !r->acked_at) {
		if (!set_str(&r->acked_by, kevent_prop(ev, "Acked-By")) ||
		    !set_str(&r->note, kevent_prop(ev, "Note")))
			return -ENOMEM;
		r->acked_at = ev->timestamp ? ev->timestamp : 1;
		r->next_remind = 0;
		t->dirty = true;
		return 1;
	}
	if (strcmp(ev->signal, "remind") == 0 && r->next_remind &&
	    r->next_remind <= ev->timestamp) {
		/* told already: the tick reckons the one after */
		r->reminds++;
		r->next_remind = 0;
		t->dirty = true;
		return 1;
	}
	return 0;
}

int kcond_row_cmp(const struct kcond_row *a, const struct kcond_row *b)
{
	int c = strcmp(a->name, b->name);
	return c ? c : strcmp(a->key, b->key);
}

static int cmp_rows(const void *a, const void *b)
{
	return kcond_row_cmp(*(struct kcond_row *const *)a, *(struct kcond_row *const *)b);
}

/* The order, brought up to date: sorted again whole after a removal
 * (its pointers may dangle), else the rows added since sorted alone and
 * merged in -- a table read again and again sorts once. */
static int sort_rows(struct kcond_table *t)
{
	if (t->sorted && t->removals == t->sorted_removals && t->n_sorted == t->n)
		return 0;
	struct kcond_row **v = malloc((t->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t old = t->sorted && t->removals == t->sorted_removals ? t->n_sorted : 0;
	size_t add = t->n - old;
	/* the new rows sorted at the front, then the old ones merged in from
	 * the back: a place written, i + j - 1, is never before the next new
	 * row read, j - 1, and the new rows left when the old run out are in
	 * their places already */
	if (add)
		memcpy(v, t->v + old, add * sizeof(*v));
	qsort(v, add, sizeof(*v), cmp_rows);
	struct kcond_row **a = t->sorted;
	for (size_t i = old, j = add; i > 0;) {
		size_t k = i + j - 1;
		v[k] = j > 0 && cmp_rows(&v[j - 1], &a[i - 1]) > 0 ? v[--j] : a[--i];
	}
	free(t->sorted);
	t->sorted = v;
	t->n_sorted = t->n;
	t->sorted_removals = t->removals;
	return 0;
}

struct kcond_row **kcond_table_sorted(const struct kcond_table *t)
{
	/* the order kept is a cache of the rows', not the table's content */
	if (sort_rows((struct kcond_table *)t) < 0)
		return NULL;
	struct kcond_row **v = malloc((t->n + 1) * sizeof(*v));
	if (v && t->n)
		memcpy(v, t->sorted, t->n * sizeof(*v));
	return v;
}
