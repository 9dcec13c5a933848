/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the signature of a
 * web hook's body (X-Keventd-Signature, keventd.yaml(5)): keventd links
 * no crypto library of its own.  Pure.
 */
#ifndef KEVENT_HMAC_SHA256_H
#define KEVENT_HMAC_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define KSHA256_LEN 32

void ksha256(const void *data, size_t len, uint8_t out[KSHA256_LEN]);
void khmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
		  uint8_t out[KSHA256_LEN]);
/* out: 64 lowercase hex digits and a NUL. */
void khmac_sha256_hex(const void *key, size_t key_len, const void *data, size_t len,
		      char out[2 * KSHA256_LEN + 1]);

#endif
