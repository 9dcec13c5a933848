// SPDX-License-Identifier: GPL-2.0-or-later
/* Debounce (debounce.h). */
#include "debounce.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "util.h"

struct pending {
	struct kdebounce *db;
	char *key;
	const struct krule *rule;
	struct kfile *file; /* a reference: the rule stays across reloads */
	struct kevent *ev;
	uint64_t serial;
	void *tag;
	struct ktimer *timer;
};

struct kdebounce {
	struct kloop *loop;
	const struct kdebounce_ops *ops;
	void *userdata;
	struct hashmap *map; /* "RULE-ADDRESS\x1fKEY" -> struct pending */
};

static void pending_free(void *v)
{
	struct pending *p = v;
	if (!p)
		return;
	ktimer_cancel(p->timer);
	kevent_free(p->ev);
	kfile_unref(p->file);
	free(p->key);
	free(p);
}

int kdebounce_new(struct kloop *loop, const struct kdebounce_ops *ops, void *userdata,
		  struct kdebounce **out)
{
	struct kdebounce *db = calloc(1, sizeof(*db));
	if (!db || hashmap_new(&db->map) < 0) {
		free(db);
		return -ENOMEM;
	}
	db->loop = loop;
	db->ops = ops;
	db->userdata = userdata;
	*out = db;
	return 0;
}

/* A waiting event dropped with the table: its tag is told. */
static void pending_drop(void *v)
{
	struct pending *p = v;
	p->db->ops->gone(p->db->userdata, p->tag, false);
	pending_free(p);
}

void kdebounce_free(struct kdebounce *db)
{
	if (!db)
		return;
	hashmap_free(db->map, pending_drop);
	free(db);
}

struct drain {
	void (*fn)(void *userdata, const struct krule *r, struct kevent *ev, void *tag);
	void *userdata;
};

static int drain_one(const char *key, void *value, void *userdata)
{
	struct pending *p = value;
	struct drain *d = userdata;
	(void)key;
	d->fn(d->userdata, p->rule, TAKE_PTR(p->ev), p->tag);
	pending_free(p);
	return 1;
}

void kdebounce_drain(struct kdebounce *db,
		     void (*fn)(void *userdata, const struct krule *r, struct kevent *ev,
				void *tag),
		     void *userdata)
{
	struct drain d = {fn, userdata};
	if (db)
		hashmap_sweep(db->map, drain_one, &d);
}

static void on_quiet(struct ktimer *t, void *userdata)
{
	struct pending *p = userdata;
	(void)t;
	p->timer = NULL; /* freed by the loop once it fired */
	struct kdebounce *db = p->db;
	(void)hashmap_remove(db->map, p->key);
	db->ops->fire(db->userdata, p->rule, TAKE_PTR(p->ev), p->serial, p->tag);
	pending_free(p);
}

int kdebounce_push(struct kdebounce *db, const struct krule *r, const struct kevent *ev,
		   uint64_t serial, void *tag, uint64_t now_ns)
{
	_cleanup_strbuf_ struct strbuf key = STRBUF_INIT;
	strbuf_printf(&key, "%p\x1f%s", (const void *)r, krule_limit_key(r, ev));
	if (key.oom)
		return -ENOMEM;
	struct kevent *copy = NULL;
	int rc = kevent_dup(ev, &copy);
	if (rc < 0)
		return rc;
	uint64_t deadline = now_ns + r->debounce_ms * 1000000ull;
	struct pending *p = hashmap_get(db->map, strbuf_str(&key));
	if (p) {
		struct ktimer *t = NULL;
		if (kloop_add_timer(db->loop, deadline, on_quiet, p, &t) < 0) {
			kevent_free(copy);
			return -ENOMEM;
		}
		ktimer_cancel(p->timer);
		p->timer = t;
		kevent_free(p->ev);
		p->ev = copy;
		p->serial = serial;
		void *replaced = p->tag;
		p->tag = tag;
		db->ops->gone(db->userdata, replaced, true);
		return 1;
	}
	if (hashmap_size(db->map) >= KDEBOUNCE_MAX_PENDING) {
		db->ops->fire(db->userdata, r, copy, serial, tag);
		return 2;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->key = strdup(strbuf_str(&key))) ||
	    kloop_add_timer(db->loop, deadline, on_quiet, p, &p->timer) < 0 ||
	    hashmap_put(db->map, p->key, p, NULL) < 0) {
		if (p) {
			ktimer_cancel(p->timer);
			free(p->key);
		}
		free(p);
		kevent_free(copy);
		return -ENOMEM;
	}
	p->db = db;
	p->rule = r;
	p->file = kfile_ref((struct kfile *)r->file);
	p->ev = copy;
	p->serial = serial;
	p->tag = tag;
	return 0;
}

size_t kdebounce_pending(const struct kdebounce *db)
{
	return db ? hashmap_size(db->map) : 0;
}
