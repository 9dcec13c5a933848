// SPDX-License-Identifier: GPL-2.0-or-later
#include "hashmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	struct entry *next;
	uint64_t hash;
	void *value;
	char key[];
};

struct hashmap {
	struct entry **slots;
	size_t n_slots; /* power of two */
	size_t size;
};

uint64_t hash_string(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h ^ (h >> 29);
}

int hashmap_new(struct hashmap **out)
{
	struct hashmap *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->n_slots = 16;
	m->slots = calloc(m->n_slots, sizeof(*m->slots));
	if (!m->slots) {
		free(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

void hashmap_free(struct hashmap *m, void (*free_value)(void *))
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_slots; i++) {
		for (struct entry *e = m->slots[i], *next; e; e = next) {
			next = e->next;
			if (free_value)
				free_value(e->value);
			free(e);
		}
	}
	free(m->slots);
	free(m);
}

static struct entry **find(const struct hashmap *m, const char *key, uint64_t h)
{
	struct entry **pp = &m->slots[h & (m->n_slots - 1)];
	while (*pp && ((*pp)->hash != h || strcmp((*pp)->key, key) != 0))
		pp = &(*pp)->next;
	return pp;
}

void *hashmap_get(const struct hashmap *m, const char *key)
{
	struct entry *e = *find(m, key, hash_string(key));
	return e ? e->value : NULL;
}

static void grow(struct hashmap *m)
{
	size_t n = m->n_slots * 2;
	struct entry **slots = calloc(n, sizeof(*slots));
	if (!slots)
		return; /* stay at this size: slower, still correct */
	for (size_t i = 0; i < m->n_slots; i++) {
		for (struct entry *e = m->slots[i], *next; e; e = next) {
			next = e->next;
			e->next = slots[e->hash & (n - 1)];
			slots[e->hash & (n - 1)] = e;
		}
	}
	free(m->slots);
	m->slots = slots;
	m->n_slots = n;
}

int hashmap_put(struct hashmap *m, const char *key, void *value, void **old)
{
	uint64_t h = hash_string(key);
	struct entry **pp = find(m, key, h);
	if (old)
		*old = NULL;
	if (*pp) {
		if (old)
			*old = (*pp)->value;
		(*pp)->value = value;
		return 0;
	}
	size_t len = strlen(key) + 1;
	struct entry *e = malloc(sizeof(*e) + len);
	if (!e)
		return -ENOMEM;
	e->next = NULL;
	e->hash = h;
	e->value = value;
	memcpy(e->key, key, len);
	*pp = e;
	if (++m->size > m->n_slots)
		grow(m);
	return 0;
}

void *hashmap_remove(struct hashmap *m, const char *key)
{
	struct entry **pp = find(m, key, hash_string(key));
	struct entry *e = *pp;
	if (!e)
		return NULL;
	*pp = e->next;
	void *v = e->value;
	free(e);
	m->size--;
	return v;
}

size_t hashmap_size(const struct hashmap *m)
{
	return m->size;
}

void hashmap_sweep(struct hashmap *m, int (*fn)(const char *key, void *value, void *ud), void *ud)
{
	for (size_t i = 0; i < m->n_slots; i++) {
		struct entry **pp = &m->slots[i];
		while (*pp) {
			struct entry *e = *pp;
			if (fn(e->key, e->value, ud)) {
				*pp = e->next;
				free(e);
				m->size--;
			} else {
				pp = &e->next;
			}
		}
	}
}
