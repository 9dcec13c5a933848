/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The ruleset's index: built by index.c, read by match.c; private to them
 * and ruleset.c. */
#ifndef KEVENT_INDEX_H
#define KEVENT_INDEX_H

#include "ruleset.h"

/*
 * Rules of one key, by ascending position.  A key is a type with a literal
 * signal, a literal object, or both; NULL stands for "any" (not indexed on
 * that part).  Rules that name neither literally, but whose object values
 * all start with literal text ("/org/kernel/block/sd" of
 * "/org/kernel/block/sd*"), are keyed on (type, KINDEX_PREFIX, that text):
 * an event looks up each start of its object whose length some key has,
 * hashing the object once, a character at a time.  The rest are in the
 * per-type generic lists.
 */
#define KINDEX_PREFIX	   "\x01" /* no signal can be this: YAML has no control characters */
#define KINDEX_PREFIX_LENS 64	  /* distinct prefix lengths (so an event tries at most 64) */

struct kbucket {
	const char *signal; /* point into a rule's patterns (or KINDEX_PREFIX) */
	const char *object; /* likewise, or a directory owned by the bucket */
	union {
		uint32_t inline_v[2]; /* n <= 2: the rules inline, the common case */
		uint32_t *v;	      /* beyond, allocated with room for a power of two */
	};
	uint32_t n;
	uint8_t type;
	bool owns_object;
};

/* The bucket's n rule positions. */
static inline const uint32_t *kbucket_rules(const struct kbucket *b)
{
	return b->n > ARRAY_SIZE(b->inline_v) ? b->v : b->inline_v;
}

/* Indexes rs->rules (every rule of rs, in matching order) into rs.  0, or
 * -ENOMEM, leaving what was built for kindex_release(). */
int kindex_build(struct kruleset *rs);
/* Frees what kindex_build() allocated, not rs itself. */
void kindex_release(struct kruleset *rs);

/* The bucket for the key, or NULL. */
const struct kbucket *kindex_find(const struct kruleset *rs, uint8_t type, const char *signal,
				  const char *object);

/* The prefix keys: kindex_prefix_start() is the hash state for (type,
 * KINDEX_PREFIX); kindex_prefix_step() adds one character of the object;
 * kindex_prefix_find() looks up the first len characters with that state. */
uint64_t kindex_prefix_start(uint8_t type);
static inline uint64_t kindex_prefix_step(uint64_t h, char c)
{
	return (h ^ (unsigned char)c) * 1099511628211ull; /* FNV-1a, as every key */
}
/* Whether some prefix key is n characters long. */
static inline bool kindex_prefix_len(const struct kruleset *rs, size_t n)
{
	return rs->prefix_lens[n / 64] & (1ull << (n % 64));
}
const struct kbucket *kindex_prefix_find(const struct kruleset *rs, uint64_t h, uint8_t type,
					 const char *object, size_t len);

#endif
