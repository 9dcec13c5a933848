// SPDX-License-Identifier: GPL-2.0-or-later
#include "bench-values.h"

#include <stdio.h>

int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

size_t bench_read_values(const char *file, uint64_t *v, size_t max)
{
	FILE *f = fopen(file, "r");
	size_t n = 0;
	unsigned long long x;
	while (f && n < max && fscanf(f, "%llu", &x) == 1)
		v[n++] = x;
	if (f)
		fclose(f);
	return n;
}
