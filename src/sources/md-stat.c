// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /proc/mdstat's text, as md.c's md_seq_show() and the personalities'
 * status() write it:
 *
 *   md0 : active raid1 vdc[2] vdb[0](F)
 *         65472 blocks super 1.2 [2/1] [U_]
 *         [====>...............]  recovery = 22.5% (14784/65472) finish=0.2min speed=3696K/sec
 *
 * An array's first line starts at the line's first byte; the lines after
 * it, indented, are its own until the next.  Positions are in KiB.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"

/* clang-format off */
static const char *const action_names[] = {
	[KMD_IDLE] = "idle",
	[KMD_RESYNC] = "resync",
	[KMD_RECOVER] = "recover",
	[KMD_CHECK] = "check",
	[KMD_REPAIR] = "repair",
	[KMD_RESHAPE] = "reshape",
	[KMD_FROZEN] = "frozen",
};
/* clang-format on */

const char *kmd_action_name(enum kmd_action a)
{
	return (unsigned)a < sizeof(action_names) / sizeof(action_names[0]) ? action_names[a]
									    : "idle";
}

int kmd_action_from_word(const char *s, size_t len)
{
	if (len == 8 && memcmp(s, "recovery", 8) == 0)
		return KMD_RECOVER;
	for (size_t i = 0; i < sizeof(action_names) / sizeof(action_names[0]); i++)
		if (strlen(action_names[i]) == len && memcmp(action_names[i], s, len) == 0)
			return (int)i;
	return -1;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The next blank-separated token of [*p, end): its start and length. */
static bool next_token(const char **p, const char *end, const char **tok, size_t *len)
{
	const char *s = *p;
	while (s < end && is_blank(*s))
		s++;
	if (s == end)
		return false;
	const char *e = s;
	while (e < end && !is_blank(*e))
		e++;
	*tok = s;
	*len = (size_t)(e - s);
	*p = e;
	return true;
}

/* A decimal number of [s, s + len) at most: its value and the bytes read. */
static size_t read_u64(const char *s, size_t len, uint64_t *v)
{
	size_t i = 0;
	uint64_t x = 0;
	while (i < len && s[i] >= '0' && s[i] <= '9') {
		unsigned d = (unsigned)(s[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			x = UINT64_MAX; /* saturated: never a real size */
		else
			x = x * 10 + d;
		i++;
	}
	*v = x;
	return i;
}

/* A device name that is also safe as a file name in sysfs. */
static bool name_ok(const char *s, size_t len)
{
	if (len == 0 || len >= KMD_NAME_MAX || s[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

static void copy_name(char *dst, const char *s, size_t len)
{
	if (len >= KMD_NAME_MAX)
		len = KMD_NAME_MAX - 1;
	memcpy(dst, s, len);
	dst[len] = '\0';
}

/* "vdb1[0](F)(W)": a member with its flags. */
static bool parse_member(const char *tok, size_t len, struct kmd_member *m)
{
	const char *br = memchr(tok, '[', len);
	if (!br || !name_ok(tok, (size_t)(br - tok)))
		return false;
	const char *close = memchr(br, ']', len - (size_t)(br - tok));
	if (!close)
		return false;
	uint64_t nr;
	if (read_u64(br + 1, (size_t)(close - br - 1), &nr) != (size_t)(close - br - 1) ||
	    close == br + 1)
		return false;
	memset(m, 0, sizeof(*m));
	copy_name(m->name, tok, (size_t)(br - tok));
	m->slot = 0; /* mdstat gives the descriptor's number, not the slot */
	for (const char *f = close + 1, *e = tok + len; e - f >= 3 && f[0] == '(' && f[2] == ')';
	     f += 3) {
		if (f[1] == 'F')
			m->faulty = true;
		else if (f[1] == 'S')
			m->spare = true;
	}
	if (m->spare)
		m->slot = -1;
	m->in_sync = !m->faulty && !m->spare;
	return true;
}

/* "md0 : active raid1 vdc[2] vdb[0](F)": false when it is not an array's. */
static bool parse_head(const char *p, const char *end, struct kmd_array *a)
{
	const char *tok;
	size_t len;
	if (!next_token(&p, end, &tok, &len) || !name_ok(tok, len))
		return false;
	copy_name(a->name, tok, len);
	if (!next_token(&p, end, &tok, &len) || len != 1 || *tok != ':')
		return false;
	bool level_next = false;
	while (next_token(&p, end, &tok, &len)) {
		if (len == 6 && memcmp(tok, "active", 6) == 0) {
			a->active = true;
			level_next = true;
		} else if (len == 8 && memcmp(tok, "inactive", 8) == 0) {
			a->active = false;
		} else if (tok[0] == '(' && !memchr(tok, '[', len)) {
			continue; /* (read-only), (auto-read-only) */
		} else if (a->n_m < KMD_MAX_MEMBERS && parse_member(tok, len, &a->m[a->n_m])) {
			/* a name once: what a member was is looked up by name */
			bool dup = false;
			for (size_t i = 0; i < a->n_m; i++)
				dup |= strcmp(a->m[i].name, a->m[a->n_m].name) == 0;
			a->n_m += !dup;
			level_next = false;
		} else if (level_next && !memchr(tok, '[', len)) {
			size_t n = len < sizeof(a->level) - 1 ? len : sizeof(a->level) - 1;
			memcpy(a->level, tok, n);
			a->level[n] = '\0';
			level_next = false;
		}
	}
	return true;
}

/* "[2/1]": raid disks and those in sync. */
static bool parse_counts(const char *tok, size_t len, struct kmd_array *a)
{
	if (len < 5 || tok[0] != '[' || tok[len - 1] != ']')
		return false;
	uint64_t n, m;
	size_t i = 1 + read_u64(tok + 1, len - 2, &n);
	if (i == 1 || i >= len - 1 || tok[i] != '/')
		return false;
	size_t j = read_u64(tok + i + 1, len - i - 2, &m);
	if (j == 0 || i + 1 + j != len - 1 || n > 100000 || m > n)
		return false;
	a->raid_disks = (int)n;
	a->degraded = (int)(n - m);
	return true;
}

/* "(14784/65472)": the position of a sync, KiB. */
static bool parse_position(const char *tok, size_t len, struct kmd_array *a)
{
	if (len < 5 || tok[0] != '(' || tok[len - 1] != ')')
		return false;
	uint64_t done, total;
	size_t i = 1 + read_u64(tok + 1, len - 2, &done);
	if (i == 1 || i >= len - 1 || tok[i] != '/')
		return false;
	size_t j = read_u64(tok + i + 1, len - i - 2, &total);
	if (j == 0 || i + 1 + j != len - 1 || total > UINT64_MAX / 2 || done > total)
		return false;
	a->done = done * 2;
	a->total = total * 2;
	return true;
}

static void parse_body(const char *p, const char *end, struct kmd_array *a)
{
	const char *tok, *prev = NULL;
	size_t len, prev_len = 0;
	bool want_pos = false;
	while (next_token(&p, end, &tok, &len)) {
		if (parse_counts(tok, len, a))
			;
		else if (want_pos && parse_position(tok, len, a))
			want_pos = false;
		else if (len == 1 && *tok == '=' && prev) {
			/* "recovery = 22.5% (...)" */
			int act = kmd_action_from_word(prev, prev_len);
			if (act > KMD_IDLE) {
				a->action = (enum kmd_action)act;
				a->syncing = true;
				want_pos = true;
			}
		} else if (memchr(tok, '=', len)) {
			/* "resync=DELAYED", "resync=PENDING", "recover=REMOTE" */
			const char *eq = memchr(tok, '=', len);
			int act = kmd_action_from_word(tok, (size_t)(eq - tok));
			size_t rest = len - (size_t)(eq - tok) - 1;
			if (act > KMD_IDLE && rest == 7 && memcmp(eq + 1, "DELAYED", 7) == 0) {
				a->action = (enum kmd_action)act;
				a->syncing = true;
			} else if (act == KMD_RESYNC && rest == 7 &&
				   memcmp(eq + 1, "PENDING", 7) == 0)
				a->resync_pending = true;
		}
		prev = tok;
		prev_len = len;
	}
}

int kmd_stat_parse(const char *text, size_t len, struct kmd_stat *out)
{
	out->v = NULL;
	out->n = 0;
	size_t cap = 0;
	struct kmd_array *cur = NULL;
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (p < le && !is_blank(*p)) {
			cur = NULL;
			bool known = (le - p >= 13 && memcmp(p, "Personalities", 13) == 0) ||
				     (le - p >= 14 && memcmp(p, "unused devices", 14) == 0);
			if (!known) {
				if (out->n == KMD_MAX_ARRAYS) {
					kmd_stat_release(out);
					return -E2BIG;
				}
				if (out->n == cap) {
					size_t nc = cap ? cap * 2 : 4;
					struct kmd_array *v = realloc(out->v, nc * sizeof(*v));
					if (!v) {
						kmd_stat_release(out);
						return -ENOMEM;
					}
					out->v = v;
					cap = nc;
				}
				cur = &out->v[out->n++];
				memset(cur, 0, sizeof(*cur));
				cur->raid_disks = -1;
				cur->degraded = -1;
				if (!parse_head(p, le, cur)) {
					out->n--;
					cur = NULL;
				}
			}
		} else if (cur)
			parse_body(p, le, cur);
		p = nl ? nl + 1 : end;
	}
	return 0;
}

void kmd_stat_release(struct kmd_stat *s)
{
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

const struct kmd_array *kmd_stat_find(const struct kmd_stat *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].name, name) == 0)
			return &s->v[i];
	return NULL;
}
