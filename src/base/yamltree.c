// SPDX-License-Identifier: GPL-2.0-or-later
#include "yamltree.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util.h"

void ynode_free(struct ynode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n_kids; i++)
		ynode_free(n->kids[i]);
	free(n->kids);
	free(n->value);
	free(n);
}

bool ynode_is_null(const struct ynode *n)
{
	return n->kind == YNODE_SCALAR && n->plain &&
	       (!n->value[0] || strcmp(n->value, "~") == 0 || strcmp(n->value, "null") == 0 ||
		strcmp(n->value, "Null") == 0 || strcmp(n->value, "NULL") == 0);
}

const char *ynode_kind_name(const struct ynode *n)
{
	switch (n->kind) {
	case YNODE_SCALAR:
		return ynode_is_null(n) ? "nothing" : "a value";
	case YNODE_SEQ:
		return "a list";
	case YNODE_MAP:
		return "a mapping";
	}
	return "?";
}

struct builder {
	yaml_parser_t parser;
	const char *buf; /* the text, for hints at its usual traps */
	size_t len;
	size_t nodes;
	unsigned line, col;
	char *msg;
};

static int fail(struct builder *b, const yaml_mark_t *m, const char *fmt, ...) _printf_(3, 4);
static int fail(struct builder *b, const yaml_mark_t *m, const char *fmt, ...)
{
	va_list ap;
	b->line = (unsigned)m->line + 1;
	b->col = (unsigned)m->column + 1;
	free(b->msg);
	va_start(ap, fmt);
	if (vasprintf(&b->msg, fmt, ap) < 0)
		b->msg = NULL;
	va_end(ap);
	return -EINVAL;
}

/* The usual trap on lines first..last (0-based) of the text, as a hint for
 * libyaml's words, which name the trap's effect and not the trap: a tab in
 * the indentation, or a plain value that starts with a character YAML
 * takes for syntax ('>=90000' opens a folded block scalar).  NULL: none. */
static const char *trap_hint(const struct builder *b, size_t first, size_t last, char *out,
			     size_t size)
{
	size_t line = 0;
	for (const char *p = b->buf, *end = b->buf + b->len; p < end && line <= last; line++) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if (line >= first) {
			const char *q = p;
			while (q < eol && *q == ' ')
				q++;
			if (q < eol && *q == '\t')
				return "indent with spaces: YAML does not take tabs there";
			/* the value of "key: V" or "- V", or each of a flow list's */
			for (const char *v = q; v < eol; v++) {
				bool starts = (v == q && *v == '-' && v + 1 < eol && v[1] == ' ') ||
					      (*v == ':' && v + 1 < eol && v[1] == ' ') ||
					      ((*v == '[' || *v == ',') && v > q);
				if (!starts)
					continue;
				const char *w = v + 1;
				while (w < eol && *w == ' ')
					w++;
				if (w < eol && strchr("><!%@`", *w)) {
					snprintf(out, size, "quote values that start with '%c'",
						 *w);
					return out;
				}
			}
		}
		p = eol + 1;
	}
	return NULL;
}

static int next_event(struct builder *b, yaml_event_t *ev)
{
	if (yaml_parser_parse(&b->parser, ev))
		return 0;
	char buf[64];
	size_t first =
		b->parser.context ? b->parser.context_mark.line : b->parser.problem_mark.line;
	if (first > b->parser.problem_mark.line)
		first = b->parser.problem_mark.line;
	const char *hint = trap_hint(b, first, b->parser.problem_mark.line, buf, sizeof(buf));
	if (hint && b->parser.error != YAML_MEMORY_ERROR) {
		b->line = (unsigned)b->parser.problem_mark.line + 1;
		b->col = (unsigned)b->parser.problem_mark.column + 1;
		if (asprintf(&b->msg, "YAML syntax error: %s%s%s; hint: %s",
			     b->parser.problem ? b->parser.problem : "YAML syntax error",
			     b->parser.context ? " " : "",
			     b->parser.context ? b->parser.context : "", hint) < 0)
			b->msg = NULL;
		return -EINVAL;
	}
	const char *problem = b->parser.problem ? b->parser.problem : "YAML syntax error";
	if (b->parser.error == YAML_MEMORY_ERROR)
		return -ENOMEM;
	if (b->parser.context) {
		b->line = (unsigned)b->parser.problem_mark.line + 1;
		b->col = (unsigned)b->parser.problem_mark.column + 1;
		if (asprintf(&b->msg, "YAML syntax error: %s %s", problem, b->parser.context) < 0)
			b->msg = NULL;
		return -EINVAL;
	}
	return fail(b, &b->parser.problem_mark, "YAML syntax error: %s", problem);
}

static int add_kid(struct ynode *parent, struct ynode *kid)
{
	if ((parent->n_kids & (parent->n_kids - 1)) == 0) {
		size_t cap = parent->n_kids ? parent->n_kids * 2 : 4;
		struct ynode **k = realloc(parent->kids, cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		parent->kids = k;
	}
	parent->kids[parent->n_kids++] = kid;
	return 0;
}

/* Builds the node that starts with ev (already read).  Takes ownership of ev. */
static int build(struct builder *b, yaml_event_t *ev, unsigned depth, struct ynode **out)
{
	int r = 0;
	struct ynode *n = NULL;

	if (++b->nodes > YTREE_MAX_NODES) {
		r = fail(b, &ev->start_mark, "%s", "too many YAML nodes");
		goto out;
	}
	if (ev->type == YAML_ALIAS_EVENT) {
		r = fail(b, &ev->start_mark, "%s", "YAML aliases are not supported");
		goto out;
	}
	if (depth > YTREE_MAX_DEPTH) {
		r = fail(b, &ev->start_mark, "%s", "YAML nesting too deep");
		goto out;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		r = -ENOMEM;
		goto out;
	}
	n->line = (unsigned)ev->start_mark.line + 1;
	n->col = (unsigned)ev->start_mark.column + 1;

	if (ev->type == YAML_SCALAR_EVENT) {
		n->kind = YNODE_SCALAR;
		n->value = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		if (!n->value)
			r = -ENOMEM;
		else if (strlen(n->value) != ev->data.scalar.length)
			r = fail(b, &ev->start_mark, "%s", "NUL character in a value");
		goto out;
	}
	yaml_event_type_t end;
	if (ev->type == YAML_SEQUENCE_START_EVENT) {
		n->kind = YNODE_SEQ;
		end = YAML_SEQUENCE_END_EVENT;
	} else if (ev->type == YAML_MAPPING_START_EVENT) {
		n->kind = YNODE_MAP;
		end = YAML_MAPPING_END_EVENT;
	} else {
		r = fail(b, &ev->start_mark, "%s", "unexpected YAML event");
		goto out;
	}
	yaml_event_delete(ev);
	for (;;) {
		r = next_event(b, ev);
		if (r < 0) {
			memset(ev, 0, sizeof(*ev));
			goto out;
		}
		if (ev->type == end)
			break;
		struct ynode *kid = NULL;
		r = build(b, ev, depth + 1, &kid);
		if (r < 0) {
			memset(ev, 0, sizeof(*ev));
			goto out;
		}
		r = add_kid(n, kid);
		if (r < 0) {
			ynode_free(kid);
			goto out;
		}
	}
out:
	yaml_event_delete(ev);
	if (r < 0) {
		ynode_free(n);
		return r;
	}
	*out = n;
	return 0;
}

int ytree_parse(const char *buf, size_t len, struct ynode **root, unsigned *line, unsigned *col,
		char **msg)
{
	struct builder b = {0};
	yaml_event_t ev;
	struct ynode *doc = NULL;
	int r;

	*root = NULL;
	*msg = NULL;
	if (!yaml_parser_initialize(&b.parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&b.parser, (const unsigned char *)buf, len);
	b.buf = buf;
	b.len = len;

	bool in_doc = false, seen_doc = false;
	for (;;) {
		r = next_event(&b, &ev);
		if (r < 0)
			break;
		yaml_event_type_t t = ev.type;
		if (t == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (t == YAML_DOCUMENT_START_EVENT) {
			if (seen_doc) {
				r = fail(&b, &ev.start_mark, "%s",
					 "only one YAML document per rule file");
				yaml_event_delete(&ev);
				break;
			}
			in_doc = seen_doc = true;
			yaml_event_delete(&ev);
			continue;
		}
		if (t == YAML_DOCUMENT_END_EVENT) {
			in_doc = false;
			yaml_event_delete(&ev);
			continue;
		}
		if (in_doc && !doc) {
			r = build(&b, &ev, 0, &doc);
			if (r < 0)
				break;
			continue;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&b.parser);
	if (r < 0) {
		ynode_free(doc);
		*line = b.line ? b.line : 1;
		*col = b.col ? b.col : 1;
		*msg = b.msg;
		if (r == -EINVAL && !*msg)
			*msg = strdup("YAML error");
		return r;
	}
	*root = doc;
	return 0;
}
