/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A string-keyed hash map (keys are copied; values are the caller's). */
#ifndef KEVENT_HASHMAP_H
#define KEVENT_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

struct hashmap;

int hashmap_new(struct hashmap **out);
/* Frees the map; calls free_value on each value when given. */
void hashmap_free(struct hashmap *m, void (*free_value)(void *));
void *hashmap_get(const struct hashmap *m, const char *key);
/* Inserts or replaces; returns 0 or -ENOMEM.  *old gets a replaced value. */
int hashmap_put(struct hashmap *m, const char *key, void *value, void **old);
/* Removes key; returns its value or NULL. */
void *hashmap_remove(struct hashmap *m, const char *key);
size_t hashmap_size(const struct hashmap *m);
/* Calls fn for every entry; fn returns nonzero to remove the entry (after
 * it has disposed of the value itself). */
void hashmap_sweep(struct hashmap *m, int (*fn)(const char *key, void *value, void *ud), void *ud);
uint64_t hash_string(const char *s);

#endif
