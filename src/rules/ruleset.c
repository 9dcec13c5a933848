// SPDX-License-Identifier: GPL-2.0-or-later
/* Loading a ruleset, reusing unchanged and last-good files. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "index.h"
#include "ruledirs.h"
#include "ruleset.h"

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
	free(rs);
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
	if (rc < 0) {
		kruleset_free(rs);
		return rc;
	}
	*out = rs;
	return 0;
}

static struct kfile *prev_file(const struct kruleset *prev, const char *name)
{
	for (size_t i = 0; prev && i < prev->n_files; i++)
		if (strcmp(prev->files[i]->name, name) == 0)
			return prev->files[i];
	return NULL;
}

static bool same_identity(const struct kfile *f, const char *path, const struct stat *st)
{
	return f && strcmp(f->path, path) == 0 && f->dev == st->st_dev && f->ino == st->st_ino &&
	       f->size == st->st_size &&
	       f->mtime_ns == (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec &&
	       f->ctime_ns == (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

int kruleset_load_file(const char *path, bool trust, struct kfile *old, struct kfile **out,
		       struct kdiags *diags)
{
	*out = NULL;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		kdiags_add(diags, path, 1, 1, "cannot open: %s", strerror(errno));
		return 0;
	}
	const char *why = kentry_check_fd(fd, trust);
	if (why) {
		kdiags_add(diags, path, 1, 1, "refusing rule file: %s", why);
		return 0;
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (same_identity(old, path, &st)) {
		*out = kfile_ref(old);
		return 0;
	}
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int rc = read_fd(fd, KRULE_FILE_MAX_BYTES, &buf, &len);
	if (rc == -EFBIG) {
		kdiags_add(diags, path, 1, 1, "rule file larger than %d bytes",
			   KRULE_FILE_MAX_BYTES);
		return 0;
	}
	if (rc < 0) {
		if (rc == -ENOMEM)
			return rc;
		kdiags_add(diags, path, 1, 1, "cannot read: %s", strerror(-rc));
		return 0;
	}
	struct kfile *f = NULL;
	rc = krules_parse(buf, len, path, &f, diags);
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0)
		return 0;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = st.st_size;
	f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	f->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
	*out = f;
	return 0;
}

int kruleset_load(const char *const *dirs, size_t n_dirs, bool trust, const struct kruleset *prev,
		  struct kruleset **out, struct kdiags *diags, struct kchanges *changes)
{
	struct kentries e = {0};
	int rc = kentries_scan(dirs, n_dirs, trust, &e, diags);
	if (rc < 0)
		return rc;
	struct kfile **files = calloc(e.n + 1, sizeof(*files));
	size_t n = 0;
	if (!files) {
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
		rc = kruleset_load_file(en->path, trust, old, &f, diags);
		if (rc < 0)
			break;
		if (!f && diags->n > before) {
			/* broken: keep the last good version, if there is one */
			f = kfile_ref(old);
			change(changes, KCHANGE_BROKEN, en->name);
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
	for (size_t i = 0; i < n; i++)
		kfile_unref(files[i]);
	free(files);
	kentries_free(&e);
	return rc;
}
