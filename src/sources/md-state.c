// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What changed between two looks at an array, the 10 % steps a sync
 * crossed, when to look at a running sync again, and the events.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "md.h"
#include "util.h"

/* clang-format off */
static const char *const start_signals[] = {
	[KMD_RESYNC] = "resync-start",
	[KMD_RECOVER] = "recovery-start",
	[KMD_CHECK] = "check-start",
	[KMD_REPAIR] = "check-start",
	[KMD_RESHAPE] = "reshape-start",
};
static const char *const done_signals[] = {
	[KMD_RESYNC] = "resync-done",
	[KMD_RECOVER] = "recovery-done",
	[KMD_CHECK] = "check-done",
	[KMD_REPAIR] = "check-done",
	[KMD_RESHAPE] = "reshape-done",
};
/* clang-format on */

const char *kmd_sync_signal(enum kmd_action a, bool start)
{
	if (a <= KMD_IDLE || a > KMD_RESHAPE)
		return NULL;
	return start ? start_signals[a] : done_signals[a];
}

static struct kmd_change *add(struct kmd_changes *out, const char *signal)
{
	if (out->n == KMD_MAX_CHANGES)
		return NULL;
	struct kmd_change *c = &out->v[out->n++];
	memset(c, 0, sizeof(*c));
	c->signal = signal;
	return c;
}

static const struct kmd_member *find_member(const struct kmd_array *a, const char *name)
{
	for (size_t i = 0; i < a->n_m; i++)
		if (strcmp(a->m[i].name, name) == 0)
			return &a->m[i];
	return NULL;
}

static unsigned step_of(uint64_t done, uint64_t total)
{
	if (!total)
		return 0;
	unsigned s = (unsigned)((long double)done * 10 / total);
	return s > KMD_PROGRESS_STEPS ? KMD_PROGRESS_STEPS : s;
}

static void progress(struct kmd_track *t, unsigned upto, bool initial, struct kmd_changes *out)
{
	for (; t->step < upto; t->step++) {
		struct kmd_change *c = add(out, "progress");
		if (!c)
			return;
		c->action = t->action;
		c->percent = (t->step + 1) * 10;
		c->initial = initial;
	}
}

/* Whether the sync t followed, now over, ran to its end: what the
 * kernel leaves behind says (md.c: md_do_sync() and
 * md_reap_sync_thread()). */
static bool completed(const struct kmd_track *t, const struct kmd_array *last,
		      const struct kmd_array *cur)
{
	if ((last->total && last->done >= last->total) || (cur->total && cur->done >= cur->total))
		return true; /* seen at its end, before it was reaped */
	switch (t->action) {
	case KMD_RECOVER:
		/* a rebuilt member is in sync: one fewer missing */
		return cur->degraded >= 0 && cur->degraded < t->sync_degraded;
	case KMD_RESYNC:
		return !cur->resync_pending;
	case KMD_CHECK:
	case KMD_REPAIR:
		/* a check run to its end sets sync_min back to 0; one
		 * interrupted leaves it where it stopped */
		return !cur->has_sync_min || cur->sync_min == 0;
	default:
		return true;
	}
}

static void sync_start(struct kmd_track *t, const struct kmd_array *cur, bool initial,
		       uint64_t now_ns, struct kmd_changes *out)
{
	t->syncing = true;
	t->action = cur->action;
	t->sync_degraded = cur->degraded;
	t->rate = 0;
	t->pos = cur->done;
	t->pos_ns = now_ns;
	/* at start-up, the steps already behind it are not news */
	t->step = initial ? step_of(cur->done, cur->total) : 0;
	struct kmd_change *c = add(out, kmd_sync_signal(cur->action, true));
	if (c) {
		c->action = cur->action;
		c->initial = initial;
	}
}

static void sync_end(struct kmd_track *t, const struct kmd_array *cur, struct kmd_changes *out)
{
	bool ok = completed(t, &t->last, cur);
	if (ok)
		progress(t, KMD_PROGRESS_STEPS, false, out);
	struct kmd_change *c = add(out, kmd_sync_signal(t->action, false));
	if (c) {
		c->action = t->action;
		c->result = ok;
		if ((t->action == KMD_CHECK || t->action == KMD_REPAIR) && cur->has_mismatch) {
			c->has_mismatch = true;
			c->mismatch = cur->mismatch;
		}
	}
	t->syncing = false;
	t->action = KMD_IDLE;
	t->step = 0;
	t->rate = 0;
}

/* A sync runs: one at its end is over, though not reaped yet (md.c's
 * md_reap_sync_thread() makes the spares active before it says so). */
static bool is_sync(const struct kmd_array *a)
{
	return a->syncing && a->action > KMD_IDLE && a->action <= KMD_RESHAPE &&
	       !(a->total && a->done >= a->total);
}

void kmd_update(struct kmd_track *t, const struct kmd_array *cur, bool fresh, uint64_t now_ns,
		struct kmd_changes *out)
{
	out->n = 0;
	if (!t->known && !fresh) {
		/* keventd's start: what is already so, said once */
		if (cur->degraded > 0) {
			struct kmd_change *c = add(out, "degraded");
			if (c)
				c->initial = true;
		}
		if (is_sync(cur))
			sync_start(t, cur, true, now_ns, out);
		t->known = true;
		t->last = *cur;
		return;
	}
	if (!t->known) {
		/* a new array: changes from a whole, idle one with these members */
		t->last = *cur;
		t->last.degraded = 0;
		t->last.syncing = false;
		t->last.action = KMD_IDLE;
		t->known = true;
	}
	const struct kmd_array *last = &t->last;

	/* members that failed: faulty now, or gone from a running array
	 * while in sync (md removes only a faulty member or a spare from
	 * it: a fail and a remove between two looks).  An array being
	 * assembled or stopped gains and loses members as it likes. */
	bool running = last->active && cur->active;
	for (size_t i = 0; i < last->n_m; i++) {
		const struct kmd_member *was = &last->m[i];
		if (was->faulty)
			continue;
		const struct kmd_member *now = find_member(cur, was->name);
		if ((now && now->faulty) || (!now && was->in_sync && running)) {
			struct kmd_change *c = add(out, "failed-device");
			if (c)
				snprintf(c->member, sizeof(c->member), "%s", was->name);
		}
	}
	if (cur->degraded > 0 && cur->degraded > last->degraded)
		add(out, "degraded");

	/* the sync followed ended, or another took its place */
	if (t->syncing && (!is_sync(cur) || cur->action != t->action))
		sync_end(t, cur, out);

	for (size_t i = 0; i < cur->n_m; i++) {
		const struct kmd_member *now = &cur->m[i];
		const struct kmd_member *was = find_member(last, now->name);
		if (running && now->in_sync && !now->faulty && was && !was->in_sync &&
		    !was->faulty) {
			struct kmd_change *c = add(out, "spare-active");
			if (c)
				snprintf(c->member, sizeof(c->member), "%s", now->name);
		}
	}
	if (cur->degraded == 0 && last->degraded > 0)
		add(out, "optimal");

	if (!t->syncing && is_sync(cur))
		sync_start(t, cur, false, now_ns, out);
	if (t->syncing && cur->total) {
		progress(t, step_of(cur->done, cur->total), false, out);
		if (cur->done > t->pos) {
			double dt = (double)(now_ns - t->pos_ns) / 1e9;
			if (dt > 0 && t->pos_ns)
				t->rate = (double)(cur->done - t->pos) / dt;
			t->pos = cur->done;
			t->pos_ns = now_ns;
		}
	}
	t->last = *cur;
}

uint64_t kmd_next_look(const struct kmd_track *t, uint64_t now_ns)
{
	(void)now_ns;
	if (!t->syncing)
		return 0;
	const struct kmd_array *a = &t->last;
	if (!a->total)
		return 0; /* delayed: md wakes mdstat's readers when it begins */
	if (t->rate <= 0 || t->step >= KMD_PROGRESS_STEPS)
		return KMD_DEFAULT_LOOK_NS;
	long double next = (long double)a->total * (t->step + 1) / 10;
	long double left = next > a->done ? next - a->done : 0;
	/* a little past the step, so that one look sees it crossed */
	long double ns = left / t->rate * 1e9 * 1.05 + 10e6;
	if (ns < KMD_MIN_LOOK_NS)
		return KMD_MIN_LOOK_NS;
	if (ns > KMD_MAX_LOOK_NS)
		return KMD_MAX_LOOK_NS;
	return (uint64_t)ns;
}

int kmd_event(const struct kmd_change *c, const struct kmd_array *a, const char *devpath,
	      uint64_t now, struct kevent **out, const char **why)
{
	char object[KEVENT_OBJECT_MAX + 1];
	int n = snprintf(object, sizeof(object), KMD_OBJECT_PREFIX "%s", devpath);
	if (n < 0 || (size_t)n >= sizeof(object)) {
		*why = "device path too long for an object";
		return -EINVAL;
	}
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_printf(&sb, "Device: %s\nLevel: %s\nArray-State: %s\n", a->name,
		      a->level[0] ? a->level : "unknown",
		      a->array_state[0] ? a->array_state : (a->active ? "active" : "inactive"));
	if (a->uuid[0])
		strbuf_printf(&sb, "Uuid: %s\n", a->uuid);
	if (a->raid_disks >= 0)
		strbuf_printf(&sb, "Raid-Disks: %d\n", a->raid_disks);
	if (a->degraded >= 0)
		strbuf_printf(&sb, "Degraded: %d\n", a->degraded);
	if (c->member[0])
		strbuf_printf(&sb, "Member: %s\n", c->member);
	if (c->action != KMD_IDLE)
		strbuf_printf(&sb, "Action: %s\n", kmd_action_name(c->action));
	if (strcmp(c->signal, "progress") == 0)
		strbuf_printf(&sb, "Percent: %u\n", c->percent);
	else if (strstr(c->signal, "-done"))
		strbuf_printf(&sb, "Result: %s\n", c->result ? "done" : "interrupted");
	if (c->has_mismatch)
		strbuf_printf(&sb, "Mismatch-Count: %llu\n", (unsigned long long)c->mismatch);
	if (c->initial)
		strbuf_puts(&sb, "Initial: yes\n");
	if (sb.oom)
		return -ENOMEM;
	return kevent_new(KEVENT_STORAGE, object, c->signal, sb.buf, KEVENT_SOURCE_MD, 0, now, NULL,
			  0, out, why);
}
