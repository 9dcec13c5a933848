// SPDX-License-Identifier: GPL-2.0-or-later
#include <string.h>

#include "suggest.h"

#define WORD_MAX 64

/* Optimal string alignment distance of a and b, each under WORD_MAX. */
static size_t distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t d[WORD_MAX + 1][WORD_MAX + 1];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

const char *suggest_word(const char *s, const char *const *words, size_t n)
{
	size_t ls = strlen(s), best = 3;
	const char *found = NULL;
	if (!ls || ls >= WORD_MAX)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (!words[i])
			continue;
		size_t lw = strlen(words[i]);
		if (lw >= WORD_MAX || (lw > ls ? lw - ls : ls - lw) >= best)
			continue;
		size_t dist = distance(s, ls, words[i], lw);
		if (dist < best && dist * 2 < ls) {
			best = dist;
			found = words[i];
		}
	}
	return found;
}
