/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The benchmarks' samples: numbers read from a file, sorted. */
#ifndef KEVENT_BENCH_VALUES_H
#define KEVENT_BENCH_VALUES_H

#include <stddef.h>
#include <stdint.h>

/* qsort()'s comparison of two uint64_t. */
int bench_cmp_u64(const void *a, const void *b);
/* Reads at most max decimal numbers from file into v (none if it is not
 * there yet); returns how many. */
size_t bench_read_values(const char *file, uint64_t *v, size_t max);

#endif
