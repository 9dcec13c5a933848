// SPDX-License-Identifier: GPL-2.0-or-later
/* The numbers in flight (inflight.h): a sorted array searched by
 * bisection, whose handled entries become holes, so that a removal costs
 * no move; holes at the head are skipped, the others compacted away when
 * the array is full and at most half of it is live. */
#include "inflight.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CAP 64

static inline uint64_t num(uint64_t e)
{
	return e & ~KINFLIGHT_DONE;
}

static inline bool hole(uint64_t e)
{
	return e & KINFLIGHT_DONE;
}

/* The index of the first entry at or above seq, in [head, end]. */
static size_t find(const struct kinflight *f, uint64_t seq)
{
	size_t lo = f->head, hi = f->end;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (num(f->v[mid]) < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Drops every hole: the live entries move to the front, in order. */
static void compact(struct kinflight *f)
{
	size_t n = 0;
	for (size_t i = f->head; i < f->end; i++)
		if (!hole(f->v[i]))
			f->v[n++] = f->v[i];
	f->head = 0;
	f->end = n;
}

/* Room for one more entry at the end: by dropping the holes when at most
 * half of the array is live (each compaction then follows at least
 * cap / 2 additions), else by doubling it. */
static int reserve(struct kinflight *f)
{
	if (f->end < f->cap)
		return 0;
	if (f->cap && f->live <= f->cap / 2) {
		compact(f);
		return 0;
	}
	size_t cap = f->cap ? f->cap * 2 : MIN_CAP;
	uint64_t *v = realloc(f->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	f->v = v;
	f->cap = cap;
	return 0;
}

int kinflight_add(struct kinflight *f, uint64_t seq)
{
	if (!seq || seq >= KINFLIGHT_DONE)
		return -ERANGE;
	size_t at = find(f, seq);
	if (at < f->end && num(f->v[at]) == seq) {
		if (hole(f->v[at])) {
			f->v[at] = seq;
			f->live++;
			f->changes++;
		}
		return 0;
	}
	if (at == f->head && f->head > 0) {
		/* below every entry, and room before the head */
		f->v[--f->head] = seq;
	} else {
		if (reserve(f) < 0)
			return -ENOMEM;
		at = find(f, seq); /* the holes may be gone */
		memmove(&f->v[at + 1], &f->v[at], (f->end - at) * sizeof(*f->v));
		f->v[at] = seq;
		f->end++;
	}
	f->live++;
	f->changes++;
	return 0;
}

bool kinflight_remove(struct kinflight *f, uint64_t seq)
{
	size_t at = find(f, seq);
	if (at == f->end || f->v[at] != seq)
		return false; /* not there, or a hole */
	f->v[at] |= KINFLIGHT_DONE;
	f->live--;
	f->changes++;
	while (f->head < f->end && hole(f->v[f->head]))
		f->head++;
	if (f->head == f->end)
		f->head = f->end = 0;
	return true;
}

bool kinflight_has(const struct kinflight *f, uint64_t seq)
{
	size_t at = find(f, seq);
	return at < f->end && f->v[at] == seq;
}

size_t kinflight_list(const struct kinflight *f, uint64_t *out)
{
	size_t n = 0;
	for (size_t i = f->head; i < f->end; i++)
		if (!hole(f->v[i]))
			out[n++] = f->v[i];
	return n;
}

void kinflight_clear(struct kinflight *f)
{
	if (f->live)
		f->changes++;
	f->head = f->end = f->live = 0;
}

void kinflight_release(struct kinflight *f)
{
	free(f->v);
	*f = (struct kinflight){0};
}
