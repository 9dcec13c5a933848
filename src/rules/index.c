// SPDX-License-Identifier: GPL-2.0-or-later
/* The ruleset's index: rule positions by (type, signal, object) key, and by
 * starts of the object (index.h). */
#include <errno.h>
#include <string.h>

#include "index.h"

/* A string's characters, then an end: NUL for a string, 0xff alone for
 * "any" (NULL), which no string can be. */
static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = kindex_prefix_step(h, *s);
	return kindex_prefix_step(h, s ? '\0' : '\xff');
}

/* The key's hash once its object's characters are in h. */
static uint64_t hash_end(uint64_t h, bool object)
{
	h = kindex_prefix_step(h, object ? '\0' : '\xff');
	return h ^ (h >> 32);
}

static uint64_t hash_head(uint8_t type, const char *signal)
{
	return hash_str(1469598103934665603ull ^ type, signal);
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The slot of the key (object: its first len characters) with hash h, or
 * the free slot where it would go. */
static uint32_t *slot_h(const struct kruleset *rs, uint64_t h, uint8_t type, const char *signal,
			const char *object, size_t len)
{
	size_t mask = rs->n_slots - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		uint32_t *sl = &rs->slots[i];
		const struct kbucket *b = *sl ? &rs->buckets[*sl - 1] : NULL;
		if (!b)
			return sl;
		if (b->type != type || !same(b->signal, signal))
			continue;
		if (!object ? !b->object
			    : b->object && strncmp(b->object, object, len) == 0 &&
				      b->object[len] == '\0')
			return sl;
	}
}

static uint32_t *slot(const struct kruleset *rs, uint8_t type, const char *signal,
		      const char *object)
{
	uint64_t h = hash_head(type, signal);
	size_t len = 0;
	for (; object && object[len]; len++)
		h = kindex_prefix_step(h, object[len]);
	return slot_h(rs, hash_end(h, object), type, signal, object, len);
}

const struct kbucket *kindex_find(const struct kruleset *rs, uint8_t type, const char *signal,
				  const char *object)
{
	if (!rs->n_slots)
		return NULL;
	uint32_t s = *slot(rs, type, signal, object);
	return s ? &rs->buckets[s - 1] : NULL;
}

uint64_t kindex_prefix_start(uint8_t type)
{
	return hash_head(type, KINDEX_PREFIX);
}

const struct kbucket *kindex_prefix_find(const struct kruleset *rs, uint64_t h, uint8_t type,
					 const char *object, size_t len)
{
	if (!rs->n_slots)
		return NULL;
	uint32_t s = *slot_h(rs, hash_end(h, true), type, KINDEX_PREFIX, object, len);
	return s ? &rs->buckets[s - 1] : NULL;
}

static int push_bucket(struct kbucket *b, uint32_t pos)
{
	const uint32_t *had = kbucket_rules(b);
	if (b->n && had[b->n - 1] == pos)
		return 0; /* the same rule listed a signal twice */
	if (b->n < ARRAY_SIZE(b->inline_v)) {
		b->inline_v[b->n++] = pos;
		return 0;
	}
	if ((b->n & (b->n - 1)) == 0) { /* full: room for n, a power of two */
		uint32_t *nv = malloc(2 * (size_t)b->n * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		memcpy(nv, had, b->n * sizeof(*nv));
		if (b->n > ARRAY_SIZE(b->inline_v))
			free(b->v);
		b->v = nv;
	}
	b->v[b->n++] = pos;
	return 0;
}

static int push(uint32_t **v, size_t *n, size_t *cap, uint32_t pos)
{
	if (*n && (*v)[*n - 1] == pos)
		return 0; /* the same rule listed a signal twice */
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 4;
		uint32_t *nv = realloc(*v, c * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = pos;
	return 0;
}

/* Whether every value of l is a plain literal, so the rule can be found by it. */
static bool all_literal(const struct kpattern_list *l)
{
	if (!l->n)
		return false;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].negate || l->v[i].glob)
			return false;
	return true;
}

/* Registers the length of p's literal prefix as a prefix-key length while
 * there is room (*n_lens of KINDEX_PREFIX_LENS). */
static void register_prefix(struct kruleset *rs, const struct kpattern *p, size_t *n_lens)
{
	size_t n = p->prefix;
	if (p->negate || n < 2 || n > KEVENT_OBJECT_MAX || kindex_prefix_len(rs, n) ||
	    *n_lens == KINDEX_PREFIX_LENS)
		return;
	rs->prefix_lens[n / 64] |= 1ull << (n % 64);
	if (n > rs->prefix_len_max)
		rs->prefix_len_max = n;
	(*n_lens)++;
}

/* How much of p's literal prefix a key holds: the longest registered length
 * within it (any start of a value's literal text is a start of every object
 * it matches).  0: none, or not worth indexing ("/"). */
static size_t prefix_key_len(const struct kruleset *rs, const struct kpattern *p)
{
	if (p->negate)
		return 0;
	for (size_t n = p->prefix < KEVENT_OBJECT_MAX ? p->prefix : KEVENT_OBJECT_MAX; n >= 2; n--)
		if (kindex_prefix_len(rs, n))
			return n;
	return 0;
}

/* Whether every object value of r gives a prefix key to index it by. */
static bool by_prefix(const struct kruleset *rs, const struct krule *r)
{
	if (!r->object.n)
		return false;
	for (size_t i = 0; i < r->object.n; i++)
		if (!prefix_key_len(rs, &r->object.v[i]))
			return false;
	return true;
}

static int add_key(struct kruleset *rs, size_t keys, uint8_t t, const char *signal,
		   const char *object, bool owned, uint32_t pos)
{
	uint32_t *sl = slot(rs, t, signal, object);
	if (!*sl) {
		if (rs->n_buckets == keys) {
			if (owned)
				free((char *)object);
			return -ENOMEM; /* cannot be: keys counts them all */
		}
		rs->buckets[rs->n_buckets] = (struct kbucket){
			.type = t, .signal = signal, .object = object, .owns_object = owned};
		*sl = (uint32_t)++rs->n_buckets;
	} else if (owned) {
		free((char *)object); /* the bucket has its own copy */
	}
	return push_bucket(&rs->buckets[*sl - 1], pos);
}

/* Keys r on (t, KINDEX_PREFIX, prefix) for each of its object values. */
static int add_prefix_keys(struct kruleset *rs, size_t keys, uint8_t t, const struct krule *r,
			   uint32_t pos)
{
	for (size_t v = 0; v < r->object.n; v++) {
		char *prefix = strndup(r->object.v[v].text, prefix_key_len(rs, &r->object.v[v]));
		if (!prefix || add_key(rs, keys, t, KINDEX_PREFIX, prefix, true, pos) < 0)
			return -ENOMEM;
		rs->has_prefix_keys = true;
	}
	return 0;
}

/* Whether r can be found by (type, literal signal) or (type, literal object). */
static bool by_key(const struct krule *r)
{
	return all_literal(&r->signal) || (r->object.n == 1 && all_literal(&r->object));
}

int kindex_build(struct kruleset *rs)
{
	/* one key per (type, literal signal) of each indexed rule: sizing the
	 * table for every type of every rule made it 10 times too big, and
	 * its pages are all touched, so resident */
	size_t keys = 0, n_lens = 0;
	for (size_t i = 0; i < rs->n_rules; i++)
		for (size_t v = 0; !by_key(rs->rules[i]) && v < rs->rules[i]->object.n; v++)
			register_prefix(rs, &rs->rules[i]->object.v[v], &n_lens);
	for (size_t i = 0; i < rs->n_rules; i++) {
		const struct krule *r = rs->rules[i];
		size_t n_sig = all_literal(&r->signal) ? r->signal.n : 1;
		if (!by_key(r) && by_prefix(rs, r))
			n_sig = r->object.n;
		keys += (size_t)__builtin_popcount(r->type_mask) * n_sig;
	}
	size_t ns = 16;
	while (ns < keys * 2)
		ns *= 2;
	/* a table of 4-byte slots at most half full, pointing into a dense
	 * array of buckets: 10,000 keys cost 0.6 MB rather than 1.5 */
	rs->slots = calloc(ns, sizeof(*rs->slots));
	rs->buckets = calloc(keys ? keys : 1, sizeof(*rs->buckets));
	if (!rs->slots || !rs->buckets)
		return -ENOMEM;
	rs->n_slots = ns;
	size_t gcap[KEVENT_NTYPES] = {0};

	for (size_t i = 0; i < rs->n_rules; i++) {
		const struct krule *r = rs->rules[i];
		bool by_signal = all_literal(&r->signal);
		const char *object =
			r->object.n == 1 && all_literal(&r->object) ? r->object.v[0].text : NULL;
		size_t n_sig = by_signal ? r->signal.n : 1;
		for (uint8_t t = 0; t < KEVENT_NTYPES; t++) {
			if (!(r->type_mask & (1u << t)))
				continue;
			if (!by_signal && !object && by_prefix(rs, r)) {
				if (add_prefix_keys(rs, keys, t, r, (uint32_t)i) < 0)
					return -ENOMEM;
				continue;
			}
			if (!by_signal && !object) {
				if (push(&rs->generic[t], &rs->n_generic[t], &gcap[t], (uint32_t)i))
					return -ENOMEM;
				continue;
			}
			for (size_t s = 0; s < n_sig; s++) {
				const char *signal = by_signal ? r->signal.v[s].text : NULL;
				if (add_key(rs, keys, t, signal, object, false, (uint32_t)i) < 0)
					return -ENOMEM;
			}
		}
	}
	return 0;
}

void kindex_release(struct kruleset *rs)
{
	for (size_t i = 0; i < rs->n_buckets; i++) {
		if (rs->buckets[i].n > ARRAY_SIZE(rs->buckets[i].inline_v))
			free(rs->buckets[i].v);
		if (rs->buckets[i].owns_object)
			free((char *)rs->buckets[i].object);
	}
	free(rs->buckets);
	free(rs->slots);
	for (int t = 0; t < KEVENT_NTYPES; t++)
		free(rs->generic[t]);
}
