// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * keventctl cat NAME.yaml: a rule file as keventd loads it, its drop-ins
 * applied, as YAML that keventd would load again, with "# from FILE:LINE"
 * after every key.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "dropin.h"
#include "ruleset.h"

#define MAX_DIRS       64
#define COMMENT_COLUMN 40

struct out {
	struct strbuf sb;
	size_t line_start; /* where the line being written starts in sb */
	const char *base;  /* the file of nodes without one */
};

/* Ends the line with where k came from. */
static void origin(struct out *o, const struct ynode *k)
{
	size_t col = o->sb.len - o->line_start;
	for (size_t i = col; i < COMMENT_COLUMN || i < col + 2; i++)
		strbuf_putc(&o->sb, ' ');
	strbuf_puts(&o->sb, "# from ");
	strbuf_put_escaped(&o->sb, k->file ? k->file : o->base);
	strbuf_printf(&o->sb, ":%u\n", k->line);
	o->line_start = o->sb.len;
}

static void indent(struct out *o, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		strbuf_putc(&o->sb, ' ');
}

/* A YAML double-quoted scalar: every control character escaped. */
static void put_quoted(struct out *o, const char *s)
{
	strbuf_putc(&o->sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			strbuf_printf(&o->sb, "\\%c", *p);
		else if (*p == '\n')
			strbuf_puts(&o->sb, "\\n");
		else if (*p == '\t')
			strbuf_puts(&o->sb, "\\t");
		else if (*p < 0x20 || *p == 0x7f)
			strbuf_printf(&o->sb, "\\x%02x", *p);
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) /* C1 */
			strbuf_printf(&o->sb, "\\u%04x", *++p);
		else
			strbuf_putc(&o->sb, (char)*p);
	}
	strbuf_putc(&o->sb, '"');
}

/* Whether s may be written as it was, unquoted, in a flow list too. */
static bool plain_ok(const struct ynode *n, bool flow)
{
	return n->plain && !strchr(n->value, '\n') && !str_has_control(n->value) &&
	       (!flow || (n->value[0] && !strpbrk(n->value, ",[]{}")));
}

static void put_scalar(struct out *o, const struct ynode *n, bool flow)
{
	if (plain_ok(n, flow))
		strbuf_puts(&o->sb, n->value);
	else
		put_quoted(o, n->value);
}

/* A literal block ("|" or "|-") fits a script of printable lines. */
static bool literal_ok(const char *s)
{
	size_t len = strlen(s);
	if (!strchr(s, '\n') || s[0] == ' ' || s[0] == '\n' ||
	    (len > 1 && s[len - 2] == '\n' && s[len - 1] == '\n'))
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f ||
		    (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return false;
	return true;
}

static bool flow_ok(const struct ynode *n)
{
	if (n->kind == YNODE_MAP)
		return false;
	for (size_t i = 0; i < n->n_kids; i++)
		if (!flow_ok(n->kids[i]))
			return false;
	return true;
}

static void put_flow(struct out *o, const struct ynode *n)
{
	if (n->kind == YNODE_SCALAR) {
		put_scalar(o, n, true);
		return;
	}
	strbuf_putc(&o->sb, '[');
	for (size_t i = 0; i < n->n_kids; i++) {
		if (i)
			strbuf_puts(&o->sb, ", ");
		put_flow(o, n->kids[i]);
	}
	strbuf_putc(&o->sb, ']');
}

static void put_map(struct out *o, const struct ynode *map, unsigned ind, bool first_inline);

/* The value of key k (k: already written), the comment, and what follows. */
static void put_value(struct out *o, const struct ynode *k, const struct ynode *v, unsigned ind)
{
	if (v->kind == YNODE_SCALAR && ynode_is_null(v) && !v->value[0]) {
		origin(o, k);
	} else if (v->kind == YNODE_SCALAR && strchr(v->value, '\n') && literal_ok(v->value)) {
		size_t len = strlen(v->value);
		bool nl = v->value[len - 1] == '\n';
		strbuf_puts(&o->sb, nl ? " |" : " |-");
		origin(o, k);
		for (const char *s = v->value; *s;) {
			size_t l = strcspn(s, "\n");
			if (l)
				indent(o, ind + 2);
			strbuf_add(&o->sb, s, l);
			strbuf_putc(&o->sb, '\n');
			s += l + (s[l] == '\n');
		}
		o->line_start = o->sb.len;
	} else if (v->kind == YNODE_SCALAR || (v->kind == YNODE_SEQ && flow_ok(v))) {
		strbuf_putc(&o->sb, ' ');
		put_flow(o, v);
		origin(o, k);
	} else if (v->kind == YNODE_MAP && !v->n_kids) {
		strbuf_puts(&o->sb, " {}");
		origin(o, k);
	} else if (v->kind == YNODE_MAP) {
		origin(o, k);
		put_map(o, v, ind + 2, false);
	} else {
		origin(o, k);
		for (size_t i = 0; i < v->n_kids; i++) {
			const struct ynode *it = v->kids[i];
			indent(o, ind + 2);
			strbuf_puts(&o->sb, "- ");
			if (it->kind == YNODE_MAP && it->n_kids) {
				put_map(o, it, ind + 4, true);
			} else {
				if (it->kind == YNODE_MAP)
					strbuf_puts(&o->sb, "{}");
				else
					put_flow(o, it);
				origin(o, it);
			}
		}
	}
}

static void put_map(struct out *o, const struct ynode *map, unsigned ind, bool first_inline)
{
	for (size_t i = 0; i + 1 < map->n_kids; i += 2) {
		const struct ynode *k = map->kids[i];
		if (i || !first_inline)
			indent(o, ind);
		if (k->kind == YNODE_SCALAR)
			put_scalar(o, k, true);
		else
			strbuf_puts(&o->sb, "\"?\""); /* the schema check refuses it first */
		strbuf_putc(&o->sb, ':');
		put_value(o, k, map->kids[i + 1], ind);
	}
}

/* --json: n as JSON (scalars as strings, as YAML reads them before the
 * rules do) into o->sb, and into keys where each key and list item comes
 * from, named by its JSON pointer (RFC 6901) into the content. */
static void put_json(struct out *o, struct strbuf *keys, struct strbuf *ptr, const struct ynode *n)
{
	if (n->kind == YNODE_SCALAR) {
		if (ynode_is_null(n) && !n->value[0])
			strbuf_puts(&o->sb, "null");
		else
			strbuf_json(&o->sb, n->value);
		return;
	}
	bool map = n->kind == YNODE_MAP;
	strbuf_putc(&o->sb, map ? '{' : '[');
	for (size_t i = 0; i < n->n_kids; i += map ? 2 : 1) {
		const struct ynode *k = n->kids[i], *v = map ? n->kids[i + 1] : n->kids[i];
		size_t at = ptr->len;
		strbuf_putc(ptr, '/');
		if (map) {
			for (const char *c = k->kind == YNODE_SCALAR ? k->value : "?"; *c; c++)
				strbuf_puts(ptr, *c == '~'   ? "~0"
						 : *c == '/' ? "~1"
							     : (char[]){*c, 0});
			strbuf_puts(&o->sb, i ? "," : "");
			strbuf_json(&o->sb, k->kind == YNODE_SCALAR ? k->value : "?");
			strbuf_putc(&o->sb, ':');
		} else {
			strbuf_printf(ptr, "%zu", i);
			strbuf_puts(&o->sb, i ? "," : "");
		}
		strbuf_puts(keys, keys->len ? ",{\"key\":" : "{\"key\":");
		strbuf_json(keys, strbuf_str(ptr));
		strbuf_puts(keys, ",\"file\":");
		strbuf_json(keys, k->file ? k->file : o->base);
		strbuf_printf(keys, ",\"line\":%u}", k->line);
		put_json(o, keys, ptr, v);
		ptr->len = at; /* back to n's own pointer */
		if (ptr->buf)
			ptr->buf[at] = '\0';
	}
	strbuf_putc(&o->sb, map ? '}' : ']');
}

/* The whole --json object: the file, its drop-ins, the content, and where
 * each key comes from. */
static void cat_json(struct out *o, const struct kentry *en, const struct ynode *tree)
{
	struct strbuf keys = STRBUF_INIT, ptr = STRBUF_INIT;
	strbuf_puts(&o->sb, "{\"name\":");
	strbuf_json(&o->sb, en->name);
	strbuf_puts(&o->sb, ",\"path\":");
	strbuf_json(&o->sb, en->path);
	strbuf_puts(&o->sb, ",\"dropins\":[");
	for (size_t i = 0; i < en->n_dropins; i++) {
		strbuf_puts(&o->sb, i ? ",{\"path\":" : "{\"path\":");
		strbuf_json(&o->sb, en->dropins[i].path);
		strbuf_printf(&o->sb, ",\"masked\":%s}", en->dropins[i].masked ? "true" : "false");
	}
	strbuf_puts(&o->sb, "],\"content\":");
	if (tree)
		put_json(o, &keys, &ptr, tree);
	else
		strbuf_puts(&o->sb, "null");
	strbuf_printf(&o->sb, ",\"keys\":[%s]}\n", strbuf_str(&keys));
	o->sb.oom |= keys.oom || ptr.oom;
	strbuf_release(&keys);
	strbuf_release(&ptr);
}

/* Opens and reads one file of the rule directories, as keventd does. */
static int read_src(const char *path, char **buf, size_t *len, struct kdiags *d)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		kdiags_add(d, path, 1, 1, "cannot open: %s", strerror(errno));
		return 1;
	}
	const char *why = kentry_check_fd(fd, ctl_trust());
	if (why) {
		kdiags_add(d, path, 1, 1, "refusing rule file: %s", why);
		return 1;
	}
	int rc = read_fd(fd, KRULE_FILE_MAX_BYTES, buf, len);
	if (rc == -EFBIG || (rc < 0 && rc != -ENOMEM)) {
		kdiags_add(d, path, 1, 1, "cannot read: %s",
			   rc == -EFBIG ? "larger than the limit of a rule file" : strerror(-rc));
		return 1;
	}
	return rc;
}

/* Whether a diagnostic of the scan is about en. */
static bool about(const struct kdiag *dg, const struct kentry *en, const char *const *dirs,
		  size_t n_dirs)
{
	if (strcmp(dg->file, en->path) == 0)
		return true;
	for (size_t i = 0; i < n_dirs; i++) {
		size_t l = strlen(dirs[i]), nl = strlen(en->name);
		if (strncmp(dg->file, dirs[i], l) == 0 && dg->file[l] == '/' &&
		    strncmp(dg->file + l + 1, en->name, nl) == 0 &&
		    strncmp(dg->file + l + 1 + nl, ".d", 2) == 0)
			return true;
	}
	return false;
}

static int print_diags(const struct kdiags *d, const struct kentry *en, const char *const *dirs,
		       size_t n_dirs)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = 0;
	for (size_t i = 0; i < d->n; i++) {
		if (en && !about(&d->v[i], en, dirs, n_dirs))
			continue;
		strbuf_reset(&sb);
		kdiag_format(&d->v[i], &sb);
		fprintf(stderr, "%s\n", strbuf_str(&sb));
		n++;
	}
	strbuf_release(&sb);
	return n ? 1 : 0;
}

static void cat_text(struct out *o, const struct kentry *en, const struct ynode *tree);

static int cat_entry(const struct kentry *en, struct kdiags *d, bool json)
{
	size_t n = 0;
	_cleanup_free_ struct ksrc *srcs = calloc(en->n_dropins + 1, sizeof(*srcs));
	_cleanup_free_ char **bufs = calloc(en->n_dropins + 1, sizeof(*bufs));
	struct ynode *tree = NULL;
	struct kfile *f = NULL;
	int rc = srcs && bufs ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i <= en->n_dropins; i++) {
		const char *path = i ? en->dropins[i - 1].path : en->path;
		if (i && en->dropins[i - 1].masked)
			continue;
		srcs[n].path = path;
		rc = read_src(path, &bufs[n], &srcs[n].len, d);
		srcs[n].buf = bufs[n];
		n++;
	}
	if (rc == 0)
		rc = kdropin_merge(&srcs[0], srcs + 1, n - 1, &tree, d);
	if (rc == 0)
		rc = krules_from_tree(tree, en->path, &f, d);
	kfile_unref(f);
	if (rc == 0) {
		struct out o = {.sb = STRBUF_INIT, .base = en->path};
		if (json)
			cat_json(&o, en, tree);
		else
			cat_text(&o, en, tree);
		if (o.sb.oom)
			rc = -ENOMEM;
		else
			fputs(strbuf_str(&o.sb), stdout);
		strbuf_release(&o.sb);
	}
	ynode_free(tree);
	for (size_t i = 0; bufs && i < n; i++)
		free(bufs[i]);
	return rc == -ENOMEM ? rc : rc ? 1 : 0;
}

static void cat_text(struct out *o, const struct kentry *en, const struct ynode *tree)
{
	strbuf_puts(&o->sb, "# ");
	strbuf_put_escaped(&o->sb, en->name);
	strbuf_puts(&o->sb, ", as keventd loads it:\n#   ");
	strbuf_put_escaped(&o->sb, en->path);
	strbuf_putc(&o->sb, '\n');
	for (size_t i = 0; i < en->n_dropins; i++) {
		strbuf_puts(&o->sb, "#   ");
		strbuf_put_escaped(&o->sb, en->dropins[i].path);
		strbuf_puts(&o->sb,
			    en->dropins[i].masked ? " (drop-in, masked)\n" : " (drop-in)\n");
	}
	o->line_start = o->sb.len;
	if (tree && tree->kind == YNODE_MAP)
		put_map(o, tree, 0, false);
	else
		strbuf_puts(&o->sb, "# (no rules)\n");
}

int ctl_cat(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"rules-dir", required_argument, NULL, 'd'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *dirs[MAX_DIRS];
	size_t n_dirs = 0;
	bool json = false;
	int o;
	(void)c;
	while ((o = getopt_long(argc, argv, "hjd:", opts, NULL)) != -1) {
		if (o == 'h') {
			printf("Usage: keventctl cat [--json] NAME.yaml [--rules-dir DIR]...\n"
			       "Prints a rule file with its drop-ins applied, and where each key "
			       "comes from.\n"
			       "--json: one object, the content and each key's file and line.\n");
			return 0;
		}
		if (o == 'j') {
			json = true;
			continue;
		}
		if (o != 'd')
			return ctl_option_error("cat");
		if (n_dirs == MAX_DIRS)
			return ctl_usage_error("too many --rules-dir");
		dirs[n_dirs++] = optarg;
	}
	const char *name = optind < argc ? argv[optind++] : NULL;
	if (!name || optind < argc)
		return ctl_usage_error("cat needs one rule file's name, NAME.yaml");
	if (strchr(name, '/') || !str_has_suffix(name, ".yaml") || name[0] == '.')
		return ctl_usage_error("cat takes a rule file's name (NAME.yaml), not a path: "
				       "the file is looked up in the rule directories");
	if (!n_dirs)
		n_dirs = ctl_default_dirs(c, dirs);

	struct kdiags d = {0};
	struct kentries e = {0};
	int rc = kentries_scan(dirs, n_dirs, ctl_trust(), &e, &d);
	const struct kentry *en = NULL;
	for (size_t i = 0; rc == 0 && i < e.n && !en; i++)
		if (strcmp(e.v[i].name, name) == 0)
			en = &e.v[i];
	int status = 1;
	if (rc < 0) {
		fprintf(stderr, "keventctl: %s\n", strerror(-rc));
	} else if (!en) {
		ctl_print(stderr, "keventctl: no rule file %s in the rule directories", name);
	} else if (en->masked) {
		ctl_print(stderr, "keventctl: %s is masked by %s", name, en->path);
	} else if (en->refused || en->dropin_refused) {
		(void)print_diags(&d, en, dirs, n_dirs);
	} else {
		kdiags_free(&d);
		if (!json)
			ctl_pager(c);
		rc = cat_entry(en, &d, json);
		if (rc < 0)
			fprintf(stderr, "keventctl: %s\n", strerror(-rc));
		else
			status = print_diags(&d, NULL, dirs, n_dirs);
	}
	kentries_free(&e);
	kdiags_free(&d);
	return status;
}
