// SPDX-License-Identifier: GPL-2.0-or-later
/* The window of sequence numbers (seqwin.h): a 64-bit bitmap above the
 * lowest number not yet settled. */
#include "seqwin.h"

/* Moves the window up by n numbers; returns how many of those had not arrived. */
static uint64_t slide(struct kseqwin *w, uint64_t n)
{
	uint64_t missing;
	if (n >= KSEQWIN_SPAN) {
		missing = n - (uint64_t)__builtin_popcountll(w->seen);
		w->seen = 0;
	} else {
		missing = n - (uint64_t)__builtin_popcountll(w->seen & ((1ull << n) - 1));
		w->seen >>= n;
	}
	w->next += n;
	return missing;
}

/* Moves next past the numbers that have arrived. */
static void advance(struct kseqwin *w)
{
	while (w->seen & 1) {
		w->seen >>= 1;
		w->next++;
	}
}

enum kseqwin_verdict kseqwin_see(struct kseqwin *w, uint64_t seq, uint64_t *lost)
{
	*lost = 0;
	if (!w->started) {
		*w = (struct kseqwin){.next = seq + 1, .top = seq, .started = true};
		return KSEQWIN_NEW;
	}
	if (seq < w->next)
		return KSEQWIN_OLD;
	if (seq - w->next >= KSEQWIN_SPAN)
		*lost = slide(w, seq - w->next - (KSEQWIN_SPAN - 1));
	uint64_t bit = 1ull << (seq - w->next);
	if (w->seen & bit)
		return KSEQWIN_DUPLICATE;
	w->seen |= bit;
	if (seq > w->top)
		w->top = seq;
	advance(w);
	return KSEQWIN_NEW;
}

uint64_t kseqwin_pending(const struct kseqwin *w)
{
	if (!w->started || w->top < w->next)
		return 0;
	return w->top - w->next + 1 - (uint64_t)__builtin_popcountll(w->seen);
}

uint64_t kseqwin_settle(struct kseqwin *w)
{
	uint64_t lost = kseqwin_pending(w);
	if (w->started && w->top >= w->next) {
		w->next = w->top + 1;
		w->seen = 0;
	}
	return lost;
}
