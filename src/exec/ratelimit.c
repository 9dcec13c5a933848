// SPDX-License-Identifier: GPL-2.0-or-later
#include "ratelimit.h"

#include <errno.h>
#include <stdlib.h>

#include "hashmap.h"
#include "util.h"

struct window {
	uint64_t end_ns;
	uint32_t count;
};

struct kratelimit {
	struct hashmap *windows; /* "file\x1frule\x1fobject" -> window */
	struct hashmap *shared;	 /* "file\x1frule": the table was full */
	size_t sweep_at;
	uint64_t swept_ns; /* the last sweep of a full table */
};

int kratelimit_new(struct kratelimit **out)
{
	struct kratelimit *rl = calloc(1, sizeof(*rl));
	if (!rl || hashmap_new(&rl->windows) < 0 || hashmap_new(&rl->shared) < 0) {
		kratelimit_free(rl);
		return -ENOMEM;
	}
	rl->sweep_at = 1024;
	*out = rl;
	return 0;
}

void kratelimit_free(struct kratelimit *rl)
{
	if (!rl)
		return;
	hashmap_free(rl->windows, free);
	hashmap_free(rl->shared, free);
	free(rl);
}

static int expired(const char *key, void *value, void *ud)
{
	struct window *w = value;
	(void)key;
	if (w->end_ns > *(uint64_t *)ud)
		return 0;
	free(w);
	return 1;
}

static void sweep(struct kratelimit *rl, uint64_t now)
{
	hashmap_sweep(rl->windows, expired, &now);
	hashmap_sweep(rl->shared, expired, &now);
	rl->sweep_at = hashmap_size(rl->windows) * 2 + 1024;
}

/* Counts a run in w, a new window when w is NULL or has ended (into map at
 * key: on ENOMEM the run is allowed uncounted, as ever). */
static bool count(struct hashmap *map, const char *key, struct window *w, const struct krule *r,
		  uint64_t now)
{
	if (w && w->end_ns > now) {
		if (w->count >= krule_extra(r)->rl_count)
			return false;
		w->count++;
		return true;
	}
	if (!w) {
		w = malloc(sizeof(*w));
		if (w && hashmap_put(map, key, w, NULL) < 0) {
			free(w);
			w = NULL;
		}
	}
	if (w)
		*w = (struct window){now + krule_extra(r)->rl_period_ms * 1000000ull, 1};
	return true;
}

enum kratelimit_verdict kratelimit_check(struct kratelimit *rl, const struct krule *r,
					 const char *object, uint64_t now)
{
	if (!krule_extra(r)->rl_period_ms)
		return KRATELIMIT_RUN;
	struct strbuf key = STRBUF_INIT;
	/* the rule by file name and rule name, so limits survive a reload */
	strbuf_printf(&key, "%s\x1f%s\x1f%s", r->file->name, r->name, object);
	if (key.oom) {
		strbuf_release(&key);
		return KRATELIMIT_RUN;
	}
	size_t n = hashmap_size(rl->windows);
	if (n >= rl->sweep_at && n < KRATELIMIT_MAX_WINDOWS)
		sweep(rl, now);
	struct window *w = hashmap_get(rl->windows, key.buf);
	if (!w && hashmap_size(rl->windows) >= KRATELIMIT_MAX_WINDOWS &&
	    now - rl->swept_ns >= KRATELIMIT_FULL_SWEEP_NS) {
		rl->swept_ns = now;
		sweep(rl, now);
	}
	enum kratelimit_verdict v;
	if (w || hashmap_size(rl->windows) < KRATELIMIT_MAX_WINDOWS) {
		v = count(rl->windows, key.buf, w, r, now) ? KRATELIMIT_RUN : KRATELIMIT_SUPPRESS;
	} else {
		/* full: the object shares the rule's window (the key without it) */
		strbuf_reset(&key);
		strbuf_printf(&key, "%s\x1f%s", r->file->name, r->name);
		v = key.oom || count(rl->shared, key.buf, hashmap_get(rl->shared, key.buf), r, now)
			    ? KRATELIMIT_RUN_SHARED
			    : KRATELIMIT_SUPPRESS_SHARED;
	}
	strbuf_release(&key);
	return v;
}

size_t kratelimit_size(const struct kratelimit *rl)
{
	return hashmap_size(rl->windows);
}

size_t kratelimit_shared(const struct kratelimit *rl)
{
	return hashmap_size(rl->shared);
}
