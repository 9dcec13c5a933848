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
	struct hashmap *windows; /* "file\0rule\0object" flattened -> window */
	size_t sweep_at;
};

int kratelimit_new(struct kratelimit **out)
{
	struct kratelimit *rl = calloc(1, sizeof(*rl));
	if (!rl || hashmap_new(&rl->windows) < 0) {
		free(rl);
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

bool kratelimit_allow(struct kratelimit *rl, const struct krule *r, const char *object,
		      uint64_t now)
{
	if (!r->rl_period_ms)
		return true;
	struct strbuf key = STRBUF_INIT;
	/* the rule by file name and rule name, so limits survive a reload */
	strbuf_printf(&key, "%s\x1f%s\x1f%s", r->file->name, r->name, object);
	if (key.oom) {
		strbuf_release(&key);
		return true;
	}
	if (hashmap_size(rl->windows) >= rl->sweep_at) {
		hashmap_sweep(rl->windows, expired, &now);
		rl->sweep_at = hashmap_size(rl->windows) * 2 + 1024;
	}
	bool allow = true;
	struct window *w = hashmap_get(rl->windows, key.buf);
	if (w && w->end_ns > now) {
		allow = w->count < r->rl_count;
		if (allow)
			w->count++;
	} else {
		if (!w) {
			w = malloc(sizeof(*w));
			if (w && hashmap_put(rl->windows, key.buf, w, NULL) < 0) {
				free(w);
				w = NULL;
			}
		}
		if (w)
			*w = (struct window){now + r->rl_period_ms * 1000000ull, 1};
	}
	strbuf_release(&key);
	return allow;
}

size_t kratelimit_size(const struct kratelimit *rl)
{
	return hashmap_size(rl->windows);
}
