/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Desktop notifications (keventd.rules(5), NOTIFICATIONS, "notify:
 * desktop"): in a user instance, each rule that names the target desktop
 * shows its title and message through org.freedesktop.Notifications on
 * the user's session bus.  A later notification of the same rule and
 * object replaces the earlier one (replaces_id), so that a flapping
 * object shows one notification, never a stack; a condition's clear
 * closes the notifications its set and reminders showed.  The bus is
 * reached when the first notification is due, and again after it went;
 * a notification that cannot be shown is counted and logged (at a
 * bounded rate), never queued.  Built when KEVENT_DBUS (sd-bus) is on.
 */
#ifndef KEVENT_DESKTOP_H
#define KEVENT_DESKTOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "loop.h"
#include "notify-rec.h"
#include "rules.h"
#include "util.h"

#define KDESKTOP_TARGET	  "desktop" /* the target's name in notify: */
#define KDESKTOP_OPEN_MAX 256	    /* notifications remembered for replacing */
#define KDESKTOP_BODY_MAX 4096	    /* bytes of a message shown */
#define KDESKTOP_APP_NAME "keventd"

struct kdesktop;

struct kdesktop_counters {
	uint64_t shown;	   /* notifications the server took (a new one or a replacement) */
	uint64_t replaced; /* of them, shown over an earlier one */
	uint64_t closed;   /* closed by a condition's clear */
	uint64_t failed;   /* not shown: no session bus, no server, or its error */
	size_t open;	   /* shown and not known closed */
	const char *last_error;
};

/* Whether rule r names the target desktop. */
bool kdesktop_wanted(const struct krule *r);

/* The notification's urgency hint (0 low, 1 normal, 2 critical) and icon
 * for a severity. */
uint8_t kdesktop_urgency(enum knotify_severity s);
const char *kdesktop_icon(enum knotify_severity s);
/* s as a notification's body: valid UTF-8, '&', '<' and '>' as entities
 * (a server may read the body as markup), at most KDESKTOP_BODY_MAX bytes
 * (cut at a character, "…" after). */
void kdesktop_body(const char *s, struct strbuf *out);
/* The key a condition event's notifications share: "NAME\x1fKEY"; NULL
 * (nothing in out) when ev is no condition event. */
const char *kdesktop_condition_key(const struct kevent *ev, struct strbuf *out);

/* Ready to show notifications in loop (nothing is reached yet); host is
 * this machine's name, for the default titles.  0 or -ENOMEM. */
int kdesktop_new(struct kloop *loop, const char *host, struct kdesktop **out);
/* ev was handled and matched rules: shows each one's notification that
 * names desktop, and closes what a condition's clear ends.  Never blocks. */
void kdesktop_event(struct kdesktop *k, const struct kevent *ev, const struct krule *const *rules,
		    size_t n_rules);
void kdesktop_counters(const struct kdesktop *k, struct kdesktop_counters *out);
/* Leaves what is shown on the screen.  NULL is fine. */
void kdesktop_free(struct kdesktop *k);

#endif
