/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every fuzz target shares.  A target is one LLVMFuzzerTestOneInput();
 * it links either with libFuzzer (KEVENT_FUZZ=ON, clang) or with replay.c,
 * a plain main() that runs it over files, so ctest replays the corpus with
 * any compiler.
 */
#ifndef KEVENT_FUZZ_H
#define KEVENT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An assertion that holds in release builds too (assert() is gone under
 * NDEBUG, which RelWithDebInfo defines).  abort() is what libFuzzer and the
 * replay program both report as a crash. */
#define FUZZ_CHECK(cond)                                                                         \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                 \
		}                                                                                \
	} while (0)

/* That events a and b (struct kevent *) are the same in every field that a
 * record or an MQTT message carries: what a round trip must keep. */
#define FUZZ_CHECK_SAME_EVENT(a, b)                                               \
	do {                                                                      \
		FUZZ_CHECK((a)->type == (b)->type && (a)->source == (b)->source); \
		FUZZ_CHECK((a)->seqnum == (b)->seqnum);                           \
		FUZZ_CHECK((a)->timestamp == (b)->timestamp);                     \
		FUZZ_CHECK(strcmp((a)->object, (b)->object) == 0);                \
		FUZZ_CHECK(strcmp((a)->signal, (b)->signal) == 0);                \
		FUZZ_CHECK(strcmp((a)->payload, (b)->payload) == 0);              \
	} while (0)

/* Whether an input is outside [lo, hi] bytes: such inputs are skipped, as
 * systemd's fuzzers do, so the fuzzer spends its time where bugs are. */
static inline int fuzz_outside_size(size_t size, size_t lo, size_t hi)
{
	return size < lo || size > hi;
}

/* The input as two texts, before and after its first NUL (the second
 * empty when there is none): the old and new table a differ reads. */
struct fuzz_pair {
	const char *a, *b;
	size_t la, lb;
};
static inline struct fuzz_pair fuzz_split(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *nul = memchr(text, '\0', size);
	size_t la = nul ? (size_t)(nul - text) : size;
	return (struct fuzz_pair){
		.a = text, .la = la, .b = nul ? nul + 1 : "", .lb = nul ? size - la - 1 : 0};
}

/* The input as a NUL-terminated string (NULs inside kept), malloc'd; NULL
 * when out of memory. */
static inline char *fuzz_cstring(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (buf) {
		memcpy(buf, data, size);
		buf[size] = '\0';
	}
	return buf;
}

#endif
