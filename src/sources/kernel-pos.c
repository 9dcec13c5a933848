// SPDX-License-Identifier: GPL-2.0-or-later
/* The kernel source's position file (kernel-pos.h): read strictly, so a
 * damaged file is refused as a whole rather than half believed. */
#include "kernel-pos.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct cursor {
	const char *p, *end;
};

/* A decimal number with no sign, at most UINT64_MAX. */
static bool number(struct cursor *c, uint64_t *out)
{
	uint64_t v = 0;
	const char *start = c->p;
	for (; c->p < c->end && *c->p >= '0' && *c->p <= '9'; c->p++) {
		unsigned d = (unsigned)(*c->p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return c->p > start;
}

/* One or more blanks. */
static bool blanks(struct cursor *c)
{
	const char *start = c->p;
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
	return c->p > start;
}

/* The end of a line: a newline, or the end of the text. */
static bool eol(struct cursor *c)
{
	if (c->p == c->end)
		return true;
	if (*c->p != '\n')
		return false;
	c->p++;
	return true;
}

void kkernel_pos_release(struct kkernel_pos *pos)
{
	free(pos->redo);
	pos->redo = NULL;
	pos->n_redo = 0;
}

int kkernel_pos_parse(const char *text, size_t len, struct kkernel_pos *pos)
{
	struct cursor c = {text, text + len};
	struct kkernel_pos p = {0};
	if (!number(&c, &p.instance) || !p.instance || !blanks(&c) || !number(&c, &p.last) ||
	    !eol(&c))
		return -EINVAL;
	if (c.p < c.end) {
		static const char word[] = "redo";
		size_t n = sizeof(word) - 1;
		if ((size_t)(c.end - c.p) < n || memcmp(c.p, word, n) != 0)
			return -EINVAL;
		c.p += n;
		/* at most one number per two bytes left */
		size_t cap = (size_t)(c.end - c.p) / 2 + 1;
		p.redo = malloc(cap * sizeof(*p.redo));
		if (!p.redo)
			return -ENOMEM;
		while (c.p < c.end && *c.p != '\n') {
			uint64_t seq;
			if (!blanks(&c) || !number(&c, &seq) || !seq || seq > p.last ||
			    (p.n_redo && seq <= p.redo[p.n_redo - 1]) || p.n_redo == cap) {
				kkernel_pos_release(&p);
				return -EINVAL;
			}
			p.redo[p.n_redo++] = seq;
		}
		if (!p.n_redo || !eol(&c) || c.p < c.end) {
			kkernel_pos_release(&p);
			return -EINVAL;
		}
	}
	*pos = p;
	return 0;
}

void kkernel_pos_format(const struct kkernel_pos *pos, struct strbuf *sb)
{
	strbuf_printf(sb, "%" PRIu64 " %" PRIu64 "\n", pos->instance, pos->last);
	if (!pos->n_redo)
		return;
	strbuf_puts(sb, "redo");
	for (size_t i = 0; i < pos->n_redo; i++)
		strbuf_printf(sb, " %" PRIu64, pos->redo[i]);
	strbuf_putc(sb, '\n');
}
