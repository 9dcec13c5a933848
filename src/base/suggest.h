/* SPDX-License-Identifier: GPL-2.0-or-later */
/* "did you mean ...?": the nearest of a list of words to a misspelt one. */
#ifndef KEVENT_SUGGEST_H
#define KEVENT_SUGGEST_H

#include <stddef.h>

/* The word of words[n] (NULLs skipped) nearest to s by edit distance
 * (insertions, deletions, substitutions and swaps of two neighbours),
 * when it is near enough to be a slip of the keyboard: at most 2 edits,
 * and fewer than half of s's length.  NULL when none is. */
const char *suggest_word(const char *s, const char *const *words, size_t n);

#endif
