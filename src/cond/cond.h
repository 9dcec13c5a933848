/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Conditions, live (keventd.rules(5), CONDITIONS): the table (table.h) in
 * --lib-dir (file.h), weighed against every event the daemon takes, its
 * reminders, expiries and start-up check on the loop's timers, and its
 * changes made events of source "condition", handed to the daemon
 * (ops->ready, then kcond_take()), which treats them as every event:
 * matched, journaled, observed, run.  The law of when a change is made
 * and when the file is written, across kills and reboots, is COND.txt.
 */
#ifndef KEVENT_COND_H
#define KEVENT_COND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "loop.h"
#include "ruleset.h"
#include "table.h"

/* How long the sources that report their abnormal states at start have
 * to report a row's state before it clears "not so at start"
 * (keventd.rules(5)). */
#define KCOND_SETTLE_MS 10000
/* A note of keventctl ack, at most (bytes; printable, one line). */
#define KCOND_NOTE_MAX 1000

struct kcond;
struct kstatedir;

struct kcond_ops {
	/* condition events made by the time (reminders, expiries, the
	 * start-up check) wait in kcond_take(); those of kcond_weigh(),
	 * kcond_ack() and kcond_set_rules() wait there when they return,
	 * without this call */
	void (*ready)(void *userdata);
};

/* Makes the conditions of the daemon's loop; the table is empty until
 * kcond_open().  0 or -ENOMEM. */
int kcond_new(struct kloop *loop, const struct kcond_ops *ops, void *userdata, struct kcond **out);
void kcond_free(struct kcond *c);

/*
 * Reads the table from dir, --lib-dir as the daemon opened it (made 0700
 * when missing, checked and locked as the state directory is:
 * statedir.h), which must outlive c.  A damaged table
 * is logged, kept aside as "conditions.damaged", and the table starts
 * empty: its damage costs the file, never keventd.  0 or -ENOMEM.
 */
int kcond_open(struct kcond *c, const struct kstatedir *dir);
/* Whether the table is kept (kcond_open() succeeded). */
bool kcond_on(const struct kcond *c);

/* The rules in force (their conditions); called at every reload.
 * Reminders and expiries follow the new declarations; rows of conditions
 * no longer declared hold, untouched (a broken file must not clear
 * them). */
void kcond_set_rules(struct kcond *c, const struct kruleset *rs);

/* ev, taken by the daemon: its changes to the table are made and their
 * events queued.  An event the table has weighed already (a socket or
 * kernel event handed again after a kill, a redelivered event whose
 * change the journal's condition events carry) is passed over.  A
 * condition event redelivered from the journal has its change made
 * to a table that lacks it (kcond_table_replay()). */
void kcond_weigh(struct kcond *c, const struct kevent *ev);

/* A condition event of the last run, read back from the journal before
 * anything is handed again (kjournal_peek()): its change made to a table
 * that lacks it, and the events made from now on numbered past it.  So an
 * event handed again whose change the journal holds makes no second
 * event, and no number is given twice. */
void kcond_read_back(struct kcond *c, const struct kevent *ev);

/* The next condition event, oldest first (taken), or NULL. */
struct kevent *kcond_take(struct kcond *c);

/* keventctl ack: the rows of name that hold (key NULL: all), by who,
 * with note (NULL: none).  The number acknowledged, -ENOENT (no such
 * condition declared nor held), -EINVAL (a note too long or not one
 * printable line), -ENOMEM. */
int kcond_ack(struct kcond *c, const char *name, const char *key, const char *who,
	      const char *note);

/* The start-up check: the rows of sources of fresh (bit per source) clear
 * "not so at start" unless a set event confirms them within settle_ms. */
void kcond_settle(struct kcond *c, unsigned fresh, uint64_t settle_ms);

/* Writes the table when it changed (synced: written whole or not at
 * all), after the journal holds the events of its changes (the daemon
 * calls it at the end of a round).  A failure is logged, counted, and
 * the next call tries again. */
void kcond_save(struct kcond *c);

/* The table, for the outputs (read only). */
const struct kcond_table *kcond_table(const struct kcond *c);
const struct kcond_def *kcond_lookup(const struct kcond *c, const char *name);

struct kcond_status {
	bool on;
	size_t rows, holding, acked;
	size_t by_severity[3]; /* holding, by enum kcond_severity */
	uint64_t refused;      /* sets refused for the bound */
	uint64_t writes, write_errors;
	uint64_t damaged; /* tables found damaged at start */
	size_t max;
	bool settling;
};
void kcond_status(const struct kcond *c, struct kcond_status *out);

/* A time as the condition events and outputs say it: 2024-05-01T12:00:00Z. */
void kcond_put_time(struct strbuf *sb, uint64_t ns);

#endif
