/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The condition table (keventd.rules(5), CONDITIONS): one row per
 * (condition, object or key) that holds, or was cleared in the last
 * KCOND_CLEARED_KEEP_NS.  A pure state machine, its law in COND.txt beside
 * it: every change is a function of the row, the event (or the time) and
 * the condition's declaration, and is told through the emit callback
 * (set, clear, remind, ack) as it is made.  No clock, no loop, no file:
 * the caller passes the time (ns since the epoch) and saves the table
 * (file.h) when kcond_table_dirty() says so.
 */
#ifndef KEVENT_COND_TABLE_H
#define KEVENT_COND_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "rules.h"

/* Rows that hold, at most (keventd.rules(5)): a set past it is refused,
 * counted and logged. */
#define KCOND_ROWS_MAX 100000
/* Cleared rows are listed (keventctl conditions --all) for a day. */
#define KCOND_CLEARED_KEEP_NS (24ull * 3600 * 1000000000)
/* Of a row's last event, the payload kept (bytes; cut at a line). */
#define KCOND_PAYLOAD_KEEP 1024

#define KCOND_NS_PER_S	 1000000000ull
#define KCOND_NS_PER_DAY (24ull * 3600 * KCOND_NS_PER_S)

enum kcond_signal { KCOND_SET, KCOND_CLEAR, KCOND_REMIND, KCOND_ACK };
const char *kcond_signal_name(enum kcond_signal s);

struct kcond_row {
	char *name;	  /* the condition's */
	char *key;	  /* the object, or the value of the payload property of key: */
	char *object;	  /* the object of the event that set it */
	uint8_t type;	  /* enum kevent_type of that event */
	uint8_t source;	  /* enum kevent_source of that event */
	uint8_t severity; /* enum kcond_severity */
	bool confirmed;	  /* at this start: a set event came (kcond_table_settle()) */
	uint64_t since;	  /* the first set event's time */
	uint64_t count;	  /* set events while it holds */
	/* the last set event */
	uint64_t last_time, last_seqnum;
	char *last_signal, *last_payload;
	/* acknowledged (keventctl ack): who, when, note (may be NULL) */
	char *acked_by, *note;
	uint64_t acked_at;    /* 0: not acknowledged */
	uint64_t next_remind; /* 0: none due */
	uint32_t reminds;     /* reminders told since it was set */
	uint64_t cleared;     /* when it cleared; 0: it holds */
	char *reason;	      /* why it cleared */
	size_t pos;	      /* in the table's vector */
};

static inline bool kcond_row_holds(const struct kcond_row *r)
{
	return r->cleared == 0;
}

/* A change, as it is made: the row as it is after it (a cleared row is
 * kept), the reason (the signal that caused it, "expired", "not so at
 * start", "acked", "reminder"). */
typedef void (*kcond_emit_fn)(void *userdata, enum kcond_signal sig, const struct kcond_row *row,
			      const char *reason);

struct kcond_table {
	struct hashmap *rows; /* "NAME\x1fKEY" -> row */
	struct kcond_row **v; /* every row, in no order */
	size_t n, cap;
	size_t holding;	   /* rows that hold */
	size_t max;	   /* of them, at most */
	uint64_t refused;  /* sets refused for the bound */
	uint64_t removals; /* rows freed so far (a cursor over v knows) */
	/* the rows in order (kcond_table_sorted()): the first n_sorted of v
	 * as they were sorted while removals was sorted_removals; rows added
	 * since are v[n_sorted..n), merged in at the next call */
	struct kcond_row **sorted;
	size_t n_sorted;
	uint64_t sorted_removals;
	bool dirty; /* changed since it was last written */
	/* the soonest time a change since the caller last read it needs a
	 * tick at (a new row's reminder or expiry, a cleared row's removal);
	 * 0: none.  The caller resets it. */
	uint64_t wake;
	kcond_emit_fn emit;
	void *userdata;
};

/* 0 or -ENOMEM.  max 0: KCOND_ROWS_MAX. */
int kcond_table_init(struct kcond_table *t, size_t max, kcond_emit_fn emit, void *userdata);
void kcond_table_release(struct kcond_table *t);

struct kcond_row *kcond_table_find(const struct kcond_table *t, const char *name, const char *key);

/* The key of ev's row of def: its object, or its payload property of
 * key: (NULL when the event lacks it: no row). */
const char *kcond_key_of(const struct kcond_def *def, const struct kevent *ev);

/*
 * ev matched def's set (set true) or clear: the row of its key is set
 * (emits set), counted (a set while it holds: nothing emitted; confirmed,
 * not counted, at start-up until confirmed), or cleared (emits clear,
 * Reason the event's signal).  Returns 1 when the table changed, 0 when
 * not, -ENOSPC when a set was refused for the bound (counted in
 * t->refused), -ENOMEM.
 */
int kcond_table_event(struct kcond_table *t, const struct kcond_def *def, const struct kevent *ev,
		      bool set, uint64_t now);

/*
 * Acknowledges the rows of name that hold (key NULL: all of them; else
 * that one): who, note (may be NULL).  Each emits ack, and no reminder
 * follows until it clears and is set again; a row of a condition with no
 * clear (def->has_clear false, or def NULL: no longer declared) ends
 * then: clear with Reason acked.  Returns the rows acknowledged, or
 * -ENOMEM.
 */
int kcond_table_ack(struct kcond_table *t, const struct kcond_def *def, const char *name,
		    const char *key, const char *who, const char *note, uint64_t now);

/* What kcond_table_tick() needs of the rules: the declaration of a
 * condition by name (NULL: no longer declared). */
typedef const struct kcond_def *(*kcond_lookup_fn)(void *userdata, const char *name);

/*
 * The time's changes, at now: rows whose expire is over clear (Reason
 * expired); reminders due are told once (remind), however many were due
 * (a keventd that was down), and the next is the first after now; rows of
 * conditions no longer declared hold as they are, untouched; cleared rows
 * older than KCOND_CLEARED_KEEP_NS go.  Returns the time of the next
 * change (0: none), for the caller's timer.
 */
uint64_t kcond_table_tick(struct kcond_table *t, kcond_lookup_fn lookup, void *ud, uint64_t now);

/* The start-up check (keventd.rules(5), At start): every row that holds
 * of the sources of fresh (bit per enum kevent_source), which report
 * their states afresh at this start, is unconfirmed until a set event of
 * its key comes (which confirms it, not counted); once they have
 * reported, those still unconfirmed clear, Reason "not so at start".
 * begin marks them, end clears.  Returns how many cleared. */
void kcond_table_settle_begin(struct kcond_table *t, unsigned fresh);
size_t kcond_table_settle_end(struct kcond_table *t, unsigned fresh, uint64_t now);

/* A condition event of an earlier keventd's, read back from the journal
 * (KEVENT_REDELIVERED=1): its change is made to the table if the table
 * does not have it yet (a kill between the journal's write and the
 * table's), and nothing is emitted: the event itself is the telling.
 * Returns 1 when the table changed, else 0, or -ENOMEM. */
int kcond_table_replay(struct kcond_table *t, const struct kevent *ev);

/* Reminders (pure): the first time after after at which a row set at
 * since is reminded, by kind and every (ms); 0: never. */
uint64_t kcond_remind_next(enum kcond_remind kind, uint64_t every_ms, uint64_t since,
			   uint64_t after);

/* Rows for an output, sorted by name then key (holding or not: the
 * caller filters).  A new array of t->n pointers (free() it), NULL on
 * ENOMEM. */
struct kcond_row **kcond_table_sorted(const struct kcond_table *t);
int kcond_row_cmp(const struct kcond_row *a, const struct kcond_row *b);

/* For loading (file.h): adds row (taken) as it is.  0, -EEXIST (freed),
 * -ENOMEM (freed). */
int kcond_table_put(struct kcond_table *t, struct kcond_row *row);
void kcond_row_free(struct kcond_row *r);

#endif
