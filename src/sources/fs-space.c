// SPDX-License-Identifier: GPL-2.0-or-later
/* Free space and inodes against thresholds, and when to look again. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "fs.h"
#include "util.h"

uint64_t kfs_limit_of(const struct kfs_limit *l, uint64_t total)
{
	switch (l->kind) {
	case KFS_LIMIT_PERCENT:
		return (uint64_t)((long double)total * l->value / 10000);
	case KFS_LIMIT_SIZE:
		return l->value;
	case KFS_LIMIT_OFF:
		break;
	}
	return 0;
}

bool kfs_thresholds_on(const struct kfs_thresholds *t)
{
	return t->space_low.kind != KFS_LIMIT_OFF || t->space_critical.kind != KFS_LIMIT_OFF ||
	       t->inodes_low.kind != KFS_LIMIT_OFF;
}

uint64_t kfs_margin(uint64_t limit, uint64_t total)
{
	uint64_t a = total / 100, b = limit / 10;
	return a < b ? a : b;
}

/* The level of avail: below critical, below low, back above low plus
 * its margin, or where it was (between a line and its margin). */
static enum kfs_level space_level(enum kfs_level was, bool known, const struct kfs_thresholds *t,
				  const struct kfs_stat *st)
{
	uint64_t low = kfs_limit_of(&t->space_low, st->size);
	uint64_t crit = kfs_limit_of(&t->space_critical, st->size);
	if (crit && st->avail < crit)
		return KFS_CRITICAL;
	if (known && was == KFS_CRITICAL && crit && st->avail < crit + kfs_margin(crit, st->size))
		return KFS_CRITICAL;
	if (low && st->avail < low)
		return KFS_LOW;
	if (known && was != KFS_OK && low && st->avail < low + kfs_margin(low, st->size))
		return KFS_LOW;
	return KFS_OK;
}

static bool inodes_level(bool was, bool known, const struct kfs_thresholds *t,
			 const struct kfs_stat *st)
{
	uint64_t low = kfs_limit_of(&t->inodes_low, st->files);
	if (!st->files || !low) /* no inode count: nothing to say */
		return false;
	if (st->files_avail < low)
		return true;
	if (!known || !was)
		return false;
	return st->files_avail < low + kfs_margin(low, st->files);
}

void kfs_space_update(struct kfs_space *s, const struct kfs_thresholds *t,
		      const struct kfs_stat *st, uint64_t now_ns, struct kfs_space_change *out)
{
	static const char *const space_sig[] = {"space-ok", "space-low", "space-critical"};
	*out = (struct kfs_space_change){.initial = !s->known};
	enum kfs_level lv = space_level(s->space, s->known, t, st);
	bool il = inodes_level(s->inodes_low, s->known, t, st);
	if (s->known ? lv != s->space : lv != KFS_OK)
		out->signal[out->n++] = space_sig[lv];
	if (s->known ? il != s->inodes_low : il)
		out->signal[out->n++] = il ? "inodes-low" : "inodes-ok";
	if (s->known && now_ns > s->last_ns) {
		double dt = (double)(now_ns - s->last_ns) / 1e9;
		double fall = st->avail < s->last_avail ? (double)(s->last_avail - st->avail) : 0;
		/* the rate follows a rise at once and a fall over a few looks */
		double r = fall / dt;
		s->rate = r > s->rate ? r : s->rate * 0.5 + r * 0.5;
		if (s->rate < 1.0)
			s->rate = 0;
	}
	if (!s->known || st->avail != s->last_avail || lv != s->space)
		s->changed_ns = now_ns;
	s->known = true;
	s->space = lv;
	s->inodes_low = il;
	s->last_avail = st->avail;
	s->last_ns = now_ns;
}

uint64_t kfs_space_interval(const struct kfs_space *s, const struct kfs_thresholds *t,
			    const struct kfs_stat *st, double rate, uint64_t now_ns)
{
	/* past a line and still: look again as long after as it has been
	 * still, from a second to the longest, to see it freed */
	uint64_t still = now_ns > s->changed_ns ? now_ns - s->changed_ns : 0;
	uint64_t back = still < 1000000000ull	      ? 1000000000ull
			: still > KFS_MAX_INTERVAL_NS ? KFS_MAX_INTERVAL_NS
						      : still;
	uint64_t low = kfs_limit_of(&t->space_low, st->size);
	uint64_t crit = kfs_limit_of(&t->space_critical, st->size);
	/* the next line down: low when ok, critical when low, nothing below */
	uint64_t line = s->space == KFS_OK ? (low ? low : crit) : s->space == KFS_LOW ? crit : 0;
	uint64_t most = s->space == KFS_OK ? KFS_MAX_INTERVAL_NS : back;
	if (!line || rate <= 0)
		return most;
	if (st->avail <= line)
		return KFS_MIN_INTERVAL_NS;
	double ns = (double)(st->avail - line) / rate / 2 * 1e9;
	if (ns < (double)KFS_MIN_INTERVAL_NS)
		return KFS_MIN_INTERVAL_NS;
	if (ns > (double)most)
		return most;
	return (uint64_t)ns;
}

int kfs_space_event(const char *signal, bool initial, const struct kfs_mount *m,
		    const struct kfs_stat *st, uint64_t now, struct kevent **out, const char **why)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	kfs_mount_payload(m, &sb);
	unsigned pct = st->size ? (unsigned)((long double)st->avail * 100 / st->size) : 0;
	strbuf_printf(&sb,
		      "Size: %llu\nAvail: %llu\nAvail-Percent: %u\nFiles: %llu\nFiles-Avail: "
		      "%llu\n",
		      (unsigned long long)st->size, (unsigned long long)st->avail, pct,
		      (unsigned long long)st->files, (unsigned long long)st->files_avail);
	if (initial)
		strbuf_puts(&sb, "Initial: yes\n");
	if (sb.oom)
		return -ENOMEM;
	return kfs_make_event(m, signal, sb.buf, now, out, why);
}
