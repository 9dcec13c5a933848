// SPDX-License-Identifier: GPL-2.0-or-later
/* Loading a ruleset, reusing unchanged and last-good files. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "dropin.h"
#include "index.h"
#include "ruledirs.h"
#include "ruleset.h"
#include "hashmap.h"

const char *kchange_kind_name(enum kchange_kind k)
{
	static const char *const names[] = {"added", "changed", "removed", "broken"};
	return (unsigned)k < ARRAY_SIZE(names) ? names[k] : "?";
}

void kchanges_free(struct kchanges *c)
{
	for (size_t i = 0; c && i < c->n; i++)
		free(c->v[i].name);
	if (c) {
		free(c->v);
		c->v = NULL;
		c->n = 0;
	}
}

static void change(struct kchanges *c, enum kchange_kind kind, const char *name)
{
	if (!c)
		return;
	struct kchange *v = realloc(c->v, (c->n + 1) * sizeof(*v));
	if (!v)
		return;
	c->v = v;
	char *n = strdup(name);
	if (n)
		c->v[c->n++] = (struct kchange){kind, n};
}

void kruleset_free(struct kruleset *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n_files; i++)
		kfile_unref(rs->files[i]);
	free(rs->files);
	free(rs->rules);
	kindex_release(rs);
	kruleset_free(rs->conds);
	free(rs->cond_defs);
	hashmap_free(rs->cond_names, NULL);
	for (size_t i = 0; i < rs->n_broken; i++) {
		free(rs->broken[i].name);
		free(rs->broken[i].why);
	}
	free(rs->broken);
	free(rs);
}

/* The conditions of files, and their matchers' own index; a name taken
 * by an earlier file is left out (kruleset_load() says so). */
static int build_conds(struct kruleset *rs, struct kfile *const *files, size_t n)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += files[i]->n_conds;
	if (!total)
		return 0;
	struct kruleset *c = calloc(1, sizeof(*c));
	rs->conds = c;
	rs->cond_defs = calloc(total, sizeof(*rs->cond_defs));
	if (!c || !rs->cond_defs || hashmap_new(&rs->cond_names) < 0)
		return -ENOMEM;
	c->rules = calloc(2 * total, sizeof(*c->rules));
	if (!c->rules || 2 * total > UINT32_MAX)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < files[i]->n_conds; j++) {
			const struct kcond_def *d = &files[i]->conds[j];
			if (!d->name || hashmap_get(rs->cond_names, d->name))
				continue;
			if (hashmap_put(rs->cond_names, d->name, (void *)d, NULL) < 0)
				return -ENOMEM;
			rs->cond_defs[rs->n_cond_defs++] = d;
			c->rules[c->n_rules++] = &d->set;
			if (d->has_clear)
				c->rules[c->n_rules++] = &d->clear;
		}
	return kindex_build(c);
}

int kruleset_from_files(struct kfile *const *files, size_t n, struct kruleset **out)
{
	struct kruleset *rs = calloc(1, sizeof(*rs));
	if (!rs)
		return -ENOMEM;
	rs->files = calloc(n + 1, sizeof(*rs->files));
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += files[i]->n_rules;
	rs->rules = calloc(total + 1, sizeof(*rs->rules));
	if (!rs->files || !rs->rules || total > UINT32_MAX) {
		kruleset_free(rs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		rs->files[rs->n_files++] = kfile_ref(files[i]);
		for (size_t j = 0; j < files[i]->n_rules; j++)
			rs->rules[rs->n_rules++] = &files[i]->rules[j];
	}
	int rc = kindex_build(rs);
	if (rc == 0)
		rc = build_conds(rs, files, n);
	if (rc < 0) {
		kruleset_free(rs);
		return rc;
	}
	*out = rs;
	return 0;
}

const struct kcond_def *kruleset_cond(const struct kruleset *rs, const char *name)
{
	return rs && rs->cond_names ? hashmap_get(rs->cond_names, name) : NULL;
}

static struct kfile *prev_file(const struct kruleset *prev, const char *name)
{
	for (size_t i = 0; prev && i < prev->n_files; i++)
		if (strcmp(prev->files[i]->name, name) == 0)
			return prev->files[i];
	return NULL;
}

static int64_t ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static bool same_identity(const struct kfile *f, const char *path, const struct stat *st)
{
	return f && strcmp(f->path, path) == 0 && f->dev == st->st_dev && f->ino == st->st_ino &&
	       f->size == st->st_size && f->mtime_ns == ns_of(&st->st_mtim) &&
	       f->ctime_ns == ns_of(&st->st_ctim);
}

/* One file read for a load: the rule file, or one of its drop-ins. */
struct text {
	const char *path;
	struct stat st;
	char *buf;
	size_t len;
};

/* Opens, checks and stats path (a diag and 1 when it is not fit to load). */
static int open_text(const char *path, bool trust, int *fd, struct text *t, struct kdiags *diags)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	t->path = path;
	if (*fd < 0) {
		kdiags_add(diags, path, 0, 0, "cannot open: %s", strerror(errno));
		return 1;
	}
	const char *why = kentry_check_fd(*fd, trust);
	if (why) {
		kdiags_add(diags, path, 0, 0, "refusing rule file: %s", why);
		return 1;
	}
	return fstat(*fd, &t->st) < 0 ? -errno : 0;
}

static int read_text(int fd, struct text *t, struct kdiags *diags)
{
	int rc = read_fd(fd, KRULE_FILE_MAX_BYTES, &t->buf, &t->len);
	if (rc == -EFBIG) {
		kdiags_add(diags, t->path, 0, 0, "rule file larger than %d bytes",
			   KRULE_FILE_MAX_BYTES);
		return 1;
	}
	if (rc < 0 && rc != -ENOMEM) {
		kdiags_add(diags, t->path, 0, 0, "cannot read: %s", strerror(-rc));
		return 1;
	}
	return rc;
}

/* Whether old was made of exactly these drop-ins, unchanged. */
static bool same_dropins(const struct kfile *old, const struct text *t, size_t n)
{
	if (!old || old->n_dropins != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct kfile_dropin *d = &old->dropins[i];
		const struct stat *st = &t[i].st;
		if (strcmp(d->path, t[i].path) != 0 || d->dev != st->st_dev ||
		    d->ino != st->st_ino || d->size != st->st_size ||
		    d->mtime_ns != ns_of(&st->st_mtim) || d->ctime_ns != ns_of(&st->st_ctim))
			return false;
	}
	return true;
}

static void set_identity(struct kfile *f, const struct stat *st)
{
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = st->st_size;
	f->mtime_ns = ns_of(&st->st_mtim);
	f->ctime_ns = ns_of(&st->st_ctim);
}

static int keep_dropins(struct kfile *f, const struct text *t, size_t n)
{
	f->dropins = calloc(n + 1, sizeof(*f->dropins));
	if (!f->dropins)
		return -ENOMEM;
	for (; f->n_dropins < n; f->n_dropins++) {
		struct kfile_dropin *d = &f->dropins[f->n_dropins];
		const struct stat *st = &t[f->n_dropins].st;
		*d = (struct kfile_dropin){.dev = st->st_dev,
					   .ino = st->st_ino,
					   .size = st->st_size,
					   .mtime_ns = ns_of(&st->st_mtim),
					   .ctime_ns = ns_of(&st->st_ctim)};
		if (!(d->path = strdup(t[f->n_dropins].path)))
			return -ENOMEM;
	}
	return 0;
}

/* kruleset_load_file() with the drop-ins that are not masked. */
static int load(const char *path, const struct kentry_dropin *dropins, size_t n_dropins, bool trust,
		struct kfile *old, struct kfile **out, struct kdiags *diags)
{
	size_t n = 0;
	*out = NULL;
	_cleanup_free_ struct text *t = calloc(n_dropins + 1, sizeof(*t));
	_cleanup_free_ int *fds = calloc(n_dropins + 1, sizeof(*fds));
	struct ksrc *srcs = NULL;
	int rc = t && fds ? 0 : -ENOMEM;
	if (rc == 0)
		rc = open_text(path, trust, &fds[n++], &t[0], diags);
	for (size_t i = 0; rc == 0 && i < n_dropins; i++) {
		if (dropins[i].masked)
			continue;
		rc = open_text(dropins[i].path, trust, &fds[n], &t[n], diags);
		n++;
	}
	if (rc == 0 && same_identity(old, path, &t[0].st) && same_dropins(old, t + 1, n - 1)) {
		*out = kfile_ref(old);
		goto out;
	}
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = read_text(fds[i], &t[i], diags);
	if (rc == 0 && !(srcs = calloc(n, sizeof(*srcs))))
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++)
		srcs[i] = (struct ksrc){t[i].path, t[i].buf, t[i].len};
	struct kfile *f = NULL;
	if (rc == 0)
		rc = kdropin_parse(&srcs[0], srcs + 1, n - 1, &f, diags);
	if (rc == 0) {
		set_identity(f, &t[0].st);
		rc = keep_dropins(f, t + 1, n - 1);
		if (rc == 0)
			*out = TAKE_PTR(f);
		kfile_unref(f);
	}
out:
	for (size_t i = 0; fds && i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	for (size_t i = 0; t && i < n; i++)
		free(t[i].buf);
	free(srcs);
	/* a file that is not fit to load, or does not parse: a diag says why */
	return rc == -ENOMEM ? rc : rc < 0 && rc != -EINVAL ? rc : 0;
}

int kruleset_load_file(const char *path, bool trust, struct kfile *old, struct kfile **out,
		       struct kdiags *diags)
{
	return load(path, NULL, 0, trust, old, out, diags);
}

int kruleset_load_entry(const struct kentry *en, bool trust, struct kfile *old, struct kfile **out,
			struct kdiags *diags)
{
	*out = NULL;
	if (en->dropin_refused)
		return 0; /* broken: the scan said why */
	return load(en->path, en->dropins, en->n_dropins, trust, old, out, diags);
}

/* A broken file's name and the first error it got (the scan's, for a
 * refused drop-in, came before this file's turn). */
static int note_broken(struct kbroken *b, const struct kentry *en, const struct kdiags *diags,
		       size_t before)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const struct kdiag *first = NULL;
	for (size_t i = 0; i < diags->n && !first; i++)
		if (i >= before || strncmp(diags->v[i].file, en->path, strlen(en->path)) == 0)
			first = &diags->v[i];
	if (first)
		kdiag_format(first, &sb);
	else
		strbuf_puts(&sb, "a drop-in of it was refused");
	b->name = strdup(en->name);
	b->why = strdup(strbuf_str(&sb));
	return b->name && b->why && !sb.oom ? 0 : -ENOMEM;
}

/* A condition's name is the machine's: one declared again in a later
 * file is an error there, and left out (build_conds()). */
static void note_cond_dups(const struct kruleset *rs, struct kdiags *diags)
{
	for (size_t i = 0; i < rs->n_files; i++)
		for (size_t j = 0; j < rs->files[i]->n_conds; j++) {
			const struct kcond_def *d = &rs->files[i]->conds[j], *first;
			if (!d->name || (first = kruleset_cond(rs, d->name)) == d || !first)
				continue;
			kdiags_add(diags, rs->files[i]->path, d->line, d->col,
				   "condition \"%s\" is declared already in %s: this one is left "
				   "out",
				   d->name, first->file->name);
		}
}

int kruleset_load(const char *const *dirs, size_t n_dirs, bool trust, const struct kruleset *prev,
		  struct kruleset **out, struct kdiags *diags, struct kchanges *changes)
{
	struct kentries e = {0};
	int rc = kentries_scan(dirs, n_dirs, trust, &e, diags);
	if (rc < 0)
		return rc;
	struct kfile **files = calloc(e.n + 1, sizeof(*files));
	struct kbroken *broken = calloc(e.n + 1, sizeof(*broken));
	size_t n = 0, n_broken = 0;
	if (!files || !broken) {
		free(files);
		free(broken);
		kentries_free(&e);
		return -ENOMEM;
	}
	for (size_t i = 0; i < e.n && rc == 0; i++) {
		const struct kentry *en = &e.v[i];
		if (en->masked || en->refused)
			continue;
		struct kfile *old = prev_file(prev, en->name);
		struct kfile *f = NULL;
		size_t before = diags->n;
		rc = kruleset_load_entry(en, trust, old, &f, diags);
		if (rc < 0)
			break;
		if (!f && (diags->n > before || en->dropin_refused)) {
			/* broken: keep the last good version, if there is one */
			f = kfile_ref(old);
			change(changes, KCHANGE_BROKEN, en->name);
			rc = note_broken(&broken[n_broken++], en, diags, before);
			broken[n_broken - 1].kept = old != NULL;
		} else if (f && !old) {
			change(changes, KCHANGE_ADDED, en->name);
		} else if (f && f != old) {
			change(changes, KCHANGE_CHANGED, en->name);
		}
		if (f)
			files[n++] = f;
	}
	for (size_t i = 0; rc == 0 && prev && i < prev->n_files; i++) {
		bool kept = false;
		for (size_t j = 0; j < n && !kept; j++)
			kept = strcmp(files[j]->name, prev->files[i]->name) == 0;
		if (!kept)
			change(changes, KCHANGE_REMOVED, prev->files[i]->name);
	}
	if (rc == 0)
		rc = kruleset_from_files(files, n, out);
	if (rc == 0)
		note_cond_dups(*out, diags);
	if (rc == 0) {
		(*out)->broken = TAKE_PTR(broken);
		(*out)->n_broken = n_broken;
	}
	for (size_t i = 0; broken && i < n_broken; i++) {
		free(broken[i].name);
		free(broken[i].why);
	}
	free(broken);
	for (size_t i = 0; i < n; i++)
		kfile_unref(files[i]);
	free(files);
	kentries_free(&e);
	return rc;
}
