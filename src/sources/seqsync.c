// SPDX-License-Identifier: GPL-2.0-or-later
/* Following a numbered stream that can be asked for what it missed
 * (seqsync.h; the state table is SEQSYNC.txt). */
#include "seqsync.h"

#include <errno.h>
#include <stdlib.h>

void kseqsync_init(struct kseqsync *s, uint64_t instance, uint64_t last)
{
	*s = (struct kseqsync){.instance = instance, .next = instance ? last + 1 : 0};
}

void kseqsync_release(struct kseqsync *s)
{
	free(s->redo);
	s->redo = NULL;
	s->n_redo = s->cap_redo = s->redo_at = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The list to redo without the numbers handed on (0), sorted, each once. */
static void redo_tidy(struct kseqsync *s)
{
	size_t n = 0;
	if (s->redo_untidy)
		qsort(s->redo, s->n_redo, sizeof(*s->redo), cmp_u64);
	for (size_t i = 0; i < s->n_redo; i++)
		if (s->redo[i] && (!n || s->redo[n - 1] != s->redo[i]))
			s->redo[n++] = s->redo[i];
	s->n_redo = n;
	s->redo_at = 0;
	s->redo_untidy = false;
}

static void redo_clear(struct kseqsync *s)
{
	if (s->n_redo)
		s->redo_changes++;
	s->n_redo = s->redo_at = 0;
	s->redo_untidy = false;
}

int kseqsync_unhandled(struct kseqsync *s, uint64_t seq)
{
	if (s->fetching)
		return -EBUSY;
	if (!seq || seq >= s->next)
		return -EINVAL;
	if (s->n_redo == s->cap_redo) {
		size_t cap = s->cap_redo ? s->cap_redo * 2 : 64;
		uint64_t *v = realloc(s->redo, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->redo = v;
		s->cap_redo = cap;
	}
	if (s->n_redo && s->redo[s->n_redo - 1] >= seq)
		s->redo_untidy = true;
	s->redo[s->n_redo++] = seq;
	s->redo_changes++;
	return 0;
}

const uint64_t *kseqsync_redo(struct kseqsync *s, size_t *n)
{
	if (!s->fetching)
		redo_tidy(s);
	*n = s->n_redo;
	return s->redo;
}

uint64_t kseqsync_fetch(struct kseqsync *s)
{
	redo_tidy(s);
	s->fetching = true;
	s->again = false;
	s->restart = false;
	s->dropped = 0;
	s->fetch_next = s->next;
	if (s->n_redo)
		s->after = s->redo[0] - 1;
	else
		s->after = s->next ? s->next - 1 : UINT64_MAX;
	return s->after;
}

/* Another instance: numbers start afresh, and everything of it is wanted;
 * the numbers to redo were another instance's. */
static void new_instance(struct kseqsync *s, uint64_t instance)
{
	s->instance = instance;
	s->next = 1;
	redo_tidy(s);
	s->forsaken += s->n_redo;
	redo_clear(s);
}

uint64_t kseqsync_forsaken(struct kseqsync *s)
{
	uint64_t n = s->forsaken;
	s->forsaken = 0;
	return n;
}

/* A fetched number below next: whether it is to redo (then it is no longer). */
static bool redo_take(struct kseqsync *s, uint64_t seq)
{
	while (s->redo_at < s->n_redo && s->redo[s->redo_at] < seq)
		s->redo_at++; /* not in the answer: counted lost at its end */
	if (s->redo_at == s->n_redo || s->redo[s->redo_at] != seq)
		return false;
	s->redo[s->redo_at++] = 0;
	s->redo_changes++;
	return true;
}

enum kseqsync_verdict kseqsync_live(struct kseqsync *s, uint64_t instance, uint64_t seq)
{
	if (s->fetching) {
		if (s->instance && instance != s->instance)
			s->again = true;
		else if (seq > s->dropped)
			s->dropped = seq;
		return KSEQSYNC_DROP;
	}
	if (instance != s->instance || !s->next) {
		if (instance != s->instance)
			new_instance(s, instance);
		return KSEQSYNC_FETCH;
	}
	if (seq < s->next)
		return KSEQSYNC_DROP;
	if (seq > s->next)
		return KSEQSYNC_FETCH;
	s->next++;
	return KSEQSYNC_HANDLE;
}

enum kseqsync_verdict kseqsync_fetched(struct kseqsync *s, uint64_t instance, uint64_t seq)
{
	if (!s->fetching || s->restart)
		return KSEQSYNC_DROP;
	if (instance != s->instance) {
		if (s->instance || s->next) {
			/* asked with another instance's number: ask again from 0 */
			new_instance(s, instance);
			s->restart = true;
			return KSEQSYNC_DROP;
		}
		s->instance = instance;
	}
	if (!s->next)
		return KSEQSYNC_DROP;
	if (seq < s->next)
		return redo_take(s, seq) ? KSEQSYNC_HANDLE : KSEQSYNC_DROP;
	s->next = seq + 1;
	return KSEQSYNC_HANDLE;
}

bool kseqsync_end(struct kseqsync *s, uint64_t instance, uint64_t current, uint64_t gone,
		  uint64_t *lost)
{
	*lost = 0;
	if (!s->fetching)
		return false;
	s->fetching = false;
	if (!s->restart && instance != s->instance) {
		if (s->instance || s->next) {
			new_instance(s, instance);
			return true;
		}
		s->instance = instance;
	}
	if (s->restart)
		return true;
	if (s->after == UINT64_MAX) {
		/* a query of the current number: from here on */
		s->next = current + 1;
	} else {
		/* of the numbers gone, those below the next number as the fetch
		 * began were handled before, but for the ones to redo; a number
		 * to redo that the answer did not bring is gone too */
		uint64_t before = s->fetch_next - 1 - s->after;
		*lost = gone > before ? gone - before : 0;
		for (size_t i = 0; i < s->n_redo; i++)
			*lost += s->redo[i] != 0;
		redo_clear(s);
		if (current + 1 > s->next)
			s->next = current + 1;
	}
	return s->again || s->dropped >= s->next;
}

void kseqsync_abort(struct kseqsync *s)
{
	s->fetching = false;
	s->restart = false;
	redo_tidy(s);
}

bool kseqsync_overrun(struct kseqsync *s)
{
	if (s->fetching) {
		s->again = true;
		return false;
	}
	return true;
}
