// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fs source's file in the state directory:
 *
 *   keventd-fs 1
 *   boot BOOT_ID
 *   mounts block|all
 *   m ID MAJOR:MINOR MOUNTPOINT OPTIONS SUPER-OPTIONS FSTYPE SOURCE
 *   s ID ok|low|critical inodes-ok|inodes-low SPACE-LOW SPACE-CRITICAL INODES-LOW
 *
 * the last three the thresholds the state was judged by: off, pN
 * (hundredths of a percent) or bN (bytes); a line without them (an older
 * keventd's) has a state that is not compared (kfs_saved_space).
 * fields as mountinfo writes them (' ', '\t', '\n', '\\' and any other
 * byte that is not printable as \ooo; an empty one as \000).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "util.h"

#define HEADER "keventd-fs 1"

static const char *const levels[] = {"ok", "low", "critical"};

void kfs_state_release(struct kfs_state *s)
{
	kfs_table_release(&s->table);
	free(s->sp);
	*s = (struct kfs_state){0};
}

static void put_field(struct strbuf *sb, const char *v)
{
	strbuf_putc(sb, ' ');
	if (!*v)
		strbuf_puts(sb, "\\000");
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if (*p <= ' ' || *p > 0x7e || *p == '\\')
			strbuf_printf(sb, "\\%03o", *p);
		else
			strbuf_putc(sb, (char)*p);
	}
}

static void put_limit(struct strbuf *sb, const struct kfs_limit *l)
{
	if (l->kind == KFS_LIMIT_OFF)
		strbuf_puts(sb, " off");
	else
		strbuf_printf(sb, " %c%llu", l->kind == KFS_LIMIT_PERCENT ? 'p' : 'b',
			      (unsigned long long)l->value);
}

void kfs_state_render(const char *boot_id, bool all, const struct kfs_table *t,
		      const struct kfs_saved_space *sp, size_t n, struct strbuf *sb)
{
	strbuf_printf(sb, HEADER "\nboot %s\nmounts %s\n", boot_id, all ? "all" : "block");
	for (size_t i = 0; i < t->n; i++) {
		const struct kfs_mount *m = &t->v[i];
		if (!kfs_mount_wanted(m, all))
			continue;
		strbuf_printf(sb, "m %u %u:%u", m->id, m->major, m->minor);
		put_field(sb, m->mountpoint);
		put_field(sb, m->options);
		put_field(sb, m->super_options);
		put_field(sb, m->fstype);
		put_field(sb, m->source);
		strbuf_putc(sb, '\n');
	}
	for (size_t i = 0; i < n; i++) {
		strbuf_printf(sb, "s %u %s %s", sp[i].id, levels[sp[i].space],
			      sp[i].inodes_low ? "inodes-low" : "inodes-ok");
		if (sp[i].judged) {
			put_limit(sb, &sp[i].t.space_low);
			put_limit(sb, &sp[i].t.space_critical);
			put_limit(sb, &sp[i].t.inodes_low);
		}
		strbuf_putc(sb, '\n');
	}
}

/* Splits a line into at most max fields at single spaces: their count,
 * or 0 when there are more or one is empty. */
static size_t split(const char *s, size_t len, const char **f, size_t *fl, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i <= len; n++) {
		const char *sp = memchr(s + i, ' ', len - i);
		size_t l = sp ? (size_t)(sp - (s + i)) : len - i;
		if (n == max || l == 0)
			return 0;
		f[n] = s + i;
		fl[n] = l;
		i += l + 1;
	}
	return n;
}

static bool is_word(const char *f, size_t l, const char *w)
{
	return l == strlen(w) && memcmp(f, w, l) == 0;
}

/* off, pN or bN, as put_limit() writes it. */
static bool parse_limit(const char *f, size_t l, struct kfs_limit *out)
{
	if (is_word(f, l, "off")) {
		*out = (struct kfs_limit){KFS_LIMIT_OFF, 0};
		return true;
	}
	if (l < 2 || l > 20 || (f[0] != 'p' && f[0] != 'b'))
		return false;
	uint64_t v = 0;
	for (size_t i = 1; i < l; i++) {
		if (f[i] < '0' || f[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(f[i] - '0');
	}
	*out = (struct kfs_limit){f[0] == 'p' ? KFS_LIMIT_PERCENT : KFS_LIMIT_SIZE, v};
	return true;
}

static int parse_mount(const char **f, const size_t *fl, struct kfs_mount *m)
{
	*m = (struct kfs_mount){0};
	const char *colon = memchr(f[2], ':', fl[2]);
	if (!parse_digits(f[1], fl[1], &m->id) || !colon ||
	    !parse_digits(f[2], (size_t)(colon - f[2]), &m->major) ||
	    !parse_digits(colon + 1, fl[2] - (size_t)(colon - f[2]) - 1, &m->minor) ||
	    f[3][0] != '/')
		return -EINVAL;
	m->mountpoint = kfs_unescape(f[3], fl[3]);
	m->options = kfs_unescape(f[4], fl[4]);
	m->super_options = kfs_unescape(f[5], fl[5]);
	m->fstype = kfs_unescape(f[6], fl[6]);
	m->source = kfs_unescape(f[7], fl[7]);
	if (!m->mountpoint || !m->options || !m->super_options || !m->fstype || !m->source)
		return -ENOMEM;
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct kfs_mount *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int parse(const char *text, size_t len, struct kfs_state *s, const char **why)
{
	size_t cap = 0, sp_cap = 0;
	int line = 0;
	for (size_t i = 0; i < len; line++) {
		const char *nl = memchr(text + i, '\n', len - i);
		if (!nl) {
			*why = "its last line is cut";
			return -EINVAL;
		}
		const char *l = text + i;
		size_t ll = (size_t)(nl - l);
		i += ll + 1;
		const char *f[8];
		size_t fl[8];
		size_t n = split(l, ll, f, fl, 8);
		if (line == 0) {
			if (!(ll == strlen(HEADER) && memcmp(l, HEADER, ll) == 0)) {
				*why = "not keventd's (no " HEADER " line)";
				return -EINVAL;
			}
		} else if (line == 1) {
			/* a boot id is a UUID: hex digits and dashes */
			if (n != 2 || !is_word(f[0], fl[0], "boot") ||
			    fl[1] >= sizeof(s->boot_id) ||
			    strspn(f[1], "0123456789abcdef-") < fl[1]) {
				*why = "no boot line";
				return -EINVAL;
			}
			memcpy(s->boot_id, f[1], fl[1]);
			s->boot_id[fl[1]] = '\0';
		} else if (line == 2) {
			if (n != 2 || !is_word(f[0], fl[0], "mounts") ||
			    !(is_word(f[1], fl[1], "all") || is_word(f[1], fl[1], "block"))) {
				*why = "no mounts line";
				return -EINVAL;
			}
			s->all = is_word(f[1], fl[1], "all");
		} else if (n == 8 && is_word(f[0], fl[0], "m")) {
			if (s->table.n == KFS_MAX_MOUNTS)
				return -E2BIG;
			if (s->table.n == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct kfs_mount *v = realloc(s->table.v, nc * sizeof(*v));
				if (!v)
					return -ENOMEM;
				s->table.v = v;
				cap = nc;
			}
			struct kfs_mount *m = &s->table.v[s->table.n];
			int rc = parse_mount(f, fl, m);
			s->table.n++; /* released with the table, whole or not */
			if (rc == -EINVAL)
				*why = "a mount line that is not one";
			if (rc < 0)
				return rc;
		} else if ((n == 4 || n == 7) && is_word(f[0], fl[0], "s")) {
			struct kfs_saved_space x = {.judged = n == 7};
			if (x.judged && (!parse_limit(f[4], fl[4], &x.t.space_low) ||
					 !parse_limit(f[5], fl[5], &x.t.space_critical) ||
					 !parse_limit(f[6], fl[6], &x.t.inodes_low))) {
				*why = "a space line with thresholds that are not";
				return -EINVAL;
			}
			size_t lv = 0;
			while (lv < ARRAY_SIZE(levels) && !is_word(f[2], fl[2], levels[lv]))
				lv++;
			bool il = is_word(f[3], fl[3], "inodes-low");
			if (!parse_digits(f[1], fl[1], &x.id) || lv == ARRAY_SIZE(levels) ||
			    (!il && !is_word(f[3], fl[3], "inodes-ok"))) {
				*why = "a space line that is not one";
				return -EINVAL;
			}
			if (s->n_sp == KFS_MAX_MOUNTS)
				return -E2BIG;
			if (s->n_sp == sp_cap) {
				size_t nc = sp_cap ? sp_cap * 2 : 16;
				struct kfs_saved_space *v = realloc(s->sp, nc * sizeof(*v));
				if (!v)
					return -ENOMEM;
				s->sp = v;
				sp_cap = nc;
			}
			x.space = (enum kfs_level)lv;
			x.inodes_low = il;
			s->sp[s->n_sp++] = x;
		} else {
			*why = "a line that is none of its";
			return -EINVAL;
		}
	}
	if (line < 3) {
		*why = "cut before its mounts line";
		return -EINVAL;
	}
	if (s->table.n)
		qsort(s->table.v, s->table.n, sizeof(*s->table.v), by_id);
	return 0;
}

int kfs_state_parse(const char *text, size_t len, struct kfs_state *out, const char **why)
{
	struct kfs_state s = {0};
	*why = NULL;
	int rc = parse(text, len, &s, why);
	if (rc == -E2BIG)
		*why = "too many mounts";
	if (rc < 0) {
		if (!*why)
			*why = "out of memory";
		kfs_state_release(&s);
		return rc;
	}
	*out = s;
	return 0;
}

const struct kfs_saved_space *kfs_state_space(const struct kfs_state *s, unsigned id)
{
	for (size_t i = 0; i < s->n_sp; i++)
		if (s->sp[i].id == id)
			return &s->sp[i];
	return NULL;
}
