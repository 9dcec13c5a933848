// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The md source's /proc/mdstat: two reads (the input split at its first
 * NUL byte) parsed, each array of the second compared with the same
 * array of the first (kmd_update(), as at keventd's start and for an
 * array that appears), each change made into an event.  Checked: names
 * are safe as file names; a position is within its sync; a look compared
 * with itself says nothing; a sync's progress steps rise by 10 up to 90;
 * every event is of type storage, source md, under the array's object.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "md.h"

#define MAX_INPUT (64 * 1024)

static void check_name(const char *s)
{
	size_t n = strlen(s);
	FUZZ_CHECK(n > 0 && n < KMD_NAME_MAX && s[0] != '.' && !strchr(s, '/'));
}

static void check_array(const struct kmd_array *a)
{
	check_name(a->name);
	FUZZ_CHECK(a->n_m <= KMD_MAX_MEMBERS);
	for (size_t i = 0; i < a->n_m; i++)
		check_name(a->m[i].name);
	FUZZ_CHECK(a->done <= a->total);
	FUZZ_CHECK(a->degraded <= a->raid_disks);
	FUZZ_CHECK(!a->syncing || a->action != KMD_IDLE);
}

static void check_changes(const struct kmd_array *a, const struct kmd_changes *ch)
{
	unsigned last = 0;
	FUZZ_CHECK(ch->n <= KMD_MAX_CHANGES);
	for (size_t i = 0; i < ch->n; i++) {
		const struct kmd_change *c = &ch->v[i];
		FUZZ_CHECK(c->signal != NULL);
		if (strstr(c->signal, "-start"))
			last = 0; /* another sync's steps */
		if (strcmp(c->signal, "progress") == 0) {
			FUZZ_CHECK(c->percent >= 10 && c->percent <= 90 && c->percent % 10 == 0);
			FUZZ_CHECK(c->percent > last);
			last = c->percent;
		}
		struct kevent *ev = NULL;
		const char *why = NULL;
		int rc = kmd_event(c, a, "/devices/virtual/block/md0", 1, &ev, &why);
		FUZZ_CHECK(rc == 0 || rc == -EINVAL);
		if (rc == 0) {
			FUZZ_CHECK(ev->type == KEVENT_STORAGE && ev->source == KEVENT_SOURCE_MD);
			FUZZ_CHECK(strcmp(ev->object, "/org/kernel/devices/virtual/block/md0") ==
				   0);
			FUZZ_CHECK(strcmp(ev->signal, c->signal) == 0);
			kevent_free(ev);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return 0;
	struct fuzz_pair in = fuzz_split(data, size);
	struct kmd_stat sa, sb;
	int ra = kmd_stat_parse(in.a, in.la, &sa);
	int rb = kmd_stat_parse(in.b, in.lb, &sb);
	FUZZ_CHECK(ra == 0 || ra == -E2BIG);
	FUZZ_CHECK(rb == 0 || rb == -E2BIG);
	if (ra < 0 || rb < 0) {
		if (ra == 0)
			kmd_stat_release(&sa);
		if (rb == 0)
			kmd_stat_release(&sb);
		return 0;
	}
	static struct kmd_changes ch;
	for (size_t i = 0; i < sb.n; i++) {
		const struct kmd_array *cur = &sb.v[i];
		check_array(cur);
		const struct kmd_array *old = kmd_stat_find(&sa, cur->name);
		for (int fresh = 0; fresh < 2; fresh++) {
			static struct kmd_track t;
			memset(&t, 0, sizeof(t));
			if (old) {
				kmd_update(&t, old, fresh, 1000, &ch);
				check_changes(old, &ch);
				/* nothing changed: nothing to say */
				kmd_update(&t, old, fresh, 2000, &ch);
				FUZZ_CHECK(ch.n == 0);
			}
			kmd_update(&t, cur, fresh, 3000, &ch);
			check_changes(cur, &ch);
			(void)kmd_next_look(&t, 3000);
		}
	}
	kmd_stat_release(&sa);
	kmd_stat_release(&sb);
	return 0;
}
